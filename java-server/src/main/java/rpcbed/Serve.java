package rpcbed;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.concurrent.CountDownLatch;
import rpcbed.cli.Exit;
import rpcbed.cli.Flags;
import rpcbed.cli.UsageError;
import rpcbed.core.DataService;
import rpcbed.core.Tokens;
import rpcbed.server.BaselineServer;
import rpcbed.server.DubboServer;
import rpcbed.server.GrpcServer;
import rpcbed.server.HttpJsonServer;
import rpcbed.server.IceServer;
import rpcbed.server.Limits;
import rpcbed.server.ThriftServer;
import rpcbed.stats.StatsListener;
import rpcbed.tls.ServerTls;

/** {@code java -jar java-client.jar serve -proto P [-port N] [-host H]}: one baseline server. */
public final class Serve {
    static final String USAGE = """
        usage: java -jar java-client.jar serve -proto ice|dubbo|grpc|thrift|http [-port N]
                 [-host 127.0.0.1] [-threads T] [-auth=true|false] [-auth-secret S]
                 [-stats-port N] [-idle-timeout 120s]
                 [-tls-cert FILE -tls-key FILE [-tls-client-ca FILE] [-tls-min 1.3|1.2]]

        Default ports: ice 10000, dubbo 20880, grpc 50052, thrift 9091, http 8082 (0 = any).
        Prints "listening proto=P addr=HOST:PORT" on stderr when ready; SIGTERM stops it.
        -auth-secret (or env RPCBED_AUTH_SECRET) signs tokens; default: random per process.
        -threads sizes the server's worker pool (default: 4 x cores, at least 16; ice,
        dubbo, http: gRPC and Thrift run handlers on their Netty event loops).
        -stats-port N serves GET /stats (time, process CPU, calls answered) on
        -host's address, port N (0 = any free port; printed as "listening proto=stats addr=...");
        off when not given. -idle-timeout closes connections that carry nothing that long.
        -tls-cert/-tls-key (PEM: certificate chain, private key) serve TLS only on the
        listener: TLS 1.3, or 1.2 and 1.3 with -tls-min 1.2; -tls-client-ca requires a
        client certificate signed by that CA (mtls). A TLS handshake must end within 10 s.
        """;

    private Serve() {}

    /** The configuration of one server, parsed from the command line. */
    /** tls: null serves plaintext. */
    public record Options(String proto, String host, int port, int threads, boolean auth, byte[] secret,
            int statsPort, long idleMillis, ServerTls tls) {}

