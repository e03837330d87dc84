package rpcbed.core;

import java.util.concurrent.TimeUnit;
import rpcbed.stats.CallStats;

/**
 * The service core every Java baseline server wraps (docs/contract.md): no transport
 * here, each server converts to its own wire types.
 */
public final class DataService {
    public static final int MAX_ITEMS = 100_000;
    public static final long CODE_ID = 101;
    private static final long LOCK_TTL_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final long FILL_DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final Tokens tokens;
    private final boolean auth;
    private final Store store = new Store();
    private final CallStats calls = new CallStats();

    public DataService(byte[] secret, boolean auth) {
        this.tokens = new Tokens(secret);
        this.auth = auth;
    }

    public Store store() {
        return store;
    }

    /** The calls answered, for the stats listener (every server records its own). */
    public CallStats calls() {
        return calls;
    }

    /** Checks the caller's token and returns the next one (the token round trip). */
    public String refresh(String clientId, String token) throws ServiceError {
        checkString("clientId", clientId);
        checkString("token", token);
        long now = System.currentTimeMillis() / 1000;
        if (auth && token != null && !token.isEmpty() && !tokens.valid(nz(clientId), token, now)) {
            throw new ServiceError(ServiceError.UNAUTHENTICATED, "invalid or expired token");
        }
        return tokens.issue(nz(clientId), now);
    }

    /** DataType without the auth part: the record for groupName|enName. */
    public Store.Rec dataType(String groupName, String enName) throws ServiceError {
        if (groupName == null || groupName.isEmpty() || enName == null || enName.isEmpty()) {
            throw new ServiceError(ServiceError.INVALID_ARGUMENT, "groupName and enName are required");
        }
        checkString("groupName", groupName);
        checkString("enName", enName);
        if (groupName.indexOf('|') >= 0) {
            // The store's key is groupName|enName: "a|b"+"c" and "a"+"b|c" would be one record.
            throw new ServiceError(ServiceError.INVALID_ARGUMENT, "groupName must not contain '|' (the store key's separator)");
        }
        String key = groupName + "|" + enName;
        Store.Rec rec = store.get(key);
        if (rec != null) {
            return rec;
        }
        return fill(key, enName);
    }

    private Store.Rec fill(String key, String enName) throws ServiceError {
        long deadline = System.nanoTime() + FILL_DEADLINE_NANOS;
        long waitMs = 1;
        while (true) {
            if (store.lock(key, LOCK_TTL_NANOS)) {
                try {
                    Store.Rec rec = store.get(key);
                    if (rec == null) {
                        store.put(key, new Store.Rec("名称-" + enName, CODE_ID));
                        rec = store.get(key);
                    }
                    return rec;
                } finally {
                    store.unlock(key);
                }
            }
            Store.Rec rec = store.get(key);
            if (rec != null) {
                return rec;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new ServiceError(ServiceError.INTERNAL, "timed out waiting for the fill of " + key);
            }
            try {
                Thread.sleep(waitMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ServiceError(ServiceError.INTERNAL, "interrupted");
            }
            waitMs = Math.min(waitMs * 2, 20);
        }
    }

    /** The most bytes (UTF-8) a caller's string may hold, as go-server's service.MaxStringBytes. */
    public static final int MAX_STRING_BYTES = 256;

    /**
     * A caller's string over MAX_STRING_BYTES (encoded as UTF-8) is an invalid
     * argument, as in go-server. (Invalid UTF-8 is replaced while the RPC library
     * decodes it, before this sees the string, so that check stays go-server's.)
     */
    public static void checkString(String field, String v) throws ServiceError {
        // A UTF-16 unit is at most 3 UTF-8 bytes: short strings need no encoding.
        if (v == null || v.length() <= MAX_STRING_BYTES / 3) {
            return;
        }
        int bytes = v.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        if (bytes > MAX_STRING_BYTES) {
            throw new ServiceError(ServiceError.INVALID_ARGUMENT,
                field + " is " + bytes + " bytes; want at most " + MAX_STRING_BYTES);
        }
    }

    public static void checkItems(int n) throws ServiceError {
        if (n < 0 || n > MAX_ITEMS) {
            throw new ServiceError(ServiceError.INVALID_ARGUMENT, "n must be in 0.." + MAX_ITEMS);
        }
    }

    /** Fields of item i (0-based) the servers put on the wire; the others are zero. */
    public static long itemId(int i) {
        return i + 1L;
    }

    public static String itemName(int i) {
        char[] c = {'i', 't', 'e', 'm', '-', '0', '0', '0', '0', '0', '0'};
        int v = i + 1;
        for (int p = c.length - 1; p >= 5 && v > 0; p--) {
            c[p] = (char) ('0' + v % 10);
            v /= 10;
        }
        return new String(c);
    }

    public static double itemScore(int i) {
        return ((i * 37L) % 10000 + 1) / 100.0;
    }

    public static boolean itemEnabled(int i) {
        return i % 2 == 0;
    }

    private static String nz(String s) {
        return s == null ? "" : s;
    }
}
