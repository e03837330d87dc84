package rpcbed.bench;

import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The rpcbed report v1.1 (docs/report-format.md): ab 2.3's layout, then the rpcbed block.
 * A line-for-line port of internal/report's Write; the Go parser is the judge.
 */
public final class ReportWriter {
    static final int[] AB_PERCENTS = {50, 66, 75, 80, 90, 95, 98, 99, 100};

    /** The measured facts; field names follow internal/report.Report. */
    public static final class Report {
        public String serverSoftware = "";
        public String serverHostname = "";
        public int serverPort;
        public String documentPath = "";
        public long documentLength;
        public int concurrency;
        public double timeTakenSeconds;
        public long complete;
        public long failed;
        public long failedConnect;
        public long failedReceive;
        public long failedLength;
        public long failedExceptions;
        public long keepAlive;
        public long non2xx;
        public long totalTransferred;
        /** min, mean, median, max in whole ms; sd in ms. */
        public long rowMin;
        public long rowMean;
        public double rowSd;
        public long rowMedian;
        public long rowMax;
        public long[] percentilesMs = new long[AB_PERCENTS.length];

        public String client = "java";
        public String protocol = "";
        public String call = "";
        public int items;
        public int connections;
        public boolean sharedConnections;
        /** Open loop's calls/s in total; 0 = closed loop. */
        public int targetRate;
        public double warmupSeconds;
        public long warmupCalls;
        public long p50Us;
        public long p90Us;
        public long p99Us;
        public long p999Us;
        public double meanUs;
        public long maxUs;
        public double cpuUser;
        public double cpuSystem;
        public Map<String, Long> errors = new TreeMap<>();
        public Map<String, String> versions = new TreeMap<>();
        /** v1.1 (docs/method.md): every timed call decoded whole, counted, token carried. */
        public String check = "full";
        public String runtime = "jvm";
        /** "window": the CPU figures cover exactly the measured window. */
        public String cpuScope = "window";
        /** The "TLS:" line's value; null without TLS. */
        public String tls;
        /** TLS handshakes completed in the window, and of them resumed. */
        public long tlsHandshakes;
        public long tlsResumed;
        /** Connections opened in the window (-connect per-call); -1: persistent, no line. */
        public long connectionsOpened = -1;
        /** The measured window, wall clock in Unix microseconds. */
        public long windowStartMicros;
        public long windowEndMicros;
        /** fixed (-warmup DURATION or none), yes / no (-warmup auto settled or not). */
        public String warmupSettled = "fixed";
        /** JIT compile time within the window (ms), -1 when the JVM does not monitor it. */
        public long jitMillis = -1;
        /** The latency record (LatencyRecord.encode), "" for none. */
        public String latencyHistogram = "";
    }

    private ReportWriter() {}

