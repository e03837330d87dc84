<?php
declare(strict_types=1);

namespace Rpcbed\Client\Tests;

use PHPUnit\Framework\TestCase;

/** `php-client worker` as a process (docs/report-format.md, "Worker mode"). */
final class WorkerTest extends TestCase
{
    /**
     * Runs a worker with $stdin (closed afterwards: EOF) and returns its exit code,
     * stdout and stderr.
     *
     * @return array{int, string, string}
     */
    private static function worker(string $stdin, float $timeout = 120): array
    {
        $cmd = [PHP_BINARY, '-n', dirname(__DIR__) . '/bin/client.php', 'worker'];
        $proc = proc_open($cmd, [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        fwrite($pipes[0], $stdin);
        fclose($pipes[0]);
        $out = $err = '';
        $end = microtime(true) + $timeout;
        stream_set_blocking($pipes[1], false);
        stream_set_blocking($pipes[2], false);
        while (microtime(true) < $end && !(feof($pipes[1]) && feof($pipes[2]))) {
            $r = [$pipes[1], $pipes[2]];
            $w = $e = null;
            if (@stream_select($r, $w, $e, 0, 200_000) > 0) {
                foreach ($r as $s) {
                    $s === $pipes[1] ? $out .= (string) fread($s, 65536) : $err .= (string) fread($s, 65536);
                }
            }
        }
        if (!feof($pipes[1]) || !feof($pipes[2])) {
            proc_terminate($proc, 9);
            $err .= "\n(killed after {$timeout}s)";
        }
        fclose($pipes[1]);
        fclose($pipes[2]);
        return [proc_close($proc), $out, $err];
    }

    private static function runLine(string $id, string ...$args): string
    {
        return implode("\t", ['run', $id, ...$args]) . "\n";
    }

    /** @return list<string> the done lines' "ID exit=CODE" */
    private static function dones(string $out): array
    {
        preg_match_all('/^#rpcbed-worker done (\S+ exit=\d+)$/m', $out, $m);
        return $m[1];
    }

    public function testRunsBadCommandsAndEof(): void
    {
        $go = Servers::go($this);
        $http = ['-proto', 'http', '-call', 'datalist', '-items', '5', '-c', '2', '-n', '20', '-k', '-addr', $go['http']];
        $stdin = self::runLine('r1', ...$http)
            . "bogus\n"
            . self::runLine('r2', '-proto', 'thrift', '-call', 'datatype', '-n', '10', '-addr', $go['thrift'])
            . "run\tbad id!\t-h\n"
            . self::runLine('r3', '-proto', 'http', '-call', 'datatype', '-n', '10', '-addr', '127.0.0.1:' . Servers::freePort())
            . self::runLine('r4', '-proto', 'http', '-call', 'datatype', '-n', '10', '-nope')
            . self::runLine('r5', ...$http);
        // No quit: EOF on stdin is quit.
        [$code, $out, $err] = self::worker($stdin);
        $this->assertSame(0, $code, "exit code: got $code; want 0\n$err");
        $this->assertMatchesRegularExpression('/\A#rpcbed-worker ready php \d+\n/', $out, 'the ready line comes first');
        $want = ['r1 exit=0', '- exit=2', 'r2 exit=0', '- exit=2', 'r3 exit=4', 'r4 exit=2', 'r5 exit=0'];
        $this->assertSame($want, self::dones($out), "done lines: got\n$out");
        $this->assertSame(3, preg_match_all('/^rpcbed report v1$/m', $out), 'one report per run that prints one');
        foreach (['r1', 'r2', 'r3', 'r4', 'r5'] as $id) {
            $this->assertMatchesRegularExpression("/^#rpcbed-worker begin $id\n(.*\n)*?#rpcbed-worker end $id$/m", $err, "$id: begin/end markers");
        }
        $this->assertMatchesRegularExpression("/#rpcbed-worker begin r3\n(.*\n)*?verify: connect: /", $err, 'r3: the verify line inside its markers');
        $this->assertStringContainsString('flag provided but not defined: -nope', $err);
        // Every report is a whole report: its last keys right before its done line.
        $this->assertSame(3, preg_match_all("/^Warm-up settled:\s+fixed\nLatency histogram:\s+HISTF\S+ \\[us\\]\n#rpcbed-worker done r[125] exit=0$/m", $out));
    }

    /** A server that answers wrongly fails that run's verify (exit 3); the worker goes on. */
    public function testVerifyFailureThenQuit(): void
    {
        $port = Servers::freePort();
        $script = Servers::tmp() . '/wrong-worker.php';
        file_put_contents($script, '<?php header("Content-Type: application/json"); echo json_encode(["code" => 0, "auth" => ["token" => "t"], "codeId" => 100, "cnName" => "x", "items" => []]);');
        $proc = Servers::start([PHP_BINARY, '-n', '-S', "127.0.0.1:$port", $script], Servers::tmp() . '/wrong-worker.log');
        $this->assertTrue(Servers::waitTcp("127.0.0.1:$port", 10, $proc), 'php -S did not start');
        $go = Servers::go($this);
        $stdin = self::runLine('bad', '-proto', 'http', '-call', 'datatype', '-n', '3', '-addr', "127.0.0.1:$port")
            . self::runLine('good', '-proto', 'http', '-call', 'datatype', '-n', '3', '-addr', $go['http'])
            . "quit\n"
            . self::runLine('after', '-proto', 'http', '-call', 'datatype', '-n', '3', '-addr', $go['http']);
        [$code, $out, $err] = self::worker($stdin);
        proc_terminate($proc);
        $this->assertSame(0, $code, $err);
        $this->assertSame(['bad exit=3', 'good exit=0'], self::dones($out), 'nothing runs after quit');
        $this->assertStringContainsString('verify: length: DataType: got codeId 100; want 101', $err);
        $this->assertSame(1, preg_match_all('/^rpcbed report v1$/m', $out), 'no report for the failed verify');
    }

    /** A run that crashes (killed by a signal, an uncaught exception) ends its own process only. */
    public function testCrashedRunsEndOnlyThemselves(): void
    {
        if (!function_exists('posix_kill')) {
            Servers::missing($this, 'the posix extension is not loaded');
        }
        $dir = Servers::tmp();
        file_put_contents("$dir/wm-in", "run\tok\tok\nrun\tkilled\tkill\nrun\tthrows\tthrow\nrun\tthree\t3\nrun\tok2\tok\n");
        $in = fopen("$dir/wm-in", 'r');
        // Files, not php://memory: the forked runs write to the same open file.
        $out = fopen("$dir/wm-out", 'w+');
        $err = fopen("$dir/wm-err", 'w+');
        $code = \Rpcbed\Client\Worker::serve($in, $out, $err, static function (array $args, $o): int {
            return match ($args[0]) {
                'ok' => fwrite($o, "a report\n") > 0 ? 0 : 1,
                'kill' => posix_kill(getmypid(), 9) ? 0 : 0,
                'throw' => throw new \RuntimeException('boom'),
                default => (int) $args[0],
            };
        });
        fclose($in);
        $this->assertSame(0, $code);
        rewind($out);
        rewind($err);
        $o = stream_get_contents($out);
        $e = stream_get_contents($err);
        $want = ['ok exit=0', 'killed exit=1', 'throws exit=1', 'three exit=3', 'ok2 exit=0'];
        $this->assertSame($want, self::dones($o), "done lines: got\n$o");
        $this->assertSame(2, substr_count($o, "a report\n"));
        $this->assertStringContainsString('run killed died (signal 9)', $e);
        $this->assertStringContainsString('RuntimeException: boom', $e);
        fclose($out);
        fclose($err);
    }
}
