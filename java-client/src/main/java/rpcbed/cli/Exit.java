package rpcbed.cli;

/** The exit codes every rpcbed client shares (docs/report-format.md). */
public final class Exit {
    /** Report printed (also when calls failed), or -h. */
    public static final int OK = 0;
    /** Internal error: the report could not be written, or the client itself failed. */
    public static final int INTERNAL = 1;
    /** Bad arguments. */
    public static final int USAGE = 2;
    /** Verify failed: the server answered, but wrongly, or refused the call. */
    public static final int VERIFY = 3;
    /** Server unreachable before timing. */
    public static final int UNREACHABLE = 4;

    private Exit() {}
}
