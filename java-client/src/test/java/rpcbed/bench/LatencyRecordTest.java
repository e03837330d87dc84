package rpcbed.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The latency record: Java's writes and reads back, and reads go's and php's. */
class LatencyRecordTest {
    @Test
    void roundTrip() throws Exception {
        Histogram h = LatencyRecord.histogram();
        Random r = new Random(27);
        for (int i = 0; i < 20_000; i++) {
            h.recordValue(1 + (long) (Math.exp(r.nextGaussian() * 1.5) * 2000));
        }
        String rec = LatencyRecord.encode(h);
        assertTrue(rec.startsWith("HISTF"), rec);
        Histogram back = LatencyRecord.decode(rec);
        assertEquals(h, back);
        assertEquals(LatencyRecord.HIGHEST_US, back.getHighestTrackableValue());
        assertEquals(LatencyRecord.DIGITS, back.getNumberOfSignificantValueDigits());
    }

    /**
     * Records written by the other clients' encoders: go's (hdrhistogram-go, the
     * docs/report-format.md example: 3 calls of 9812 us) and php's (LatencyRecord.php,
     * php-client/tests/LatencyRecordTest.php's fixed record).
     */
    @ParameterizedTest
    @CsvSource({
        "go, HISTFAAAACZ42pJpmSzMwMDAzAABMJoRRFybvITB/gNEYLIzGyAAAP//YSAFZg==, 3, 9812, 9812",
        "php, HISTFAAAACp42pNpmSzMwMDAxQABzFCaEURcm7yEwf4DRICX4608E8v+PkYmAI2jBwg=, 8, 7, 1000447",
    })
    void readsOtherWriters(String writer, String rec, long count, long p50, long max) throws Exception {
        Histogram h = LatencyRecord.decode(rec);
        assertEquals(count, h.getTotalCount(), writer);
        assertTrue(h.valuesAreEquivalent(p50, h.getValueAtPercentile(50)), writer + " p50 " + h.getValueAtPercentile(50));
        assertTrue(h.valuesAreEquivalent(max, h.getMaxValue()), writer + " max " + h.getMaxValue());
        assertEquals(LatencyRecord.HIGHEST_US, h.getHighestTrackableValue(), writer);
    }

    @Test
    void reportLine() {
        ReportWriter.Report r = new ReportWriter.Report();
        Histogram h = LatencyRecord.histogram();
        h.recordValue(9812);
        r.latencyHistogram = LatencyRecord.encode(h);
        String text = ReportWriter.write(r);
        String last = text.substring(text.lastIndexOf('\n', text.length() - 2) + 1);
        assertEquals(String.format("%-24s%s [us]%n", "Latency histogram:", r.latencyHistogram), last);
    }
}
