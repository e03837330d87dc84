package rpcbed.bench;

import java.io.PrintStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import rpcbed.cli.Exit;
import rpcbed.cli.UsageError;
import rpcbed.stats.ProcessCpu;

/**
 * One load run: verify one call, open the connections, warm up (fixed or until the
 * throughput settles), then C callers call in a closed loop (ab) or an open loop
 * (-rate) until -n calls or -t ends. Every figure comes from the measured window only:
 * from the end of warm-up to the return of the last measured call, the process CPU
 * read at both ends (docs/method.md).
 */
public final class Bench {
    /** Latencies above an hour are clamped (open loop counts from the due time): LatencyRecord's range. */
    private static final long HIST_MAX_US = LatencyRecord.HIGHEST_US;

    /** How long a caller waits after a refused connection (as go-client). */
    private static final long CONNECT_PAUSE_MS = 10;

    private Bench() {}

    public static int main(String[] args, PrintStream out, PrintStream err) {
        Config cfg;
        try {
            cfg = Config.parse(args);
        } catch (UsageError e) {
            if (e.getMessage().equals(Config.HELP)) {
                out.print(Config.USAGE);
                out.flush();
                return Exit.OK;
            }
            err.println("java-client: " + e.getMessage());
            err.print(Config.USAGE);
            return Exit.USAGE;
        }
        Result res;
        try (Transport t = Transports.create(cfg)) {
            res = run(cfg, t, err);
        } catch (RunError e) {
            err.println(e.getMessage());
            return e.code;
        } catch (RuntimeException e) {
            err.println("java-client: " + e);
            e.printStackTrace(err);
            return Exit.INTERNAL;
        }
        String dump = System.getenv(LatencyRecord.DUMP_ENV);
        if (dump != null && !dump.isEmpty()) {
            try {
                LatencyRecord.dump(java.nio.file.Path.of(dump), res.raw, res.rawN);
            } catch (java.io.IOException e) {
                err.println("java-client: " + LatencyRecord.DUMP_ENV + ": " + e);
                return Exit.INTERNAL;
            }
        }
        out.print(ReportWriter.write(res.report));
        out.flush();
        if (out.checkError()) {
            err.println("java-client: writing the report to stdout failed");
            return Exit.INTERNAL;
        }
        return Exit.OK;
    }

    /** A run that ended before timing: the line for stderr and the exit code to return. */
    public static final class RunError extends Exception {
        public final int code;

        RunError(int code, String line) {
            super(line);
            this.code = code;
        }

        /** The verify error line of docs/report-format.md: "verify: KIND: message". */
        static RunError verify(int code, CallError f, String context) {
            String msg = f.getMessage();
            String prefix = f.kind.label + ": ";
            if (msg.startsWith(prefix)) {
                msg = msg.substring(prefix.length());
            }
            return new RunError(code, "verify: " + f.kind.label + ": " + context + ": " + msg);
        }
    }

    /** The outcome of one run. */
    public static final class Result {
        public ReportWriter.Report report;
        /** Every latency the report's record holds (us), only with RPCBED_LATENCY_DUMP set. */
        long[] raw = new long[0];
        int rawN;
    }

    private static final class Caller {
        final Histogram hist = LatencyRecord.histogram();
        /** Every recorded latency, only when RPCBED_LATENCY_DUMP asks for them (the merge tests). */
        long[] raw;
        int rawN;
        final long[] byKind = new long[Kind.values().length];
        long bytes;
        long warmup;
        /** nanoTime when the caller's last measured call returned (0 = none). */
        long lastEnd;
        Throwable lastError;
        /** The response bytes of the caller's last call (0 when it failed). */
        long lastBytes;
    }

    /** What the callers and the coordinating thread share during one run. */
    private static final class Phase {
        final long runStart = System.nanoTime();
        /** Wall clock at runStart, in Unix microseconds: maps nanoTime to the report's window. */
        final long runStartMicros;
        volatile boolean warmDone;
        /** nanoTime the measured window starts; valid once warmDone (closed loop: once the barrier fell). */
        volatile long measureStart;
        /** nanoTime the measured part ends (-t); 0 = none. */
        volatile long deadline;
        final AtomicLong warmCalls = new AtomicLong();
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicInteger running;
        volatile ProcessCpu cpuStart;
        volatile ProcessCpu cpuEnd;
        volatile boolean settled;

