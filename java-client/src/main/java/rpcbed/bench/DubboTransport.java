package rpcbed.bench;

import com.alibaba.com.caucho.hessian.io.Hessian2Output;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;
import org.apache.dubbo.rpc.RpcException;
import rpcbed.dubbo.Api;
import rpcbed.server.DubboServer;

/**
 * Apache Dubbo, dubbo protocol + hessian2, direct URL, no registry. Every Conn is its
 * own reference with one exclusive connection ({@code connections=1}), made when the
 * run opens it and destroyed when the run ends. The Dubbo application they belong to
 * is one per JVM, as a production consumer has one: a worker's runs share it, so
 * each run does not build a new application model, whose freshly generated adaptive
 * and proxy classes the JIT would compile again on every run.
 */
final class DubboTransport implements Transport {
    private static DubboBootstrap shared;
    private static final AtomicLong RUNS = new AtomicLong();

    private final Config cfg;
    private final DubboBootstrap bootstrap;
    private final long run = RUNS.incrementAndGet();
    private final List<ReferenceConfig<Api.Data>> refs = new ArrayList<>();

    DubboTransport(Config cfg) {
        this.cfg = cfg;
        bootstrap = application();
        if (cfg.tls != null) {
            tls(cfg.tls, cfg.port);
        }
    }

    /**
     * Dubbo's own TLS on the dubbo protocol (its netty4 transport's SslClientTlsHandler,
     * Netty's SslContext over the JDK's SSLEngine): Dubbo takes the trust and the client
     * certificate from a CertProvider (rpcbed.dubbo.TlsCerts, in memory). It builds the
     * context itself from the JVM's default TLS provider, with no peer name on its
     * engines (no name to check, no session to resume); EngineProvider's engines check
     * -servername, offer only -tls-version and count the handshakes.
     */
    private static void tls(rpcbed.tls.ClientTls tls, int port) {
        try {
            rpcbed.dubbo.TlsCerts.client(tls.mutual ? rpcbed.tls.Pem.pem(tls.chain) : null,
                tls.mutual ? rpcbed.tls.Pem.pkcs8Pem(tls.key) : null, rpcbed.tls.Pem.pem(tls.cas));
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException("TLS: " + e.getMessage(), e);
        }
        rpcbed.tls.EngineProvider.install(tls, port);
    }

    /** This JVM's Dubbo consumer application, made on first use. */
    private static synchronized DubboBootstrap application() {
        if (shared == null) {
            DubboServer.systemProperties();
            shared = DubboBootstrap.newInstance()
                .application(DubboServer.application("rpcbed-java-dubbo-client"))
                .registry(new RegistryConfig(RegistryConfig.NO_AVAILABLE));
        }
        return shared;
    }

    /** Every non-default Dubbo setting of the client (listed in java-client/README.md). */
    private ReferenceConfig<Api.Data> reference(int index) {
        ReferenceConfig<Api.Data> ref = new ReferenceConfig<>();
        ref.setId("data-" + run + "-" + (index + 1));
        ref.setInterface(Api.Data.class);
        ref.setUrl("dubbo://" + DubboServer.loopbackSafe(cfg.host) + ":" + cfg.port);
        // One exclusive connection per reference instead of Dubbo's one shared connection.
        ref.setConnections(1);
        // The report counts each failed call once: no failover retries.
        ref.setRetries(0);
        ref.setTimeout(cfg.timeoutMillis());
        // Connect now (and fail now) instead of on the first call.
        ref.setCheck(true);
        ref.setLazy(false);
        ref.setParameters(Map.of("serialization", "hessian2", "payload", Integer.toString(64 * 1024 * 1024)));
        return ref;
    }

    @Override
    public Conn open(int index) throws CallError {
        long before = cfg.tls == null ? 0 : cfg.tls.handshakes();
        ReferenceConfig<Api.Data> ref = refer(index);
        synchronized (this) {
            refs.add(ref);
        }
        if (cfg.tls != null) {
            handshaken(before);
        }
        return new DubboConn(ref.get());
    }

