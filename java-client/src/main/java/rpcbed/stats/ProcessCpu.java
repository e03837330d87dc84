package rpcbed.stats;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The JVM's process CPU time (every thread: callers, event loops, JIT, GC), user and
 * system from /proc/self/stat. Resolution is one clock tick (10 ms). Beside it, the
 * JIT compilers' accumulated compile time (CompilationMXBean, milliseconds; -1 when
 * the JVM does not keep it): over a window, whether the JIT was still compiling.
 */
public final class ProcessCpu {
    // USER_HZ is 100 on every Linux architecture the JDK runs on.
    private static final double TICK_SECONDS = 0.01;

    public final double user;
    public final double system;
    /** Accumulated JIT compile time in milliseconds, -1 when not monitored. */
    public final long jitMillis;

    private ProcessCpu(double user, double system, long jitMillis) {
        this.user = user;
        this.system = system;
        this.jitMillis = jitMillis;
    }

    private ProcessCpu(double user, double system) {
        this(user, system, jitMillis());
    }

    /** The JIT compilers' compile time so far (ms), -1 when the JVM does not monitor it. */
    static long jitMillis() {
        var c = ManagementFactory.getCompilationMXBean();
        if (c == null || !c.isCompilationTimeMonitoringSupported()) {
            return -1;
        }
        return c.getTotalCompilationTime();
    }

    /** Whether user and system are read separately (/proc), not the MXBean's total as user. */
    public static boolean split() {
        return Files.isReadable(Path.of("/proc/self/stat"));
    }

    public static ProcessCpu now() {
        try {
            return parse(Files.readString(Path.of("/proc/self/stat")));
        } catch (IOException | RuntimeException e) {
            var os = ManagementFactory.getOperatingSystemMXBean();
            if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
                return new ProcessCpu(sun.getProcessCpuTime() / 1e9, 0);
            }
            return new ProcessCpu(0, 0);
        }
    }

    /** utime and stime of a /proc/PID/stat line. */
    static ProcessCpu parse(String stat) {
        // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return new ProcessCpu(Long.parseLong(f[11]) * TICK_SECONDS, Long.parseLong(f[12]) * TICK_SECONDS);
    }

    public ProcessCpu minus(ProcessCpu start) {
        long jit = jitMillis < 0 || start.jitMillis < 0 ? -1 : Math.max(0, jitMillis - start.jitMillis);
        return new ProcessCpu(Math.max(0, user - start.user), Math.max(0, system - start.system), jit);
    }
}