        Phase(int callers) {
            Instant now = Instant.now();
            runStartMicros = now.getEpochSecond() * 1_000_000L + now.getNano() / 1000;
            running = new AtomicInteger(callers);
        }

        long micros(long nanoTime) {
            return runStartMicros + (nanoTime - runStart) / 1000;
        }

        /** -start-at in nanoTime; runStart when there is none (no wait). */
        long startAt(Config cfg) {
            return cfg.startAtMicros == 0 ? runStart : runStart + (cfg.startAtMicros - runStartMicros) * 1000;
        }

        /** The later of two nanoTimes. */
        static long later(long a, long b) {
            return b - a > 0 ? b : a;
        }

        /** TLS handshakes (and resumed) counted when the measured part began. */
        volatile long tlsStart;
        volatile long tlsResumedStart;
        /** Per-call connections opened so far (null: persistent), and when the measured part began. */
        AtomicLong opened;
        volatile long openedStart;

        void begin(long at, Config cfg) {
            if (opened != null) {
                openedStart = opened.get();
            }
            if (cfg.tls != null) {
                tlsStart = cfg.tls.handshakes();
                tlsResumedStart = cfg.tls.resumed();
            }
            measureStart = at;
            deadline = cfg.durationNanos > 0 ? at + cfg.durationNanos : 0;
        }

        /** The last caller to leave reads the CPU: as close to the last call's return as it gets. */
        void leave() {
            if (running.decrementAndGet() == 0) {
                cpuEnd = ProcessCpu.now();
            }
        }
    }

    public static Result run(Config cfg, Transport t, PrintStream err) throws RunError {
        long docLength = verify(cfg, t);
        err.println("java-client: verified " + cfg.name() + " (" + docLength + " bytes)");

        if (cfg.perCall()) {
            AtomicLong opened = new AtomicLong();
            List<Transport.Conn> conns = new ArrayList<>();
            try {
                for (int i = 0; i < cfg.concurrency; i++) {
                    conns.add(t.perCall(i, opened));
                }
            } catch (CallError e) {
                conns.forEach(Transport.Conn::close);
                throw new RunError(Exit.UNREACHABLE, "java-client: caller " + (conns.size() + 1)
                    + " of " + cfg.concurrency + " to " + cfg.addr + ": " + e.getMessage());
            }
            try {
                return measure(cfg, t, conns, opened, docLength, err);
            } finally {
                conns.forEach(Transport.Conn::close);
            }
        }
        int nConns = cfg.connections();
        List<Transport.Conn> conns = new ArrayList<>();
        try {
            for (int i = 0; i < nConns; i++) {
                conns.add(t.open(i));
            }
        } catch (CallError e) {
            conns.forEach(Transport.Conn::close);
            throw new RunError(Exit.UNREACHABLE, "java-client: opening connection " + (conns.size() + 1)
                + " of " + nConns + " to " + cfg.addr + ": " + e.getMessage());
        }
        try {
            return measure(cfg, t, conns, null, docLength, err);
        } finally {
            conns.forEach(Transport.Conn::close);
        }
    }

