<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * Worker is `php-client worker` (docs/report-format.md, "Worker mode"): one
 * long-lived process handed runs one by one on stdin, as gRPC's benchmark workers
 * are (and go-client's and java-client's Worker). Each run is forked from this
 * process, so it inherits the loaded code and extensions, and a run that crashes (a
 * fatal error, a segfault in an extension) ends only its own process: this one
 * answers `done ID exit=1` and goes on.
 */
final class Worker
{
    private const ID = '/^[A-Za-z0-9._-]+$/';

    /**
     * @param resource $in commands, one a line
     * @param resource $out the ready line, every run's report and its done line
     * @param resource $err every run's log lines, between begin and end markers
     * @param ?\Closure(list<string>, resource, resource): int $runOne one run (default Cli::run)
     */
    public static function serve($in, $out, $err, ?\Closure $runOne = null): int
    {
        $runOne ??= Cli::run(...);
        fwrite($out, '#rpcbed-worker ready php ' . getmypid() . "\n");
        while (($line = fgets($in)) !== false) {
            $line = rtrim($line, "\r\n");
            $f = explode("\t", $line);
            if ($f[0] === 'quit' && count($f) === 1) {
                break;
            }
            $id = isset($f[1]) && preg_match(self::ID, $f[1]) ? $f[1] : '-';
            if ($f[0] !== 'run' || $id === '-') {
                fwrite($err, "#rpcbed-worker begin $id\n");
                fwrite($err, 'php-client: worker: bad command ' . json_encode($line, JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE)
                    . ": want run<TAB>ID<TAB>ARG... or quit, ID of [A-Za-z0-9._-]\n");
                fwrite($err, "#rpcbed-worker end $id\n");
                fwrite($out, "#rpcbed-worker done $id exit=2\n");
                continue;
            }
            fwrite($err, "#rpcbed-worker begin $id\n");
            $code = self::forked(static fn (): int => $runOne(array_slice($f, 2), $out, $err), $err, $id);
            // A run that died leaves its callers to us (we are PID 1 in a container): reap them.
            while (pcntl_waitpid(-1, $status, WNOHANG) > 0) {
            }
            fwrite($err, "#rpcbed-worker end $id\n");
            fwrite($out, "#rpcbed-worker done $id exit=$code\n");
        }
        return ExitCode::OK;
    }

    /** Runs $run in a forked process and returns its exit code (1 when it died). */
    private static function forked(\Closure $run, $err, string $id): int
    {
        $pid = pcntl_fork();
        if ($pid === -1) {
            fwrite($err, "php-client: worker: cannot fork run $id\n");
            return ExitCode::INTERNAL;
        }
        if ($pid === 0) {
            $code = ExitCode::INTERNAL;
            try {
                $code = $run();
            } catch (\Throwable $e) {
                fwrite($err, 'php-client: ' . get_class($e) . ': ' . $e->getMessage() . "\n");
            }
            Bench::hardExit($code);
        }
        while (pcntl_waitpid($pid, $status) === -1) {
            if (pcntl_get_last_error() !== PCNTL_EINTR) {
                return ExitCode::INTERNAL;
            }
        }
        if (pcntl_wifexited($status)) {
            $code = pcntl_wexitstatus($status);
            if ($code >= ExitCode::OK && $code <= ExitCode::UNREACHABLE) {
                return $code;
            }
            fwrite($err, "php-client: worker: run $id exited with $code\n"); // a PHP fatal error: 255
            return ExitCode::INTERNAL;
        }
        $sig = pcntl_wifsignaled($status) ? pcntl_wtermsig($status) : 0;
        fwrite($err, "php-client: worker: run $id died (signal $sig)\n");
        return ExitCode::INTERNAL;
    }
}
