package rpcbed.server;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.thrift.TException;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.server.TThreadPoolServer;
import org.apache.thrift.transport.TServerSocket;
import org.apache.thrift.transport.TTransportException;
import rpcbed.core.DataService;
import rpcbed.core.ServiceError;
import rpcbed.core.Store;
import rpcbed.stats.CallStats;
import rpcbed.gen.thrift.AuthReply;
import rpcbed.gen.thrift.Data;
import rpcbed.gen.thrift.DataError;
import rpcbed.gen.thrift.DataListRequest;
import rpcbed.gen.thrift.DataListResponse;
import rpcbed.gen.thrift.DataTypeRequest;
import rpcbed.gen.thrift.DataTypeResponse;
import rpcbed.gen.thrift.Item;

/**
 * The Apache Thrift baseline: framed transport + binary protocol as go-server, served by
 * TThreadPoolServer (one pooled thread per connection, blocking I/O).
 */
public final class ThriftServer implements BaselineServer {
    /** The largest response frame a client takes (DataList(100000) is about 3 MB). */
    public static final int MAX_FRAME = 64 * 1024 * 1024;

    private final TServerSocket socket;
    private final TThreadPoolServer server;
    private final Thread loop;
    private final DataService svc;

    public ThriftServer(DataService svc, String host, int port, int threads, long idleMillis)
            throws TTransportException {
        this.svc = svc;
        // clientTimeout is each accepted socket's SO_TIMEOUT: a connection that sends
        // nothing for idleMillis (idle, or half-open) is closed (issue 18 #11).
        socket = new TServerSocket(new TServerSocket.ServerSocketTransportArgs()
            .bindAddr(new InetSocketAddress(host, port))
            .clientTimeout((int) Math.min(Integer.MAX_VALUE, idleMillis)));
        // One thread per connection, up to Limits.MAX_CONNECTIONS (TThreadPoolServer then
        // closes the newest connection); started warm.
        ThreadPoolExecutor pool = new ThreadPoolExecutor(Math.min(threads, 16), Limits.MAX_CONNECTIONS,
            60, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
                Thread t = new Thread(r, "thrift-worker");
                t.setDaemon(true);
                return t;
            });
        server = new TThreadPoolServer(new TThreadPoolServer.Args(socket)
            .processor(new Data.Processor<>(new Handler(svc)))
            // Requests are small: a frame above Limits.MAX_REQUEST closes the connection,
            // and a frame's buffer grows as its bytes arrive (issue 18 #5).
            .transportFactory(new BoundedFramedTransport.Factory(Limits.MAX_REQUEST))
            .protocolFactory(new TBinaryProtocol.Factory(Limits.MAX_REQUEST, Limits.MAX_REQUEST))
            .executorService(pool)
            .stopTimeoutVal(1)
            .stopTimeoutUnit(TimeUnit.SECONDS));
        loop = new Thread(server::serve, "thrift-accept");
        loop.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!server.isServing() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
    }

    @Override
    public int port() {
        return socket.getServerSocket().getLocalPort();
    }

    @Override
    public CallStats calls() {
        return svc.calls();
    }

    @Override
    public void close() {
        server.stop();
        try {
            loop.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static final class Handler implements Data.Iface {
        private static final List<String> NO_TAGS = Collections.emptyList();
        private final DataService svc;

        Handler(DataService svc) {
            this.svc = svc;
        }

        /** A request without its auth struct is a caller without a token. */
        private String refresh(rpcbed.gen.thrift.Auth a) throws ServiceError {
            return a == null ? svc.refresh("", "") : svc.refresh(a.getClientId(), a.getToken());
        }

        @Override
        public DataTypeResponse DataType(DataTypeRequest req) throws TException {
            boolean failed = true;
            try {
                String token = refresh(req.getAuth());
                Store.Rec rec = svc.dataType(req.getGroupName(), req.getEnName());
                failed = false;
                return new DataTypeResponse(new AuthReply(token), rec.codeId(), rec.cnName());
            } catch (ServiceError e) {
                throw new DataError(e.code(), e.getMessage());
            } finally {
                svc.calls().record(CallStats.Call.DATATYPE, failed);
            }
        }

        @Override
        public DataListResponse DataList(DataListRequest req) throws TException {
            boolean failed = true;
            try {
                String token = refresh(req.getAuth());
                int n = req.getN();
                DataService.checkItems(n);
                List<Item> items = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    items.add(new Item(DataService.itemId(i), DataService.itemName(i), 0,
                        DataService.itemScore(i), DataService.itemEnabled(i), 0, "", NO_TAGS));
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
