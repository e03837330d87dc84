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
    public synchronized Conn open(int index) throws CallError {
        ReferenceConfig<Api.Data> ref = reference(index);
        Api.Data data;
        try {
            bootstrap.reference(ref);
            data = ref.get();
        } catch (RuntimeException e) {
            throw new CallError(Kind.CONNECT, "cannot connect to " + cfg.addr + ": " + e.getMessage(), e);
        }
        refs.add(ref);
        return new DubboConn(data);
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
        var configs = bootstrap.getApplicationModel().getDefaultModule().getConfigManager();
        for (ReferenceConfig<Api.Data> ref : refs) {
            try {
                ref.destroy();
            } finally {
                configs.removeConfig(ref);
            }
        }
        refs.clear();
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

        DubboConn(Api.Data data) {
            this.data = data;
        }

        @Override
        public long call(Session s) throws CallError {
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
