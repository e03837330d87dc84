package rpcbed.server;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.thrift.TConfiguration;
import org.apache.thrift.TException;
import org.apache.thrift.TProcessor;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.protocol.TProtocol;
import org.apache.thrift.transport.TMemoryInputTransport;
import org.apache.thrift.transport.TTransport;
import org.apache.thrift.transport.TTransportException;
import rpcbed.core.DataService;
import rpcbed.tls.ServerTls;
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
 * The Apache Thrift baseline: framed transport + binary protocol as go-server (the wire
 * every Thrift client here speaks), libthrift's generated processor, served from Netty
 * event loops (epoll) instead of a thread per connection.
 *
 * <p>Why not libthrift's own servers (issue 28 #3): TThreadPoolServer holds a thread per
 * connection, so 1,024 idle connections filled its pool and the next caller was closed.
 * TThreadedSelectorServer and THsHaServer select instead, but have no idle cut (an idle or
 * half-sent connection is held forever), allocate a frame's claimed size when its header
 * arrives, and wait for memory by spinning their selector. Here a frame's bytes are
 * buffered as they arrive (at most Limits.MAX_REQUEST), a connection idle (no read, no
 * write progress) for idleMillis is closed, a connection whose replies are not read
 * is not read from until they drain (one reply in flight past the write buffer's mark,
 * as go-server's blocking write), and one whose reply bytes stopped moving for
 * stallMillis is closed (go-server's -stall-timeout, 10 s).
 */
public final class ThriftServer implements BaselineServer {
    /** The largest response frame a client takes (DataList(100000) is about 3 MB). */
    public static final int MAX_FRAME = 64 * 1024 * 1024;
    /** Replies queued past this stop reading the connection until they drain below LOW_WATER. */
    static final int HIGH_WATER = 1 << 20;
    static final int LOW_WATER = 256 << 10;

    private final EventLoopGroup boss;
    private final EventLoopGroup io;
    private final Channel listener;
    private final DataService svc;

    public ThriftServer(DataService svc, String host, int port, long idleMillis) throws InterruptedException {
        this(svc, host, port, idleMillis, Limits.STALL_MILLIS, null);
    }

    /** tls: null serves plaintext; else TLS only (the JDK's SSLEngine in a Netty SslHandler). */
    public ThriftServer(DataService svc, String host, int port, long idleMillis, ServerTls tls)
            throws InterruptedException, javax.net.ssl.SSLException {
        this(svc, host, port, idleMillis, Limits.STALL_MILLIS, tls == null ? null : sslContext(tls));
    }

    ThriftServer(DataService svc, String host, int port, long idleMillis, long stallMillis) throws InterruptedException {
        this(svc, host, port, idleMillis, stallMillis, null);
    }

    /**
     * Netty's SslHandler over the JDK's SSLEngine: the unshaded Netty here has no
     * netty-tcnative, and libthrift's own TLS (TSSLTransportFactory) is a blocking
     * server socket with a thread per connection, what this server replaced.
     */
    static SslContext sslContext(ServerTls tls) throws javax.net.ssl.SSLException {
        SslContextBuilder b = SslContextBuilder.forServer(tls.key, tls.chain)
            .sslProvider(SslProvider.JDK)
            .protocols(tls.protocols());
        if (tls.mutual()) {
            b.trustManager(tls.clientCas).clientAuth(ClientAuth.REQUIRE);
        }
        return b.build();
    }

    /** stallMillis: a reply whose bytes stopped moving this long closes the connection. */
    ThriftServer(DataService svc, String host, int port, long idleMillis, long stallMillis, SslContext ssl)
            throws InterruptedException {
        this.svc = svc;
        boolean epoll = Epoll.isAvailable();
        IoHandlerFactory factory = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        boss = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("thrift-accept", true), factory);
        // Netty's default count (2 x cores), as the gRPC baseline's; handlers run on them.
        io = new MultiThreadIoEventLoopGroup(0, new DefaultThreadFactory("thrift-io", true), factory);
        TProcessor processor = new Data.Processor<>(new Handler(svc));
        ServerBootstrap b = new ServerBootstrap()
            .group(boss, io)
            .channel(epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
            .childOption(ChannelOption.TCP_NODELAY, true) // as libthrift's TSocket
            .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(LOW_WATER, HIGH_WATER))
            .childHandler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) throws TTransportException {
                    if (ssl != null) {
                        // A handshake not done within Limits.HANDSHAKE_MILLIS closes the connection.
                        SslHandler h = ssl.newHandler(ch.alloc());
                        h.setHandshakeTimeoutMillis(Limits.HANDSHAKE_MILLIS);
                        ch.pipeline().addLast(h);
                    }
                    ch.pipeline().addLast(
                        // observeOutput: a reply being written counts as activity only while
                        // its bytes move.
                        new IdleStateHandler(true, 0, 0, idleMillis, TimeUnit.MILLISECONDS),
                        new Connection(processor, Limits.MAX_REQUEST, stallMillis));
                }
            });
        try {
            listener = b.bind(new InetSocketAddress(host, port)).sync().channel();
        } catch (InterruptedException | RuntimeException e) {
            shutdown();
            throw e;
        }
    }

    @Override
    public int port() {
        return ((InetSocketAddress) listener.localAddress()).getPort();
    }

    @Override
    public CallStats calls() {
        return svc.calls();
    }

    @Override
    public void close() {
        listener.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        shutdown();
    }

    /** Stops the loops within a second (in-flight replies are small next to it); closes every connection. */
    private void shutdown() {
        boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        io.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }

    /**
     * One connection: splits framed requests out of the bytes received, runs each through
     * the processor on the event loop, writes each reply as one frame. Frames are taken
     * one at a time while the connection is writable; past the high water mark reading
     * stops until the peer has read enough of the replies.
     */
    static final class Connection extends ChannelInboundHandlerAdapter {
        private final TProcessor processor;
        private final int maxFrame;
        private final long stallMillis;
        private final TMemoryInputTransport in;
        private final ReplyTransport out = new ReplyTransport();
        private final TProtocol inProto;
        private final TProtocol outProto;
        /** Bytes received and not yet processed; grows only as they arrive. */
        private ByteBuf pending;
        /** The request being answered, reused while requests are at most KEEP bytes. */
        private byte[] frame = new byte[1024];
        /** The stall check, scheduled while reply bytes wait to be written. */
        private ScheduledFuture<?> stallCheck;
        private Object lastMessage;
        private long lastProgress;
        private long lastPendingBytes;

        Connection(TProcessor processor, int maxFrame, long stallMillis) throws TTransportException {
            this.processor = processor;
            this.maxFrame = maxFrame;
            this.stallMillis = stallMillis;
            this.in = new TMemoryInputTransport(new TConfiguration(maxFrame, maxFrame, TConfiguration.DEFAULT_RECURSION_DEPTH));
            TBinaryProtocol.Factory protocols = new TBinaryProtocol.Factory(maxFrame, maxFrame);
            this.inProto = protocols.getProtocol(in);
            this.outProto = protocols.getProtocol(out);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            if (pending == null) {
                pending = b;
            } else {
                if (pending.writableBytes() < b.readableBytes()) {
                    // Doubling: a frame arriving in pieces is copied O(log n) times, and
                    // the buffer stays within twice what the peer sent.
                    int need = pending.readableBytes() + b.readableBytes();
                    ByteBuf bigger = ctx.alloc().buffer(Math.max(need, Math.min(2 * pending.capacity(), maxFrame + 4)));
                    bigger.writeBytes(pending);
                    pending.release();
                    pending = bigger;
                }
                pending.writeBytes(b);
                b.release();
            }
            serve(ctx);
        }

        /** Answers every whole frame received while the connection stays writable. */
        private void serve(ChannelHandlerContext ctx) {
            boolean wrote = false;
            while (pending != null && ctx.channel().isWritable()) {
                if (pending.readableBytes() < 4) {
                    break;
                }
                int size = pending.getInt(pending.readerIndex());
                if (size < 0 || size > maxFrame) {
                    // A claim above the limit: refused before anything is allocated for it.
                    ctx.close();
                    break;
                }
                if (pending.readableBytes() < 4 + size) {
                    break;
                }
                pending.skipBytes(4);
                if (frame.length < size) {
                    frame = new byte[size];
                }
                pending.readBytes(frame, 0, size);
                if (!pending.isReadable()) {
                    pending.release();
                    pending = null;
                }
                ByteBuf reply = answer(ctx, frame, size);
                if (frame.length > KEEP) {
                    frame = new byte[KEEP]; // a large request's buffer is not kept
                }
                if (reply == null) {
                    ctx.close(); // unreadable request: as TThreadPoolServer, the connection ends
                    break;
                }
                if (reply.readableBytes() > 4) {
                    ctx.write(reply);
                    wrote = true;
                } else {
                    reply.release(); // a oneway call has no reply
                }
            }
            if (wrote) {
                ctx.flush();
                watchStall(ctx);
            }
            // Read on only while the replies drain; channelWritabilityChanged resumes.
            boolean writable = ctx.channel().isWritable();
            if (ctx.channel().config().isAutoRead() != writable) {
                ctx.channel().config().setAutoRead(writable);
            }
        }

        /** The reply frame (length prefix and message), or null when the request is unreadable. */
        private ByteBuf answer(ChannelHandlerContext ctx, byte[] frame, int size) {
            // Written straight into the socket's buffer: a java.io.ByteArrayOutputStream
            // (libthrift's framed transport) locks on every field, which cost DataList(200)
            // twice the server CPU per call (servers-ab.sh: 195-280 us against 110).
            ByteBuf reply = ctx.alloc().ioBuffer(256);
            reply.writeInt(0);
            out.target = reply;
            try {
                in.reset(frame, 0, size);
                // A string or container may claim no more than the frame holds.
                in.updateKnownMessageSize(size);
                processor.process(inProto, outProto);
            } catch (TException | RuntimeException e) {
                reply.release();
                return null;
            } finally {
                out.target = null;
            }
            reply.setInt(0, reply.readableBytes() - 4);
            return reply;
        }

        /**
         * Closes the connection when reply bytes wait and none moved over one stallMillis
         * period (checked every stallMillis while any wait: a stall is cut after 1-2 periods).
         */
        private void watchStall(ChannelHandlerContext ctx) {
            ChannelOutboundBuffer buf = ctx.channel().unsafe().outboundBuffer();
            if (stallCheck != null || buf == null || buf.totalPendingWriteBytes() == 0) {
                return;
            }
            markOutput(buf);
            stallCheck = ctx.executor().schedule(() -> checkStall(ctx), stallMillis, TimeUnit.MILLISECONDS);
        }

        private void checkStall(ChannelHandlerContext ctx) {
            stallCheck = null;
            ChannelOutboundBuffer buf = ctx.channel().unsafe().outboundBuffer();
            if (buf == null || buf.totalPendingWriteBytes() == 0) {
                return; // written
            }
            if (buf.current() == lastMessage && buf.currentProgress() == lastProgress
                    && buf.totalPendingWriteBytes() == lastPendingBytes) {
                ctx.close(); // the caller stopped reading
                return;
            }
            watchStall(ctx);
        }

        private void markOutput(ChannelOutboundBuffer buf) {
            lastMessage = buf.current();
            lastProgress = buf.currentProgress();
            lastPendingBytes = buf.totalPendingWriteBytes();
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable()) {
                serve(ctx);
            }
            ctx.fireChannelWritabilityChanged();
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof IdleStateEvent) {
                ctx.close(); // nothing read and no reply byte moved for -idle-timeout
            } else {
                ctx.fireUserEventTriggered(evt);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close(); // reset by the peer and the like: nothing to answer
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (stallCheck != null) {
                stallCheck.cancel(false);
                stallCheck = null;
            }
            if (pending != null) {
                pending.release();
                pending = null;
            }
            ctx.fireChannelInactive();
        }
    }

    /** A request buffer a connection keeps between calls; a larger one goes after its call. */
    static final int KEEP = 64 << 10;

    /** The processor's output, written straight into the reply's buffer. */
    static final class ReplyTransport extends TTransport {
        private final TConfiguration conf = new TConfiguration();
        ByteBuf target;

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void open() {}

        @Override
        public void close() {}

        @Override
        public int read(byte[] buf, int off, int len) throws TTransportException {
            throw new TTransportException(TTransportException.UNKNOWN, "reply transport: no reading");
        }

        @Override
        public void write(byte[] b, int off, int len) {
            target.writeBytes(b, off, len);
        }

        @Override
        public TConfiguration getConfiguration() {
            return conf;
        }

        @Override
        public void updateKnownMessageSize(long size) {}

        @Override
        public void checkReadBytesAvailable(long numBytes) {}
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
