package rpcbed.server;

import java.util.concurrent.TimeUnit;

/**
 * What a Java baseline accepts from one peer (README "Limits"): the same bounds on
 * every listener, so hostile input costs bounded memory and threads (issue 18). A
 * request of the contract is a few hundred bytes; responses are not bounded by these.
 * As go-server, no baseline caps its connection count: idle connections hold a socket
 * and a few KB each, no thread (issue 28), and are closed after the idle timeout.
 */
public final class Limits {
    /** Largest request frame / message / body any baseline reads (Thrift frame, Ice message, HTTP body, gRPC message). */
    public static final int MAX_REQUEST = 1 << 20;
    /** Largest HTTP request header block (request line + headers), as go-server's 64 KiB. */
    public static final int MAX_HTTP_HEADER = 64 << 10;
    /** An HTTP request must arrive whole (headers and body) within this many seconds. */
    public static final int HTTP_REQUEST_SECONDS = 10;
    /** HTTP worker threads, created on demand: a slow client holds one for at most HTTP_REQUEST_SECONDS. */
    public static final int HTTP_THREADS = 256;
    /** HTTP worker threads over TLS, where a worker also makes the handshake (at most HANDSHAKE_MILLIS). */
    public static final int HTTP_TLS_THREADS = 2048;
    /** A connection must finish its TLS handshake (all TLS listeners) and gRPC's HTTP/2 handshake within this. */
    public static final long HANDSHAKE_MILLIS = TimeUnit.SECONDS.toMillis(10);
    /** A reply whose bytes made no progress this long closes its connection (go-server's -stall-timeout); Thrift. */
    public static final long STALL_MILLIS = TimeUnit.SECONDS.toMillis(10);
    /** Default idle timeout: a connection that carried nothing this long is closed (go-server's IdleTimeout). */
    public static final long DEFAULT_IDLE_MILLIS = TimeUnit.SECONDS.toMillis(120);

    private Limits() {}
}