    /** opened: the connections per-call callers opened (null: persistent connections). */
    private static Result measure(Config cfg, Transport t, List<Transport.Conn> conns, AtomicLong opened,
            long docLength, PrintStream err) throws RunError {
        int c = cfg.concurrency;
        Caller[] callers = new Caller[c];
        AtomicLong remaining = new AtomicLong(cfg.perClient ? 0 : cfg.requests);
        Phase ph = new Phase(c);
        ph.opened = opened;
        CyclicBarrier measure = new CyclicBarrier(c, () -> {
            ph.cpuStart = ProcessCpu.now();
            ph.begin(System.nanoTime(), cfg);
        });
        boolean open = cfg.rate > 0;
        // -start-at: the window opens no earlier (calls before it are warm-up).
        long startAt = ph.startAt(cfg);
        long warmEnd = Phase.later(ph.runStart + cfg.warmupNanos, startAt);
        if (!cfg.warmupAuto) {
            if (open) {
                // The open loop's schedule is fixed in advance: calls due before the
                // warm-up ends are warm-up, the measured part starts then whatever happened.
                ph.begin(warmEnd, cfg);
                ph.warmDone = true;
            } else if (warmEnd == ph.runStart) {
                ph.warmDone = true;
            }
        }
        Thread[] threads = new Thread[c];
        for (int i = 0; i < c; i++) {
            Caller w = new Caller();
            if (System.getenv(LatencyRecord.DUMP_ENV) != null) {
                w.raw = new long[1024];
            }
            callers[i] = w;
            // Round-robin: caller i calls through connection i mod K (K = C: its own).
            Transport.Conn own = conns.get(i % conns.size());
            Transport.Session s = new Transport.Session(cfg.clientId);
            Schedule sched = open ? new Schedule(cfg, i, ph.runStart) : null;
            threads[i] = new Thread(() -> {
                try {
                    if (open) {
                        openLoop(sched, own, s, w, ph);
                        return;
                    }
                    while (!ph.warmDone) {
                        if (ph.stop.get()) {
                            return;
                        }
                        if (call(own, s, w) == Kind.CONNECT) {
                            Thread.sleep(CONNECT_PAUSE_MS);
                        }
                        w.warmup++;
                        ph.warmCalls.incrementAndGet();
                    }
                    measure.await();
                    long mine = cfg.requests;
                    long deadline = ph.deadline;
                    while (!ph.stop.get()) {
                        long start = System.nanoTime();
                        if (deadline != 0 && start - deadline >= 0) {
                            return;
                        }
                        if (cfg.requests > 0) {
                            if (cfg.perClient ? mine-- <= 0 : remaining.decrementAndGet() < 0) {
                                return;
                            }
                        }
                        Kind k = measured(own, s, w, start);
                        if (k == Kind.CONNECT) {
                            // Nothing listens: do not spin (ab would have given up already).
                            Thread.sleep(CONNECT_PAUSE_MS);
                        }
                    }
                } catch (Exception e) {
                    w.lastError = e;
                    ph.stop.set(true);
                    measure.reset();
                } finally {
                    ph.leave();
                }
            }, "bench-" + i);
        }
        if (open && ph.warmDone && warmEnd == ph.runStart) {
            ph.cpuStart = ProcessCpu.now();
        }
        for (Thread th : threads) {
            th.start();
        }
        if (cfg.warmupAuto) {
            autoWarmup(cfg, ph, threads, err);
            if (open) {
                // Calls due from a millisecond on are measured: every caller sees warmDone by then.
                ph.begin(Phase.later(System.nanoTime() + 1_000_000L, startAt), cfg);
            } else {
                waitUntil(startAt, threads, ph); // the callers go on warming up until then
            }
            ph.warmDone = true;
        } else if (!ph.warmDone) {
            waitUntil(warmEnd, threads, ph);
            ph.warmDone = true;
        }
        if (open && ph.cpuStart == null) {
            // No barrier in an open loop: read the CPU when the measured part begins.
            ph.cpuStart = cpuAt(ph.measureStart, threads);
        }
        for (Thread th : threads) {
            try {
                th.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                ph.stop.set(true);
            }
        }
        long joined = System.nanoTime();
        if (ph.cpuStart == null || !ph.warmDone) {
            throw new RunError(Exit.INTERNAL, "java-client: the run stopped before timing: " + firstError(callers));
        }
        long end = 0;
        for (Caller w : callers) {
            if (w.lastEnd != 0 && (end == 0 || w.lastEnd - end > 0)) {
                end = w.lastEnd;
            }
        }
        if (end == 0 || end - ph.measureStart < 0) {
            end = Math.max(joined, ph.measureStart);
        }
        ProcessCpu cpuEnd = ph.cpuEnd == null ? ProcessCpu.now() : ph.cpuEnd;
        Result res = new Result();
        double secs = Math.max(0, end - ph.measureStart) / 1e9;
        res.report = report(cfg, t, docLength, callers, secs, cpuEnd.minus(ph.cpuStart));
        for (Caller w : callers) {
            if (w.raw != null) {
                res.raw = Arrays.copyOf(res.raw, res.rawN + w.rawN);
                System.arraycopy(w.raw, 0, res.raw, res.rawN, w.rawN);
                res.rawN += w.rawN;
            }
        }
        if (cfg.tls != null) {
            res.report.tls = cfg.tls.line();
            res.report.tlsHandshakes = cfg.tls.handshakes() - ph.tlsStart;
            res.report.tlsResumed = cfg.tls.resumed() - ph.tlsResumedStart;
        }
        if (opened != null) {
            res.report.connectionsOpened = opened.get() - ph.openedStart;
            res.report.keepAlive = 0;
        }
        res.report.windowStartMicros = ph.micros(ph.measureStart);
        res.report.windowEndMicros = ph.micros(end);
        if (cfg.warmupAuto) {
            res.report.warmupSeconds = Math.max(0, ph.measureStart - ph.runStart) / 1e9;
            res.report.warmupSettled = ph.settled ? "yes" : "no";
        }
        if (open && secs > 0) {
            err.printf("java-client: open loop: target %d calls/s, achieved %.1f%n", cfg.rate,
                res.report.complete / secs);
        }
        Throwable last = firstError(callers);
        if (last != null) {
            err.println("java-client: last error: " + last.getMessage());
        }
        return res;
    }

