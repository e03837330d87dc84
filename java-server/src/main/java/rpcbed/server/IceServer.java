package rpcbed.server;

import com.zeroc.Ice.Communicator;
import com.zeroc.Ice.Current;
import com.zeroc.Ice.IPEndpointInfo;
import com.zeroc.Ice.InitializationData;
import com.zeroc.Ice.ObjectAdapter;
import com.zeroc.Ice.DispatchInterceptor;
import com.zeroc.Ice.LocalException;
import com.zeroc.Ice.OutputStream;
import com.zeroc.Ice.ProtocolException;
import com.zeroc.Ice.Request;
import com.zeroc.Ice.RequestFailedException;
import com.zeroc.Ice.UnknownException;
import com.zeroc.Ice.UnknownLocalException;
import com.zeroc.Ice.UserException;
import com.zeroc.Ice.Util;
import java.util.concurrent.CompletionStage;
import rpcbed.core.DataService;
import rpcbed.tls.ServerTls;
import rpcbed.core.ServiceError;
import rpcbed.core.Store;
import rpcbed.stats.CallStats;
import rpcbed.gen.rpcbedice.AuthReply;
import rpcbed.gen.rpcbedice.Data;
import rpcbed.gen.rpcbedice.DataError;
import rpcbed.gen.rpcbedice.DataListRequest;
import rpcbed.gen.rpcbedice.DataListResponse;
import rpcbed.gen.rpcbedice.DataTypeRequest;
import rpcbed.gen.rpcbedice.DataTypeResponse;
import rpcbed.gen.rpcbedice.Item;

/**
 * The ZeroC Ice baseline: object identity {@value #IDENTITY} on
 * {@code tcp -h HOST -p PORT}, so a client's proxy is {@code data:tcp -h 127.0.0.1 -p 10000}.
 */
public final class IceServer implements BaselineServer {
    public static final String IDENTITY = "data";

    private final Communicator communicator;
    private final int port;
    private final DataService svc;

    public IceServer(DataService svc, String host, int port, int threads, long idleMillis) {
        this(svc, host, port, threads, idleMillis, null);
    }

    /** tls: null serves tcp; else IceSSL's ssl endpoint only. */
    public IceServer(DataService svc, String host, int port, int threads, long idleMillis, ServerTls tls) {
        this.svc = svc;
        InitializationData init = new InitializationData();
        init.properties = Util.createProperties();
        props(init.properties, threads, idleMillis);
        if (tls != null) {
            sslProps(init.properties, tls.min, tls.mutual() ? 2 : 0);
        }
        communicator = Util.initialize(init);
        if (tls != null) {
            try {
                // IceSSL's -t restarts on every byte: the deadline is the whole handshake's.
                initSsl(communicator, rpcbed.tls.HandshakeDeadline.wrap(tls.jdkContext(), Limits.HANDSHAKE_MILLIS));
            } catch (java.security.GeneralSecurityException e) {
                communicator.destroy();
                throw new IllegalStateException("TLS: " + e.getMessage(), e);
            }
        }
        ObjectAdapter adapter = communicator.createObjectAdapterWithEndpoints(
            "Data", tls == null ? "tcp -h " + host + " -p " + port
                // -t: a connection must be established (the TLS handshake and Ice's
                // validation) within Limits.HANDSHAKE_MILLIS.
                : "ssl -h " + host + " -p " + port + " -t " + Limits.HANDSHAKE_MILLIS);
        adapter.add(new Guard(new Servant(svc)), Util.stringToIdentity(IDENTITY));
        adapter.activate();
        // An ssl endpoint's info wraps the tcp one it runs over.
        com.zeroc.Ice.EndpointInfo info = adapter.getEndpoints()[0].getInfo();
        while (!(info instanceof IPEndpointInfo) && info.underlying != null) {
            info = info.underlying;
        }
        this.port = ((IPEndpointInfo) info).port;
    }

    /** Every non-default Ice setting of the server (listed in java-client/README.md). */
    static void props(com.zeroc.Ice.Properties p, int threads, long idleMillis) {
        // The server pool dispatches calls; the default is one thread.
        p.setProperty("Ice.ThreadPool.Server.Size", Integer.toString(threads));
        p.setProperty("Ice.ThreadPool.Server.SizeMax", Integer.toString(threads));
        // The largest message the server reads (KB). Ice allocates a message's claimed
        // size as soon as its 14-byte header arrives, so this bounds memory per
        // connection: with 64 MB, 150 headers claiming 63 MiB exhausted direct memory and
        // killed every server thread (issue 18 #2). Requests are a few hundred bytes; the
        // size of replies (DataList(100000) is about 3 MB) is not limited by it.
        p.setProperty("Ice.MessageSizeMax", Integer.toString(Limits.MAX_REQUEST / 1024));
        // Active connection management: a connection with no traffic for idleMillis is
        // closed, also while a message is half received (CloseOnIdleForceful = 4); no
        // heartbeats from the server (0), so only the peer's activity keeps it open.
        p.setProperty("Ice.ACM.Server.Timeout", Long.toString(Math.max(1, idleMillis / 1000)));
        p.setProperty("Ice.ACM.Server.Close", "4");
        p.setProperty("Ice.ACM.Server.Heartbeat", "0");
        // data.ice maps module rpcbedice to Java package rpcbed.gen: without this, Ice
        // cannot find DataError's class and reports UnknownUserException instead.
        p.setProperty("Ice.Package.rpcbedice", "rpcbed.gen");
        // Load clients come and go; do not log every closed connection.
        p.setProperty("Ice.Warn.Connections", "0");
    }

