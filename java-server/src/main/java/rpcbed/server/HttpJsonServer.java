package rpcbed.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import java.security.GeneralSecurityException;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import rpcbed.tls.ServerTls;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import rpcbed.core.DataService;
import rpcbed.core.ServiceError;
import rpcbed.core.Store;
import rpcbed.stats.CallStats;

/**
 * The HTTP/JSON baseline on the JDK's own HTTP/1.1 server (keep-alive), with go-server's
 * routes and JSON documents byte for byte (docs/contract.md).
 */
public final class HttpJsonServer implements BaselineServer {
    public static final String SOFTWARE = "rpcbed-java-http";

    private final HttpServer server;
    private final ExecutorService pool;
    private final DataService svc;

    public HttpJsonServer(DataService svc, String host, int port, int threads, long idleMillis) {
        this(svc, host, port, threads, idleMillis, null);
    }

    /**
     * tls: null serves plaintext; else HTTP/1.1 over TLS only, the JDK's HttpsServer on
     * the JDK's SSLEngine (no ALPN: the JDK server speaks HTTP/1.1 only).
     */
    public HttpJsonServer(DataService svc, String host, int port, int threads, long idleMillis, ServerTls tls) {
        this.svc = svc;
        systemProperties(idleMillis);
        try {
            if (tls == null) {
                server = HttpServer.create(new InetSocketAddress(host, port), 1024);
            } else {
                HttpsServer https = HttpsServer.create(new InetSocketAddress(host, port), 1024);
                SSLContext ctx = tls.jdkContext();
                SSLParameters params = tls.parameters(ctx);
                https.setHttpsConfigurator(new HttpsConfigurator(ctx) {
                    @Override
                    public void configure(HttpsParameters p) {
                        p.setSSLParameters(params);
                    }
                });
                server = https;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("TLS: " + e.getMessage(), e);
        }
        // The JDK server runs handlers on the caller's thread unless given a pool. A
        // worker reads the request headers itself, blocking: with a fixed pool of 16, 17
        // slowloris connections blocked every caller. Threads are made on
        // demand up to Limits.HTTP_THREADS (then requests queue), and a request that
        // does not arrive within Limits.HTTP_REQUEST_SECONDS is closed, freeing its thread.
        // Over TLS the JDK server also makes each handshake on a worker, blocking: 1,000
        // half-open handshakes held 256 workers for 10 s each, so the pool goes to
        // Limits.HTTP_TLS_THREADS (threads made on demand, gone after 30 s idle).
        // Over TLS an idle worker is reused before a new one is made (a core-sized pool
        // makes a thread for every task below its core size: a 20-caller handshake flood
        // made over a thousand and took the process past 512 MB); at the bound the
        // dispatcher runs the task itself, which stops accepting until a worker frees.
        int size = Math.max(threads, tls == null ? Limits.HTTP_THREADS : Limits.HTTP_TLS_THREADS);
        java.util.concurrent.ThreadFactory workers = r -> {
            Thread t = new Thread(r, "http-worker");
            t.setDaemon(true);
            return t;
        };
        ThreadPoolExecutor tp = tls == null
            ? new ThreadPoolExecutor(size, size, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), workers)
            : new ThreadPoolExecutor(0, size, 30, TimeUnit.SECONDS, new java.util.concurrent.SynchronousQueue<>(), workers,
                new ThreadPoolExecutor.CallerRunsPolicy());
        if (tls == null) {
            tp.allowCoreThreadTimeOut(true);
        }
        pool = tp;
        server.setExecutor(pool);
        server.createContext("/", this::handle);
        server.start();
    }

    /**
     * The JDK server's limits are system properties read once, when its first server
     * starts in the process (sun.net.httpserver.ServerConfig): set them before.
     */
    static void systemProperties(long idleMillis) {
        // The JDK server leaves Nagle on by default; headers and body go out as two writes,
        // so every response would wait for the client's delayed ACK (~40 ms).
        System.setProperty("sun.net.httpserver.nodelay", "true");
        System.setProperty("sun.net.httpserver.maxReqTime", Integer.toString(Limits.HTTP_REQUEST_SECONDS));
        System.setProperty("sun.net.httpserver.maxReqHeaderSize", Integer.toString(Limits.MAX_HTTP_HEADER));
        System.setProperty("sun.net.httpserver.maxReqHeaders", "100");
        // No cap on connections (go-server has none): idle ones hold no thread, only a
        // socket, and idleInterval closes them (10,000 idle, a call answered: docs/reliability.md).
        System.clearProperty("sun.net.httpserver.maxConnections");
        System.setProperty("sun.net.httpserver.idleInterval", Long.toString(Math.max(1, idleMillis / 1000)));
    }

    @Override
    public int port() {
        return server.getAddress().getPort();
    }

    @Override
    public CallStats calls() {
        return svc.calls();
    }