    /**
     * -warmup auto: back-to-back windows of 250 ms from the start of the callers; ends
     * when the detector settles, at -warmup-max, or when every caller is gone.
     */
    private static void autoWarmup(Config cfg, Phase ph, Thread[] threads, PrintStream err) {
        WarmupDetector d = new WarmupDetector();
        long from = ph.runStart;
        long prev = ph.warmCalls.get();
        while (true) {
            long next = from + WarmupDetector.WINDOW_NANOS;
            if (!waitUntil(next, threads, ph)) {
                return;
            }
            long now = System.nanoTime();
            long n = ph.warmCalls.get();
            double tput = (n - prev) * 1e9 / Math.max(1, now - from);
            prev = n;
            from = now;
            if (d.add(tput)) {
                ph.settled = true;
                err.printf("java-client: warm-up settled after %.3f s (%d windows, last %.1f calls/s)%n",
                    (now - ph.runStart) / 1e9, d.windows(), tput);
                return;
            }
            if (now - ph.runStart >= cfg.warmupMaxNanos) {
                err.printf("java-client: warm-up did not settle within -warmup-max %.3f s (%d windows, last %.1f calls/s)%n",
                    cfg.warmupMaxNanos / 1e9, d.windows(), tput);
                return;
            }
        }
    }

    /** Parks until nanoTime at; false when every caller ended (or one failed) before. */
    private static boolean waitUntil(long at, Thread[] threads, Phase ph) {
        long wait;
        while ((wait = at - System.nanoTime()) > 0) {
            if (ph.stop.get() || !anyAlive(threads)) {
                return false;
            }
            LockSupport.parkNanos(Math.min(wait, 10_000_000L));
        }
        return true;
    }

    private static boolean anyAlive(Thread[] threads) {
        for (Thread th : threads) {
            if (th.isAlive()) {
                return true;
            }
        }
        return false;
    }

    /** One measured call of the closed loop, timed from start. */
    private static Kind measured(Transport.Conn own, Transport.Session s, Caller w, long start) {
        Kind k = call(own, s, w);
        long end = System.nanoTime();
        record(w, k, w.lastBytes, start, end);
        return k;
    }

    /** One call: its kind, its response bytes in w.lastBytes (0 when it failed). */
    private static Kind call(Transport.Conn own, Transport.Session s, Caller w) {
        try {
            w.lastBytes = own.call(s);
            return Kind.OK;
        } catch (CallError f) {
            w.lastBytes = 0;
            w.lastError = f;
            return f.kind;
        }
    }

    /** Books one measured call; only calls the server answered have a latency. */
    private static void record(Caller w, Kind k, long bytes, long start, long end) {
        w.byKind[k.ordinal()]++;
        w.lastEnd = end;
        if (k.answered()) {
            w.bytes += bytes;
            long us = Math.max(1, Math.min(HIST_MAX_US, (end - start) / 1000));
            w.hist.recordValue(us);
            if (w.raw != null) {
                if (w.rawN == w.raw.length) {
                    w.raw = Arrays.copyOf(w.raw, w.raw.length * 2);
                }
                w.raw[w.rawN++] = us;
            }
        }
    }

    /**
     * One caller's share of an open loop (go-client's -rate): its calls are due every
     * C/R seconds, caller i starting i/R seconds after the run began, so the C callers
     * together make R calls per second. With -n the measured calls are split among the
     * callers (or -n each with -per-client).
     */
    static final class Schedule {
        final long intervalNanos;
        final long firstDue;
        final long quota; // measured calls; 0 = no limit

