package rpcbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import rpcbed.bench.Bench;
import rpcbed.cli.Exit;
import rpcbed.bench.CallError;
import rpcbed.bench.Config;
import rpcbed.bench.Kind;
import rpcbed.bench.ReportWriter;
import rpcbed.bench.Transport;
import rpcbed.bench.Transports;
import rpcbed.server.BaselineServer;

/** Each protocol's client against the matching Java server, in-process on a free port. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BenchTest {
    private final Map<Proto, BaselineServer> servers = new EnumMap<>(Proto.class);

    enum Proto { grpc, thrift, http, ice, dubbo }

    private synchronized int port(String proto) throws Exception {
        Proto p = Proto.valueOf(proto);
        BaselineServer s = servers.get(p);
        if (s == null) {
            s = Serve.start(Serve.parse(new String[] {"-proto", proto, "-port", "0", "-threads", "8",
                "-auth-secret", "bench-test"}));
            servers.put(p, s);
        }
        return s.port();
    }

    @AfterAll
    void stop() {
        servers.values().forEach(BaselineServer::close);
    }

    private static String[] args(String proto, String call, int items, int port, String... more) {
        String[] base = {"-proto", proto, "-call", call, "-items", Integer.toString(items), "-c", "3", "-n", "60",
            "-addr", "127.0.0.1:" + port};
        String[] all = new String[base.length + more.length];
        System.arraycopy(base, 0, all, 0, base.length);
        System.arraycopy(more, 0, all, base.length, more.length);
        return all;
    }

    private record Run(int code, String out, String err) {}

    private static Run main(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Bench.main(args, new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static String value(String report, String label) {
        for (String line : report.split("\n")) {
            if (line.startsWith(label)) {
                return line.substring(24).trim();
            }
        }
        return null;
    }

    @ParameterizedTest(name = "{0} {1} items={2}")
    @CsvSource({
        "grpc,   datatype, 0",
        "grpc,   datalist, 200",
        "thrift, datatype, 0",
        "thrift, datalist, 200",
        "http,   datatype, 0",
        "http,   datalist, 200",
        "ice,    datatype, 0",
        "ice,    datalist, 200",
        "dubbo,  datatype, 0",
        "dubbo,  datalist, 200",
    })
    void runAgainstJavaServer(String proto, String call, int items) throws Exception {
        Run r = main(args(proto, call, items, port(proto), "-warmup", "0.2"));
        assertEquals(0, r.code, "exit code; stderr: " + r.err);
        assertEquals("60", value(r.out, "Complete requests:"), "complete");
        assertEquals("0", value(r.out, "Failed requests:"), "failed");
        assertEquals("none", value(r.out, "Errors:"), "errors");
        assertEquals("java", value(r.out, "Client:"), "client");
        assertEquals(proto, value(r.out, "Protocol:"), "protocol");
        assertEquals("3 (per worker)", value(r.out, "Connections:"), "connections");
        long doc = Long.parseLong(value(r.out, "Document Length:").replace(" bytes", ""));
        assertEquals(Long.toString(60 * doc) + " bytes", value(r.out, "Total transferred:"), "total = 60 x doc");
        if (!proto.equals("thrift")) {
            assertEquals("rpcbed-java-" + proto, value(r.out, "Server Software:"), "server software");
        }
        assertTrue(r.out.endsWith("\n") && r.out.contains("\nrpcbed report v1\n"), "rpcbed block");
        assertEquals("full", value(r.out, "Check:"), "check");
        assertEquals("jvm", value(r.out, "Runtime:"), "runtime");
        assertEquals("window", value(r.out, "CPU scope:"), "cpu scope");
        assertEquals("fixed", value(r.out, "Warm-up settled:"), "warm-up settled");
        double start = Double.parseDouble(value(r.out, "Window start:").replace(" [s]", ""));
        double end = Double.parseDouble(value(r.out, "Window end:").replace(" [s]", ""));
        double taken = Double.parseDouble(value(r.out, "Time taken for tests:").replace(" seconds", ""));
        double now = System.currentTimeMillis() / 1000.0;
        assertTrue(start > now - 120 && start <= end && end <= now + 1, "window " + start + " .. " + end + "; now " + now);
        assertEquals(taken, end - start, 0.0015, "window length = time taken");
        // The JIT's compile time within the window: HotSpot monitors it, a count of
        // milliseconds. HotSpot adds a compilation's time when it ends, so one that
        // began before a short window can exceed it (245 ms over a 27 ms window, once
        // in CI); no more than the JVM has lived, times the compiler threads.
        String jit = value(r.out, "JIT compile:");
        assertTrue(jit.matches("\\d+ \\[ms\\]"), "JIT compile: " + jit);
        long jitMs = Long.parseLong(jit.replace(" [ms]", ""));
        long uptimeMs = java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime();
        assertTrue(jitMs <= (uptimeMs + 1) * 8, "JIT compile " + jitMs + " ms in a JVM up " + uptimeMs + " ms");
    }

    /**
     * -connect per-call: every measured call opened its own connection (the report
     * says how many), none kept alive; dubbo reconnects its reference's connection.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"grpc", "thrift", "http", "ice", "dubbo"})
    void connectionPerCall(String proto) throws Exception {
        Run r = main(args(proto, "datalist", 20, port(proto), "-connect", "per-call"));
        assertEquals(0, r.code, "exit code; stderr: " + r.err);
        assertEquals("60", value(r.out, "Complete requests:"), "complete");
        assertEquals("0", value(r.out, "Failed requests:"), "failed");
        assertEquals("60", value(r.out, "Connections opened:"), "connections opened");
        assertEquals(null, value(r.out, "Keep-Alive requests:"), "keep-alive (ab leaves out a count of 0)");
        assertEquals(null, value(r.out, "TLS:"), "no TLS line in plaintext");
        // A persistent run has no such line.
        Run p = main(args(proto, "datalist", 20, port(proto)));
        assertEquals(0, p.code, "exit code; stderr: " + p.err);
        assertEquals(null, value(p.out, "Connections opened:"), "persistent: no connections line");
    }

    /**
     * Dubbo runs in one JVM (a worker's) share one Dubbo application: each run makes
     * its references and destroys them at its end, so a second run works on the same
     * application and the first left no connection open.
     */
    @Test
    void dubboRunsShareOneApplication() throws Exception {
        for (int run = 1; run <= 3; run++) {
            Run r = main(args("dubbo", "datalist", 200, port("dubbo"), "-warmup", "0"));
            assertEquals(0, r.code, "run " + run + ": exit code; stderr: " + r.err);
            assertEquals("60", value(r.out, "Complete requests:"), "run " + run + ": complete");
            assertEquals("0", value(r.out, "Failed requests:"), "run " + run + ": failed");
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"thrift", "http"})
    void oneCallPerConnectionRefusesSharing(String proto) throws Exception {
        Run r = main("-proto", proto, "-call", "datatype", "-c", "4", "-conns", "2", "-n", "8",
            "-addr", "127.0.0.1:" + port(proto));
        assertEquals(Exit.USAGE, r.code, "exit code; stderr: " + r.err);
        assertTrue(r.err.contains("-conns 2"), "stderr names -conns: " + r.err);
        assertEquals("", r.out, "stdout");
    }

    @ParameterizedTest(name = "{0} rate={1}")
    @CsvSource({"grpc, 0", "thrift, 0", "http, 400"})
    void autoWarmup(String proto, int rate) throws Exception {
        Run r = main("-proto", proto, "-call", "datatype", "-c", "2", "-n", "40", "-warmup", "auto",
            "-warmup-max", "3s", "-rate", Integer.toString(rate), "-addr", "127.0.0.1:" + port(proto));
        assertEquals(0, r.code, "exit code; stderr: " + r.err);
        assertEquals("40", value(r.out, "Complete requests:"), "complete");
        String settled = value(r.out, "Warm-up settled:");
        assertTrue(settled.equals("yes") || settled.equals("no"), "warm-up settled " + settled + "; want yes or no");
        double warm = Double.parseDouble(value(r.out, "Warm-up:").replaceFirst(" seconds.*", ""));
        // At least the three 250 ms windows the detector needs, at most -warmup-max plus one window.
        assertTrue(warm >= 0.74 && warm <= 3.3, "warm-up " + warm + " s; want 0.75 .. 3.25");
        assertTrue(r.err.contains("warm-up"), "stderr tells how the warm-up ended: " + r.err);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"grpc", "ice", "dubbo"})
    void sharedConnectionsAndPerClient(String proto) throws Exception {
        Run r = main("-proto", proto, "-call", "datatype", "-c", "4", "-conns", "2", "-n", "5", "-per-client",
            "-addr", "127.0.0.1:" + port(proto));
        assertEquals(0, r.code, "exit code; stderr: " + r.err);
        assertEquals("20", value(r.out, "Complete requests:"), "complete = 5 per client x 4");
        assertEquals("2 (shared)", value(r.out, "Connections:"), "connections");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"grpc", "thrift", "http", "ice", "dubbo"})
    void openLoop(String proto) throws Exception {
        // 40 measured calls at 200 calls/s over 2 workers: each worker's calls are due every
        // 10 ms, so the schedule alone takes at least 195 ms whatever the server's speed.
        Run r = main("-proto", proto, "-call", "datatype", "-c", "2", "-n", "40", "-rate", "200",
            "-warmup", "0.1", "-addr", "127.0.0.1:" + port(proto));
        assertEquals(0, r.code, "exit code; stderr: " + r.err);
        assertEquals("40", value(r.out, "Complete requests:"), "complete");
        assertEquals("0", value(r.out, "Failed requests:"), "failed");
        assertEquals("open", value(r.out, "Loop:"), "loop");
        assertEquals("200 [#/sec]", value(r.out, "Target rate:"), "target rate");
        double secs = Double.parseDouble(value(r.out, "Time taken for tests:").replace(" seconds", ""));
        assertTrue(secs >= 0.19, "time taken " + secs + " s; want at least 0.19 s (40 calls at 200/s)");
        String warm = value(r.out, "Warm-up:");
        assertTrue(warm.startsWith("0.100 seconds, ") && !warm.contains(", 0 calls"),
            "warm-up " + warm + "; want 0.100 s with the calls due in it (about 20)");
    }

    /** A server that stalls once: the calls due meanwhile must show the wait. */
    private static final class StallingTransport implements Transport {
        private final int stallAt;
        private final long stallMillis;

        StallingTransport(int stallAt, long stallMillis) {
            this.stallAt = stallAt;
            this.stallMillis = stallMillis;
        }

        @Override
        public Conn open(int index) {
            return new Conn() {
                int calls;

                @Override
                public long call(Session s) {
                    if (index >= 0 && ++calls == stallAt) {
                        try {
                            Thread.sleep(stallMillis);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    s.token = "t";
                    return 10;
                }

                @Override
                public void close() {}
            };
        }

        @Override
        public boolean sharedConnSafe() {
            return true;
        }

        @Override
        public String serverSoftware() {
            return "stall";
        }

        @Override
        public Map<String, String> versions() {
            return Map.of();
        }

        @Override
        public void close() {}
    }

    @Test
    void openLoopCorrectsCoordinatedOmission() throws Exception {
        // 20 calls due every 10 ms (at 0, 10, .. 190 ms); the 5th (due at 40 ms) stalls
        // 200 ms. Measured from the due time, it and the 10 calls due by 140 ms take at
        // least 100 ms: 11 of 20, so the median too. A closed loop would show one slow call.
        Config cfg = Config.parse(new String[] {"-proto", "grpc", "-call", "datatype", "-c", "1", "-n", "20",
            "-rate", "100", "-addr", "127.0.0.1:1"});
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        ReportWriter.Report rep = Bench.run(cfg, new StallingTransport(5, 200), new PrintStream(err, true,
            StandardCharsets.UTF_8)).report;
        assertEquals(20, rep.complete, "complete");
        assertEquals(100, rep.targetRate, "target rate");
        assertTrue(rep.p50Us >= 100_000, "p50 " + rep.p50Us + " us; want at least 100000 (calls due during the stall)");
        assertTrue(rep.maxUs >= 200_000, "max " + rep.maxUs + " us; want at least 200000 (the stalled call)");
    }

    private static Config config(String proto, String call, int items, int port) throws Exception {
        return Config.parse(args(proto, call, items, port));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"grpc", "thrift", "http", "ice", "dubbo"})
    void forgedTokenIsUnauthenticated(String proto) throws Exception {
        try (Transport t = Transports.create(config(proto, "datatype", 0, port(proto)))) {
            Transport.Conn c = t.open(0);
            Transport.Session s = new Transport.Session("java-client");
            s.token = "AAAAAGVT81gH04ZIeuPLZZOnWTZ";
            CallError f = assertThrows(CallError.class, () -> c.call(s));
            assertEquals(Kind.UNAUTHENTICATED, f.kind, "kind: " + f.getMessage());
            assertEquals("", s.token, "token dropped after unauthenticated");
            assertTrue(c.call(s) > 0, "next call gets a fresh token");
            assertEquals(27, s.token.length(), "fresh token length");
            c.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"grpc", "thrift", "http", "ice", "dubbo"})
    void tooManyItemsIsInvalidArgument(String proto) throws Exception {
        Config cfg = config(proto, "datalist", 1, port(proto));
        cfg.items = 100_001; // past Config's own check, to see the server refuse it
        try (Transport t = Transports.create(cfg)) {
            Transport.Conn c = t.open(0);
            CallError f = assertThrows(CallError.class, () -> c.call(new Transport.Session("java-client")));
            assertEquals(Kind.INVALID_ARGUMENT, f.kind, "kind: " + f.getMessage());
            c.close();
        }
    }

    /**
     * -start-at: the measured window opens at the asked time, not before, when the warm-up
     * ends earlier (the callers go on warming up until then); a closed loop with and without
     * a fixed warm-up, an open loop, and an auto warm-up.
     */
    @ParameterizedTest(name = "rate={0} warmup={1}")
    @CsvSource({"0, 0", "0, 0.1", "400, 0.1", "0, auto"})
    void startAt(int rate, String warmup) throws Exception {
        double at = System.currentTimeMillis() / 1e3 + 2.0;
        Run r = main("-proto", "grpc", "-call", "datatype", "-c", "2", "-t", "0.3", "-warmup", warmup,
            "-warmup-max", "1s", "-rate", Integer.toString(rate), "-start-at", String.format(java.util.Locale.ROOT, "%.6f", at),
            "-addr", "127.0.0.1:" + port("grpc"));
        assertEquals(0, r.code, "exit code; stderr: " + r.err);
        double opened = Double.parseDouble(value(r.out, "Window start:").replace(" [s]", ""));
        assertTrue(opened >= at - 0.001, "window opened at " + opened + ", before -start-at " + at);
        // A loaded machine wakes late, but not by a quarter of a second.
        assertTrue(opened < at + 0.25, "window opened at " + opened + ", long after -start-at " + at);
        assertTrue(Long.parseLong(value(r.out, "Complete requests:")) > 0, "complete: " + r.out);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "no proto          | -call datatype -n 1 -addr 127.0.0.1:1",
        "bad proto         | -proto soap -call datatype -n 1 -addr 127.0.0.1:1",
        "bad call          | -proto grpc -call datalists -n 1 -addr 127.0.0.1:1",
        "items on datatype | -proto grpc -call datatype -items 3 -n 1 -addr 127.0.0.1:1",
        "too many items    | -proto grpc -call datalist -items 100001 -n 1 -addr 127.0.0.1:1",
        "no -n nor -t      | -proto grpc -call datatype -addr 127.0.0.1:1",
        "c above n         | -proto grpc -call datatype -c 5 -n 4 -addr 127.0.0.1:1",
        "conns above c     | -proto grpc -call datatype -c 2 -conns 3 -n 4 -addr 127.0.0.1:1",
        "no port           | -proto grpc -call datatype -n 1 -addr 127.0.0.1",
        "bad port          | -proto grpc -call datatype -n 1 -addr 127.0.0.1:70000",
        "bad duration      | -proto grpc -call datatype -t 3parsecs -addr 127.0.0.1:1",
        "unknown flag      | -proto grpc -call datatype -n 1 -addr 127.0.0.1:1 -z 3",
        "stray argument    | -proto grpc -call datatype -n 1 -addr 127.0.0.1:1 extra",
        "flag twice        | -proto grpc -proto http -call datatype -n 1 -addr 127.0.0.1:1",
        "negative rate     | -proto grpc -call datatype -n 1 -rate -1 -addr 127.0.0.1:1",
        "rate too high     | -proto grpc -call datatype -n 1 -rate 10000001 -addr 127.0.0.1:1",
        "bad warmup        | -proto grpc -call datatype -n 1 -warmup automatic -addr 127.0.0.1:1",
        "zero warmup-max   | -proto grpc -call datatype -n 1 -warmup auto -warmup-max 0 -addr 127.0.0.1:1",
        "thrift conns != c | -proto thrift -call datatype -c 2 -conns 1 -n 4 -addr 127.0.0.1:1",
        "http conns != c   | -proto http -call datatype -c 3 -conns 2 -n 4 -addr 127.0.0.1:1",
        "bad connect       | -proto grpc -call datatype -n 1 -connect sometimes -addr 127.0.0.1:1",
        "per-call open loop| -proto grpc -call datatype -n 1 -rate 10 -connect per-call -addr 127.0.0.1:1",
        "bad resume        | -proto grpc -call datatype -n 1 -resume maybe -addr 127.0.0.1:1",
        "dubbo resume on   | -proto dubbo -call datatype -n 1 -resume on -addr 127.0.0.1:1",
        "tls without ca    | -proto ice -call datatype -n 1 -security tls -addr 127.0.0.1:1",
        "start-at a word   | -proto grpc -call datatype -n 1 -start-at soon -addr 127.0.0.1:1",
        "start-at negative | -proto grpc -call datatype -n 1 -start-at -5 -addr 127.0.0.1:1",
        "start-at zero     | -proto grpc -call datatype -n 1 -start-at 0 -addr 127.0.0.1:1",
        "start-at ms       | -proto grpc -call datatype -n 1 -start-at 1767225600000 -addr 127.0.0.1:1",
        "start-at far away | -proto grpc -call datatype -n 1 -start-at 99999999999 -addr 127.0.0.1:1",
    })
    void badArguments(String name, String line) {
        Run r = main(line.trim().split("\\s+"));
        assertEquals(Exit.USAGE, r.code, name + ": exit code; stderr: " + r.err);
        assertEquals("", r.out, name + ": stdout");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"grpc", "thrift", "http", "ice", "dubbo"})
    void unreachableServer(String proto) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // closed again: nothing listens there
        }
        Run r = main("-proto", proto, "-call", "datatype", "-n", "1", "-timeout", "3s", "-addr", "127.0.0.1:" + port);
        assertEquals(Exit.UNREACHABLE, r.code, "exit code; stderr: " + r.err);
        assertEquals("", r.out, "stdout");
        assertTrue(r.err.contains("verify: connect: "), "stderr has the verify line of kind connect: " + r.err);
    }

    @Test
    void helpIsUsageOnStdout() {
        for (String h : new String[] {"-h", "-help", "--help"}) {
            Run r = main(h);
            assertEquals(Exit.OK, r.code, h + ": exit code");
            assertTrue(r.out.startsWith("usage:"), h + ": usage on stdout: " + r.out);
            assertEquals("", r.err, h + ": stderr");
        }
    }

    @Test
    void wrongAnswerFailsVerify() throws Exception {
        // An HTTP server that answers with the wrong codeId.
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        s.createContext("/", ex -> {
            byte[] b = "{\"code\":0,\"auth\":{\"token\":\"t\"},\"codeId\":7}".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, b.length);
            try (OutputStream o = ex.getResponseBody()) {
                o.write(b);
            }
        });
        s.start();
        try {
            Run r = main("-proto", "http", "-call", "datatype", "-n", "1", "-addr", "127.0.0.1:" + s.getAddress().getPort());
            assertEquals(Exit.VERIFY, r.code, "exit code; stderr: " + r.err);
            assertTrue(r.err.contains("verify: length: ") && r.err.contains("codeId 7"),
                "stderr has the verify line naming the wrong codeId: " + r.err);
            assertEquals("", r.out, "stdout");
        } finally {
            s.stop(0);
        }
    }

    @Test
    void reportLayout() {
        ReportWriter.Report rep = new ReportWriter.Report();
        rep.serverHostname = "127.0.0.1";
        rep.serverPort = 10000;
        rep.failed = 3;
        rep.failedExceptions = 3;
        rep.non2xx = 3;
        rep.complete = 10;
        rep.keepAlive = 10;
        rep.timeTakenSeconds = 2;
        rep.concurrency = 5;
        rep.errors.put("unauthenticated", 3L);
        String out = ReportWriter.write(rep);
        assertTrue(out.contains("Loop:                   closed\nTarget rate:            0 [#/sec]\n"),
            "closed loop lines in:\n" + out);
        rep.targetRate = 500;
        assertTrue(ReportWriter.write(rep).contains("Loop:                   open\nTarget rate:            500 [#/sec]\n"),
            "open loop lines in:\n" + ReportWriter.write(rep));
        String[] want = {
            "Server Software:        \n",
            "Failed requests:        3\n   (Connect: 0, Receive: 0, Length: 0, Exceptions: 3)\nNon-2xx responses:      3\nKeep-Alive requests:    10\n",
            "Requests per second:    5.00 [#/sec] (mean)\n",
            "Time per request:       1000.000 [ms] (mean)\n",
            "Connect:        0    0   0.0      0       0\n",
            " 100%      0 (longest request)\n",
            "Errors:                 unauthenticated=3\n",
        };
        for (String w : want) {
            assertTrue(out.contains(w), "report lacks " + w.replace("\n", "\\n") + " in:\n" + out);
        }
    }
}
