<?php
declare(strict_types=1);

namespace Rpcbed\Client\Tests;

use PHPUnit\Framework\TestCase;

/**
 * Servers starts, once per test run, the real servers the tests talk to: go-server
 * (built with `go build` from the repo, or RPCBED_GO_SERVER) on free ports, and
 * the Java Ice baseline (java-client/target/java-client.jar) when it is built.
 * Everything is stopped, by its own pid, when the run ends.
 */
final class Servers
{
    /** @var array<string, array<string, string>> flags => proto => HOST:PORT */
    private static array $go = [];
    /** @var array<string, string> flags => why it did not start */
    private static array $goError = [];
    private static ?string $goBin = null;
    /** @var array<string, string> flags => HOST:PORT */
    private static array $ice = [];
    /** @var array<string, string> flags => why it did not start */
    private static array $iceError = [];
    /** @var list<resource> */
    private static array $procs = [];
    private static ?string $tmp = null;

    public static function root(): string
    {
        return dirname(__DIR__, 2);
    }

    public static function tmp(): string
    {
        if (self::$tmp === null) {
            self::$tmp = sys_get_temp_dir() . '/rpcbed-phpunit-' . getmypid();
            @mkdir(self::$tmp, 0o755, true);
            register_shutdown_function([self::class, 'stopAll']);
        }
        return self::$tmp;
    }

    /** Whether missing prerequisites fail the test instead of skipping it (CI sets RPCBED_REQUIRE=...php...). */
    public static function required(): bool
    {
        return str_contains((string) getenv('RPCBED_REQUIRE'), 'php');
    }

    /** Skips (or, when RPCBED_REQUIRE names php, fails) the current test. */
    public static function missing(TestCase $t, string $why): never
    {
        if (self::required()) {
            TestCase::fail($why . ' (RPCBED_REQUIRE contains "php")');
        }
        TestCase::markTestSkipped($why);
    }

