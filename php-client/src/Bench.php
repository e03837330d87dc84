<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * Bench runs one load run, closed loop (ab) or open loop (-rate, as wrk2): C caller
 * processes (Caller) forked from this one (so they inherit its loaded code and extensions),
 * each with its own transport (one connection), talking to the parent over a
 * socket pair.
 *
 * gRPC is the exception to "inherit": a forked copy of an initialised gRPC core
 * hangs on its first call (also with grpc.enable_fork_support), so the parent never
 * loads grpc.so and each caller loads it with dl() after the fork.
 *
 *   parent                              caller i
 *     fork ───────────────────────────▶ connect, first call (caller 0: full verify)
 *     ◀──────────── ready {ok, kind, message, bytes, server, versions}
 *     go ORIGIN ──────────────────────▶ warm-up calls, closed loop
 *     ◀──────────── tick {w, calls, through}   (per 250 ms window, for -warmup auto)
 *     start T0 T1 SHARE [INTERVAL DUE] ▶ calls completing in [T0, T1] are measured
 *     ◀──────────── result {end, calls, bytes, errors, lat, warmup, cpu_user, cpu_system}; exit
 *
 * One window for every caller (docs/method.md section 2): the parent picks T0 once
 * every caller is ready and warm, and T1 = T0 + -t. Each caller sends its own CPU
 * over the window (getrusage at its window's start and end); the parent adds its
 * own over the same span. Latencies are kept raw (nanoseconds) and merged here, so
 * percentiles come from every call, not from per-caller summaries.
 */
final class Bench
{
    /** Between the start command and T0, so every caller has it before the window opens. */
    private const START_MARGIN_NS = 10_000_000;

    /** @var resource */
    private $log;
    /** @var \Closure(int): Transport */
    private \Closure $factory;

    /**
     * @param ?\Closure(int): Transport $factory makes caller i's transport, in the caller
     * @param resource|null $log where progress and problems go (stderr)
     */
    public function __construct(private Config $cfg, ?\Closure $factory = null, $log = null)
    {
        $this->factory = $factory ?? static function (int $id) use ($cfg): Transport {
            Extensions::loadAfterFork($cfg->proto);
            return Transports::make($cfg, $id);
        };
        $this->log = $log ?? STDERR;
    }

    /** The wall clock (Unix seconds) at hrtime 0: maps hrtime to Unix time and back. */
    private static function wallAtZero(): float
    {
        return microtime(true) - hrtime(true) / 1e9;
    }

    private function logf(string $format, mixed ...$args): void
    {
        fwrite($this->log, 'php-client: ' . $this->cfg->cellName() . ': ' . vsprintf($format, $args) . "\n");
    }

    /** Runs the bench; prints the report on $out. Returns the exit code. */
    public function run($out = null): int
    {
        $out ??= STDOUT;
        $cfg = $this->cfg;
        Extensions::preload($cfg->proto);
        $callers = [];
        try {
            for ($i = 0; $i < $cfg->concurrency; $i++) {
                $pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
                if ($pair === false) {
                    throw new \RuntimeException('cannot make a socket pair for caller ' . $i);
                }
                $pid = pcntl_fork();
                if ($pid === -1) {
                    throw new \RuntimeException('cannot fork caller ' . $i);
                }
                if ($pid === 0) {
                    fclose($pair[0]);
                    foreach ($callers as $w) {
                        fclose($w['sock']); // a sibling's socket: the parent's alone
                    }
                    $this->child($i, $pair[1]);
                }
                fclose($pair[1]);
                $callers[$i] = ['pid' => $pid, 'sock' => $pair[0]];
            }
            return $this->drive($callers, $out);
        } finally {
            foreach ($callers as $w) {
                if (is_resource($w['sock'])) {
                    fclose($w['sock']); // a caller still waiting for a command sees EOF and exits
                }
            }
            self::reap(array_column($callers, 'pid'), 5.0);
        }
    }

    /** The forked caller: runs, then ends without PHP's shutdown (the parent's shutdown functions are not its own). */
    private function child(int $id, $sock): never
    {
        try {
            Caller::run($this->cfg, $id, $sock, $this->factory);
        } catch (\Throwable $e) {
            fwrite($this->log, "php-client: caller $id: " . get_class($e) . ': ' . $e->getMessage() . "\n");
        }
        // A caller's exit code is read by nobody: the quickest end, without PHP's shutdown.
        if (function_exists('posix_kill')) {
            posix_kill(getmypid(), 9);
        }
        self::hardExit(0);
    }

    /**
     * Ends this forked process now: no destructors, no shutdown functions, no
     * extension shutdown (the parent's, inherited, are not this process's to run):
     * the image becomes `sh -c 'exit CODE'`, which keeps the code.
     */
    public static function hardExit(int $code): never
    {
        @pcntl_exec('/bin/sh', ['-c', 'exit ' . $code]);
        exit($code);
    }

    /**
     * Waits for the callers to exit, at most $seconds, then kills the rest.
     *
     * @param list<int> $pids
     */
    private static function reap(array $pids, float $seconds): void
    {
        $end = microtime(true) + $seconds;
        while ($pids) {
            foreach ($pids as $k => $pid) {
                if (pcntl_waitpid($pid, $status, WNOHANG) !== 0) {
                    unset($pids[$k]);
                }
            }
            if (!$pids) {
                return;
            }
            if (microtime(true) > $end) {
                foreach ($pids as $pid) {
                    if (function_exists('posix_kill')) {
                        posix_kill($pid, 9);
                    }
                    pcntl_waitpid($pid, $status);
                }
                return;
            }
            usleep(2_000);
        }
    }

    /** How a caller that closed its socket ended, waiting for it a little. */
    private static function howEnded(int $pid): string
    {
        for ($i = 0; $i < 100; $i++) {
            $got = pcntl_waitpid($pid, $status, WNOHANG);
            if ($got === $pid) {
                if (pcntl_wifsignaled($status)) {
                    return 'killed by signal ' . pcntl_wtermsig($status) . ' (a crash in an extension, or the OOM killer)';
                }
                return 'exit code ' . pcntl_wexitstatus($status) . ' (its stderr says why)';
            }
            if ($got === -1) {
                break;
            }
            usleep(10_000);
        }
        return 'its stderr says why';
    }

    /** @param array<int, array{pid: int, sock: resource}> $callers */
    private function drive(array $callers, $out): int
    {
        $cfg = $this->cfg;
        $c = $cfg->concurrency;
        $socks = array_column($callers, 'sock');
        // A dead server must never hang the run: the waits before timing have a bound,
        // and during it every call has its deadline.
        $setupWait = $cfg->timeout * 3 + 10;
        $ready = [];
        $this->lines($socks, hrtime(true) + (int) ($setupWait * 1e9), function (int $i, ?array $m) use (&$ready): bool {
            $ready[$i] = $m ?? ['eof' => true];
            return count($ready) === $this->cfg->concurrency;
        });
        $bad = null;
        for ($i = 0; $i < $c; $i++) {
            $r = $ready[$i] ?? null;
            $bad = match (true) {
                $r === null => ['kind' => CallError::TIMEOUT, 'message' => "caller $i did not answer within {$setupWait}s"],
                isset($r['eof']) => ['kind' => 'setup', 'message' => "caller $i exited before it was ready: " . self::howEnded($callers[$i]['pid'])],
                !$r['ok'] => $r,
                default => null,
            };
            if ($bad !== null) {
                break;
            }
        }
        if ($bad !== null && $cfg->secure() && !in_array($bad['kind'], ['setup', CallError::LENGTH,
            CallError::UNAUTHENTICATED, CallError::INVALID_ARGUMENT], true)) {
            // A certificate problem is exit 3 with its cause named (docs/report-format.md).
            $cause = Tls::diagnose($cfg);
            if ($cause !== null) {
                $bad = ['kind' => 'certificate', 'message' => "$cause: $cfg->proto server at $cfg->addr: " . $bad['message']];
            }
        }
        if ($bad !== null) {
            $this->broadcast($socks, "quit\n");
            // docs/report-format.md: "verify: KIND: message" on stderr, no report.
            fwrite($this->log, sprintf("verify: %s: %s\n", $bad['kind'], $bad['message']));
            if ($bad['kind'] === 'setup') {
                return ExitCode::INTERNAL;
            }
            return CallError::isUnreachable($bad['kind']) ? ExitCode::UNREACHABLE : ExitCode::VERIFY;
        }
        $first = $ready[0];
        $this->logf('verify ok (%d bytes)', $first['bytes']);

        // Warm-up, excluded from every figure: fixed, or until throughput settles.
        $origin = hrtime(true);
        $this->broadcast($socks, "go $origin\n");
        $settled = 'fixed';
        $dead = [];
        if ($cfg->warmupAuto || $cfg->warmupSeconds > 0) {
            $max = $origin + (int) (($cfg->warmupAuto ? $cfg->warmupMax : $cfg->warmupSeconds) * 1e9);
            $ticks = [];
            $through = array_fill(0, $c, -1);
            $seen = 0;
            $isSettled = false;
            $this->lines($socks, $max, function (int $i, ?array $m) use (&$ticks, &$through, &$seen, &$dead, &$isSettled, $cfg): bool {
                if ($m === null) {
                    $dead[$i] = true; // its missing result shows in Errors
                    $through[$i] = PHP_INT_MAX;
                    return count($dead) === $cfg->concurrency;
                }
                if (($m['t'] ?? '') !== 'tick') {
                    return false;
                }
                $ticks[$i][$m['w']] = $m['calls'];
                $through[$i] = $m['through'];
                if (!$cfg->warmupAuto) {
                    return false;
                }
                $series = Warmup::series($ticks, $through);
                if (count($series) > $seen) {
                    $seen = count($series);
                    $isSettled = Warmup::settled($series);
                }
                return $isSettled;
            });
            if ($cfg->warmupAuto) {
                $settled = $isSettled ? 'yes' : 'no';
                if (!$isSettled) {
                    $this->logf('warm-up did not settle within %.3f s (-warmup-max)', $cfg->warmupMax);
                }
            }
        }

        // The measured window: the same T0 (and T1) for every caller; with -start-at
        // no earlier than it (the callers go on warming up until then).
        $t0 = hrtime(true) + self::START_MARGIN_NS;
        if ($cfg->startAt > 0) {
            $t0 = max($t0, (int) (($cfg->startAt - self::wallAtZero()) * 1e9));
        }
        $t1 = $cfg->timeLimit > 0 ? $t0 + (int) ($cfg->timeLimit * 1e9) : 0;
        foreach ($callers as $i => $w) {
            $calls = $cfg->requests === Config::UNLIMITED ? Config::UNLIMITED : self::share($cfg->requests, $c, $i);
            $line = $cfg->rate > 0
                // As go-client: caller i's calls are due every c/rate s, from T0 + i/rate s on.
                ? sprintf("start %d %d %d %d %d\n", $t0, $t1, $calls, (int) ($c * 1e9 / $cfg->rate), $t0 + (int) ($i * 1e9 / $cfg->rate))
                : sprintf("start %d %d %d\n", $t0, $t1, $calls);
            @fwrite($w['sock'], $line);
        }
        $wait = $t0 - hrtime(true);
        if ($wait > 0) {
            time_nanosleep(intdiv($wait, 1_000_000_000), $wait % 1_000_000_000);
        }
        $pids = array_column($callers, 'pid');
        $cpu0 = Caller::cpu();
        $on0 = self::onCpu($pids);
        // Results are kept raw until the last one is in: decoding them is after the window.
        $raw = [];
        $collect = function (int $i, ?array $m, ?string $line = null) use (&$raw, $c): bool {
            if ($line !== null && str_starts_with($line, '{"t":"tick"')) {
                return false; // sent before the caller had the start command
            }
            if (!array_key_exists($i, $raw)) {
                $raw[$i] = $line; // null: EOF without a result
            }
            return count($raw) === $c;
        };
        // A -t window ends at T1 for every caller: the parent wakes there and reads
        // each caller's time on CPU, so the CPU is over exactly [T0, T1] (a caller's
        // own getrusage can only be read between its calls).
        $on1 = null;
        $cpu1 = null;
        $closedAtT1 = false;
        if ($t1 > 0) {
            $this->lines($socks, $t1, $collect, raw: true);
            $cpu1 = Caller::cpu();
            $on1 = self::onCpu($pids);
            $closedAtT1 = count($raw) < $c;
        }
        if (count($raw) < $c) {
            $bound = $t1 > 0 ? $t1 + (int) (($cfg->timeout * 2 + 30) * 1e9) : null;
            $this->lines($socks, $bound, $collect, raw: true);
        }
        $cpu1 ??= Caller::cpu();
        $results = [];
        for ($i = 0; $i < $c; $i++) {
            $m = isset($raw[$i]) ? json_decode($raw[$i], true) : null;
            $results[$i] = is_array($m) && ($m['t'] ?? '') === 'result' ? $m : null;
        }

        // Each caller's time on CPU between its two reads, as a rate over [T0, T1]:
        // the reads come late by however long the parent waited for the core.
        $onWindow = null;
        if ($on1 !== null && $closedAtT1) {
            $onWindow = [];
            foreach ($pids as $i => $pid) {
                $a = $on0['ns'][$i];
                $b = $on1['ns'][$i];
                $span = $on1['at'][$i] - $on0['at'][$i];
                $onWindow[$i] = $a !== null && $b !== null && $b >= $a && $span > 0
                    ? ($b - $a) / 1e9 * ($t1 - $t0) / $span : null;
            }
        }
        $report = $this->report($first, $results, $origin, $t0, [$cpu1[0] - $cpu0[0], $cpu1[1] - $cpu0[1]], $settled,
            $closedAtT1 ? $t1 : null, $onWindow);
        if (@fwrite($out, $report->format()) === false) {
            $this->logf('cannot write the report');
            return ExitCode::INTERNAL;
        }
        if ($cfg->jsonFile !== '') {
            $json = json_encode($report->toArray(), JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES | JSON_PRESERVE_ZERO_FRACTION);
            if (@file_put_contents($cfg->jsonFile, $json . "\n") === false) {
                $this->logf('-json: cannot write %s', $cfg->jsonFile);
                return ExitCode::INTERNAL;
            }
        }
        return ExitCode::OK;
    }

    /**
     * Each process's time on CPU so far (user + system, nanoseconds) from
     * /proc/PID/schedstat, which a forked caller's parent can read while the caller
     * is inside a call (a zombie's too); null for a process whose file can't be read.
     * at[i] is the hrtime (ns) of process i's read: on a core shared with busy
     * callers the parent can be held off for tens of milliseconds between two reads,
     * so each caller's span is its own.
     *
     * @param list<int> $pids
     * @return array{at: list<int>, ns: list<?int>}
     */
    public static function onCpu(array $pids): array
    {
        $ns = $at = [];
        foreach ($pids as $pid) {
            $s = @file_get_contents("/proc/$pid/schedstat");
            $at[] = hrtime(true);
            $ns[] = is_string($s) && preg_match('/^(\d+) /', $s, $m) && self::singleThreaded($pid) ? (int) $m[1] : null;
        }
        return ['at' => $at, 'ns' => $ns];
    }

    /**
     * Whether pid runs one thread: /proc/PID/schedstat is its main thread's alone,
     * so it is the process's time only then. grpc.so and Ice run threads of their
     * own, which come and go (a vanished thread's time leaves any sum of threads);
     * their callers' CPU comes from their own getrusage, pro-rated at the edges.
     */
    private static function singleThreaded(int $pid): bool
    {
        $st = @file_get_contents("/proc/$pid/status");
        return is_string($st) && preg_match('/^Threads:\s+1$/m', $st) === 1;
    }

    /** The part of $total that caller $i of $c does. */
    public static function share(int $total, int $c, int $i): int
    {
        return intdiv($total, $c) + ($i < $total % $c ? 1 : 0);
    }

    /** @param list<resource> $socks */
    private function broadcast(array $socks, string $line): void
    {
        foreach ($socks as $s) {
            @fwrite($s, $line);
        }
    }

    /** @var array<int, string> partial lines per caller, kept across calls of lines() */
    private array $buf = [];
    /** @var array<int, bool> callers whose socket reached EOF */
    private array $eof = [];

    /**
     * Reads the callers' lines until $onLine returns true, the deadline (hrtime ns,
     * null: none) passes, or every caller is at EOF. $onLine gets (caller, decoded
     * line) or (caller, null) at EOF; with $raw, also the line itself, undecoded.
     *
     * @param list<resource> $socks
     */
    private function lines(array $socks, ?int $deadline, \Closure $onLine, bool $raw = false): void
    {
        for (;;) {
            // Lines already buffered first.
            foreach ($this->buf as $i => $b) {
                while (($nl = strpos($this->buf[$i], "\n")) !== false) {
                    $line = substr($this->buf[$i], 0, $nl);
                    $this->buf[$i] = substr($this->buf[$i], $nl + 1);
                    $stop = $raw ? $onLine($i, null, $line) : $onLine($i, json_decode($line, true) ?: []);
                    if ($stop) {
                        return;
                    }
                }
            }
            $open = [];
            foreach ($socks as $i => $s) {
                if (!isset($this->eof[$i])) {
                    $open[$i] = $s;
                }
            }
            if (!$open) {
                return;
            }
            $r = array_values($open);
            $none = null;
            if ($deadline === null) {
                $n = @stream_select($r, $none, $none, null);
            } else {
                $wait = $deadline - hrtime(true);
                if ($wait <= 0) {
                    return;
                }
                $n = @stream_select($r, $none, $none, intdiv($wait, 1_000_000_000), intdiv($wait % 1_000_000_000, 1000));
            }
            if ($n === false || $n === 0) {
                continue; // interrupted by a signal, or the deadline: checked above
            }
            foreach ($r as $sock) {
                $i = array_search($sock, $open, true);
                $chunk = @fread($sock, 1 << 20);
                if ($chunk === '' || $chunk === false) {
                    if (feof($sock)) {
                        $this->eof[$i] = true;
                        if ($onLine($i, null, null)) {
                            return;
                        }
                    }
                    continue;
                }
                $this->buf[$i] = ($this->buf[$i] ?? '') . $chunk;
            }
        }
    }

    /**
     * @param array<int, ?array<string, mixed>> $results
     * @param array{float, float} $parentCpu the parent's own CPU over the window
     * @param ?int $t1 the window's end when it closed at T1 with callers still calling (null: at the last call)
     * @param ?array<int, ?float> $onCpu each caller's CPU seconds over [T0, T1] (from its
     *   time on CPU between the parent's reads), null where unknown
     */
    private function report(array $first, array $results, int $origin, int $t0, array $parentCpu, string $settled,
        ?int $t1 = null, ?array $onCpu = null): Report
    {
        $cfg = $this->cfg;
        $rep = new Report();
        $rep->serverSoftware = (string) $first['server'];
        $rep->serverHostname = $cfg->host();
        $rep->serverPort = $cfg->port();
        $rep->documentPath = self::documentPath($cfg);
        $rep->documentLength = (int) $first['bytes'];
        $rep->concurrency = $cfg->concurrency;

        $end = $t0;
        $lat = [];
        $errors = [];
        [$user, $system] = $parentCpu;
        $warmupCalls = 0;
        $net = [0, 0, 0];
        foreach ($results as $i => $r) {
            if ($r === null) {
                $this->logf('caller %d sent no result', $i);
                // The report's kind for it stays `worker` (docs/report-format.md: reports unchanged).
                $errors['worker'] = ($errors['worker'] ?? 0) + 1;
                continue;
            }
            if ($r['calls'] > 0) {
                $end = max($end, $r['end']);
            }
            $rep->complete += $r['calls'];
            $rep->totalTransferred += $r['bytes'];
            $warmupCalls += $r['warmup'];
            $net = [$net[0] + $r['opened'], $net[1] + $r['handshakes'], $net[2] + $r['resumed']];
            $wu = (float) $r['cpu_user'];
            $ws = (float) $r['cpu_system'];
            $total = $onCpu[$i] ?? null;
            if ($total !== null) {
                // Split as its own getrusage over its calls splits user and system.
                $userShare = $wu + $ws > 0 ? $wu / ($wu + $ws) : 1.0;
                [$wu, $ws] = [$total * $userShare, $total * (1 - $userShare)];
            }
            $user += $wu;
            $system += $ws;
            foreach ($r['errors'] as $kind => $count) {
                $errors[$kind] = ($errors[$kind] ?? 0) + $count;
            }
            array_push($lat, ...$r['lat']);
        }
        if ($t1 !== null) {
            $end = $t1; // calls were still running at T1: the window is [T0, T1]
        }
        // ab counts failed calls in "Complete requests" too; the failures are listed apart.
        $rep->timeTaken = ($end - $t0) / 1e9;
        $rep->htmlTransferred = $rep->totalTransferred;
        foreach ($errors as $kind => $count) {
            if ($kind === 'worker') {
                continue;
            }
            $rep->failed += $count;
            $rep->failedBy[CallError::abColumn($kind)] += $count;
            if (CallError::isErrorStatus($kind)) {
                $rep->non2xx += $count;
            }
        }
        $rep->errors = $errors;
        $rep->keepAliveUsed = $cfg->proto !== 'http' || $cfg->keepAlive;
        $rep->keepAlive = $rep->keepAliveUsed ? $rep->complete : 0;
        $rep->setLatencies($lat);
        $dump = getenv(LatencyRecord::DUMP_ENV);
        if (is_string($dump) && $dump !== '' && !LatencyRecord::dump($dump, Report::micros($lat))) {
            $this->logf('%s: cannot write %s', LatencyRecord::DUMP_ENV, $dump);
        }

        $rep->protocol = $cfg->proto;
        $rep->call = $cfg->call;
        $rep->items = $cfg->call === 'datalist' ? $cfg->items : 0;
        $rep->connections = $cfg->concurrency;
        $rep->sharedConnections = false;
        $rep->loop = $cfg->rate > 0 ? 'open' : 'closed';
        $rep->targetRate = $cfg->rate;
        $rep->warmupSeconds = ($cfg->warmupAuto || $cfg->warmupSeconds > 0) ? ($t0 - $origin) / 1e9 : 0.0;
        $rep->warmupCalls = $warmupCalls;
        $rep->cpuUser = $user;
        $rep->cpuSystem = $system;
        $rep->versions = $first['versions'] ?? ['php' => PHP_VERSION];

        $rep->check = 'full';
        $rep->runtime = $cfg->runtime;
        $rep->cpuScope = 'window';
        $wall = self::wallAtZero();
        $rep->windowStart = $wall + $t0 / 1e9;
        $rep->windowEnd = $wall + $end / 1e9;
        $rep->warmupSettled = $settled;
        if ($cfg->secure()) {
            $rep->tls = ($first['tls'] ?? null) ?: (new Net())->negotiated();
            [$rep->tlsHandshakes, $rep->tlsResumed] = [$net[1], $net[2]];
        }
        if ($cfg->perCall()) {
            $rep->connectionsOpened = $net[0];
        }
        return $rep;
    }

    public static function documentPath(Config $cfg): string
    {
        $list = $cfg->call === 'datalist';
        return match ($cfg->proto) {
            'grpc' => $list ? "/rpcbed.data.Data/DataList?n=$cfg->items" : '/rpcbed.data.Data/DataType',
            'http' => $list ? HttpTransport::dataListPath($cfg->items)
                : HttpTransport::dataTypePath(Config::GROUP_NAME, Config::EN_NAME),
            default => $list ? "/Data/DataList?n=$cfg->items" : '/Data/DataType',
        };
    }
}