    /**
     * Waits (at most -timeout) for the handshake of the connection just opened: Dubbo
     * connects before timing but its TLS handshake goes on in the background, and would
     * be counted in the window (callers open one after another, so one more handshake
     * than before is this one's).
     */
    private void handshaken(long before) {
        long deadline = System.nanoTime() + cfg.timeoutNanos;
        while (cfg.tls.handshakes() == before && cfg.tls.lastFailure() == null && System.nanoTime() - deadline < 0) {
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * A reference of the caller's own whose connection is closed and opened again
     * before every call (Dubbo's Client.reconnect). Dubbo's API has no lighter way to
     * open a connection than a reference, whose making is mostly configuration work by
     * reflection (tens of milliseconds here): a reference per call would time that.
     */
    @Override
    public Conn perCall(int index, AtomicLong opened) throws CallError {
        Conn c = open(index);
        org.apache.dubbo.remoting.Client client;
        synchronized (this) {
            client = exchangeClient(refs.get(refs.size() - 1).getInvoker());
        }
        if (client == null) {
            c.close();
            throw new CallError(Kind.CONNECT, "no Dubbo exchange client found behind the reference");
        }
        ((DubboConn) c).reconnect = () -> {
            client.reconnect();
            opened.incrementAndGet();
        };
        return c;
    }

    /**
     * The exchange client (the connection) behind a reference's invoker: the clients of
     * its DubboInvoker's ClientsProvider, reached through the invoker wrappers' fields.
     */
    static org.apache.dubbo.remoting.Client exchangeClient(Object invoker) {
        java.util.ArrayDeque<Object> todo = new java.util.ArrayDeque<>(List.of(invoker));
        java.util.Set<Object> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        while (!todo.isEmpty() && seen.size() < 10_000) {
            Object o = todo.poll();
            if (!seen.add(o)) {
                continue;
            }
            if (o instanceof org.apache.dubbo.rpc.protocol.dubbo.ClientsProvider p && p.getClients().size() == 1) {
                return p.getClients().get(0);
            }
            if (o instanceof Iterable<?> it) {
                it.forEach(v -> add(todo, v));
                continue;
            }
            if (o instanceof Object[] arr) {
                for (Object v : arr) {
                    add(todo, v);
                }
                continue;
            }
            for (Class<?> k = o.getClass(); k != null && k.getName().startsWith("org.apache.dubbo."); k = k.getSuperclass()) {
                for (java.lang.reflect.Field f : k.getDeclaredFields()) {
                    if (java.lang.reflect.Modifier.isStatic(f.getModifiers()) || f.getType().isPrimitive()) {
                        continue;
                    }
                    try {
                        f.setAccessible(true);
                        Object v = f.get(o);
                        add(todo, v);
                    } catch (RuntimeException | IllegalAccessException e) {
                        // not reachable: go on with the others
                    }
                }
            }
        }
        return null;
    }

    private ReferenceConfig<Api.Data> refer(int index) throws CallError {
        ReferenceConfig<Api.Data> ref = reference(index);
        try {
            synchronized (this) {
                bootstrap.reference(ref);
            }
            ref.get();
        } catch (RuntimeException e) {
            destroy(ref);
            throw new CallError(Kind.CONNECT, "cannot connect to " + cfg.addr + ": " + e.getMessage(), e);
        }
        return ref;
    }

    private void destroy(ReferenceConfig<Api.Data> ref) {
        try {
            ref.destroy();
        } finally {
            synchronized (this) {
                bootstrap.getApplicationModel().getDefaultModule().getConfigManager().removeConfig(ref);
            }
        }
    }

    @Override
    public boolean sharedConnSafe() {
        return true;
    }

    @Override
    public String serverSoftware() {
        return "rpcbed-java-dubbo"; // the only Dubbo server of rpcbed
    }

    @Override
    public Map<String, String> versions() {
        return Map.of("dubbo", Transports.version("dubbo"));
    }

    /** Destroys this run's references (their connections); the application stays. */
    @Override
    public synchronized void close() {
        try {
            refs.forEach(this::destroy);
            refs.clear();
        } finally {
            if (cfg.tls != null) {
                rpcbed.tls.EngineProvider.uninstall();
                rpcbed.dubbo.TlsCerts.client(null, null, null);
            }
        }
    }

    /** Follows Dubbo's own objects and the collections holding them, nothing else. */
    private static void add(java.util.ArrayDeque<Object> todo, Object v) {
        if (v != null && (v.getClass().getName().startsWith("org.apache.dubbo.") || v instanceof Iterable
                || v instanceof Object[])) {
            todo.add(v);
        }
    }

    interface Reconnect {
        void run() throws org.apache.dubbo.remoting.RemotingException;
    }

    static long hessianSize(Object o) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Hessian2Output out = new Hessian2Output(bytes);
        try {
            out.writeObject(o);
            out.flush();
        } catch (IOException e) {
            return 0;
        }
        return bytes.size();
    }

    private final class DubboConn implements Conn {
        private final Api.Data data;
        // Dubbo reports no received size; responses differ only in the fixed-length
        // token, so the hessian2 size measured once is every response's size.
        private long size = -1;
        /** -connect per-call: closes and opens the connection before each call; else null. */
        Reconnect reconnect;

        DubboConn(Api.Data data) {
            this.data = data;
        }

        @Override
        public long call(Session s) throws CallError {
            if (reconnect != null) {
                try {
                    reconnect.run();
                } catch (org.apache.dubbo.remoting.RemotingException | RuntimeException e) {
                    throw new CallError(Kind.CONNECT, "reconnect to " + cfg.addr + ": " + e.getMessage(), e);
                }
            }
            Api.Auth auth = new Api.Auth(s.clientId, s.token);
            try {
                Object resp;
                if (cfg.dataList()) {
                    Api.DataListRequest req = new Api.DataListRequest();
                    req.auth = auth;
                    req.n = cfg.items;
                    Api.DataListResponse r = data.dataList(req);
                    s.token = r.auth == null ? "" : r.auth.token;
                    int got = r.items == null ? 0 : r.items.length;
                    if (got != cfg.items) {
                        throw Transports.wrongItems(got, cfg.items);
                    }
                    resp = r;
                } else {
                    Api.DataTypeRequest req = new Api.DataTypeRequest();
                    req.auth = auth;
                    req.groupName = Config.GROUP_NAME;
                    req.enName = Config.EN_NAME;
                    Api.DataTypeResponse r = data.dataType(req);
                    s.token = r.auth == null ? "" : r.auth.token;
                    if (r.codeId != 101) {
                        throw Transports.wrongCode(r.codeId);
                    }
                    resp = r;
                }
                if (size < 0) {
                    size = hessianSize(resp);
                }
                return size;
            } catch (Api.DataError e) {
                Kind k = Transports.dataErrorKind(e.code);
                if (k == Kind.UNAUTHENTICATED) {
                    s.token = "";
                }
                throw new CallError(k, "DataError " + e.code + ": " + e.getMessage(), e);
            } catch (RpcException e) {
                Kind k;
                if (e.isTimeout()) {
                    k = Kind.TIMEOUT;
                } else if (e.isNetwork() || e.isNoInvokerAvailableAfterFilter()) {
                    k = Kind.CONNECT;
                } else if (e.isSerialization()) {
                    k = Kind.RECEIVE;
                } else {
                    k = Kind.EXCEPTIONS;
                }
                throw new CallError(k, e.getMessage(), e);
            } catch (RuntimeException e) {
                throw new CallError(Kind.EXCEPTIONS, e.toString(), e);
            }
        }

        @Override
        public void close() {}
    }
}