    public static String write(Report r) {
        StringBuilder b = new StringBuilder(2048);
        b.append("This is ApacheBench, Version 2.3 <$Revision: 1903618 $>\n")
            .append("Copyright 1996 Adam Twiss, Zeus Technology Ltd, http://www.zeustech.net/\n")
            .append("Licensed to The Apache Software Foundation, http://www.apache.org/\n\n");
        b.append("Benchmarking ").append(r.serverHostname).append(" (be patient).....done\n\n\n");
        label(b, "Server Software:", r.serverSoftware);
        label(b, "Server Hostname:", r.serverHostname);
        label(b, "Server Port:", Integer.toString(r.serverPort));
        b.append('\n');
        label(b, "Document Path:", r.documentPath);
        label(b, "Document Length:", r.documentLength + " bytes");
        b.append('\n');
        label(b, "Concurrency Level:", Integer.toString(r.concurrency));
        label(b, "Time taken for tests:", fixed(r.timeTakenSeconds, 3) + " seconds");
        label(b, "Complete requests:", Long.toString(r.complete));
        label(b, "Failed requests:", Long.toString(r.failed));
        if (r.failed > 0) {
            b.append(String.format(Locale.ROOT, "   (Connect: %d, Receive: %d, Length: %d, Exceptions: %d)\n",
                r.failedConnect, r.failedReceive, r.failedLength, r.failedExceptions));
        }
        // ab prints Non-2xx before Keep-Alive.
        if (r.non2xx > 0) {
            label(b, "Non-2xx responses:", Long.toString(r.non2xx));
        }
        if (r.keepAlive > 0) {
            label(b, "Keep-Alive requests:", Long.toString(r.keepAlive));
        }
        label(b, "Total transferred:", r.totalTransferred + " bytes");
        label(b, "HTML transferred:", r.totalTransferred + " bytes");
        double secs = r.timeTakenSeconds;
        double rps = 0;
        double tpr = 0;
        double tprAll = 0;
        double rate = 0;
        if (r.complete > 0 && secs > 0) {
            rps = r.complete / secs;
            tpr = r.concurrency * secs * 1000 / r.complete;
            tprAll = secs * 1000 / r.complete;
        }
        if (secs > 0) {
            rate = r.totalTransferred / 1024.0 / secs;
        }
        label(b, "Requests per second:", fixed(rps, 2) + " [#/sec] (mean)");
        label(b, "Time per request:", fixed(tpr, 3) + " [ms] (mean)");
        label(b, "Time per request:", fixed(tprAll, 3) + " [ms] (mean, across all concurrent requests)");
        label(b, "Transfer rate:", fixed(rate, 2) + " [Kbytes/sec] received");

        b.append("\nConnection Times (ms)\n              min  mean[+/-sd] median   max\n");
        row(b, "Connect:", 0, 0, 0, 0, 0);
        for (String l : new String[] {"Processing:", "Waiting:", "Total:"}) {
            row(b, l, r.rowMin, r.rowMean, r.rowSd, r.rowMedian, r.rowMax);
        }
        b.append("\nPercentage of the requests served within a certain time (ms)\n");
        for (int i = 0; i < AB_PERCENTS.length; i++) {
            b.append(String.format(Locale.ROOT, " %3d%%  %5d", AB_PERCENTS[i], r.percentilesMs[i]));
            if (AB_PERCENTS[i] == 100) {
                b.append(" (longest request)");
            }
            b.append('\n');
        }

        b.append("\nrpcbed report v1\n");
        label(b, "Client:", r.client);
        label(b, "Protocol:", r.protocol);
        label(b, "Call:", r.call);
        label(b, "Items:", Integer.toString(r.items));
        label(b, "Connections:", r.connections + (r.sharedConnections ? " (shared)" : " (per worker)"));
        label(b, "Loop:", r.targetRate > 0 ? "open" : "closed");
        label(b, "Target rate:", r.targetRate + " [#/sec]");
        label(b, "Warm-up:", fixed(r.warmupSeconds, 3) + " seconds, " + r.warmupCalls + " calls excluded");
        label(b, "Latency p50:", r.p50Us + " [us]");
        label(b, "Latency p90:", r.p90Us + " [us]");
        label(b, "Latency p99:", r.p99Us + " [us]");
        label(b, "Latency p99.9:", r.p999Us + " [us]");
        label(b, "Latency mean:", fixed(r.meanUs, 1) + " [us]");
        label(b, "Latency max:", r.maxUs + " [us]");
        label(b, "Client CPU user:", fixed(r.cpuUser, 3) + " [s]");
        label(b, "Client CPU system:", fixed(r.cpuSystem, 3) + " [s]");
        label(b, "Errors:", pairs(r.errors));
        label(b, "Versions:", pairs(r.versions));
        label(b, "Check:", r.check);
        label(b, "Runtime:", r.runtime);
        label(b, "CPU scope:", r.cpuScope);
        label(b, "Window start:", unixSeconds(r.windowStartMicros) + " [s]");
        label(b, "Window end:", unixSeconds(r.windowEndMicros) + " [s]");
        label(b, "Warm-up settled:", r.warmupSettled);
        if (r.jitMillis >= 0) {
            label(b, "JIT compile:", r.jitMillis + " [ms]");
        }
        if (!r.latencyHistogram.isEmpty()) {
            label(b, "Latency histogram:", r.latencyHistogram + " [us]");
        }
        if (r.tls != null) {
            label(b, "TLS:", r.tls);
            label(b, "TLS handshakes:", r.tlsHandshakes + " (resumed " + r.tlsResumed + ")");
        }
        if (r.connectionsOpened >= 0) {
            label(b, "Connections opened:", Long.toString(r.connectionsOpened));
        }
        return b.toString();
    }

    private static String pairs(Map<String, ?> m) {
        if (m.isEmpty()) {
            return "none";
        }
        StringBuilder b = new StringBuilder();
        for (var e : new TreeMap<>(m).entrySet()) {
            if (b.length() > 0) {
                b.append(' ');
            }
            b.append(e.getKey()).append('=').append(e.getValue());
        }
        return b.toString();
    }

    /** Unix microseconds as seconds with six decimals, exactly (no floating point). */
    static String unixSeconds(long micros) {
        return String.format(Locale.ROOT, "%d.%06d", Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L));
    }

    static String fixed(double v, int prec) {
        return String.format(Locale.ROOT, "%." + prec + "f", v);
    }

    private static void label(StringBuilder b, String l, String v) {
        b.append(l);
        for (int n = l.length(); n < 24; n++) {
            b.append(' ');
        }
        b.append(v).append('\n');
    }

    private static void row(StringBuilder b, String l, long min, long mean, double sd, long median, long max) {
        b.append(String.format(Locale.ROOT, "%-12s%5d %4d %5.1f %6d %7d", l, min, mean, sd, median, max)).append('\n');
    }
}
