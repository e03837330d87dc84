package rpcbed.bench;

import java.util.Map;

/** One protocol's client side. Implementations live one per file, one per protocol. */
public interface Transport extends AutoCloseable {
    /** Opens one connection, ready before timing starts. */
    Conn open(int index) throws CallError;

    /**
     * Opens a connection for one call (-connect per-call): closed after that call, and
     * open for as long as the call needs it, not waited on beforehand.
     */
    default Conn dial() throws CallError {
        return open(-1);
    }

    /**
     * Caller index's connection under -connect per-call: every call through it opens a
     * new connection (and with TLS makes a handshake), counted in opened, and the
     * connection is closed before the next; all of it is the call's time. By default a
     * connection of {@link #dial} per call, closed after it.
     */
    default Conn perCall(int index, java.util.concurrent.atomic.AtomicLong opened) throws CallError {
        Transport t = this;
        return new Conn() {
            @Override
            public long call(Session s) throws CallError {
                Conn c = t.dial();
                opened.incrementAndGet();
                try {
                    return c.call(s);
                } finally {
                    c.close();
                }
            }

            @Override
            public void close() {}
        };
    }

    /** Whether several callers may call through one Conn at once. */
    boolean sharedConnSafe();

    /** ab's "Server Software", as far as the protocol tells (learned while verifying). */
    String serverSoftware();

    /** name=version pairs of the RPC library (the runtime is added by the report). */
    Map<String, String> versions();

    @Override
    void close();

    /** A connection. call() makes the run's one call (datatype or datalist) and checks it. */
    interface Conn extends AutoCloseable {
        /** Returns the response body size in bytes; carries the token in the session. */
        long call(Session s) throws CallError;

        @Override
        void close();
    }

    /** One caller's identity and the token of its previous response. */
    final class Session {
        public final String clientId;
        public String token = "";

        public Session(String clientId) {
            this.clientId = clientId;
        }
    }
}