    @Override
    public void close() {
        server.stop(1);
        pool.shutdown();
        try {
            pool.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void handle(HttpExchange ex) throws IOException {
        if (!drainBody(ex)) {
            ex.getResponseHeaders().set("Connection", "close");
            error(ex, 413, "request body over " + Limits.MAX_REQUEST + " bytes");
            return;
        }
        String path = ex.getRequestURI().getPath();
        CallStats.Call call = switch (path) {
            case "/v1/datatype" -> CallStats.Call.DATATYPE;
            case "/v1/datalist" -> CallStats.Call.DATALIST;
            default -> null;
        };
        if (!ex.getRequestMethod().equals("GET")) {
            error(ex, 405, "method not allowed");
            return;
        }
        boolean failed = true;
        try {
            Map<String, String> q = query(ex.getRequestURI().getRawQuery());
            switch (path) {
                case "/v1/datatype" -> dataType(ex, q);
                case "/v1/datalist" -> dataList(ex, q);
                case "/healthz" -> send(ex, 200, null, "ok\n");
                case "/stats" -> send(ex, 200, null, "{\"writes\":" + svc.store().writes() + "}\n");
                default -> error(ex, 404, "no route " + path);
            }
            failed = false;
        } catch (ServiceError e) {
            int status = switch (e.code()) {
                case ServiceError.INVALID_ARGUMENT -> 400;
                case ServiceError.UNAUTHENTICATED -> 401;
                default -> 500;
            };
            error(ex, status, e.getMessage());
        } catch (IllegalArgumentException e) { // a bad %-escape in the query
            error(ex, 400, "bad query");
        } finally {
            if (call != null) {
                svc.calls().record(call, failed);
            }
        }
    }

    /**
     * Reads and drops the request body (no route takes one), at most Limits.MAX_REQUEST
     * bytes; false when it is larger (declared or actual). A larger body is not read: the
     * JDK server closes the connection after the reply instead of draining it.
     */
    private static boolean drainBody(HttpExchange ex) throws IOException {
        String cl = ex.getRequestHeaders().getFirst("Content-Length");
        if (cl != null) {
            try {
                if (Long.parseLong(cl.trim()) > Limits.MAX_REQUEST) {
                    return false;
                }
            } catch (NumberFormatException e) {
                return false;
            }
        }
        byte[] buf = new byte[8192];
        long total = 0;
        InputStream in = ex.getRequestBody();
        int n;
        while ((n = in.read(buf)) > 0) {
            total += n;
            if (total > Limits.MAX_REQUEST) {
                return false;
            }
        }
        return true;
    }

    private String refresh(HttpExchange ex) throws ServiceError {
        return svc.refresh(ex.getRequestHeaders().getFirst("X-Client-Id"),
            ex.getRequestHeaders().getFirst("X-Token"));
    }

    private void dataType(HttpExchange ex, Map<String, String> q) throws IOException, ServiceError {
        String group = q.getOrDefault("groupName", "");
        String en = q.getOrDefault("enName", "");
        if (group.isEmpty() || en.isEmpty()) {
            throw new ServiceError(ServiceError.INVALID_ARGUMENT, "groupName and enName are required");
        }
        String token = refresh(ex);
        Store.Rec rec = svc.dataType(group, en);
        StringBuilder b = new StringBuilder(128);
        b.append("{\"code\":0,\"message\":\"ok\",\"auth\":{\"token\":");
        quote(b, token);
        b.append("},\"codeId\":").append(rec.codeId()).append(",\"cnName\":");
        quote(b, rec.cnName());
        b.append("}\n");
        send(ex, 200, token, b.toString());
    }

    private void dataList(HttpExchange ex, Map<String, String> q) throws IOException, ServiceError {
        String v = q.get("n");
        if (v == null || v.isEmpty()) {
            throw new ServiceError(ServiceError.INVALID_ARGUMENT, "missing n");
        }
        int n;
        try {
            n = Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new ServiceError(ServiceError.INVALID_ARGUMENT, "n = \"" + v + "\": not an integer");
        }
        DataService.checkItems(n);
        String token = refresh(ex);
        send(ex, 200, token, dataListJson(token, n));
    }

    /** The JSON document of GET /v1/datalist?n=N, as Go's encoding/json writes it. */
    public static String dataListJson(String token, int n) {
        StringBuilder b = new StringBuilder(96 + n * 110);
        b.append("{\"code\":0,\"message\":\"ok\",\"auth\":{\"token\":");
        quote(b, token);
        b.append("},\"n\":").append(n).append(",\"items\":[");
        for (int i = 0; i < n; i++) {
            if (i > 0) {
                b.append(',');
            }
            b.append("{\"id\":").append(DataService.itemId(i))
                .append(",\"name\":\"").append(DataService.itemName(i))
                .append("\",\"createdAt\":0,\"score\":").append(goFloat(DataService.itemScore(i)))
                .append(",\"enabled\":").append(DataService.itemEnabled(i))
                .append(",\"parentId\":0,\"note\":\"\",\"tags\":[]}");
        }
        return b.append("]}\n").toString();
    }

    /** A float64 as Go's encoding/json prints it (shortest form, no trailing ".0"). */
    static String goFloat(double d) {
        String s = BigDecimal.valueOf(d).stripTrailingZeros().toPlainString();
        return s;
    }

    /** A JSON string as Go's encoding/json escapes it (HTML-safe). */
    static void quote(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                case '<', '>', '&', '\u2028', '\u2029' -> b.append(String.format("\\u%04x", (int) c));
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        b.append('"');
    }

    private void error(HttpExchange ex, int status, String msg) throws IOException {
        StringBuilder b = new StringBuilder("{\"code\":").append(status).append(",\"message\":");
        quote(b, msg);
        send(ex, status, null, b.append("}\n").toString());
    }

    private static void send(HttpExchange ex, int status, String token, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        var h = ex.getResponseHeaders();
        h.set("Content-Type", body.startsWith("{") ? "application/json" : "text/plain; charset=utf-8");
        h.set("Server", SOFTWARE);
        if (token != null) {
            h.set("X-Token", token);
        }
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> m = new HashMap<>();
        if (raw == null || raw.isEmpty()) {
            return m;
        }
        for (String kv : raw.split("&")) {
            int eq = kv.indexOf('=');
            String k = eq < 0 ? kv : kv.substring(0, eq);
            String v = eq < 0 ? "" : kv.substring(eq + 1);
            m.putIfAbsent(URLDecoder.decode(k, StandardCharsets.UTF_8), URLDecoder.decode(v, StandardCharsets.UTF_8));
        }
        return m;
    }
}
