<?php
declare(strict_types=1);

namespace Rpcbed\Client\Tests;

use PHPUnit\Framework\TestCase;
use Rpcbed\Client\Bench;
use Rpcbed\Client\Caller;

/** bin/client.php as a process: reports, exit codes, -json. */
final class ClientTest extends TestCase
{
    /** Reads "Label:   value" lines of a report. */
    private static function field(string $report, string $label): ?string
    {
        return preg_match('/^' . preg_quote($label, '/') . ':\s+(.*)$/m', $report, $m) ? rtrim($m[1]) : null;
    }

    private function needGrpc(string $proto): void
    {
        if ($proto === 'grpc' && !is_file(\Rpcbed\Client\Extensions::grpc())) {
            Servers::missing($this, \Rpcbed\Client\Extensions::grpc() . ' is missing: run php-client/build-ext.sh');
        }
    }

    /** @return array<string, array{string, string}> */
    public static function cells(): array
    {
        $cases = [];
        foreach (['grpc', 'thrift', 'http', 'ice'] as $p) {
            foreach (['datatype', 'datalist'] as $c) {
                $cases["$p $c"] = [$p, $c];
            }
        }
        return $cases;
    }

    /** @dataProvider cells */
    public function testReport(string $proto, string $call): void
    {
        $this->needGrpc($proto);
        $addr = $proto === 'ice' ? Servers::ice($this) : Servers::go($this)[$proto];
        $json = Servers::tmp() . "/$proto-$call.json";
        $args = ['-proto', $proto, '-call', $call, '-c', '2', '-n', '40', '-warmup', '0.1', '-k', '-addr', $addr, '-json', $json];
        if ($call === 'datalist') {
            array_push($args, '-items', '20');
        }
        [$code, $out, $err] = Servers::client($args);
        $this->assertSame(0, $code, "exit code: got $code; want 0\nstderr:\n$err");
        $want = [
            'Complete requests' => '40', 'Failed requests' => '0', 'Concurrency Level' => '2',
            'Client' => 'php', 'Protocol' => $proto, 'Call' => $call, 'Items' => $call === 'datalist' ? '20' : '0',
            'Connections' => '2 (per worker)', 'Errors' => 'none', 'Keep-Alive requests' => '40',
        ];
        foreach ($want as $label => $v) {
            $this->assertSame($v, self::field($out, $label), "$label: got " . var_export(self::field($out, $label), true) . "; want $v\n$out");
        }
        $this->assertMatchesRegularExpression('/^Warm-up:\s+0\.\d{3} seconds, \d+ calls excluded$/m', $out);
        // Report v1.1: every transport decodes whole responses and checks every call.
        foreach (['Check' => 'full', 'Runtime' => 'c', 'CPU scope' => 'window', 'Warm-up settled' => 'fixed'] as $label => $v) {
            $this->assertSame($v, self::field($out, $label), "$label\n$out");
        }
        $start = (float) self::field($out, 'Window start');
        $end = (float) self::field($out, 'Window end');
        $this->assertGreaterThan(1e9, $start, 'Window start is Unix seconds');
        $this->assertEqualsWithDelta((float) self::field($out, 'Time taken for tests'), $end - $start, 0.0015,
            'Time taken is the window');
        $this->assertStringStartsWith('This is ApacheBench, Version 2.3', $out);
        $j = json_decode((string) file_get_contents($json), true);
        $this->assertSame(40, $j['complete'] ?? null, '-json complete');
        $this->assertSame($proto, $j['rpcbed']['protocol'] ?? null, '-json protocol');
    }

    /**
     * docs/method.md section 3: client CPU over the window / window length stays
     * within the cores the client may use, +5 %. On one core, 50 forked callers
     * (whose start-up, verify and warm-up once made this 2.5-5.6 cores) included.
     */
    public function testCpuInvariantOnOneCore(): void
    {
        $this->needGrpc('grpc');
        $taskset = trim((string) shell_exec('command -v taskset'));
        if ($taskset === '') {
            Servers::missing($this, 'taskset (util-linux) is not installed');
        }
        $core = (string) (((int) trim((string) shell_exec('nproc'))) > 1 ? 1 : 0);
        [$code, $out, $err] = Servers::client(['-proto', 'grpc', '-call', 'datalist', '-items', '200', '-c', '50',
            '-t', '1s', '-warmup', '0.5s', '-addr', Servers::go($this)['grpc']], 120, [$taskset, '-c', $core]);
        $this->assertSame(0, $code, $err);
        $this->assertSame('window', self::field($out, 'CPU scope'));
        $cpu = (float) self::field($out, 'Client CPU user') + (float) self::field($out, 'Client CPU system');
        $window = (float) self::field($out, 'Window end') - (float) self::field($out, 'Window start');
        $this->assertGreaterThan(0.5, $window, "window\n$out");
        $this->assertGreaterThan(0, $cpu, 'some CPU');
        $this->assertLessThanOrEqual(1.05, $cpu / $window,
            sprintf("got %.3f s CPU over a %.3f s window = %.3f cores; want <= 1.05 on one core\n%s", $cpu, $window, $cpu / $window, $out));
    }

