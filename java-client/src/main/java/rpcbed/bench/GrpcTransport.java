package rpcbed.bench;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import rpcbed.gen.pb.Auth;
import rpcbed.gen.pb.DataGrpc;
import rpcbed.gen.pb.DataListRequest;
import rpcbed.gen.pb.DataListResponse;
import rpcbed.gen.pb.DataTypeRequest;
import rpcbed.gen.pb.DataTypeResponse;
import rpcbed.server.GrpcServer;

/** grpc-java over Netty; one ManagedChannel (one HTTP/2 connection) per Conn. */
final class GrpcTransport implements Transport {
    private static final Metadata.Key<String> SERVER =
        Metadata.Key.of("server", Metadata.ASCII_STRING_MARSHALLER);

    private final Config cfg;
    private volatile String software = "";

    GrpcTransport(Config cfg) {
        this.cfg = cfg;
    }

    @Override
    public Conn open(int index) throws CallError {
        ManagedChannel ch = channel();
        // Connect now: connections are made before timing.
        long deadline = System.nanoTime() + cfg.timeoutNanos;
        ConnectivityState st = ch.getState(true);
        while (st != ConnectivityState.READY) {
            if (st == ConnectivityState.TRANSIENT_FAILURE || System.nanoTime() - deadline > 0) {
                Throwable why = cfg.tls == null ? null : lastFailure(ch);
                ch.shutdownNow();
                throw new CallError(Kind.CONNECT, "cannot connect to " + cfg.addr + " (" + st + ")"
                    + (why == null ? "" : ": " + why), why);
            }
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                ch.shutdownNow();
                throw new CallError(Kind.CONNECT, "interrupted");
            }
            st = ch.getState(true);
        }
        return new GrpcConn(ch, index < 0);
    }

    /** A channel whose first call connects it (and fails fast if it cannot). */
    @Override
    public Conn dial() throws CallError {
        return new GrpcConn(channel(), false);
    }

    private ManagedChannel channel() throws CallError {
        NettyChannelBuilder b = NettyChannelBuilder.forAddress(cfg.host, cfg.port);
        long startMillis = System.currentTimeMillis();
        if (cfg.tls == null) {
            b.usePlaintext();
        } else {
            b.sslContext(sslContext()).overrideAuthority(cfg.tls.serverName)
                .addTransportFilter(new io.grpc.ClientTransportFilter() {
                    @Override
                    public io.grpc.Attributes transportReady(io.grpc.Attributes a) {
                        javax.net.ssl.SSLSession s = a.get(io.grpc.Grpc.TRANSPORT_ATTR_SSL_SESSION);
                        if (s != null) {
                            // grpc-java insists on ALPN h2: a transport is ready only with it.
                            cfg.tls.handshake(s, "h2", startMillis);
                        }
                        return a;
                    }
                });
        }
        return b
            // Callbacks run on the Netty event loop instead of being handed to the
            // channel's cached pool (grpc-java's performance advice; nothing here blocks).
            // Blocking stubs still hand the answer to the caller (ThreadlessExecutor).
            .directExecutor()
            // One attempt per call: retries would hide failures from the report (as
            // Dubbo's retries=0) and cost a RetriableStream with a buffer per call.
            .disableRetry()
            .maxInboundMessageSize(GrpcServer.MAX_MESSAGE)
            .build();
    }

    private io.grpc.netty.shaded.io.netty.handler.ssl.SslContext shared;

    /**
     * grpc-java's client TLS as its users build it (GrpcSslContexts: the OpenSSL provider,
     * BoringSSL, when netty-tcnative loads): one context for every channel, so sessions
     * may be resumed as the library does by default; with -resume off one per channel.
     */
    private synchronized io.grpc.netty.shaded.io.netty.handler.ssl.SslContext sslContext() throws CallError {
        if (shared != null && cfg.tls.resume) {
            return shared;
        }
        try {
            var b = io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts.forClient()
                .trustManager(cfg.tls.cas)
                .protocols(cfg.tls.protocols());
            if (cfg.tls.mutual) {
                b.keyManager(cfg.tls.key, cfg.tls.chain);
            }
            shared = b.build();
            return shared;
        } catch (javax.net.ssl.SSLException e) {
            throw new CallError(Kind.CONNECT, "TLS context: " + e.getMessage(), e);
        }
    }

    /** The error behind a channel in TRANSIENT_FAILURE: a call on it fails at once with it. */
    private Throwable lastFailure(ManagedChannel ch) {
        try {
            DataGrpc.newBlockingStub(ch).withDeadlineAfter(cfg.timeoutNanos, TimeUnit.NANOSECONDS)
                .dataType(DataTypeRequest.getDefaultInstance());
            return null;
        } catch (StatusRuntimeException e) {
            return e;
        }
    }

    @Override
    public boolean sharedConnSafe() {
        return true;
    }

    @Override
    public String serverSoftware() {
        return software;
    }

    @Override
    public Map<String, String> versions() {
        return Map.of("grpc", Transports.version("grpc"));
    }

    @Override
    public void close() {}

    /**
     * The report's kind of a failed call. A status the server declared is never connect
     * or timeout (docs/report-format.md): grpc-java makes UNAVAILABLE itself, with the
     * I/O error as cause, when there is no connection, and "Network closed" when it broke
     * mid-call; it makes DEADLINE_EXCEEDED itself when -timeout passed.
     */
    static Kind kind(Status st, boolean deadlinePassed) {
        return switch (st.getCode()) {
            case UNAVAILABLE -> {
                String d = st.getDescription() == null ? "" : st.getDescription();
                if (d.startsWith("Network closed") || d.startsWith("Connection closed")) {
                    yield Kind.RECEIVE;
                }
                yield st.getCause() != null || d.startsWith("io exception") ? Kind.CONNECT : Kind.EXCEPTIONS;
            }
            case DEADLINE_EXCEEDED -> deadlinePassed ? Kind.TIMEOUT : Kind.EXCEPTIONS;
            case CANCELLED -> Kind.RECEIVE;
            case UNAUTHENTICATED -> Kind.UNAUTHENTICATED;
            case INVALID_ARGUMENT -> Kind.INVALID_ARGUMENT;
            default -> Kind.EXCEPTIONS;
        };
    }

    private final class GrpcConn implements Conn {
        private final ManagedChannel ch;
        private final DataGrpc.DataBlockingStub stub;
        private final AtomicReference<Metadata> headers = new AtomicReference<>();

        GrpcConn(ManagedChannel ch, boolean verifying) {
            this.ch = ch;
            DataGrpc.DataBlockingStub s = DataGrpc.newBlockingStub(ch);
            if (verifying) {
                s = s.withInterceptors(MetadataUtils.newCaptureMetadataInterceptor(headers, new AtomicReference<>()));
            }
            this.stub = s;
        }

        @Override
        public long call(Session s) throws CallError {
            Auth auth = Auth.newBuilder().setClientId(s.clientId).setToken(s.token).build();
            long start = System.nanoTime();
            try {
                DataGrpc.DataBlockingStub st = stub.withDeadlineAfter(cfg.timeoutNanos, TimeUnit.NANOSECONDS);
                long size;
                if (cfg.dataList()) {
                    DataListResponse r = st.dataList(DataListRequest.newBuilder().setAuth(auth).setN(cfg.items).build());
                    s.token = r.getAuth().getToken();
                    if (r.getItemsCount() != cfg.items) {
                        throw Transports.wrongItems(r.getItemsCount(), cfg.items);
                    }
                    size = r.getSerializedSize();
                } else {
                    DataTypeResponse r = st.dataType(DataTypeRequest.newBuilder().setAuth(auth)
                        .setGroupName(Config.GROUP_NAME).setEnName(Config.EN_NAME).build());
                    s.token = r.getAuth().getToken();
                    if (r.getCodeId() != 101) {
                        throw Transports.wrongCode(r.getCodeId());
                    }
                    size = r.getSerializedSize();
                }
                Metadata h = headers.get();
                if (h != null && h.get(SERVER) != null) {
                    software = h.get(SERVER);
                }
                return size;
            } catch (StatusRuntimeException e) {
                Kind k = kind(e.getStatus(), System.nanoTime() - start >= cfg.timeoutNanos);
                if (k == Kind.UNAUTHENTICATED) {
                    s.token = ""; // ask for a fresh token next time
                }
                throw new CallError(k, e.getStatus().toString(), e);
            }
        }

        @Override
        public void close() {
            ch.shutdownNow();
            try {
                ch.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