        Schedule(Config cfg, int index, long runStart) {
            double perSecond = cfg.rate;
            intervalNanos = Math.max(1, Math.round(cfg.concurrency * 1e9 / perSecond));
            firstDue = runStart + Math.round(index * 1e9 / perSecond);
            if (cfg.requests == 0) {
                quota = 0;
            } else if (cfg.perClient) {
                quota = cfg.requests;
            } else {
                quota = cfg.requests / cfg.concurrency + (index < cfg.requests % cfg.concurrency ? 1 : 0);
            }
        }
    }

    /**
     * Calls at their due times whatever happened to the previous ones (wrk2). Latency
     * counts from the due time, so a stalled server shows in the percentiles instead of
     * silently slowing the load (coordinated omission). A call late for its due time
     * goes at once. Calls due before the measured window starts are warm-up.
     */
    private static void openLoop(Schedule sched, Transport.Conn own, Transport.Session s, Caller w, Phase ph) {
        long due = sched.firstDue;
        long done = 0;
        while (!ph.stop.get()) {
            long deadline = ph.warmDone ? ph.deadline : 0;
            if (deadline != 0 && due - deadline >= 0) {
                return;
            }
            if (sched.quota > 0 && done >= sched.quota) {
                return;
            }
            long wait;
            while ((wait = due - System.nanoTime()) > 0) {
                LockSupport.parkNanos(wait);
                if (ph.stop.get()) {
                    return;
                }
            }
            Kind k = call(own, s, w);
            long end = System.nanoTime();
            if (!ph.warmDone || due - ph.measureStart < 0) {
                w.warmup++;
                ph.warmCalls.incrementAndGet();
            } else {
                record(w, k, w.lastBytes, due, end);
                done++;
            }
            due += sched.intervalNanos;
        }
    }

    /** The process CPU at time `at` (nanoTime), or now if every caller ended before. */
    private static ProcessCpu cpuAt(long at, Thread[] threads) {
        long wait;
        while ((wait = at - System.nanoTime()) > 0) {
            if (!anyAlive(threads)) {
                break;
            }
            LockSupport.parkNanos(Math.min(wait, 10_000_000L));
        }
        return ProcessCpu.now();
    }

    private static Throwable firstError(Caller[] callers) {
        for (Caller w : callers) {
            if (w != null && w.lastError != null) {
                return w.lastError;
            }
        }
        return null;
    }

    /**
     * One checked call before timing, then a second one carrying the issued token: exit 4
     * when nothing answers, 3 when the answer is wrong or refused.
     */
    static long verify(Config cfg, Transport t) throws RunError {
        Transport.Conn conn;
        String context = cfg.name() + " against " + cfg.addr;
        try {
            conn = t.open(-1);
        } catch (CallError e) {
            throw certificate(cfg, e).orElse(RunError.verify(Exit.UNREACHABLE, e, context));
        }
        try {
            Transport.Session s = new Transport.Session(cfg.clientId);
            long bytes = conn.call(s);
            if (s.token == null || s.token.isEmpty()) {
                throw new RunError(Exit.VERIFY, "verify: length: " + context + ": the response carries no token");
            }
            // The token round trip: the issued token must be accepted on the next call.
            conn.call(s);
            return bytes;
        } catch (CallError e) {
            throw certificate(cfg, e).orElse(RunError.verify(e.kind.answered() ? Exit.VERIFY : Exit.UNREACHABLE, e, context));
        } finally {
            conn.close();
        }
    }

