package rpcbed.bench;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import rpcbed.Main;

/**
 * The closed-loop (ab-like) load run: verify one call, open the connections, warm up,
 * then C workers call until -n calls or -t ends; every figure comes from the measured
 * part only.
 */
public final class Bench {
    /** Latencies above an hour are clamped: no call lives that long (deadline -timeout). */
    private static final long HIST_MAX_US = 3_600_000_000L;

    /** How long a worker waits after a refused connection (as go-client). */
    private static final long CONNECT_PAUSE_MS = 10;

    private Bench() {}

    public static int main(String[] args, PrintStream out, PrintStream err) {
        Config cfg;
        try {
            cfg = Config.parse(args);
        } catch (Main.UsageError e) {
            if (!e.getMessage().equals("help")) {
                err.println("java-client: " + e.getMessage());
            }
            err.print(Config.USAGE);
            return e.getMessage().equals("help") ? Main.EXIT_OK : Main.EXIT_USAGE;
        }
        try (Transport t = Transports.create(cfg)) {
            Result res = run(cfg, t, err);
            out.print(ReportWriter.write(res.report));
            out.flush();
            return Main.EXIT_OK;
        } catch (RunError e) {
            err.println("java-client: " + e.getMessage());
            return e.code;
        } catch (RuntimeException e) {
            err.println("java-client: " + e);
            e.printStackTrace(err);
            return 1;
        }
    }

    /** A run that ended before timing, with the exit code to return. */
    public static final class RunError extends Exception {
        public final int code;

        RunError(int code, String message) {
            super(message);
            this.code = code;
        }
    }

    /** The outcome of one run. */
    public static final class Result {
        public ReportWriter.Report report;
    }

    private static final class Worker {
        final Histogram hist = new Histogram(1, HIST_MAX_US, 3);
        final long[] byKind = new long[Kind.values().length];
        long bytes;
        long warmup;
        Throwable lastError;
    }

