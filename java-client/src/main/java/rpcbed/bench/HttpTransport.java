package rpcbed.bench;

import com.alibaba.fastjson2.JSON;
import com.alibaba.fastjson2.JSONArray;
import com.alibaba.fastjson2.JSONObject;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.Map;

/**
 * HTTP/1.1 + JSON with the JDK's java.net.http client (keep-alive). One HttpClient per
 * Conn, used by one worker at a time, so it holds one connection.
 */
final class HttpTransport implements Transport {
    private final Config cfg;
    private final URI uri;
    private final URI health;
    private volatile String software = "";

    HttpTransport(Config cfg) {
        this.cfg = cfg;
        String base = "http://" + (cfg.host.contains(":") ? "[" + cfg.host + "]" : cfg.host) + ":" + cfg.port;
        this.uri = URI.create(base + cfg.httpPath());
        this.health = URI.create(base + "/healthz");
    }

    @Override
    public Conn open(int index) throws CallFailure {
        HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofNanos(cfg.timeoutNanos))
            .build();
        // Open the keep-alive connection before timing.
        try {
            client.send(HttpRequest.newBuilder(health).timeout(Duration.ofNanos(cfg.timeoutNanos)).GET().build(),
                HttpResponse.BodyHandlers.discarding());
        } catch (IOException e) {
            throw new CallFailure(Kind.CONNECT, "cannot connect to " + cfg.addr + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CallFailure(Kind.CONNECT, "interrupted", e);
        }
        return new HttpConn(client);
    }

    @Override
    public boolean sharedConnSafe() {
        return false;
    }

    @Override
    public String serverSoftware() {
        return software;
    }

    @Override
    public Map<String, String> versions() {
        return Map.of("httpclient", "java.net.http-" + System.getProperty("java.version"),
            "fastjson2", Transports.version("fastjson2"));
    }

    @Override
    public void close() {}

    private final class HttpConn implements Conn {
        private final HttpClient client;

        HttpConn(HttpClient client) {
            this.client = client;
        }

        @Override
        public long call(Session s) throws CallFailure {
            HttpRequest req = HttpRequest.newBuilder(uri)
                .timeout(Duration.ofNanos(cfg.timeoutNanos))
                .header("X-Client-Id", s.clientId)
                .header("X-Token", s.token)
                .GET()
                .build();
            HttpResponse<byte[]> resp;
            try {
                resp = client.send(req, HttpResponse.BodyHandlers.ofByteArray());
            } catch (HttpConnectTimeoutException | ConnectException e) {
                throw new CallFailure(Kind.CONNECT, e.toString(), e);
            } catch (HttpTimeoutException e) {
                throw new CallFailure(Kind.TIMEOUT, e.toString(), e);
            } catch (IOException e) {
                throw new CallFailure(Kind.RECEIVE, e.toString(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CallFailure(Kind.RECEIVE, "interrupted", e);
            }
            software = resp.headers().firstValue("Server").orElse(software);
            byte[] body = resp.body();
            int status = resp.statusCode();
            if (status != 200) {
                Kind k = switch (status) {
                    case 401 -> Kind.UNAUTHENTICATED;
                    case 400 -> Kind.INVALID_ARGUMENT;
                    default -> Kind.EXCEPTIONS;
                };
                if (k == Kind.UNAUTHENTICATED) {
                    s.token = "";
                }
                throw new CallFailure(k, "HTTP " + status + ": " + new String(body, 0, Math.min(body.length, 200)));
            }
            JSONObject o;
            try {
                o = JSON.parseObject(body);
            } catch (RuntimeException e) {
                throw new CallFailure(Kind.LENGTH, "bad JSON: " + e.getMessage(), e);
            }
            if (o == null) {
                throw new CallFailure(Kind.LENGTH, "empty body");
            }
            JSONObject auth = o.getJSONObject("auth");
            s.token = auth == null ? "" : auth.getString("token");
            if (cfg.dataList()) {
                JSONArray items = o.getJSONArray("items");
                int got = items == null ? -1 : items.size();
                if (got != cfg.items) {
                    throw Transports.wrongItems(got, cfg.items);
                }
            } else {
                long code = o.getLongValue("codeId");
                if (code != 101) {
                    throw Transports.wrongCode(code);
                }
            }
            return body.length;
        }

        @Override
        public void close() {
            // HttpClient has no close() before Java 21; its idle connection goes with it.
        }
    }
}