    /**
     * The same invariant where calls are long against the window (5000 items at
     * c=50 on one core: each call spans about a tenth of the window), the cells that
     * once broke it (1.28 cores): a call straddling T0 or T1 gives the window only
     * its part inside, and a -t window is exactly [T0, T1].
     */
    public function testCpuInvariantLongCalls(): void
    {
        $taskset = trim((string) shell_exec('command -v taskset'));
        if ($taskset === '') {
            Servers::missing($this, 'taskset (util-linux) is not installed');
        }
        $core = (string) (((int) trim((string) shell_exec('nproc'))) > 1 ? 1 : 0);
        [$code, $out, $err] = Servers::client(['-proto', 'thrift', '-call', 'datalist', '-items', '5000', '-c', '50',
            '-t', '0.5s', '-warmup', '0.5s', '-addr', Servers::go($this)['thrift']], 120, [$taskset, '-c', $core]);
        $this->assertSame(0, $code, $err);
        $window = (float) self::field($out, 'Window end') - (float) self::field($out, 'Window start');
        $this->assertEqualsWithDelta(0.5, $window, 0.001, "a -t 0.5s window\n$out");
        $this->assertEqualsWithDelta(0.5, (float) self::field($out, 'Time taken for tests'), 0.001, "time taken\n$out");
        $cpu = (float) self::field($out, 'Client CPU user') + (float) self::field($out, 'Client CPU system');
        $this->assertGreaterThan(0, $cpu, 'some CPU');
        $this->assertLessThanOrEqual(1.05, $cpu / $window,
            sprintf("got %.3f s CPU over a %.3f s window = %.3f cores; want <= 1.05 on one core\n%s", $cpu, $window, $cpu / $window, $out));
    }

    /** Pro-rating a call's CPU at an instant inside it (the window's edges). */
    public function testCpuBetween(): void
    {
        $cases = [
            'middle' => [[1.0, 0.2], [3.0, 0.6], 100, 200, 150, [2.0, 0.4]],
            'at begin' => [[1.0, 0.2], [3.0, 0.6], 100, 200, 100, [1.0, 0.2]],
            'at end' => [[1.0, 0.2], [3.0, 0.6], 100, 200, 200, [3.0, 0.6]],
            'before begin' => [[1.0, 0.2], [3.0, 0.6], 100, 200, 50, [1.0, 0.2]],
            'after end' => [[1.0, 0.2], [3.0, 0.6], 100, 200, 250, [3.0, 0.6]],
            'zero length' => [[1.0, 0.2], [3.0, 0.6], 100, 100, 100, [3.0, 0.6]],
        ];
        foreach ($cases as $name => [$a, $b, $begin, $end, $at, $want]) {
            $got = Caller::between($a, $b, $begin, $end, $at);
            $this->assertEqualsWithDelta($want[0], $got[0], 1e-9, "$name: user");
            $this->assertEqualsWithDelta($want[1], $got[1], 1e-9, "$name: system");
        }
    }

    /**
     * /proc/PID/schedstat of a forked (so single-threaded) caller: its time on CPU
     * grows while it computes; a PID that is not there gives null.
     */
    public function testOnCpu(): void
    {
        [$r, $w] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        $pid = pcntl_fork();
        $this->assertNotSame(-1, $pid, 'fork');
        if ($pid === 0) {
            fclose($r);
            fgets($w); // go
            for ($x = 0, $i = 0; $i < 3_000_000; $i++) {
                $x += $i;
            }
            fwrite($w, "done\n");
            fgets($w); // quit
            posix_kill(getmypid(), 9);
        }
        fclose($w);
        try {
            $a = Bench::onCpu([$pid, 0x7ffffff0]);
            fwrite($r, "go\n");
            fgets($r);
            $b = Bench::onCpu([$pid]);
            $this->assertNull($a['ns'][1], 'a PID that does not exist');
            if ($a['ns'][0] === null) {
                $this->markTestSkipped('/proc/PID/schedstat is not readable here (kernel without schedstats)');
            }
            $this->assertGreaterThan($a['ns'][0] + 1_000_000, $b['ns'][0], 'time on CPU grows by the work (over 1 ms)');
            $this->assertGreaterThan($a['at'][0], $b['at'][0]);
            $this->assertGreaterThanOrEqual($a['at'][0], $a['at'][1], 'reads in order');
        } finally {
            fwrite($r, "quit\n");
            fclose($r);
            pcntl_waitpid($pid, $status);
        }
    }