    public static Result run(Config cfg, Transport t, PrintStream err) throws RunError {
        long docLength = verify(cfg, t);
        err.println("java-client: verified " + cfg.name() + " (" + docLength + " bytes)");

        int nConns = cfg.connections();
        List<Transport.Conn> conns = new ArrayList<>();
        try {
            for (int i = 0; i < nConns; i++) {
                conns.add(t.open(i));
            }
        } catch (CallFailure e) {
            conns.forEach(Transport.Conn::close);
            throw new RunError(Main.EXIT_UNREACHABLE, "opening connection " + (conns.size() + 1)
                + " of " + nConns + " to " + cfg.addr + ": " + e.getMessage());
        }
        // Shared connections: thread-safe ones are shared round-robin; the others are
        // lent to one worker per call.
        BlockingQueue<Transport.Conn> pool = null;
        if (cfg.shared() && !t.sharedConnSafe()) {
            pool = new ArrayBlockingQueue<>(nConns, false, conns);
        }

        int c = cfg.concurrency;
        Worker[] workers = new Worker[c];
        AtomicLong remaining = new AtomicLong(cfg.perClient ? 0 : cfg.requests);
        AtomicBoolean stop = new AtomicBoolean();
        long[] marks = new long[2]; // measure start (nanoTime), deadline (0 = none)
        Cpu[] cpuStart = new Cpu[1];
        CyclicBarrier measure = new CyclicBarrier(c, () -> {
            marks[0] = System.nanoTime();
            marks[1] = cfg.durationNanos > 0 ? marks[0] + cfg.durationNanos : 0;
            cpuStart[0] = Cpu.now();
        });
        long runStart = System.nanoTime();
        long warmupEnd = runStart + cfg.warmupNanos;
        boolean open = cfg.rate > 0;
        if (open) {
            // The open loop's schedule is fixed in advance: calls due before warmupEnd
            // are warm-up, the measured part starts at warmupEnd whatever happened.
            marks[0] = warmupEnd;
            marks[1] = cfg.durationNanos > 0 ? warmupEnd + cfg.durationNanos : 0;
        }
        Thread[] threads = new Thread[c];
        final BlockingQueue<Transport.Conn> lend = pool;
        for (int i = 0; i < c; i++) {
            Worker w = new Worker();
            workers[i] = w;
            Transport.Conn own = conns.get(i % nConns);
            Transport.Session s = new Transport.Session(cfg.clientId);
            Schedule sched = open ? new Schedule(cfg, i, runStart) : null;
            threads[i] = new Thread(() -> {
                try {
                    if (open) {
                        openLoop(cfg, sched, lend, own, s, w, stop, marks[0], marks[1]);
                        return;
                    }
                    while (cfg.warmupNanos > 0 && System.nanoTime() - warmupEnd < 0) {
                        try {
                            call(lend, own, s, w);
                        } catch (CallFailure f) {
                            w.lastError = f;
                            if (f.kind == Kind.CONNECT) {
                                Thread.sleep(CONNECT_PAUSE_MS);
                            }
                        }
                        w.warmup++;
                    }
                    measure.await();
                    long mine = cfg.requests;
                    long deadline = marks[1];
                    while (!stop.get()) {
                        long start = System.nanoTime();
                        if (deadline != 0 && start - deadline >= 0) {
                            return;
                        }
                        if (cfg.requests > 0) {
                            if (cfg.perClient ? mine-- <= 0 : remaining.decrementAndGet() < 0) {
                                return;
                            }
                        }
                        Kind k = measured(lend, own, s, w, start);
                        if (k == Kind.CONNECT) {
                            // Nothing listens: do not spin (ab would have given up already).
                            Thread.sleep(CONNECT_PAUSE_MS);
                        }
                    }
                } catch (Exception e) {
                    w.lastError = e;
                    stop.set(true);
                    measure.reset();
                }
            }, "bench-" + i);
        }
        if (open && cfg.warmupNanos == 0) {
            cpuStart[0] = Cpu.now();
        }
        for (Thread th : threads) {
            th.start();
        }
        if (open && cfg.warmupNanos > 0) {
            // No barrier in an open loop: read the CPU when the measured part begins.
            cpuStart[0] = cpuAt(warmupEnd, threads);
        }
        for (Thread th : threads) {
            try {
                th.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                stop.set(true);
            }
        }
        long endNanos = System.nanoTime();
        Cpu cpu = cpuStart[0] == null ? Cpu.now() : Cpu.now().minus(cpuStart[0]);
        conns.forEach(Transport.Conn::close);
        if (marks[0] == 0) {
            throw new RunError(1, "the run stopped before timing: " + firstError(workers));
        }
        Result res = new Result();
        double secs = Math.max(0, endNanos - marks[0]) / 1e9;
        res.report = report(cfg, t, docLength, workers, secs, cpu);
        if (open && secs > 0) {
            err.printf("java-client: open loop: target %d calls/s, achieved %.1f%n", cfg.rate,
                res.report.complete / secs);
        }
        Throwable last = firstError(workers);
        if (last != null) {
            err.println("java-client: last error: " + last.getMessage());
        }
        return res;
    }

    /** One measured call of the closed loop, timed from start. */
    private static Kind measured(BlockingQueue<Transport.Conn> pool, Transport.Conn own, Transport.Session s,
            Worker w, long start) {
        Kind k = Kind.OK;
        long bytes = 0;
        try {
            bytes = call(pool, own, s, w);
        } catch (CallFailure f) {
            k = f.kind;
            w.lastError = f;
        }
        record(w, k, bytes, start, System.nanoTime());
        return k;
    }

    /** Books one measured call; only calls the server answered have a latency. */
    private static void record(Worker w, Kind k, long bytes, long start, long end) {
        w.byKind[k.ordinal()]++;
        if (k.answered()) {
            w.bytes += bytes;
            w.hist.recordValue(Math.max(1, Math.min(HIST_MAX_US, (end - start) / 1000)));
        }
    }

