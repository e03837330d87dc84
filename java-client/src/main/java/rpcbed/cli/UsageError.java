package rpcbed.cli;

/** A bad command line; the message says what to change. */
public final class UsageError extends Exception {
    public UsageError(String message) {
        super(message);
    }
}
