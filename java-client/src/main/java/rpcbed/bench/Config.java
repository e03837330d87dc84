package rpcbed.bench;

import java.util.Set;
import java.util.concurrent.TimeUnit;
import rpcbed.cli.Exit;
import rpcbed.cli.Flags;
import rpcbed.cli.UsageError;

/** One run: the whole job in one plain struct, parsed from go-client's flags. */
public final class Config {
    public static final String GROUP_NAME = "USER_EVENT";
    public static final String EN_NAME = "app_call_connect_success";
    public static final int MAX_ITEMS = 100_000;

    public String proto = "";
    public String call = "";
    public int items;
    public int concurrency = 1;
    /** Measured calls in total, or per caller with perClient; 0 = no count limit. */
    public long requests;
    public boolean perClient;
    public long durationNanos;
    /** Fixed warm-up; ignored when warmupAuto. */
    public long warmupNanos;
    /** -warmup auto: warm up until throughput settles (WarmupDetector), at most warmupMaxNanos. */
    public boolean warmupAuto;
    public long warmupMaxNanos = TimeUnit.SECONDS.toNanos(10);
    /** Connections: 0 = one per caller (-conns = -c). */
    public int conns;
    public long timeoutNanos = TimeUnit.SECONDS.toNanos(10);
    public String addr = "";
    public String host = "";
    public int port;
    public String clientId = "java-client";
    public boolean keepAlive;
    /** Open loop: calls per second in total (0 = closed loop). */
    public int rate;
    /** -security tls|mtls: the TLS settings and counters; null for plaintext. */
    public rpcbed.tls.ClientTls tls;
    public String security = "plaintext";
    /** -connect: persistent, or per-call (a new connection, and handshake, for every call). */
    public String connect = "persistent";
    /**
     * -start-at: Unix microseconds on this host's clock; the measured window opens then,
     * or when the warm-up ends if later (calls before it are warm-up). 0 = none.
     */
    public long startAtMicros;
    /** -start-at further ahead than this is another host's clock or not Unix seconds. */
    static final long START_AHEAD_MAX_MICROS = 3_600_000_000L;
    /** Keeps the open-loop interval above 0 (as go-client). */
    public static final int MAX_RATE = 10_000_000;

    static final String USAGE = """
        usage:
          java -jar java-client.jar -proto grpc|thrift|http|ice|dubbo -call datatype|datalist
                [-items N] -c C (-n N | -t DURATION | both) [-per-client]
                [-warmup 2s|auto] [-warmup-max 10s] [-conns K] [-timeout 10s] [-k]
                [-rate R] -addr HOST:PORT [-client-id ID]
                [-security plaintext|tls|mtls -cacert FILE [-cert FILE -key FILE]
                 [-servername NAME] [-tls-version 1.3|1.2] [-resume on|off]]
                [-connect persistent|per-call] [-start-at UNIX_SECONDS]
          java -jar java-client.jar worker      (runs on stdin, docs/report-format.md)
          java -jar java-client.jar serve -proto ice|dubbo|grpc|thrift|http [-port N]
                [-stats-port N]

        Before timing one call is verified (codeId 101, or exactly -items items, and a
        token). The report (ab 2.3 layout + rpcbed block) goes to stdout, logs to stderr.
        Durations take Go syntax (30s, 1m) or, as in ab, whole seconds (30).
        -n counts calls in total; with -per-client, calls per caller (the Java write-up's
        300 000 calls per client). -conns K opens K TCP connections: by default (K = C)
        every caller owns one; gRPC, Ice and Dubbo may share K < C among the callers
        (round-robin); Thrift and HTTP/1.1 carry one call at a time and refuse K != C.
        -warmup auto warms up until 3 consecutive 250 ms windows' throughput lie within
        5 % of their mean, or until -warmup-max.
        -start-at T opens the measured window at T (Unix seconds on this host's clock)
        or when the warm-up ends, whichever is later; calls before it are warm-up (a
        cluster's tasks share one window).
        -rate R runs an open loop: R calls per second in total, each caller's calls due
        at fixed intervals, latency counted from each call's due time (coordinated
        omission corrected); 0 (default) is ab's closed loop.
        -security tls speaks TLS on every protocol (the JDK's for thrift and http,
        grpc-java's on BoringSSL for grpc with ALPN h2, IceSSL for ice, Dubbo's own for
        dubbo); the server's certificate must chain to -cacert and name -servername
        (default: the host of -addr); mtls adds -cert/-key. The report adds "TLS:" and
        "TLS handshakes:" (the window's).
        -resume: sessions resumed as the library does by default, or not (off). By
        default grpc, thrift, http and ice resume (on); Dubbo builds a new TLS context
        for every connection, so it never resumes and refuses -resume on.
        -connect per-call opens a new connection (and with TLS makes a handshake) for
        every call, timed with the call, and closes it after; the report adds
        "Connections opened:". Closed loop only; dubbo makes a reference per call.

        exit codes:
          0  report printed (also when calls failed: see "Failed requests"); -h
          1  internal error (the report could not be written, or the client failed)
          2  bad arguments
          3  verify failed: the server answered, but wrongly, or refused (no report);
             or a certificate problem: "verify: certificate: CAUSE: ..." (CAUSE: unknown
             CA, expired certificate, wrong name, client certificate refused)
          4  server unreachable before timing (no report)
        """;

