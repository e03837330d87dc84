package rpcbed.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Base64;
import java.util.zip.DataFormatException;
import org.HdrHistogram.Histogram;

/**
 * The report's latency record ("Latency histogram:", docs/report-format.md): the
 * latencies in microseconds as HdrHistogram's V2 compressed encoding, base64. Every
 * client uses one geometry (internal/stats), so the records of any client language,
 * process and node merge exactly.
 */
public final class LatencyRecord {
    public static final long LOWEST_US = 1;
    /** One hour: open-loop latencies count from the intended start and may exceed the timeout. */
    public static final long HIGHEST_US = 3_600_000_000L;
    public static final int DIGITS = 3;
    /** Names a file that gets every recorded latency (us, one a line): the merge tests only. */
    public static final String DUMP_ENV = "RPCBED_LATENCY_DUMP";

    private LatencyRecord() {}

    /** An empty histogram of the records' geometry. */
    public static Histogram histogram() {
        return new Histogram(LOWEST_US, HIGHEST_US, DIGITS);
    }

    /** h's record. */
    public static String encode(Histogram h) {
        ByteBuffer buf = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
        int n = h.encodeIntoCompressedByteBuffer(buf);
        return Base64.getEncoder().encodeToString(Arrays.copyOf(buf.array(), n));
    }

    /** Reads a record (any HdrHistogram V2 writer's: go's, php's). */
    public static Histogram decode(String record) throws DataFormatException {
        return Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(Base64.getDecoder().decode(record)), 0);
    }

    /** Writes raw latencies (us) one a line, as RPCBED_LATENCY_DUMP asks. */
    public static void dump(Path file, long[] us, int n) throws IOException {
        StringBuilder b = new StringBuilder(n * 6);
        for (int i = 0; i < n; i++) {
            b.append(us[i]).append('\n');
        }
        Files.writeString(file, b, StandardCharsets.US_ASCII);
    }
}
