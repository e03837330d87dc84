package rpcbed.server;

import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.ProtocolConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.ServiceConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;
import rpcbed.core.DataService;
import rpcbed.tls.Pem;
import rpcbed.tls.ServerTls;
import rpcbed.core.ServiceError;
import rpcbed.core.Store;
import rpcbed.stats.CallStats;
import rpcbed.dubbo.Api;

/**
 * The Apache Dubbo baseline: the dubbo protocol with hessian2 on a direct address, no
 * registry (a client refers to {@code dubbo://127.0.0.1:20880}).
 */
public final class DubboServer implements BaselineServer {
    private final DubboBootstrap bootstrap;
    private final int port;
    private final DataService svc;

    /** Call before any Dubbo class loads: names the logger, so Dubbo does not probe
     * every logging library and print about it. */
    public static void systemProperties() {
        System.setProperty("dubbo.application.logger", "slf4j");
        // Dubbo's netty4 transport uses NIO unless told otherwise (NettyEventLoopFactory
        // .shouldEpoll); grpc-java picks epoll by itself. Both sides use the same here.
        System.setProperty("netty.epoll.enable", "true");
    }

    public DubboServer(DataService svc, String host, int port, int threads, long idleMillis) {
        this(svc, host, port, threads, idleMillis, null);
    }

    /**
     * tls: null serves plaintext; else Dubbo's own TLS on the dubbo protocol (its netty4
     * transport's SslServerTlsHandler over the JDK's SSLEngine: Dubbo finds no
     * netty-tcnative here), with the certificates rpcbed.dubbo.TlsCerts hands it. A
     * connection that does not start with a TLS record is closed.
     */
    public DubboServer(DataService svc, String host, int port, int threads, long idleMillis, ServerTls tls) {
        this.svc = svc;
        if (port == 0) {
            port = FreePort.pick(host);
        }
        this.port = port;
        systemProperties();
        if (tls != null) {
            // Dubbo builds a new SslContext for every accepted connection
            // (SslServerTlsHandler -> SslContexts.buildServerSslContext); with the JDK
            // provider each build wraps the key in a PKCS#12 key store protected by PBKDF2
            // (10,000 iterations, derived twice). 1,000 half-open handshakes then held
            // Dubbo's I/O threads for over a minute. The key store lives in memory for
            // microseconds, so its password protection is set to one iteration.
            System.setProperty("keystore.pkcs12.keyPbeIterationCount", "1");
            System.setProperty("keystore.pkcs12.macIterationCount", "1");
            // Dubbo's SslContexts sets no protocol versions: the JDK's defaults decide.
            String protocols = String.join(",", tls.protocols());
            System.setProperty("jdk.tls.server.protocols", protocols);
            System.setProperty("jdk.tls.client.protocols", protocols);
            try {
                rpcbed.dubbo.TlsCerts.server(Pem.pem(tls.chain), Pem.pkcs8Pem(tls.key),
                    tls.mutual() ? Pem.pem(tls.clientCas) : null);
            } catch (java.security.GeneralSecurityException e) {
                throw new IllegalStateException("TLS: " + e.getMessage(), e);
            }
        }
        ServiceConfig<Api.Data> service = new ServiceConfig<>();
        service.setInterface(Api.Data.class);
        service.setRef(new Impl(svc));
        bootstrap = DubboBootstrap.newInstance()
            .application(application("rpcbed-java-dubbo-server"))
            .registry(new RegistryConfig(RegistryConfig.NO_AVAILABLE))
            .protocol(protocol(host, port, threads, idleMillis))
            .service(service)
            .start();
    }

    /**
     * The host as Dubbo must be given it to stay on loopback. Dubbo treats any "127.*" or
     * "localhost" string as "no host configured": the server then binds 0.0.0.0 and the
     * client connects to the machine's external address instead (NetUtils.isInvalidLocalHost,
     * filterLocalHost). The same address written as one 32-bit decimal number is resolved
     * by Java to 127.x.y.z while Dubbo's string checks leave it alone.
     */
    public static String loopbackSafe(String host) {
        String h = host.equals("localhost") ? "127.0.0.1" : host;
        String[] parts = h.split("\\.");
        if (parts.length != 4 || !parts[0].equals("127")) {
            return host;
        }
        long v = 0;
        for (String part : parts) {
            int b;
            try {
                b = Integer.parseInt(part);
            } catch (NumberFormatException e) {
                return host;
            }
            if (b < 0 || b > 255) {
                return host;
            }
            v = v << 8 | b;
        }
        return Long.toString(v);
    }