    /** -start-at: Unix seconds with a fraction, as go-client takes them; "" = none. */
    static long startAt(String v) throws UsageError {
        if (v.isEmpty()) {
            return 0;
        }
        double s;
        try {
            s = Double.parseDouble(v.trim());
        } catch (NumberFormatException e) {
            s = Double.NaN;
        }
        if (!(s > 0 && s <= 1e11) || !v.trim().matches("\\d+(\\.\\d*)?")) {
            throw new UsageError("-start-at \"" + v + "\": want Unix seconds (as 1767225600.25)");
        }
        long micros = Math.round(s * 1e6);
        java.time.Instant now = java.time.Instant.now();
        long ahead = micros - (now.getEpochSecond() * 1_000_000L + now.getNano() / 1000);
        if (ahead > START_AHEAD_MAX_MICROS) {
            throw new UsageError(String.format("-start-at %s: %d s ahead of this host's clock (at most %d s): "
                + "another host's clock, or not Unix seconds", v, ahead / 1_000_000, START_AHEAD_MAX_MICROS / 1_000_000));
        }
        return micros;
    }

    /** The UsageError message of -h / -help: usage on stdout, exit 0. */
    public static final String HELP = "help";

    public static Config parse(String[] args) throws UsageError {
        Flags f = new Flags(args, Set.of("k", "per-client", "h", "help"));
        if (f.has("h") || f.has("help")) {
            throw new UsageError(HELP);
        }
        Config c = new Config();
        c.proto = f.string("proto", "");
        c.call = f.string("call", "");
        c.items = f.integer("items", 0);
        c.concurrency = f.integer("c", 1);
        c.requests = f.longValue("n", 0);
        c.perClient = f.bool("per-client", false);
        c.durationNanos = f.nanos("t", 0);
        String warm = f.string("warmup", "0");
        if (warm.trim().equals("auto")) {
            c.warmupAuto = true;
        } else {
            c.warmupNanos = Flags.durationValue("warmup", warm);
        }
        c.warmupMaxNanos = f.nanos("warmup-max", c.warmupMaxNanos);
        c.conns = f.integer("conns", 0);
        c.timeoutNanos = f.nanos("timeout", c.timeoutNanos);
        c.addr = f.string("addr", "");
        c.clientId = f.string("client-id", c.clientId);
        c.keepAlive = f.bool("k", false);
        c.rate = f.integer("rate", 0);
        c.security = f.string("security", "plaintext");
        String cacert = f.string("cacert", "");
        String cert = f.string("cert", "");
        String key = f.string("key", "");
        String serverName = f.string("servername", "");
        String tlsVersion = f.string("tls-version", "1.3");
        String resume = f.string("resume", "");
        c.connect = f.string("connect", "persistent");
        c.startAtMicros = startAt(f.string("start-at", ""));
        f.done();
        c.validate();
        c.validateTls(cacert, cert, key, serverName, tlsVersion, resume);
        return c;
    }

