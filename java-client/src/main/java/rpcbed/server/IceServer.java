package rpcbed.server;

import com.zeroc.Ice.Communicator;
import com.zeroc.Ice.Current;
import com.zeroc.Ice.IPEndpointInfo;
import com.zeroc.Ice.InitializationData;
import com.zeroc.Ice.ObjectAdapter;
import com.zeroc.Ice.Util;
import rpcbed.core.DataService;
import rpcbed.core.ServiceError;
import rpcbed.core.Store;
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

    public IceServer(DataService svc, String host, int port, int threads) {
        InitializationData init = new InitializationData();
        init.properties = Util.createProperties();
        props(init.properties, threads);
        communicator = Util.initialize(init);
        ObjectAdapter adapter = communicator.createObjectAdapterWithEndpoints(
            "Data", "tcp -h " + host + " -p " + port);
        adapter.add(new Servant(svc), Util.stringToIdentity(IDENTITY));
        adapter.activate();
        this.port = ((IPEndpointInfo) adapter.getEndpoints()[0].getInfo()).port;
    }

    /** Every non-default Ice setting of the server (listed in java-client/README.md). */
    static void props(com.zeroc.Ice.Properties p, int threads) {
        // The server pool dispatches calls; the default is one thread.
        p.setProperty("Ice.ThreadPool.Server.Size", Integer.toString(threads));
        p.setProperty("Ice.ThreadPool.Server.SizeMax", Integer.toString(threads));
        // DataList(100000) is about 3 MB; the default limit is 1 MB.
        p.setProperty("Ice.MessageSizeMax", "65536");
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
            try {
                String token = svc.refresh(req.auth.clientId, req.auth.token);
                Store.Rec rec = svc.dataType(req.groupName, req.enName);
                return new DataTypeResponse(new AuthReply(token), rec.codeId(), rec.cnName());
            } catch (ServiceError e) {
                throw new DataError(e.code(), e.getMessage());
            }
        }

        @Override
        public DataListResponse DataList(DataListRequest req, Current current) throws DataError {
            try {
                String token = svc.refresh(req.auth.clientId, req.auth.token);
                DataService.checkItems(req.n);
                Item[] items = new Item[req.n];
                for (int i = 0; i < req.n; i++) {
                    items[i] = new Item(DataService.itemId(i), DataService.itemName(i), 0,
                        DataService.itemScore(i), DataService.itemEnabled(i), 0, "", NO_TAGS);
                }
                return new DataListResponse(new AuthReply(token), items);
            } catch (ServiceError e) {
                throw new DataError(e.code(), e.getMessage());
            }
        }
    }
}