    /** A port nobody listens on right now. */
    public static function freePort(): int
    {
        $s = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr);
        if ($s === false) {
            throw new \RuntimeException("free port: $errstr");
        }
        $name = stream_socket_get_name($s, false);
        fclose($s);
        return (int) substr($name, strrpos($name, ':') + 1);
    }

    /** Waits until HOST:PORT accepts TCP connections. */
    public static function waitTcp(string $addr, float $seconds, $proc = null): bool
    {
        $end = microtime(true) + $seconds;
        while (microtime(true) < $end) {
            $s = @stream_socket_client("tcp://$addr", $errno, $errstr, 0.2);
            if ($s !== false) {
                fclose($s);
                return true;
            }
            if ($proc !== null && !proc_get_status($proc)['running']) {
                return false;
            }
            usleep(50_000);
        }
        return false;
    }

    /** @param list<string> $cmd */
    public static function start(array $cmd, string $log, array $env = []): mixed
    {
        $proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['file', $log, 'a'], 2 => ['file', $log, 'a']],
            $pipes, self::root(), $env ? array_merge(getenv(), $env) : null);
        if ($proc === false) {
            throw new \RuntimeException('cannot start ' . implode(' ', $cmd));
        }
        self::$procs[] = $proc;
        return $proc;
    }

    /**
     * go-server's addresses, started with auth on and $flags (one server per set of flags).
     *
     * @param list<string> $flags
     * @return array{grpc: string, thrift: string, http: string}
     */
    public static function go(TestCase $t, array $flags = []): array
    {
        $key = implode(' ', $flags);
        if (!isset(self::$go[$key]) && !isset(self::$goError[$key])) {
            $why = self::startGo($flags);
            if ($why !== null) {
                self::$goError[$key] = $why;
            }
        }
        if (isset(self::$goError[$key])) {
            self::missing($t, self::$goError[$key]);
        }
        return self::$go[$key];
    }

    /** go-server's binary (RPCBED_GO_SERVER, else built once from the repo), or why there is none. */
    private static function goBin(): string
    {
        if (self::$goBin !== null) {
            return self::$goBin;
        }
        $bin = getenv('RPCBED_GO_SERVER') ?: '';
        if ($bin === '') {
            $bin = self::tmp() . '/go-server';
            $go = trim((string) shell_exec('command -v go'));
            if ($go === '') {
                return 'go is not installed: cannot build go-server (or set RPCBED_GO_SERVER)';
            }
            exec('cd ' . escapeshellarg(self::root()) . ' && ' . escapeshellarg($go) . ' build -o '
                . escapeshellarg($bin) . ' ./go-server 2>&1', $out, $code);
            if ($code !== 0) {
                return "go build ./go-server failed:\n" . implode("\n", $out);
            }
        }
        return self::$goBin = $bin;
    }

    /** @param list<string> $flags */
    private static function startGo(array $flags): ?string
    {
        $bin = self::goBin();
        if (!is_file($bin)) {
            return $bin;
        }
        $log = self::tmp() . '/go-server-' . count(self::$go) . '.log';
        $addr = [];
        foreach (['grpc', 'thrift', 'http'] as $p) {
            $addr[$p] = '127.0.0.1:' . self::freePort();
        }
        $proc = self::start([$bin, '-grpc', $addr['grpc'], '-thrift', $addr['thrift'], '-http', $addr['http'], ...$flags], $log);
        foreach ($addr as $a) {
            if (!self::waitTcp($a, 20, $proc)) {
                return "go-server did not listen on $a: " . @file_get_contents($log);
            }
        }
        self::$go[implode(' ', $flags)] = $addr;
        return null;
    }

    /**
     * The Java Ice baseline's HOST:PORT, started with $flags (one server per set of flags).
     *
     * @param list<string> $flags
     */
    public static function ice(TestCase $t, array $flags = []): string
    {
        $key = implode(' ', $flags);
        if (!isset(self::$ice[$key]) && !isset(self::$iceError[$key])) {
            $why = self::startIce($flags);
            if ($why !== null) {
                self::$iceError[$key] = $why;
            }
        }
        if (isset(self::$iceError[$key])) {
            self::missing($t, self::$iceError[$key]);
        }
        return self::$ice[$key];
    }

    /** @param list<string> $flags */
    private static function startIce(array $flags): ?string
    {
        $jar = getenv('RPCBED_JAVA_JAR') ?: self::root() . '/java-client/target/java-client.jar';
        if (!is_file($jar)) {
            return "the Ice tests need the Java Ice baseline server: $jar is missing (build it: make -C java-client or the java-client targets)";
        }
        if (!is_file(\Rpcbed\Client\Extensions::ice())) {
            return \Rpcbed\Client\Extensions::ice() . ' (php-zeroc-ice patched for PHP 8.2) is missing: run php-client/build-ext.sh (make setup-php)';
        }
        $port = self::freePort();
        $log = self::tmp() . '/java-ice-' . count(self::$ice) . '.log';
        $proc = self::start(['java', '-jar', $jar, 'serve', '-proto', 'ice', '-port', (string) $port, ...$flags], $log);
        if (!self::waitTcp("127.0.0.1:$port", 60, $proc)) {
            return "the Java Ice baseline did not listen on 127.0.0.1:$port: " . @file_get_contents($log);
        }
        self::$ice[implode(' ', $flags)] = "127.0.0.1:$port";
        return null;
    }

    public static function stopAll(): void
    {
        foreach (self::$procs as $p) {
            if (!is_resource($p)) {
                continue;
            }
            // php -S leaves its PHP_CLI_SERVER_WORKERS running when only it is stopped.
            $kids = self::children(proc_get_status($p)['pid']);
            proc_terminate($p);
            foreach ($kids as $pid) {
                function_exists('posix_kill') ? posix_kill($pid, 15) : exec("kill $pid");
            }
            proc_close($p);
        }
        self::$procs = [];
    }

    /** @return list<int> the processes whose parent is $pid */
    private static function children(int $pid): array
    {
        $kids = [];
        foreach (glob('/proc/[0-9]*/stat') ?: [] as $stat) {
            $s = @file_get_contents($stat);
            // pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'.
            if ($s !== false && ($close = strrpos($s, ')')) !== false) {
                $f = explode(' ', substr($s, $close + 2));
                if ((int) ($f[1] ?? 0) === $pid) {
                    $kids[] = (int) basename(dirname($stat));
                }
            }
        }
        return $kids;
    }

    /**
     * Runs bin/php-client and returns [exit code, stdout, stderr].
     *
     * @param list<string> $args
     * @return array{int, string, string}
     */
    public static function client(array $args, float $timeout = 120, array $prefix = []): array
    {
        $cmd = [...$prefix, PHP_BINARY, '-n', dirname(__DIR__) . '/bin/client.php', ...$args];
        $proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $out = $err = '';
        $end = microtime(true) + $timeout;
        stream_set_blocking($pipes[1], false);
        stream_set_blocking($pipes[2], false);
        while (microtime(true) < $end) {
            $r = [$pipes[1], $pipes[2]];
            $w = $e = null;
            if (@stream_select($r, $w, $e, 0, 200_000) > 0) {
                foreach ($r as $s) {
                    $chunk = (string) fread($s, 65536);
                    $s === $pipes[1] ? $out .= $chunk : $err .= $chunk;
                }
            }
            if (feof($pipes[1]) && feof($pipes[2])) {
                break;
            }
        }
        if (!feof($pipes[1]) || !feof($pipes[2])) {
            proc_terminate($proc, 9);
            $err .= "\n(killed after {$timeout}s)";
        }
        fclose($pipes[1]);
        fclose($pipes[2]);
        $code = proc_close($proc);
        return [$code, $out, $err];
    }
}
