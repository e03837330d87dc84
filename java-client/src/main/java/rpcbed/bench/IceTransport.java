package rpcbed.bench;

import com.zeroc.Ice.Communicator;
import com.zeroc.Ice.ConnectFailedException;
import com.zeroc.Ice.ConnectTimeoutException;
import com.zeroc.Ice.InitializationData;
import com.zeroc.Ice.LocalException;
import com.zeroc.Ice.OutputStream;
import com.zeroc.Ice.TimeoutException;
import com.zeroc.Ice.UnknownException;
import com.zeroc.Ice.Util;
import java.util.Map;
import rpcbed.gen.rpcbedice.Auth;
import rpcbed.gen.rpcbedice.DataError;
import rpcbed.gen.rpcbedice.DataListRequest;
import rpcbed.gen.rpcbedice.DataListResponse;
import rpcbed.gen.rpcbedice.DataPrx;
import rpcbed.gen.rpcbedice.DataTypeRequest;
import rpcbed.gen.rpcbedice.DataTypeResponse;
import rpcbed.server.IceServer;

/**
 * ZeroC Ice over TCP, or over IceSSL with -security tls|mtls. One communicator; every
 * Conn is a proxy with its own connection id, hence its own connection.
 */
final class IceTransport implements Transport {
    private final Config cfg;
    private final Communicator communicator;

    IceTransport(Config cfg) {
        this.cfg = cfg;
        InitializationData init = new InitializationData();
        init.properties = Util.createProperties();
        clientProps(init.properties, cfg.concurrency);
        if (cfg.tls != null) {
            sslProps(init.properties, cfg.tls.version);
        }
        communicator = Util.initialize(init);
        if (cfg.tls != null) {
            try {
                IceServer.initSsl(communicator, rpcbed.tls.ClientEngines.wrap(cfg.tls, cfg.port));
            } catch (java.security.GeneralSecurityException | RuntimeException e) {
                communicator.destroy();
                throw new IllegalStateException("IceSSL: " + e.getMessage(), e);
            }
        }
    }

    /**
     * IceSSL on the client, over the JDK's SSLEngine with rpcbed's context (as the
     * baseline server: Ice.InitPlugins=0, then IceServer.initSsl). IceSSL's own name
     * check and SNI are off because the engines (ClientEngines) check -servername, which
     * IceSSL would not (it checks the proxy's -h), and send it as SNI.
     */
    static void sslProps(com.zeroc.Ice.Properties p, String version) {
        // IceSSL.Protocols as a server with that minimum would set; the engines offer
        // only -tls-version whatever IceSSL enables.
        IceServer.sslProps(p, version, 2);
        p.setProperty("IceSSL.CheckCertName", "0");
        p.setProperty("IceSSL.ServerNameIndication", "0");
    }

    /** Every non-default Ice setting of the client (listed in java-client/README.md). */
    static void clientProps(com.zeroc.Ice.Properties p, int callers) {
        // Replies are read by the client thread pool (default: one thread for all
        // connections); give it a thread per core, growing with the callers.
        int cores = Runtime.getRuntime().availableProcessors();
        p.setProperty("Ice.ThreadPool.Client.Size", Integer.toString(Math.max(1, Math.min(cores, callers))));
        p.setProperty("Ice.ThreadPool.Client.SizeMax", Integer.toString(Math.max(cores, callers)));
        // data.ice maps module rpcbedice to Java package rpcbed.gen: without this, Ice
        // cannot find DataError's class and reports UnknownUserException instead.
        p.setProperty("Ice.Package.rpcbedice", "rpcbed.gen");
        p.setProperty("Ice.MessageSizeMax", "65536");
        p.setProperty("Ice.Warn.Connections", "0");
    }

    @Override
    public Conn open(int index) throws CallError {
        return open("c" + index, false);
    }

    /** A connection id no other Conn has: Ice reuses an open connection of the same id. */
    private final java.util.concurrent.atomic.AtomicLong dials = new java.util.concurrent.atomic.AtomicLong();