    public function testTimeLimitAlone(): void
    {
        $this->needGrpc('grpc');
        [$code, $out, $err] = Servers::client(['-proto', 'grpc', '-call', 'datatype', '-c', '2', '-t', '0.5s', '-addr', Servers::go($this)['grpc']]);
        $this->assertSame(0, $code, $err);
        $this->assertGreaterThan(0, (int) self::field($out, 'Complete requests'));
        $taken = (float) self::field($out, 'Time taken for tests');
        $this->assertGreaterThan(0.3, $taken, 'time taken');
    }

    public function testOpenLoop(): void
    {
        [$code, $out, $err] = Servers::client(['-proto', 'http', '-call', 'datatype', '-c', '2', '-n', '40',
            '-rate', '200', '-k', '-addr', Servers::go($this)['http']]);
        $this->assertSame(0, $code, $err);
        $this->assertSame('open', self::field($out, 'Loop'));
        $this->assertSame('200 [#/sec]', self::field($out, 'Target rate'));
        $this->assertSame('40', self::field($out, 'Complete requests'));
        // 40 calls due 5 ms apart take about 0.2 s, whatever the server's speed.
        $this->assertGreaterThan(0.15, (float) self::field($out, 'Time taken for tests'));
    }

    /**
     * -start-at: the measured window opens at the asked time, not before, when the
     * warm-up ends earlier (the callers go on warming up until then); a closed and an
     * open loop.
     *
     * @return array<string, array{list<string>}>
     */
    public static function startAtLoops(): array
    {
        return ['closed loop' => [[]], 'open loop' => [['-rate', '200']]];
    }

    /**
     * @dataProvider startAtLoops
     * @param list<string> $extra
     */
    public function testStartAt(array $extra): void
    {
        $at = microtime(true) + 2.0;
        [$code, $out, $err] = Servers::client(['-proto', 'http', '-call', 'datatype', '-c', '2', '-t', '0.3s', '-warmup', '0.1s',
            '-k', '-start-at', sprintf('%.6f', $at), '-addr', Servers::go($this)['http'], ...$extra]);
        $this->assertSame(0, $code, $err);
        $opened = (float) self::field($out, 'Window start');
        $this->assertGreaterThanOrEqual($at - 0.001, $opened, 'the window opened before -start-at');
        // The warm-up began at the window's start less "Warm-up:" (a process that
        // took long to start, fork and verify begins it late): the window opens at
        // -start-at or 0.1 s (and the start command's 10 ms) after that, whichever
        // is later. A loaded machine wakes late, but not by a quarter of a second.
        $began = $opened - (float) self::field($out, 'Warm-up');
        $due = max($at, $began + 0.1 + 0.01);
        $this->assertLessThan($due + 0.25, $opened, sprintf('the window opened %.3f s after it was due', $opened - $due));
        $this->assertGreaterThan(0, (int) self::field($out, 'Complete requests'));
    }

    /** @return array<string, array{list<string>, int, string}> */
    public static function exits(): array
    {
        return [
            'bad flag' => [['-proto', 'grpc', '-call', 'datatype', '-n', '1', '-x'], 2, 'flag provided but not defined: -x'],
            'no -n' => [['-proto', 'http', '-call', 'datatype'], 2, 'give -n'],
            'no -addr' => [['-proto', 'http', '-call', 'datatype', '-n', '1'], 2, '-addr is required'],
            'conns other than c' => [['-proto', 'http', '-call', 'datatype', '-n', '4', '-c', '2', '-conns', '1', '-addr', '127.0.0.1:1'], 2,
                'php-client runs one process per caller'],
        ];
    }

    /**
     * @dataProvider exits
     * @param list<string> $args
     */
    public function testExitCodes(array $args, int $want, string $stderr): void
    {
        [$code, $out, $err] = Servers::client($args);
        $this->assertSame($want, $code, "exit code: got $code; want $want\n$err");
        $this->assertSame('', $out, 'no report on stdout');
        $this->assertStringContainsString($stderr, $err);
    }

