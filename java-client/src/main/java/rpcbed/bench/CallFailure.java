package rpcbed.bench;

/** A failed call, classified; cheap to throw (no stack trace). */
public final class CallFailure extends Exception {
    public final Kind kind;

    public CallFailure(Kind kind, String message, Throwable cause) {
        super(kind.label + ": " + message, cause, false, false);
        this.kind = kind;
    }

    public CallFailure(Kind kind, String message) {
        this(kind, message, null);
    }
}
