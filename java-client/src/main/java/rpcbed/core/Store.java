package rpcbed.core;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The in-memory stand-in for the published Aerospike set: records plus per-key locks
 * with a TTL, so that a fill on a miss happens once however many callers race.
 */
public final class Store {
    /** One stored record (bins cnname and code_id in the published service). */
    public record Rec(String cnName, long codeId) {}

    private final ConcurrentHashMap<String, Rec> records = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Long> locks = new ConcurrentHashMap<>();
    private final AtomicLong writes = new AtomicLong();

    public Rec get(String key) {
        return records.get(key);
    }

    public void put(String key, Rec rec) {
        records.put(key, rec);
        writes.incrementAndGet();
    }

    /** Takes the lock on key unless another holder's lock is still alive. */
    public boolean lock(String key, long ttlNanos) {
        long now = System.nanoTime();
        boolean[] won = {false};
        locks.compute(key, (k, expiry) -> {
            if (expiry == null || expiry - now <= 0) {
                won[0] = true;
                return now + ttlNanos;
            }
            return expiry;
        });
        return won[0];
    }

    public void unlock(String key) {
        locks.remove(key);
    }

    /** How many records were written: once per key when the fill works. */
    public long writes() {
        return writes.get();
    }
}