    void validate() throws UsageError {
        switch (proto) {
            case "grpc", "thrift", "http", "ice", "dubbo" -> { }
            default -> throw new UsageError("-proto \"" + proto + "\": want grpc, thrift, http, ice or dubbo");
        }
        switch (call) {
            case "datatype" -> {
                if (items != 0) {
                    throw new UsageError("-items " + items + ": datatype takes no items");
                }
            }
            case "datalist" -> {
                if (items < 0 || items > MAX_ITEMS) {
                    throw new UsageError("-items " + items + ": want 0.." + MAX_ITEMS);
                }
            }
            default -> throw new UsageError("-call \"" + call + "\": want datatype or datalist");
        }
        if (concurrency < 1) {
            throw new UsageError("-c " + concurrency + ": want at least 1");
        }
        if (requests < 0) {
            throw new UsageError("-n " + requests + ": want at least 1");
        }
        if (requests == 0 && durationNanos == 0) {
            throw new UsageError("give -n (calls) or -t (duration), or both");
        }
        if (requests > 0 && !perClient && requests < concurrency) {
            throw new UsageError("-c " + concurrency + " is greater than -n " + requests
                + " (as ab, every caller needs a call)");
        }
        if (conns < 0 || conns > concurrency) {
            throw new UsageError("-conns " + conns + ": want 1.." + concurrency + " (-c)");
        }
        if (conns != 0 && conns != concurrency && (proto.equals("thrift") || proto.equals("http"))) {
            throw new UsageError("-conns " + conns + ": " + proto + " carries one call at a time per connection;"
                + " want -conns = -c (" + concurrency + ")");
        }
        if (warmupAuto && warmupMaxNanos <= 0) {
            throw new UsageError("-warmup-max must be above 0 with -warmup auto");
        }
        if (rate < 0 || rate > MAX_RATE) {
            throw new UsageError("-rate " + rate + ": want 0.." + MAX_RATE);
        }
        if (timeoutNanos <= 0) {
            throw new UsageError("-timeout must be above 0");
        }
        int colon = addr.lastIndexOf(':');
        if (colon <= 0) {
            throw new UsageError("-addr \"" + addr + "\": want HOST:PORT");
        }
        host = addr.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        try {
            port = Integer.parseInt(addr.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 1 || port > 65535) {
            throw new UsageError("-addr \"" + addr + "\": bad port");
        }
    }

    void validateTls(String cacert, String cert, String key, String serverName, String tlsVersion, String resume)
            throws UsageError {
        switch (connect) {
            case "persistent" -> { }
            case "per-call" -> {
                if (rate > 0) {
                    throw new UsageError("-connect per-call: closed loop only (no -rate)");
                }
                // -conns is ignored, as go-client ignores it: every call opens its own connection.
                conns = 0;
            }
            default -> throw new UsageError("-connect \"" + connect + "\": want persistent or per-call");
        }
        if (!tlsVersion.equals("1.3") && !tlsVersion.equals("1.2")) {
            throw new UsageError("-tls-version \"" + tlsVersion + "\": want 1.3 or 1.2");
        }
        if (!resume.isEmpty() && !resume.equals("on") && !resume.equals("off")) {
            throw new UsageError("-resume \"" + resume + "\": want on or off");
        }
        if (resume.equals("on") && proto.equals("dubbo")) {
            throw new UsageError("-resume on -proto dubbo: Dubbo builds a new TLS context for every connection,"
                + " so no session is ever resumed; want off or no -resume");
        }
        switch (security) {
            case "plaintext" -> {
                if (!cacert.isEmpty() || !cert.isEmpty() || !key.isEmpty()) {
                    throw new UsageError("-cacert/-cert/-key need -security tls or mtls");
                }
                return;
            }
            case "tls", "mtls" -> { }
            default -> throw new UsageError("-security \"" + security + "\": want plaintext, tls or mtls");
        }
        if (cacert.isEmpty()) {
            throw new UsageError("-security " + security + " needs -cacert FILE (the CA that signed the server's certificate)");
        }
        if (security.equals("mtls") && (cert.isEmpty() || key.isEmpty())) {
            throw new UsageError("-security mtls needs -cert FILE and -key FILE");
        }
        try {
            tls = rpcbed.tls.ClientTls.load(security, cacert, cert, key, serverName.isEmpty() ? host : serverName,
                tlsVersion, resume.isEmpty() ? !proto.equals("dubbo") : resume.equals("on"));
        } catch (java.io.IOException | java.security.GeneralSecurityException e) {
            throw new UsageError("-cacert/-cert/-key: " + e.getMessage());
        }
    }

    public boolean dataList() {
        return call.equals("datalist");
    }

    public boolean perCall() {
        return connect.equals("per-call");
    }

    /** Connections actually opened. */
    public int connections() {
        return conns == 0 ? concurrency : conns;
    }

    /** Whether callers share connections (fewer connections than callers). */
    public boolean shared() {
        return connections() < concurrency;
    }

    /** Measured calls the run aims at in total (0 = until -t ends). */
    public long totalRequests() {
        return perClient ? requests * concurrency : requests;
    }

    /** ab's "Document Path" (docs/report-format.md). */
    public String documentPath() {
        return switch (proto) {
            case "grpc" -> dataList() ? "/rpcbed.data.Data/DataList?n=" + items : "/rpcbed.data.Data/DataType";
            case "http" -> httpPath();
            default -> dataList() ? "/Data/DataList?n=" + items : "/Data/DataType";
        };
    }

    public String httpPath() {
        return dataList() ? "/v1/datalist?n=" + items : "/v1/datatype?groupName=" + GROUP_NAME + "&enName=" + EN_NAME;
    }

    /** The run's stable name, e.g. java-grpc-datalist-200-c50. */
    public String name() {
        return "java-" + proto + "-" + call + (dataList() ? "-" + items : "") + "-c" + concurrency;
    }

    public int timeoutMillis() {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(timeoutNanos)));
    }
}