    @Override
    public Conn dial() throws CallError {
        return open("p" + dials.incrementAndGet(), true);
    }

    /** own: the connection is the Conn's alone and closes with it (-connect per-call). */
    private Conn open(String connectionId, boolean own) throws CallError {
        DataPrx proxy = DataPrx.uncheckedCast(communicator.stringToProxy(
                IceServer.IDENTITY + (cfg.tls == null ? ":tcp" : ":ssl") + " -h " + cfg.host + " -p " + cfg.port))
            .ice_connectionId(connectionId)
            .ice_invocationTimeout(cfg.timeoutMillis());
        try {
            proxy.ice_getConnection(); // connect before timing
        } catch (LocalException e) {
            throw new CallError(Kind.CONNECT, "cannot connect to " + cfg.addr + ": " + e, e);
        }
        return new IceConn(proxy, own);
    }

    @Override
    public boolean sharedConnSafe() {
        return true;
    }

    @Override
    public String serverSoftware() {
        return "rpcbed-java-ice"; // the only Ice server of rpcbed
    }

    @Override
    public Map<String, String> versions() {
        return Map.of("ice", Util.stringVersion());
    }

    @Override
    public void close() {
        communicator.destroy();
    }

    private int encodedSize(DataListResponse r) {
        OutputStream out = new OutputStream(communicator);
        DataListResponse.ice_write(out, r);
        return out.size();
    }

    private int encodedSize(DataTypeResponse r) {
        OutputStream out = new OutputStream(communicator);
        DataTypeResponse.ice_write(out, r);
        return out.size();
    }

    private final class IceConn implements Conn {
        private final DataPrx proxy;
        // Ice reports no received size; responses differ only in the fixed-length
        // token, so the size encoded once is every response's size.
        private long size = -1;
        private final boolean own;

        IceConn(DataPrx proxy, boolean own) {
            this.proxy = proxy;
            this.own = own;
        }

        @Override
        public long call(Session s) throws CallError {
            Auth auth = new Auth(s.clientId, s.token);
            try {
                if (cfg.dataList()) {
                    DataListResponse r = proxy.DataList(new DataListRequest(auth, cfg.items));
                    s.token = r.auth.token;
                    int got = r.items == null ? 0 : r.items.length;
                    if (got != cfg.items) {
                        throw Transports.wrongItems(got, cfg.items);
                    }
                    if (size < 0) {
                        size = encodedSize(r);
                    }
                } else {
                    DataTypeResponse r = proxy.DataType(new DataTypeRequest(auth, Config.GROUP_NAME, Config.EN_NAME));
                    s.token = r.auth.token;
                    if (r.codeId != 101) {
                        throw Transports.wrongCode(r.codeId);
                    }
                    if (size < 0) {
                        size = encodedSize(r);
                    }
                }
                return size;
            } catch (DataError e) {
                Kind k = Transports.dataErrorKind(e.code);
                if (k == Kind.UNAUTHENTICATED) {
                    s.token = "";
                }
                throw new CallError(k, "DataError " + e.code + ": " + e.message, e);
            } catch (TimeoutException e) {
                throw new CallError(e instanceof ConnectTimeoutException ? Kind.CONNECT : Kind.TIMEOUT, e.toString(), e);
            } catch (ConnectFailedException e) {
                throw new CallError(Kind.CONNECT, e.toString(), e);
            } catch (UnknownException e) {
                throw new CallError(Kind.EXCEPTIONS, e.toString(), e);
            } catch (LocalException e) {
                throw new CallError(Kind.RECEIVE, e.toString(), e);
            }
        }

        @Override
        public void close() {
            // Shared connections close with the communicator; a per-call one now (the
            // close message goes once no call is pending on it, without waiting here).
            com.zeroc.Ice.Connection c = own ? proxy.ice_getCachedConnection() : null;
            if (c != null) {
                c.close(com.zeroc.Ice.ConnectionClose.Gracefully);
            }
        }
    }
}
