package rpcbed.bench;

/** How one call ended; everything but OK is a failure, named as in the report's Errors line. */
public enum Kind {
    OK("ok"),
    CONNECT("connect"),
    RECEIVE("receive"),
    TIMEOUT("timeout"),
    LENGTH("length"),
    EXCEPTIONS("exceptions"),
    UNAUTHENTICATED("unauthenticated"),
    INVALID_ARGUMENT("invalid_argument");

    public final String label;

    Kind(String label) {
        this.label = label;
    }

    /** Whether the server answered (the call's latency means something). */
    public boolean answered() {
        return this != CONNECT && this != RECEIVE && this != TIMEOUT;
    }

    /** ab's "Non-2xx responses": the server answered with an error status. */
    public boolean statusError() {
        return this == EXCEPTIONS || this == UNAUTHENTICATED || this == INVALID_ARGUMENT;
    }
}
