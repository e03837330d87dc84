package rpcbed.stats;

import java.util.concurrent.atomic.LongAdder;

/**
 * Calls answered per call, as go-server's internal/service.Stats counts them: every
 * call a handler answered, errors included (docs/method.md section 10). One baseline
 * process serves one protocol, so the protocol is the listener's, not a counter's.
 */
public final class CallStats {
    /** The calls of the contract, named as in the report's "Call:". */
    public enum Call {
        DATATYPE("datatype"),
        DATALIST("datalist");

        public final String label;

        Call(String label) {
            this.label = label;
        }
    }

    private final LongAdder[] requests = {new LongAdder(), new LongAdder()};
    private final LongAdder[] errors = {new LongAdder(), new LongAdder()};

    /** Counts one answered call; error = it was answered with an error. */
    public void record(Call c, boolean error) {
        requests[c.ordinal()].increment();
        if (error) {
            errors[c.ordinal()].increment();
        }
    }

    public long requests(Call c) {
        return requests[c.ordinal()].sum();
    }

    public long errors(Call c) {
        return errors[c.ordinal()].sum();
    }
}
