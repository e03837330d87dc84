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
import org.apache.thrift.transport.layered.TFramedTransport;
import rpcbed.core.DataService;
import rpcbed.core.ServiceError;
import rpcbed.core.Store;
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
    public static final int MAX_FRAME = 64 * 1024 * 1024;

    private final TServerSocket socket;
    private final TThreadPoolServer server;
    private final Thread loop;

    public ThriftServer(DataService svc, String host, int port, int threads) throws TTransportException {
        socket = new TServerSocket(new InetSocketAddress(host, port));
        // Connections beyond the pool's threads would wait for a free thread: keep the
        // pool open-ended (the load clients bound the connection count) but start warm.
        ThreadPoolExecutor pool = new ThreadPoolExecutor(Math.min(threads, 16), Integer.MAX_VALUE,
            60, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
                Thread t = new Thread(r, "thrift-worker");
                t.setDaemon(true);
                return t;
            });
        server = new TThreadPoolServer(new TThreadPoolServer.Args(socket)
            .processor(new Data.Processor<>(new Handler(svc)))
            .transportFactory(new TFramedTransport.Factory(MAX_FRAME))
            .protocolFactory(new TBinaryProtocol.Factory())
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

        @Override
        public DataTypeResponse DataType(DataTypeRequest req) throws TException {
            try {
                String token = svc.refresh(req.getAuth().getClientId(), req.getAuth().getToken());
                Store.Rec rec = svc.dataType(req.getGroupName(), req.getEnName());
                return new DataTypeResponse(new AuthReply(token), rec.codeId(), rec.cnName());
            } catch (ServiceError e) {
                throw new DataError(e.code(), e.getMessage());
            }
        }

        @Override
        public DataListResponse DataList(DataListRequest req) throws TException {
            try {
                String token = svc.refresh(req.getAuth().getClientId(), req.getAuth().getToken());
                int n = req.getN();
                DataService.checkItems(n);
                List<Item> items = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    items.add(new Item(DataService.itemId(i), DataService.itemName(i), 0,
                        DataService.itemScore(i), DataService.itemEnabled(i), 0, "", NO_TAGS));
                }
                return new DataListResponse(new AuthReply(token), items);
            } catch (ServiceError e) {
                throw new DataError(e.code(), e.getMessage());
            }
        }
    }
}
