package rpcbed.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The -warmup auto detector on synthetic throughput series (calls/s per 250 ms window). */
class WarmupDetectorTest {
    static Stream<Arguments> series() {
        return Stream.of(
            // name, series, the window (1-based) that settles it, 0 = never
            Arguments.of("flat from the start", new double[] {1000, 1000, 1000, 1000}, 3),
            Arguments.of("JIT ramp then flat", new double[] {100, 300, 700, 900, 1000, 1010, 990, 1000}, 7),
            Arguments.of("within 5 percent", new double[] {1000, 1049, 951}, 3),
            Arguments.of("just outside 5 percent", new double[] {1000, 1000, 1160}, 0),
            Arguments.of("one outlier breaks three", new double[] {1000, 1000, 500, 1000, 1000, 1000}, 6),
            Arguments.of("still climbing", new double[] {100, 200, 300, 400, 500, 600, 700}, 0),
            Arguments.of("zero throughput never settles", new double[] {0, 0, 0, 0}, 0),
            Arguments.of("two windows are not enough", new double[] {1000, 1000}, 0),
            Arguments.of("oscillating", new double[] {800, 1200, 800, 1200, 800, 1200}, 0),
            Arguments.of("slow calls: 0 and 4 per window", new double[] {0, 4, 0, 4, 4, 4}, 6));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("series")
    void settlesAt(String name, double[] series, int want) {
        WarmupDetector d = new WarmupDetector();
        int got = 0;
        for (int i = 0; i < series.length; i++) {
            if (d.add(series[i])) {
                got = i + 1;
                break;
            }
        }
        assertEquals(want, got, name + ": settled at window");
    }
}
