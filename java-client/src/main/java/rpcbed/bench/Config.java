package rpcbed.bench;

import java.util.Set;
import java.util.concurrent.TimeUnit;
import rpcbed.Main;

/** One run: the whole job in one plain struct, parsed from go-client's flags. */
public final class Config {
    public static final String GROUP_NAME = "USER_EVENT";
    public static final String EN_NAME = "app_call_connect_success";
    public static final int MAX_ITEMS = 100_000;

    public String proto = "";
    public String call = "";
    public int items;
    public int concurrency = 1;
    /** Measured calls in total, or per worker with perClient; 0 = no count limit. */
    public long requests;
    public boolean perClient;
    public long durationNanos;
    public long warmupNanos;
    /** Connections: 0 = one per worker. */
    public int conns;
    public long timeoutNanos = TimeUnit.SECONDS.toNanos(10);
    public String addr = "";
    public String host = "";
    public int port;
    public String clientId = "java-client";
    public boolean keepAlive;
    /** Open loop: calls per second in total (0 = closed loop). */
    public int rate;
    /** Keeps the open-loop interval above 0 (as go-client). */
    public static final int MAX_RATE = 10_000_000;

    static final String USAGE = """
        usage:
          java -jar java-client.jar -proto grpc|thrift|http|ice|dubbo -call datatype|datalist
                [-items N] -c C (-n N | -t DURATION | both) [-per-client] [-warmup 2s]
                [-conns K] [-timeout 10s] [-k] [-rate R] -addr HOST:PORT [-client-id ID]
          java -jar java-client.jar serve -proto ice|dubbo|grpc|thrift|http [-port N]

        Before timing one call is verified (codeId 101, or exactly -items items, and a
        token). The report (ab 2.3 layout + rpcbed block) goes to stdout, logs to stderr.
        Durations take Go syntax (30s, 1m) or, as in ab, whole seconds (30).
        -n counts calls in total; with -per-client, calls per worker (the Java write-up's
        300 000 calls per client). -conns K shares K connections among the workers; by
        default every worker owns one connection.
        -rate R runs an open loop: R calls per second in total, each worker's calls due
        at fixed intervals, latency counted from each call's due time (coordinated
        omission corrected); 0 (default) is ab's closed loop.

        exit codes:
          0  report printed (also when calls failed: see "Failed requests")
          2  bad arguments
          3  verify failed: the server answered, but wrongly (no report)
          4  server unreachable before timing (no report)
        """;

    public static Config parse(String[] args) throws Main.UsageError {
        Main.Flags f = new Main.Flags(args, Set.of("k", "per-client", "h", "help"));
        if (f.has("h") || f.has("help")) {
            throw new Main.UsageError("help");
        }
        Config c = new Config();
        c.proto = f.string("proto", "");
        c.call = f.string("call", "");
        c.items = f.integer("items", 0);
        c.concurrency = f.integer("c", 1);
        c.requests = f.longValue("n", 0);
        c.perClient = f.bool("per-client", false);
        c.durationNanos = f.nanos("t", 0);
        c.warmupNanos = f.nanos("warmup", 0);
        c.conns = f.integer("conns", 0);
        c.timeoutNanos = f.nanos("timeout", c.timeoutNanos);
        c.addr = f.string("addr", "");
        c.clientId = f.string("client-id", c.clientId);
        c.keepAlive = f.bool("k", false);
        c.rate = f.integer("rate", 0);
        f.done();
        c.validate();
        return c;
    }

    void validate() throws Main.UsageError {
        switch (proto) {
            case "grpc", "thrift", "http", "ice", "dubbo" -> { }
            default -> throw new Main.UsageError("-proto \"" + proto + "\": want grpc, thrift, http, ice or dubbo");
        }
        switch (call) {
            case "datatype" -> {
                if (items != 0) {
                    throw new Main.UsageError("-items " + items + ": datatype takes no items");
                }
            }
            case "datalist" -> {
                if (items < 0 || items > MAX_ITEMS) {
                    throw new Main.UsageError("-items " + items + ": want 0.." + MAX_ITEMS);
                }
            }
            default -> throw new Main.UsageError("-call \"" + call + "\": want datatype or datalist");
        }
        if (concurrency < 1) {
            throw new Main.UsageError("-c " + concurrency + ": want at least 1");
        }
        if (requests < 0) {
            throw new Main.UsageError("-n " + requests + ": want at least 1");
        }
        if (requests == 0 && durationNanos == 0) {
            throw new Main.UsageError("give -n (calls) or -t (duration), or both");
        }
        if (requests > 0 && !perClient && requests < concurrency) {
            throw new Main.UsageError("-c " + concurrency + " is greater than -n " + requests
                + " (as ab, every worker needs a call)");
        }
        if (conns < 0 || conns > concurrency) {
            throw new Main.UsageError("-conns " + conns + ": want 1.." + concurrency + " (-c)");
        }
        if (rate < 0 || rate > MAX_RATE) {
            throw new Main.UsageError("-rate " + rate + ": want 0.." + MAX_RATE);
        }
        if (timeoutNanos <= 0) {
            throw new Main.UsageError("-timeout must be above 0");
        }
        int colon = addr.lastIndexOf(':');
        if (colon <= 0) {
            throw new Main.UsageError("-addr \"" + addr + "\": want HOST:PORT");
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
            throw new Main.UsageError("-addr \"" + addr + "\": bad port");
        }
    }

    public boolean dataList() {
        return call.equals("datalist");
    }

    /** Connections actually opened. */
    public int connections() {
        return conns == 0 ? concurrency : conns;
    }

    /** Whether workers share connections (fewer connections than workers). */
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