    /**
     * IceSSL (Debian's libzeroc-ice3.7-java: Maven Central's ice jar has no IceSSL) over
     * the JDK's SSLEngine. The plug-in is loaded but not initialized (Ice.InitPlugins=0)
     * so that rpcbed's SSLContext, built in memory from the PEM files, replaces IceSSL's
     * keystore files. verifyPeer: 0 asks no certificate, 2 requires one (IceSSL.VerifyPeer).
     */
    public static void sslProps(com.zeroc.Ice.Properties p, String min, int verifyPeer) {
        p.setProperty("Ice.Plugin.IceSSL", "com.zeroc.IceSSL.PluginFactory");
        p.setProperty("Ice.InitPlugins", "0");
        p.setProperty("IceSSL.Protocols", min.equals("1.2") ? "tls1_2, tls1_3" : "tls1_3");
        p.setProperty("IceSSL.VerifyPeer", Integer.toString(verifyPeer));
    }

    /** Hands IceSSL the context, then initializes the plug-ins. */
    public static void initSsl(Communicator c, javax.net.ssl.SSLContext ctx) {
        com.zeroc.IceSSL.Plugin ssl = (com.zeroc.IceSSL.Plugin) c.getPluginManager().getPlugin("IceSSL");
        ssl.setContext(ctx);
        c.getPluginManager().initializePlugins();
    }

    @Override
    public int port() {
        return port;
    }

    @Override
    public CallStats calls() {
        return svc.calls();
    }

    /**
     * Answers a request the servant cannot read (a malformed encapsulation, a truncated
     * parameter) with the exception's name and reason only. Ice itself would send the
     * server's Java stack trace to the caller in UnknownLocalException (issue 18 #11).
     */
    static final class Guard extends DispatchInterceptor {
        private final com.zeroc.Ice.Object servant;

        Guard(com.zeroc.Ice.Object servant) {
            this.servant = servant;
        }

        @Override
        public CompletionStage<OutputStream> dispatch(Request request) throws UserException {
            try {
                return servant.ice_dispatch(request);
            } catch (RequestFailedException e) {
                throw e; // ObjectNotExist, OperationNotExist: Ice sends these without a trace
            } catch (LocalException e) {
                String what = e.ice_id().replaceFirst("^::", "");
                if (e instanceof ProtocolException pe && pe.reason != null && !pe.reason.isEmpty()) {
                    what += ": " + pe.reason;
                }
                throw new UnknownLocalException("malformed request: " + what);
            } catch (RuntimeException e) {
                throw new UnknownException("internal error: " + e.getClass().getSimpleName());
            }
        }
    }

    @Override
    public void close() {
        communicator.shutdown();
        communicator.waitForShutdown();
        communicator.destroy();
    }

    static final class Servant implements Data {
        private static final String[] NO_TAGS = new String[0];
        private final DataService svc;

        Servant(DataService svc) {
            this.svc = svc;
        }

        @Override
        public DataTypeResponse DataType(DataTypeRequest req, Current current) throws DataError {
            boolean failed = true;
            try {
                String token = svc.refresh(req.auth.clientId, req.auth.token);
                Store.Rec rec = svc.dataType(req.groupName, req.enName);
                failed = false;
                return new DataTypeResponse(new AuthReply(token), rec.codeId(), rec.cnName());
            } catch (ServiceError e) {
                throw new DataError(e.code(), e.getMessage());
            } finally {
                svc.calls().record(CallStats.Call.DATATYPE, failed);
            }
        }

        @Override
        public DataListResponse DataList(DataListRequest req, Current current) throws DataError {
            boolean failed = true;
            try {
                String token = svc.refresh(req.auth.clientId, req.auth.token);
                DataService.checkItems(req.n);
                Item[] items = new Item[req.n];
                for (int i = 0; i < req.n; i++) {
                    items[i] = new Item(DataService.itemId(i), DataService.itemName(i), 0,
                        DataService.itemScore(i), DataService.itemEnabled(i), 0, "", NO_TAGS);
                }
                failed = false;
                return new DataListResponse(new AuthReply(token), items);
            } catch (ServiceError e) {
                throw new DataError(e.code(), e.getMessage());
            } finally {
                svc.calls().record(CallStats.Call.DATALIST, failed);
            }
        }
    }
}
