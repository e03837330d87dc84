package rpcbed.server;

import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth;
import io.grpc.netty.shaded.io.netty.handler.ssl.OpenSsl;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import javax.net.ssl.SSLException;
import rpcbed.tls.ServerTls;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import rpcbed.core.DataService;
import rpcbed.core.ServiceError;
import rpcbed.core.Store;
import rpcbed.gen.pb.AuthReply;
import rpcbed.gen.pb.DataGrpc;
import rpcbed.gen.pb.DataListRequest;
import rpcbed.gen.pb.DataListResponse;
import rpcbed.gen.pb.DataTypeRequest;
import rpcbed.gen.pb.DataTypeResponse;
import rpcbed.gen.pb.Item;
import rpcbed.stats.CallStats;

/** The grpc-java baseline (Netty transport), same service as go-server's gRPC listener. */
public final class GrpcServer implements BaselineServer {
    public static final String SOFTWARE = "rpcbed-java-grpc";
    /** The largest response a client takes (DataList(100000) is about 3 MB). */
    public static final int MAX_MESSAGE = 64 * 1024 * 1024;
    private static final Metadata.Key<String> SERVER =
        Metadata.Key.of("server", Metadata.ASCII_STRING_MARSHALLER);

    private final Server server;
    private final DataService svc;

    public GrpcServer(DataService svc, String host, int port, long idleMillis) {
        this(svc, host, port, idleMillis, null);
    }

    /** tls: null serves plaintext; else TLS only (ALPN h2). */
    public GrpcServer(DataService svc, String host, int port, long idleMillis, ServerTls tls) {
        this.svc = svc;
        ServerInterceptor software = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(
                    ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                return next.startCall(new io.grpc.ForwardingServerCall.SimpleForwardingServerCall<Q, R>(call) {
                    @Override
                    public void sendHeaders(Metadata h) {
                        h.put(SERVER, SOFTWARE);
                        super.sendHeaders(h);
                    }
                }, headers);
            }
        };
        try {
            NettyServerBuilder b = NettyServerBuilder.forAddress(new InetSocketAddress(host, port));
            if (tls != null) {
                b.sslContext(sslContext(tls));
            }
            server = b
                // The handlers never block on I/O (the only wait is the once-only fill at
                // start), so grpc-java's performance guide allows running them on the
                // event loop instead of handing each call to a pool.
                .directExecutor()
                // Requests are small; a message is buffered only as its bytes arrive.
                .maxInboundMessageSize(Limits.MAX_REQUEST)
                // Header lists as go-server's (grpc-java's default is 8 KiB already).
                .maxInboundMetadataSize(16 << 10)
                // Idle and half-open connections are closed (issue 18 #11): no call for
                // idleMillis, a handshake that never ends, a peer that stops answering pings.
                .maxConnectionIdle(idleMillis, TimeUnit.MILLISECONDS)
                .handshakeTimeout(Limits.HANDSHAKE_MILLIS, TimeUnit.MILLISECONDS)
                .keepAliveTime(Math.max(idleMillis / 2, 1000), TimeUnit.MILLISECONDS)
                .keepAliveTimeout(20, TimeUnit.SECONDS)
                .addService(ServerInterceptors.intercept(new Impl(svc), software))
                .build()
                .start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * grpc-java's TLS as its users set it up: GrpcSslContexts picks the OpenSSL provider
     * (BoringSSL from the netty-tcnative that grpc-netty-shaded carries) when it loads,
     * the JDK's SSLEngine otherwise; {@link #provider} says which ran.
     */
    static SslContext sslContext(ServerTls tls) throws SSLException {
        SslContextBuilder b = GrpcSslContexts.configure(SslContextBuilder.forServer(tls.key, tls.chain))
            .protocols(tls.protocols());
        if (tls.mutual()) {
            b.trustManager(tls.clientCas).clientAuth(ClientAuth.REQUIRE);
        }
        return b.build();
    }

    /** "OpenSSL (BoringSSL)" or "JDK": the TLS implementation grpc-java uses in this process. */
    public static String provider() {
        return OpenSsl.isAvailable() ? "OpenSSL (" + OpenSsl.versionString() + ")" : "JDK";
    }

    @Override
    public int port() {
        return server.getPort();
    }

    @Override
    public CallStats calls() {
        return svc.calls();
    }

    @Override
    public void close() {
        server.shutdown();
        try {
            if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
                server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static Status status(ServiceError e) {
        Status s = switch (e.code()) {
            case ServiceError.INVALID_ARGUMENT -> Status.INVALID_ARGUMENT;
            case ServiceError.UNAUTHENTICATED -> Status.UNAUTHENTICATED;
            default -> Status.INTERNAL;
        };
        return s.withDescription(e.getMessage());
    }

    static final class Impl extends DataGrpc.DataImplBase {
        private final DataService svc;

        Impl(DataService svc) {
            this.svc = svc;
        }

        @Override
        public void dataType(DataTypeRequest req, StreamObserver<DataTypeResponse> out) {
            boolean failed = true;
            try {
                String token = svc.refresh(req.getAuth().getClientId(), req.getAuth().getToken());
                Store.Rec rec = svc.dataType(req.getGroupName(), req.getEnName());
                out.onNext(DataTypeResponse.newBuilder()
                    .setAuth(AuthReply.newBuilder().setToken(token))
                    .setCodeId(rec.codeId())
                    .setCnName(rec.cnName())
                    .build());
                out.onCompleted();
                failed = false;
            } catch (ServiceError e) {
                out.onError(status(e).asRuntimeException());
            } finally {
                svc.calls().record(CallStats.Call.DATATYPE, failed);
            }
        }

        @Override
        public void dataList(DataListRequest req, StreamObserver<DataListResponse> out) {
            boolean failed = true;
            try {
                String token = svc.refresh(req.getAuth().getClientId(), req.getAuth().getToken());
                int n = req.getN();
                DataService.checkItems(n);
                DataListResponse.Builder b = DataListResponse.newBuilder()
                    .setAuth(AuthReply.newBuilder().setToken(token));
                for (int i = 0; i < n; i++) {
                    b.addItems(Item.newBuilder()
                        .setId(DataService.itemId(i))
                        .setName(DataService.itemName(i))
                        .setScore(DataService.itemScore(i))
                        .setEnabled(DataService.itemEnabled(i)));
                }
                out.onNext(b.build());
                out.onCompleted();
                failed = false;
            } catch (ServiceError e) {
                out.onError(status(e).asRuntimeException());
            } finally {
                svc.calls().record(CallStats.Call.DATALIST, failed);
            }
        }
    }
}
