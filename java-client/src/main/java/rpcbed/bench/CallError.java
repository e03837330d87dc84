package rpcbed.bench;

/**
 * One failed call, sorted into the report's error kinds (as php-client's CallError and
 * go-client's callError); cheap to throw (no stack trace).
 */
public final class CallError extends Exception {
    public final Kind kind;

    public CallError(Kind kind, String message, Throwable cause) {
        super(kind.label + ": " + message, cause, false, false);
        this.kind = kind;
    }

    public CallError(Kind kind, String message) {
        this(kind, message, null);
    }
}