    public static int main(String[] args) {
        Options o;
        try {
            o = parse(args);
        } catch (UsageError e) {
            System.err.println("java-client serve: " + e.getMessage());
            System.err.print(USAGE);
            return Exit.USAGE;
        }
        BaselineServer server;
        StatsListener stats = null;
        try {
            server = start(o);
            if (o.statsPort() >= 0) {
                stats = new StatsListener(o.host(), o.statsPort(), "rpcbed-java-" + o.proto(), o.proto(),
                    server.calls());
            }
        } catch (Exception e) {
            System.err.println("java-client serve: starting " + o.proto() + ": " + e);
            return Exit.INTERNAL;
        }
        // SIGTERM/SIGINT end the wait below; the server then stops and the process exits
        // 0, as go-server does (a plain shutdown hook would leave the JVM's 143).
        CountDownLatch stop = new CountDownLatch(1);
        for (String sig : new String[] {"TERM", "INT"}) {
            sun.misc.Signal.handle(new sun.misc.Signal(sig), s -> stop.countDown());
        }
        if (o.tls() != null) {
            System.err.println("tls proto=" + o.proto() + " versions=" + String.join(",", o.tls().protocols())
                + " client-cert=" + (o.tls().mutual() ? "required" : "none")
                + " provider=" + (o.proto().equals("grpc") ? GrpcServer.provider() : "JDK"));
        }
        System.err.println("listening proto=" + o.proto() + " addr=" + o.host() + ":" + server.port());
        if (stats != null) {
            System.err.println("listening proto=stats addr=" + o.host() + ":" + stats.port());
        }
        System.err.flush();
        try {
            stop.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        System.err.println("stopping proto=" + o.proto());
        // A framework whose threads are stuck must not keep the process alive: the stop
        // gets STOP_MILLIS, then the process exits 1 (the runner sees it).
        StatsListener st = stats;
        Thread closer = new Thread(() -> {
            server.close();
            if (st != null) {
                st.close();
            }
        }, "stop");
        closer.setDaemon(true);
        closer.start();
        try {
            closer.join(STOP_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (closer.isAlive()) {
            System.err.println("java-client serve: " + o.proto() + " did not stop within " + STOP_MILLIS + " ms; exiting");
            dumpThreads();
            System.err.flush();
            Runtime.getRuntime().halt(1);
        }
        System.err.println("stopped proto=" + o.proto());
        return Exit.OK;
    }

    /** How long a stop may take before the process exits anyway. */
    static final long STOP_MILLIS = 10_000;

    public static int defaultPort(String proto) {
        return switch (proto) {
            case "ice" -> 10000;
            case "dubbo" -> 20880;
            case "grpc" -> 50052;
            case "thrift" -> 9091;
            case "http" -> 8082;
            default -> -1;
        };
    }

    public static BaselineServer start(Options o) throws Exception {
        DataService svc = new DataService(o.secret(), o.auth());
        return switch (o.proto()) {
            case "ice" -> new IceServer(svc, o.host(), o.port(), o.threads(), o.idleMillis(), o.tls());
            case "dubbo" -> new DubboServer(svc, o.host(), o.port(), o.threads(), o.idleMillis(), o.tls());
            case "grpc" -> new GrpcServer(svc, o.host(), o.port(), o.idleMillis(), o.tls());
            case "thrift" -> new ThriftServer(svc, o.host(), o.port(), o.idleMillis(), o.tls());
            case "http" -> new HttpJsonServer(svc, o.host(), o.port(), o.threads(), o.idleMillis(), o.tls());
            default -> throw new IllegalArgumentException("unknown proto " + o.proto());
        };
    }

    public static Options parse(String[] args) throws UsageError {
        Flags f = new Flags(args);
        String proto = f.string("proto", "");
        if (defaultPort(proto) < 0) {
            throw new UsageError("-proto \"" + proto + "\": want ice, dubbo, grpc, thrift or http");
        }
        String host = f.string("host", "127.0.0.1");
        int port = f.integer("port", defaultPort(proto));
        int threads = f.integer("threads", Math.max(16, 4 * Runtime.getRuntime().availableProcessors()));
        boolean auth = f.bool("auth", true);
        String secret = f.string("auth-secret", System.getenv().getOrDefault("RPCBED_AUTH_SECRET", ""));
        int statsPort = f.integer("stats-port", -1);
        long idleNanos = f.nanos("idle-timeout", Limits.DEFAULT_IDLE_MILLIS * 1_000_000L);
        String tlsCert = f.string("tls-cert", "");
        String tlsKey = f.string("tls-key", "");
        String tlsClientCa = f.string("tls-client-ca", "");
        String tlsMin = f.string("tls-min", "1.3");
        f.done();
        ServerTls tls = tls(tlsCert, tlsKey, tlsClientCa, tlsMin);
        if (statsPort < -1 || statsPort > 65535) {
            throw new UsageError("-stats-port " + statsPort + ": want 0..65535");
        }
        if (idleNanos < 1_000_000_000L) {
            throw new UsageError("-idle-timeout: want at least 1s");
        }
        if (port < 0 || port > 65535) {
            throw new UsageError("-port " + port + ": want 0..65535");
        }
        if (threads < 1) {
            throw new UsageError("-threads " + threads + ": want at least 1");
        }
        byte[] key = secret.isEmpty() ? Tokens.randomSecret() : secret.getBytes(StandardCharsets.UTF_8);
        return new Options(proto, host, port, threads, auth, key, statsPort, idleNanos / 1_000_000L, tls);
    }

    /** The -tls-* flags read into memory; null without -tls-cert. A bad file is a usage error naming it. */
    static ServerTls tls(String cert, String key, String clientCa, String min) throws UsageError {
        if (!min.equals("1.3") && !min.equals("1.2")) {
            throw new UsageError("-tls-min \"" + min + "\": want 1.3 or 1.2");
        }
        if (cert.isEmpty()) {
            if (!key.isEmpty() || !clientCa.isEmpty()) {
                throw new UsageError((key.isEmpty() ? "-tls-client-ca" : "-tls-key") + " without -tls-cert");
            }
            return null;
        }
        if (key.isEmpty()) {
            throw new UsageError("-tls-cert without -tls-key");
        }
        try {
            return ServerTls.load(cert, key, clientCa, min);
        } catch (IOException | GeneralSecurityException e) {
            throw new UsageError("-tls-cert/-tls-key/-tls-client-ca: " + e.getMessage());
        }
    }

    /** Where each live thread is, on stderr: what kept a stop from finishing. */
    private static void dumpThreads() {
        for (var e : Thread.getAllStackTraces().entrySet()) {
            Thread t = e.getKey();
            System.err.println("thread \"" + t.getName() + "\" " + t.getState());
            StackTraceElement[] st = e.getValue();
            for (int i = 0; i < Math.min(st.length, 12); i++) {
                System.err.println("    at " + st[i]);
            }
        }
    }
}
