package rpcbed.stats;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A Java baseline's counters: {@code GET /stats} on 127.0.0.1 (serve -stats-port), the
 * JSON go-server serves on its HTTP listener (docs/method.md section 10). The driver
 * samples it every 100 ms and interpolates to the client's measured window.
 */
public final class StatsListener implements AutoCloseable {
    private final HttpServer server;
    private final ExecutorService pool;
    private final String software;
    private final String proto;
    private final CallStats calls;

    public StatsListener(String host, int port, String software, String proto, CallStats calls) {
        this.software = software;
        this.proto = proto;
        this.calls = calls;
        try {
            server = HttpServer.create(new InetSocketAddress(host, port), 16);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // One thread: the driver reads it one request at a time.
        pool = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "stats");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(pool);
        server.createContext("/", this::handle);
        server.start();
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            ex.getRequestBody().close();
            String path = ex.getRequestURI().getPath();
            int status;
            String body;
            if (!ex.getRequestMethod().equals("GET")) {
                status = 405;
                body = "{\"code\":405,\"message\":\"method not allowed\"}\n";
            } else if (path.equals("/stats")) {
                status = 200;
                body = json();
            } else if (path.equals("/healthz")) {
                status = 200;
                body = "ok\n";
            } else {
                status = 404;
                body = "{\"code\":404,\"message\":\"no route\"}\n";
            }
            byte[] b = body.getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("Content-Type", body.startsWith("{") ? "application/json" : "text/plain");
            ex.sendResponseHeaders(status, b.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(b);
            }
        }
    }

    /** The /stats document; time_unix_s is when the counters were read. */
    public String json() {
        ProcessCpu cpu = ProcessCpu.now();
        Instant now = Instant.now();
        StringBuilder b = new StringBuilder(256);
        b.append("{\"server\":\"").append(software).append('"')
            .append(",\"time_unix_s\":").append(now.getEpochSecond()).append('.')
            .append(String.format(Locale.ROOT, "%06d", now.getNano() / 1000))
            .append(",\"cpu_user_s\":").append(String.format(Locale.ROOT, "%.2f", cpu.user))
            .append(",\"cpu_system_s\":").append(String.format(Locale.ROOT, "%.2f", cpu.system))
            .append(",\"rss_bytes\":").append(rssBytes());
        if (cpu.jitMillis >= 0) {
            b.append(",\"jit_compile_ms\":").append(cpu.jitMillis);
        }
        b
            .append(",\"calls\":{\"").append(proto).append("\":{");
        for (CallStats.Call c : CallStats.Call.values()) {
            if (c.ordinal() > 0) {
                b.append(',');
            }
            b.append('"').append(c.label).append("\":{\"requests\":").append(calls.requests(c))
                .append(",\"errors\":").append(calls.errors(c)).append('}');
        }
        return b.append("}}}\n").toString();
    }

    /** VmRSS of this process (0 where there is no /proc). */
    static long rssBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.substring(6).replace("kB", "").trim()) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            // no /proc: 0
        }
        return 0;
    }

    @Override
    public void close() {
        server.stop(0);
        pool.shutdownNow();
    }
}
