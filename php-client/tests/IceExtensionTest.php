<?php
declare(strict_types=1);

namespace Rpcbed\Client\Tests;

use PHPUnit\Framework\TestCase;
use Rpcbed\Client\Extensions;
use Rpcbed\Client\Versions;

/**
 * build-ext.sh's ice.so (php-zeroc-ice's extension with upstream's PHP 8.2 fixes,
 * ext/ice-php82.patch): an Ice local exception is a PHP exception the caller
 * catches, and the process goes on. php-zeroc-ice 3.7.8's own ice.so dies on the
 * first one ("Hard memory limit ... exhausted (tried to allocate 2457862144
 * bytes)"), so each case runs tests/ice-local-exception.php in a PHP of its own.
 */
final class IceExtensionTest extends TestCase
{
    /** @return array<string, array{string, string, string}> server behaviour, Ice exception, CallError kind */
    public static function cases(): array
    {
        return [
            'connection refused' => ['refuse', 'Ice\ConnectionRefusedException', 'connect'],
            'connection lost (accepted, then closed)' => ['close', 'Ice\ConnectionLostException', 'receive'],
        ];
    }

    /** build-ext.sh's ice.so, or a skip (a failure under RPCBED_REQUIRE=php) saying why there is none. */
    private function iceSo(): string
    {
        $so = Extensions::ice();
        if (!is_file($so)) {
            Servers::missing($this, "$so (php-zeroc-ice patched for PHP 8.2) is not built: run php-client/build-ext.sh (make setup-php)");
        }
        if (stream_resolve_include_path('Ice.php') === false && !is_file('/usr/share/php/Ice.php')) {
            Servers::missing($this, "Ice's PHP runtime (Ice.php, Debian's php-zeroc-ice) is not installed");
        }
        return $so;
    }

    /** A report names the patched build: ice=3.7.8+php82, not the stock 3.7.8. */
    public function testVersionNamesThePatchedBuild(): void
    {
        $this->iceSo();
        if (($why = Extensions::iceNotPatched()) !== null) {
            Servers::missing($this, $why);
        }
        $this->assertMatchesRegularExpression('/^3\.7\.\d+\+php82$/', Versions::of('ice')['ice']);
    }

    /**
     * A good reply, in fresh processes: with php-zeroc-ice 3.7.8's ice.so about 7 in
     * 10 die on their first DataList(200) (73 of 100 on the 2-core machine), so five
     * all passing by chance is about 0.2 %.
     */
    public function testGoodReplyInFreshProcesses(): void
    {
        $so = $this->iceSo();
        $addr = Servers::ice($this);
        for ($i = 1; $i <= 5; $i++) {
            $cmd = [PHP_BINARY, '-n', '-d', 'extension=' . $so, '-d', 'memory_limit=256M', '-d', 'display_errors=stderr',
                __DIR__ . '/ice-local-exception.php', $addr, 'reply'];
            $proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
            $this->assertIsResource($proc, 'start ' . implode(' ', $cmd));
            $out = (string) stream_get_contents($pipes[1]);
            $err = (string) stream_get_contents($pipes[2]);
            fclose($pipes[1]);
            fclose($pipes[2]);
            $code = proc_close($proc);
            $this->assertSame(0, $code, "process $i: exit code: got $code; want 0\nstderr: $err");
            $this->assertSame(['items' => 200, 'survived' => true], json_decode(trim($out), true), "process $i: stdout\nstderr: $err");
        }
    }

    /** @dataProvider cases */
    public function testLocalExceptionIsCatchable(string $server, string $wantClass, string $wantKind): void
    {
        $so = $this->iceSo();
        $listener = null;
        if ($server === 'refuse') {
            $addr = '127.0.0.1:' . Servers::freePort();
        } else {
            $listener = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr);
            $this->assertNotFalse($listener, "listen: $errstr");
            $addr = stream_socket_get_name($listener, false);
        }
        $cmd = [PHP_BINARY, '-n', '-d', 'extension=' . $so, '-d', 'memory_limit=256M', '-d', 'display_errors=stderr',
            __DIR__ . '/ice-local-exception.php', $addr];
        $proc = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $this->assertIsResource($proc, 'start ' . implode(' ', $cmd));
        $out = $err = '';
        $deadline = microtime(true) + 30;
        $accepted = 0;
        $code = null; // proc_get_status reports the exit code once only
        stream_set_blocking($pipes[1], false);
        stream_set_blocking($pipes[2], false);
        // Read the child's output; for 'close', accept each connection it makes and close it at once.
        while (microtime(true) < $deadline) {
            $r = [$pipes[1], $pipes[2]];
            if ($listener !== null) {
                $r[] = $listener;
            }
            $w = $e = null;
            if (@stream_select($r, $w, $e, 0, 100000) === false) {
                break;
            }
            foreach ($r as $s) {
                if ($s === $listener) {
                    $c = @stream_socket_accept($listener, 0);
                    if ($c !== false) {
                        fclose($c);
                        $accepted++;
                    }
                } elseif ($s === $pipes[1]) {
                    $out .= (string) fread($s, 65536);
                } else {
                    $err .= (string) fread($s, 65536);
                }
            }
            if ($code === null) {
                $st = proc_get_status($proc);
                $code = $st['running'] ? null : $st['exitcode'];
            }
            if ($code !== null && feof($pipes[1]) && feof($pipes[2])) {
                break;
            }
        }
        if ($code === null) {
            proc_terminate($proc, 9);
            $err .= '(killed after 30 s)';
            $code = -1;
        }
        fclose($pipes[1]);
        fclose($pipes[2]);
        proc_close($proc);
        if ($listener !== null) {
            fclose($listener);
        }

        $this->assertSame(0, $code, "exit code: got $code; want 0 (the process survives)\nstderr: $err");
        $got = json_decode(trim($out), true);
        $this->assertIsArray($got, "stdout: got " . var_export($out, true) . "; want one JSON line\nstderr: $err");
        $this->assertSame([$wantClass, $wantClass, $wantClass], $got['raw'] ?? null, "generated proxy's exceptions\nstderr: $err");
        $this->assertSame($wantKind, $got['transport'] ?? null, "IceTransport's error kind");
        $this->assertTrue($got['survived'] ?? false, 'survived');
        if ($server === 'close') {
            $this->assertGreaterThanOrEqual(4, $accepted, "connections accepted: got $accepted; want one per call (4)");
        }
    }
}
