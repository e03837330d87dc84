<?php
// php-client:
//   php-client/bin/php-client -proto grpc -call datalist -items 200 -c 8 -n 2000 -addr 127.0.0.1:50051
//   php-client/bin/php-client worker     (worker mode: runs on stdin)
// (php php-client/bin/client.php ... works too). Flags and exit codes: README.md.
//
// The process restarts itself once with -n and exactly the extensions its runs need
// (Extensions::hostArgs); the bench then forks its callers from it.
declare(strict_types=1);

use Rpcbed\Client\Cli;
use Rpcbed\Client\Config;
use Rpcbed\Client\Extensions;
use Rpcbed\Client\ExitCode;
use Rpcbed\Client\Worker;

require dirname(__DIR__) . '/autoload.php';

$args = array_slice($argv, 1);
$worker = ($args[0] ?? '') === 'worker';
if (getenv('RPCBED_PHP_CLIENT_HOST') !== '1') {
    if ($worker) {
        // php-client worker [-runtime c|pure]: a run of the other runtime starts a one-shot client.
        $runtime = ($args[1] ?? '') === '-runtime' && in_array($args[2] ?? '', Config::RUNTIMES, true) ? $args[2] : 'c';
        $php = Extensions::hostArgs(Config::PROTOCOLS, $runtime === 'c', $runtime, true);
    } else {
        try {
            $cfg = Config::parse($args);
        } catch (InvalidArgumentException) {
            exit(Cli::run($args, STDOUT, STDERR)); // usage or its error: no extension needed
        }
        $php = Extensions::phpArgs($cfg);
    }
    $env = getenv();
    $env['RPCBED_PHP_CLIENT_HOST'] = '1';
    pcntl_exec(PHP_BINARY, [...$php, __FILE__, ...$args], $env);
    fwrite(STDERR, 'php-client: cannot restart ' . PHP_BINARY . ': ' . pcntl_strerror(pcntl_get_last_error()) . "\n");
    exit(ExitCode::INTERNAL);
}
putenv('RPCBED_PHP_CLIENT_HOST'); // not inherited by what the runs start
exit($worker
    ? Worker::serve(STDIN, STDOUT, STDERR, static fn (array $a, $out, $err): int => Cli::run($a, $out, $err, true))
    : Cli::run($args, STDOUT, STDERR));