    /** Settings shared by the Dubbo server and client (listed in java-client/README.md). */
    public static ApplicationConfig application(String name) {
        ApplicationConfig app = new ApplicationConfig(name);
        // No QoS telnet port: it would clash between processes and is not measured.
        app.setQosEnable(false);
        // No metadata report or registry: a direct URL is all there is.
        app.setMetadataType("local");
        app.setRegisterMode("interface");
        // Stop within a second (default 10 s of graceful wait): the load is over by then.
        app.setShutwait("1000");
        return app;
    }

    static ProtocolConfig protocol(String host, int port, int threads, long idleMillis) {
        ProtocolConfig p = new ProtocolConfig("dubbo", port);
        p.setHost(loopbackSafe(host));
        p.setSerialization("hessian2");
        p.setPreferSerialization("hessian2");
        // Dubbo's default business pool is "fixed" with 200 threads; size it like the others.
        p.setThreadpool("fixed");
        p.setThreads(threads);
        // Handlers never block on I/O (the only wait is the once-only fill at start), so
        // they run on the I/O thread that decoded the request instead of being handed to
        // the pool (Dubbo's "direct" dispatcher; the default "all" hands off every call),
        // as the gRPC server does with directExecutor().
        // DubboGuard is "direct" whose error replies carry no stack trace (issue 18 #11).
        p.setDispatcher(DubboGuard.NAME);
        // No cap on connections, as go-server (Dubbo's accepts=1024 closed every caller
        // behind 1,024 idle connections: issue 28 #4); one idle for idleMillis is closed
        // (Dubbo's heartbeat.timeout; its heartbeat must be at most a third of it).
        p.setAccepts(0);
        int idle = (int) Math.min(Integer.MAX_VALUE, idleMillis);
        p.setHeartbeat(Math.max(1000, idle / 3));
        p.setParameters(new java.util.HashMap<>(java.util.Map.of("heartbeat.timeout", Integer.toString(idle))));
        // DataList(100000) in hessian2 is above the 8 MB default payload.
        p.setPayload(64 * 1024 * 1024);
        return p;
    }

    @Override
    public int port() {
        return port;
    }

    @Override
    public CallStats calls() {
        return svc.calls();
    }

    @Override
    public void close() {
        bootstrap.stop();
    }

    static final class Impl implements Api.Data {
        private final DataService svc;

        /**
         * A failed call as the declared DataError: a ServiceError with its code, anything
         * else internal (Dubbo's ExceptionFilter would wrap it with the whole stack trace
         * as message).
         */
        private static Api.DataError declared(Exception e) {
            if (e instanceof ServiceError se) {
                return new Api.DataError(se.code(), se.getMessage());
            }
            return new Api.DataError(ServiceError.INTERNAL, "internal error: " + e.getClass().getSimpleName());
        }

        Impl(DataService svc) {
            this.svc = svc;
        }

        @Override
        public Api.DataTypeResponse dataType(Api.DataTypeRequest req) throws Api.DataError {
            boolean failed = true;
            try {
                Api.Auth a = req.auth == null ? new Api.Auth() : req.auth;
                String token = svc.refresh(a.clientId, a.token);
                Store.Rec rec = svc.dataType(req.groupName, req.enName);
                Api.DataTypeResponse r = new Api.DataTypeResponse();
                r.auth = new Api.AuthReply(token);
                r.codeId = rec.codeId();
                r.cnName = rec.cnName();
                failed = false;
                return r;
            } catch (ServiceError | RuntimeException e) {
                throw declared(e);
            } finally {
                svc.calls().record(CallStats.Call.DATATYPE, failed);
            }
        }

        @Override
        public Api.DataListResponse dataList(Api.DataListRequest req) throws Api.DataError {
            boolean failed = true;
            try {
                Api.Auth a = req.auth == null ? new Api.Auth() : req.auth;
                String token = svc.refresh(a.clientId, a.token);
                DataService.checkItems(req.n);
                Api.Item[] items = new Api.Item[req.n];
                for (int i = 0; i < req.n; i++) {
                    Api.Item it = new Api.Item();
                    it.id = DataService.itemId(i);
                    it.name = DataService.itemName(i);
                    it.score = DataService.itemScore(i);
                    it.enabled = DataService.itemEnabled(i);
                    items[i] = it;
                }
                Api.DataListResponse r = new Api.DataListResponse();
                r.auth = new Api.AuthReply(token);
                r.items = items;
                failed = false;
                return r;
            } catch (ServiceError | RuntimeException e) {
                throw declared(e);
            } finally {
                svc.calls().record(CallStats.Call.DATALIST, failed);
            }
        }
    }
}
