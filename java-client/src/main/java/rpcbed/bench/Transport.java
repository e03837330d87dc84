package rpcbed.bench;

import java.util.Map;

/** One protocol's client side. Implementations live one per file, one per protocol. */
public interface Transport extends AutoCloseable {
    /** Opens one connection, ready before timing starts. */
    Conn open(int index) throws CallError;

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