    /** -h and -help: usage on stdout, exit 0 (docs/report-format.md). */
    public function testHelp(): void
    {
        foreach (['-h', '-help'] as $flag) {
            [$code, $out, $err] = Servers::client([$flag]);
            $this->assertSame(0, $code, "$flag: exit code: got $code; want 0\n$err");
            $this->assertStringContainsString('exit codes:', $out, "$flag: usage on stdout");
            $this->assertSame('', $err, "$flag: nothing on stderr");
        }
    }

    /** @dataProvider cells */
    public function testUnreachable(string $proto, string $call): void
    {
        $this->needGrpc($proto);
        if ($call === 'datalist') {
            $this->assertTrue(true);
            return; // one call kind is enough: verify runs before any timing
        }
        $port = Servers::freePort();
        [$code, $out, $err] = Servers::client(['-proto', $proto, '-call', $call, '-n', '5', '-timeout', '2s', '-addr', "127.0.0.1:$port"], 60);
        $this->assertSame(4, $code, "exit code: got $code; want 4 (unreachable)\n$err");
        $this->assertSame('', $out, 'no report on stdout');
        $this->assertMatchesRegularExpression('/^verify: (connect|timeout|receive): /m', $err, 'the verify line names the kind');
    }

    /** A server that answers, but wrongly: the verify pass stops the run with exit 3. */
    public function testVerifyFails(): void
    {
        $port = Servers::freePort();
        $script = Servers::tmp() . '/wrong.php';
        file_put_contents($script, '<?php header("Content-Type: application/json"); echo json_encode(["code" => 0, "auth" => ["token" => "t"], "codeId" => 100, "cnName" => "x", "items" => []]);');
        $proc = Servers::start([PHP_BINARY, '-n', '-S', "127.0.0.1:$port", $script], Servers::tmp() . '/wrong.log');
        $this->assertTrue(Servers::waitTcp("127.0.0.1:$port", 10, $proc), 'php -S did not start');
        foreach (['datatype' => 'got codeId 100; want 101', 'datalist' => 'DataType: got codeId 100'] as $call => $msg) {
            $args = ['-proto', 'http', '-call', $call, '-n', '3', '-addr', "127.0.0.1:$port"];
            [$code, $out, $err] = Servers::client($call === 'datalist' ? [...$args, '-items', '5'] : $args);
            $this->assertSame(3, $code, "$call: exit code: got $code; want 3\n$err");
            $this->assertSame('', $out, "$call: no report on stdout");
            $this->assertStringContainsString("verify: length: ", $err, "$call: the verify line names the kind");
            $this->assertStringContainsString($msg, $err);
        }
        proc_terminate($proc);
    }

    /** The server stops in the middle of a run: every call after that fails, the report still comes. */
    public function testServerGoesAway(): void
    {
        $port = Servers::freePort();
        $script = Servers::tmp() . '/flaky.php';
        // Answers the two verify calls (DataType, DataList(0)) right, then 500 for every later call.
        file_put_contents($script, '<?php $f = sys_get_temp_dir() . "/rpcbed-flaky-' . $port . '"; '
            . 'file_put_contents($f, "x", FILE_APPEND); if (filesize($f) > 2) { http_response_code(500); echo "{\"code\":13}"; return; } '
            . 'echo json_encode(["code" => 0, "auth" => ["token" => "t"], "codeId" => 101, "cnName" => "名称-app_call_connect_success", "items" => []]);');
        @unlink(sys_get_temp_dir() . "/rpcbed-flaky-$port");
        $proc = Servers::start([PHP_BINARY, '-n', '-S', "127.0.0.1:$port", $script], Servers::tmp() . '/flaky.log');
        $this->assertTrue(Servers::waitTcp("127.0.0.1:$port", 10, $proc), 'php -S did not start');
        [$code, $out, $err] = Servers::client(['-proto', 'http', '-call', 'datatype', '-n', '4', '-addr', "127.0.0.1:$port"]);
        proc_terminate($proc);
        @unlink(sys_get_temp_dir() . "/rpcbed-flaky-$port");
        $this->assertSame(0, $code, "exit code: got $code; want 0 (report printed)\n$err");
        $this->assertSame('4', self::field($out, 'Failed requests'));
        $this->assertSame('4', self::field($out, 'Non-2xx responses'));
        $this->assertSame('exceptions=4', self::field($out, 'Errors'));
        $this->assertStringContainsString('(Connect: 0, Receive: 0, Length: 0, Exceptions: 4)', $out);
    }
}
