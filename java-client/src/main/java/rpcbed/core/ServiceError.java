package rpcbed.core;

/** A call the service refuses; code mirrors the gRPC status codes (docs/contract.md). */
public final class ServiceError extends Exception {
    public static final int INVALID_ARGUMENT = 3;
    public static final int INTERNAL = 13;
    public static final int UNAUTHENTICATED = 16;

    private final int code;

    public ServiceError(int code, String message) {
        super(message, null, false, false);
        this.code = code;
    }

    public int code() {
        return code;
    }
}