    /**
     * One worker's share of an open loop (go-client's -rate): its calls are due every
     * C/R seconds, worker i starting i/R seconds after the run began, so the C workers
     * together make R calls per second. With -n the measured calls are split among the
     * workers (or -n each with -per-client).
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
     * goes at once.
     */
    static void openLoop(Config cfg, Schedule sched, BlockingQueue<Transport.Conn> pool, Transport.Conn own,
            Transport.Session s, Worker w, AtomicBoolean stop, long measureStart, long deadline) {
        long due = sched.firstDue;
        long done = 0;
        while (!stop.get()) {
            if (deadline != 0 && due - deadline >= 0) {
                return;
            }
            if (sched.quota > 0 && done >= sched.quota) {
                return;
            }
            long wait;
            while ((wait = due - System.nanoTime()) > 0) {
                LockSupport.parkNanos(wait);
                if (stop.get()) {
                    return;
                }
            }
            Kind k = Kind.OK;
            long bytes = 0;
            try {
                bytes = call(pool, own, s, w);
            } catch (CallFailure f) {
                k = f.kind;
                w.lastError = f;
            }
            long end = System.nanoTime();
            if (due - measureStart < 0) {
                w.warmup++;
            } else {
                record(w, k, bytes, due, end);
                done++;
            }
            due += sched.intervalNanos;
        }
    }

    /** The process CPU at time `at` (nanoTime), or now if every worker ended before. */
    private static Cpu cpuAt(long at, Thread[] threads) {
        long wait;
        while ((wait = at - System.nanoTime()) > 0) {
            boolean alive = false;
            for (Thread th : threads) {
                alive |= th.isAlive();
            }
            if (!alive) {
                break;
            }
            LockSupport.parkNanos(Math.min(wait, 10_000_000L));
        }
        return Cpu.now();
    }

    private static long call(BlockingQueue<Transport.Conn> pool, Transport.Conn own, Transport.Session s, Worker w)
            throws CallFailure {
        if (pool == null) {
            return own.call(s);
        }
        Transport.Conn conn;
        try {
            conn = pool.take();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CallFailure(Kind.RECEIVE, "interrupted");
        }
        try {
            return conn.call(s);
        } finally {
            pool.add(conn);
        }
    }

    private static Throwable firstError(Worker[] workers) {
        for (Worker w : workers) {
            if (w != null && w.lastError != null) {
                return w.lastError;
            }
        }
        return null;
    }

    /** One checked call before timing: exit 4 when nothing answers, 3 when the answer is wrong. */
    static long verify(Config cfg, Transport t) throws RunError {
        Transport.Conn conn;
        try {
            conn = t.open(-1);
        } catch (CallFailure e) {
            throw new RunError(Main.EXIT_UNREACHABLE, "server " + cfg.addr + " unreachable: " + e.getMessage());
        }
        try {
            Transport.Session s = new Transport.Session(cfg.clientId);
            long bytes = conn.call(s);
            if (s.token == null || s.token.isEmpty()) {
                throw new RunError(Main.EXIT_VERIFY, "verify " + cfg.name() + ": the response carries no token");
            }
            // The token round trip: the issued token must be accepted on the next call.
            conn.call(s);
            return bytes;
        } catch (CallFailure e) {
            int code = e.kind.answered() ? Main.EXIT_VERIFY : Main.EXIT_UNREACHABLE;
            throw new RunError(code, "verify " + cfg.name() + " against " + cfg.addr + ": " + e.getMessage());
        } finally {
            conn.close();
        }
    }

    static ReportWriter.Report report(Config cfg, Transport t, long docLength, Worker[] workers,
            double secs, Cpu cpu) {
        Histogram h = new Histogram(1, HIST_MAX_US, 3);
        long[] byKind = new long[Kind.values().length];
        long bytes = 0;
        long warmup = 0;
        for (Worker w : workers) {
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
        r.versions = new TreeMap<>(t.versions());
        r.versions.put("java", System.getProperty("java.version"));
        return r;
    }

    private static long msRound(double us) {
        return Math.round(us / 1000);
    }
}