    /** A certificate problem is exit 3 with its cause named, as go-client and php-client say it. */
    static java.util.Optional<RunError> certificate(Config cfg, CallError e) {
        if (cfg.tls == null) {
            return java.util.Optional.empty();
        }
        Throwable why = e;
        String cause = rpcbed.tls.ClientTls.cause(e);
        if (cause == null && cfg.tls.lastFailure() != null) {
            // The engine saw the handshake fail; the library reported something else (Dubbo).
            why = cfg.tls.lastFailure();
            cause = rpcbed.tls.ClientTls.cause(why);
        }
        if (cause == null && !e.kind.answered()) {
            cause = cfg.tls.probe(cfg.host, cfg.port, cfg.timeoutMillis(), 2000);
        }
        if (cause == null) {
            return java.util.Optional.empty();
        }
        // The deepest message there is (IceSSL's innermost exception has none).
        String msg = why.toString();
        for (Throwable t = why; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t.getMessage() != null) {
                msg = t.getMessage();
            }
        }
        return java.util.Optional.of(new RunError(Exit.VERIFY, "verify: certificate: " + cause + ": " + cfg.proto
            + " server at " + cfg.addr + ": " + msg));
    }

    static ReportWriter.Report report(Config cfg, Transport t, long docLength, Caller[] callers,
            double secs, ProcessCpu cpu) {
        Histogram h = LatencyRecord.histogram();
        long[] byKind = new long[Kind.values().length];
        long bytes = 0;
        long warmup = 0;
        for (Caller w : callers) {
            h.add(w.hist);
            for (int k = 0; k < byKind.length; k++) {
                byKind[k] += w.byKind[k];
            }
            bytes += w.bytes;
            warmup += w.warmup;
        }
        ReportWriter.Report r = new ReportWriter.Report();
        r.serverSoftware = t.serverSoftware();
        r.serverHostname = cfg.host;
        r.serverPort = cfg.port;
        r.documentPath = cfg.documentPath();
        r.documentLength = docLength;
        r.concurrency = cfg.concurrency;
        r.timeTakenSeconds = secs;
        Map<Kind, Long> fails = new EnumMap<>(Kind.class);
        for (Kind k : Kind.values()) {
            long n = byKind[k.ordinal()];
            r.complete += n;
            if (k != Kind.OK && n > 0) {
                fails.put(k, n);
                r.failed += n;
                r.errors.put(k.label, n);
                if (k.statusError()) {
                    r.non2xx += n;
                }
            }
        }
        r.failedConnect = fails.getOrDefault(Kind.CONNECT, 0L);
        r.failedReceive = fails.getOrDefault(Kind.RECEIVE, 0L) + fails.getOrDefault(Kind.TIMEOUT, 0L);
        r.failedLength = fails.getOrDefault(Kind.LENGTH, 0L);
        r.failedExceptions = fails.getOrDefault(Kind.EXCEPTIONS, 0L)
            + fails.getOrDefault(Kind.UNAUTHENTICATED, 0L) + fails.getOrDefault(Kind.INVALID_ARGUMENT, 0L);
        // Every protocol here keeps its connections (the Java HTTP client pools them).
        r.keepAlive = r.complete;
        r.totalTransferred = bytes;
        if (h.getTotalCount() > 0) {
            r.rowMin = msRound(h.getMinValue());
            r.rowMean = msRound(h.getMean());
            r.rowSd = Math.round(h.getStdDeviation() / 100) / 10.0;
            r.rowMedian = msRound(h.getValueAtPercentile(50));
            r.rowMax = msRound(h.getMaxValue());
            for (int i = 0; i < ReportWriter.AB_PERCENTS.length; i++) {
                int p = ReportWriter.AB_PERCENTS[i];
                r.percentilesMs[i] = msRound(p == 100 ? h.getMaxValue() : h.getValueAtPercentile(p));
            }
            r.p50Us = h.getValueAtPercentile(50);
            r.p90Us = h.getValueAtPercentile(90);
            r.p99Us = h.getValueAtPercentile(99);
            r.p999Us = h.getValueAtPercentile(99.9);
            r.meanUs = Math.round(h.getMean() * 10) / 10.0;
            r.maxUs = h.getMaxValue();
        }
        r.protocol = cfg.proto;
        r.call = cfg.call;
        r.items = cfg.items;
        r.connections = cfg.connections();
        r.sharedConnections = cfg.shared();
        r.warmupSeconds = cfg.warmupNanos / 1e9;
        r.warmupCalls = warmup;
        r.targetRate = cfg.rate;
        r.cpuUser = cpu.user;
        r.cpuSystem = cpu.system;
        r.jitMillis = cpu.jitMillis;
        r.latencyHistogram = LatencyRecord.encode(h);
        r.versions = new TreeMap<>(t.versions());
        r.versions.put("java", System.getProperty("java.version"));
        return r;
    }

    private static long msRound(double us) {
        return Math.round(us / 1000);
    }
}
