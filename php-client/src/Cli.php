<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * Cli is one run of the one-shot command line (and of a worker mode's run
 * command): flags in, report on $out, logs on $err, the exit code back
 * (docs/report-format.md).
 */
final class Cli
{
    /**
     * @param list<string> $args the flags, without the program name
     * @param resource $out
     * @param resource $err
     * @param bool $restart when this process cannot host the run (another runtime,
     *        an extension it has not loaded), become a one-shot client for it
     *        (a worker mode's forked run); otherwise that is an error
     */
    public static function run(array $args, $out, $err, bool $restart = false): int
    {
        try {
            $cfg = Config::parse($args);
        } catch (HelpRequested) {
            fwrite($out, Config::USAGE . "\n");
            return ExitCode::OK;
        } catch (\InvalidArgumentException $e) {
            fwrite($err, 'php-client: ' . $e->getMessage() . "\n" . Config::USAGE . "\n");
            return ExitCode::USAGE;
        }
        if (($why = Extensions::missing($cfg)) !== null) {
            fwrite($err, "php-client: $why\n");
            return ExitCode::USAGE;
        }
        if (!Extensions::hostable($cfg)) {
            if ($restart) {
                $env = getenv();
                unset($env['RPCBED_PHP_CLIENT_HOST']);
                pcntl_exec(PHP_BINARY, ['-n', dirname(__DIR__) . '/bin/client.php', ...$args], $env);
            }
            fwrite($err, 'php-client: this process cannot run ' . $cfg->cellName() . ' (-runtime ' . $cfg->runtime
                . '): it needs ' . implode(', ', Extensions::for($cfg->proto, $cfg->accel, $cfg->runtime))
                . ' loaded (but grpc.so, which each caller loads itself); start it with php-client/bin/php-client' . "\n");
            return ExitCode::USAGE;
        }
        try {
            return (new Bench($cfg, null, $err))->run($out);
        } catch (\Throwable $e) {
            fwrite($err, 'php-client: ' . get_class($e) . ': ' . $e->getMessage() . "\n");
            return ExitCode::INTERNAL;
        }
    }
}
