package rpcbed.bench;

import com.alibaba.fastjson2.JSON;
import com.alibaba.fastjson2.JSONArray;
import com.alibaba.fastjson2.JSONObject;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.Map;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.Method;
import org.apache.hc.core5.http.impl.DefaultConnectionReuseStrategy;
import org.apache.hc.core5.http.impl.io.DefaultBHttpClientConnection;
import org.apache.hc.core5.http.impl.io.HttpRequestExecutor;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.message.BasicClassicHttpRequest;
import org.apache.hc.core5.http.protocol.BasicHttpContext;
import org.apache.hc.core5.http.protocol.HttpContext;

/**
 * HTTP/1.1 + JSON over Apache HttpCore 5's blocking client connection: one keep-alive
 * socket per Conn, written and read on the calling thread (as ab -k and go-client do),
 * so a call costs no thread hand-off. A Conn is used by one caller at a time.
 */
final class HttpTransport implements Transport {
    private final Config cfg;
    private final String path;
    private final String hostHeader;
    private volatile String software = "";

    HttpTransport(Config cfg) {
        this.cfg = cfg;
        this.path = cfg.httpPath();
        this.hostHeader = (cfg.host.contains(":") ? "[" + cfg.host + "]" : cfg.host) + ":" + cfg.port;
    }

    @Override
    public Conn open(int index) throws CallError {
        HttpConn c = new HttpConn();
        // Open the keep-alive connection before timing. No request yet: a server that
        // accepts and then hangs or resets shows as the first call's timeout or
        // receive, as for every client (docs/report-format.md), not as connect.
        c.connection();
        return c;
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
        return Map.of("httpcore5", Transports.version("httpcore5"),
            "fastjson2", Transports.version("fastjson2"));
    }

    @Override
    public void close() {}

    /** A response: status, body, and the Server header. */
    private record Answer(int status, byte[] body) {}

    private final class HttpConn implements Conn {
        private final HttpRequestExecutor exec = new HttpRequestExecutor();
        private final HttpContext ctx = new BasicHttpContext();
        private DefaultBHttpClientConnection conn;

        /** Connects when there is no open connection (first call, or after a failure / close). */
        private DefaultBHttpClientConnection connection() throws CallError {
            if (conn != null && conn.isOpen()) {
                return conn;
            }
            Socket sock = new Socket();
            try {
                if (cfg.tls != null) {
                    // HTTP/1.1 over the JDK's TLS (ALPN offers http/1.1 only).
                    sock = cfg.tls.connect(cfg.host, cfg.port, cfg.timeoutMillis(), "http/1.1");
                }
                sock.setTcpNoDelay(true);
                if (!sock.isConnected()) {
                    sock.connect(new InetSocketAddress(cfg.host, cfg.port), cfg.timeoutMillis());
                }
                // Bounds every read of the response (the JDK client bounded the whole call).
                sock.setSoTimeout(cfg.timeoutMillis());
                DefaultBHttpClientConnection c = new DefaultBHttpClientConnection(null);
                c.bind(sock);
                conn = c;
                return c;
            } catch (IOException e) {
                try {
                    sock.close();
                } catch (IOException ignored) {
                    // already failing
                }
                Kind k = e instanceof SocketTimeoutException || e instanceof ConnectException
                    || !sock.isConnected() ? Kind.CONNECT : Kind.RECEIVE;
                throw new CallError(k, "cannot connect to " + cfg.addr + ": " + e, e);
            }
        }

        private void drop() {
            if (conn != null) {
                conn.close(org.apache.hc.core5.io.CloseMode.IMMEDIATE);
                conn = null;
            }
        }

        Answer exchange(String target, Session s) throws CallError {
            DefaultBHttpClientConnection c = connection();
            ClassicHttpRequest req = new BasicClassicHttpRequest(Method.GET, target);
            req.setHeader("Host", hostHeader);
            if (cfg.perCall()) {
                // A connection per call (-connect per-call): the server need not keep it.
                req.setHeader("Connection", "close");
            }
            if (s != null) {
                req.setHeader("X-Client-Id", s.clientId);
                req.setHeader("X-Token", s.token);
            }
            try (ClassicHttpResponse resp = exec.execute(req, c, ctx)) {
                HttpEntity e = resp.getEntity();
                byte[] body = e == null ? new byte[0] : EntityUtils.toByteArray(e);
                Header server = resp.getFirstHeader("Server");
                if (server != null) {
                    software = server.getValue();
                }
                if (!DefaultConnectionReuseStrategy.INSTANCE.keepAlive(req, resp, ctx)) {
                    drop();
                }
                return new Answer(resp.getCode(), body);
            } catch (SocketTimeoutException e) {
                drop();
                throw new CallError(Kind.TIMEOUT, e.toString(), e);
            } catch (IOException | HttpException e) {
                drop();
                throw new CallError(Kind.RECEIVE, e.toString(), e);
            }
        }

        @Override
        public long call(Session s) throws CallError {
            Answer a = exchange(path, s);
            byte[] body = a.body();
            if (a.status() != 200) {
                Kind k = switch (a.status()) {
                    case 401 -> Kind.UNAUTHENTICATED;
                    case 400 -> Kind.INVALID_ARGUMENT;
                    default -> Kind.EXCEPTIONS;
                };
                if (k == Kind.UNAUTHENTICATED) {
                    s.token = "";
                }
                throw new CallError(k, "HTTP " + a.status() + ": " + new String(body, 0, Math.min(body.length, 200)));
            }
            JSONObject o;
            try {
                o = JSON.parseObject(body);
            } catch (RuntimeException e) {
                throw new CallError(Kind.LENGTH, "bad JSON: " + e.getMessage(), e);
            }
            if (o == null) {
                throw new CallError(Kind.LENGTH, "empty body");
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
            drop();
        }
    }
}
