<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * The exit codes every rpcbed client shares (README.md, docs/report-format.md):
 * go-client's report.Exit*, java-client's Exit.
 */
final class ExitCode
{
    /** Report printed (also when calls failed), or -h. */
    public const OK = 0;
    /** Internal error: the report could not be written, or the client itself failed. */
    public const INTERNAL = 1;
    /** Bad arguments. */
    public const USAGE = 2;
    /** Verify failed: the server answered, but wrongly, or refused the call. */
    public const VERIFY = 3;
    /** Server unreachable before timing. */
    public const UNREACHABLE = 4;

    private function __construct()
    {
    }
}
