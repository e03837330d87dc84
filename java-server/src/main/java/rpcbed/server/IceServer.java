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
        this.svc = svc;
        InitializationData init = new InitializationData();
        init.properties = Util.createProperties();
        props(init.properties, threads, idleMillis);
        communicator = Util.initialize(init);
        ObjectAdapter adapter = communicator.createObjectAdapterWithEndpoints(
            "Data", "tcp -h " + host + " -p " + port);
        adapter.add(new Guard(new Servant(svc)), Util.stringToIdentity(IDENTITY));
        adapter.activate();
        this.port = ((IPEndpointInfo) adapter.getEndpoints()[0].getInfo()).port;
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
