package rpcbed.bench;

/**
 * -warmup auto (docs/method.md, "Steady state"): throughput over back-to-back windows
 * of {@link #WINDOW_NANOS}; warm-up is over when the last {@link #WINDOWS} windows all
 * lie within {@link #TOLERANCE} of their mean (and the mean is above zero: a client
 * that completes nothing has not settled).
 */
public final class WarmupDetector {
    public static final long WINDOW_NANOS = 250_000_000L;
    public static final int WINDOWS = 3;
    public static final double TOLERANCE = 0.05;

    private final double[] last = new double[WINDOWS];
    private int seen;

    /** Adds one window's throughput (calls per second); true once settled. */
    public boolean add(double throughput) {
        last[seen % WINDOWS] = throughput;
        seen++;
        return settled();
    }

    public boolean settled() {
        if (seen < WINDOWS) {
            return false;
        }
        double mean = 0;
        for (double v : last) {
            mean += v;
        }
        mean /= WINDOWS;
        if (!(mean > 0)) {
            return false;
        }
        for (double v : last) {
            if (Math.abs(v - mean) > TOLERANCE * mean) {
                return false;
            }
        }
        return true;
    }

    /** Windows added so far. */
    public int windows() {
        return seen;
    }
}
