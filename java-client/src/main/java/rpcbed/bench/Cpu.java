package rpcbed.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/** The JVM's process CPU time: user and system from /proc/self/stat where Linux has it. */
final class Cpu {
    // USER_HZ is 100 on every Linux architecture the JDK runs on.
    private static final double TICK_SECONDS = 0.01;

    final double user;
    final double system;

    private Cpu(double user, double system) {
        this.user = user;
        this.system = system;
    }

    static Cpu now() {
        try {
            String stat = Files.readString(Path.of("/proc/self/stat"));
            // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return new Cpu(Long.parseLong(f[11]) * TICK_SECONDS, Long.parseLong(f[12]) * TICK_SECONDS);
        } catch (IOException | RuntimeException e) {
            var os = ManagementFactory.getOperatingSystemMXBean();
            if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
                return new Cpu(sun.getProcessCpuTime() / 1e9, 0);
            }
            return new Cpu(0, 0);
        }
    }

    Cpu minus(Cpu start) {
        return new Cpu(Math.max(0, user - start.user), Math.max(0, system - start.system));
    }
}
