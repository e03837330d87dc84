<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * Bench runs one load run, closed loop (ab) or open loop (-rate, as wrk2): C worker
 * processes, each with its own transport (one connection), talking to the parent
 * over their stdin/stdout.
 *
 * Workers are started fresh (fork + exec of bin/worker.php through proc_open), not
 * bare pcntl_fork()s: grpc.so initialises gRPC core when a PHP request starts, and
 * a forked copy of an initialised core hangs on its first call (also with
 * grpc.enable_fork_support). The parent loads no RPC extension at all.
 *
 *   parent                          worker i
 *     start ──────────────────────▶ connect, first call (worker 0: full verify)
 *     ◀──────────── ready {ok, kind, message, bytes, server, versions}
 *     warmup DEADLINE ─────────────▶ calls until the deadline
 *     ◀──────────────────────────── warm {calls}
 *     run CALLS DEADLINE [INTERVAL FIRST_DUE] ─▶ timed calls, hrtime per call
 *     ◀──────────── result {start, end, calls, bytes, errors, lat}; exit
 *
 * Latencies are kept raw (nanoseconds) and merged in the parent, so percentiles
 * come from every call, not from per-worker summaries.
 */
final class Bench
{
    public const EXIT_OK = 0;
    public const EXIT_USAGE = 2;
    public const EXIT_VERIFY = 3;
    public const EXIT_UNREACHABLE = 4;

    /** @var list<string> */
    private array $workerCommand;
    /** @var resource */
    private $log;

    /**
     * @param ?list<string> $workerCommand the worker's command line without its
     *        config and id (default: php -n with the protocol's extensions, bin/worker.php)
     * @param resource|null $log where progress and problems go (stderr)
     */
    public function __construct(private Config $cfg, ?array $workerCommand = null, $log = null)
    {
        $this->workerCommand = $workerCommand ?? [
            PHP_BINARY, ...Extensions::phpArgs($cfg->proto, $cfg->accel, $cfg->runtime), dirname(__DIR__) . '/bin/worker.php',
        ];
        $this->log = $log ?? STDERR;
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
        $workers = [];
        $spec = [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => $this->log];
        try {
            for ($i = 0; $i < $cfg->concurrency; $i++) {
                $cmd = [...$this->workerCommand, json_encode($cfg->toArray()), (string) $i];
                $proc = proc_open($cmd, $spec, $pipes);
                if ($proc === false) {
                    throw new \RuntimeException('cannot start worker: ' . implode(' ', $cmd));
                }
                stream_set_blocking($pipes[1], false);
                $workers[$i] = ['proc' => $proc, 'in' => $pipes[0], 'sock' => $pipes[1]];
            }
            return $this->drive($workers, $out);
        } finally {
            foreach ($workers as $w) {
                foreach ([$w['in'], $w['sock']] as $pipe) {
                    if (is_resource($pipe)) {
                        fclose($pipe);
                    }
                }
            }
            foreach ($workers as $w) {
                if (!is_resource($w['proc'])) {
                    continue;
                }
                if (proc_get_status($w['proc'])['running']) {
                    proc_terminate($w['proc'], 9);
                }
                proc_close($w['proc']);
            }
        }
    }

    /** @param array<int, array{proc: resource, in: resource, sock: resource}> $workers */
    private function drive(array $workers, $out): int
    {
        $cfg = $this->cfg;
        $c = $cfg->concurrency;
        // A dead server must never hang the run: the waits before timing have a bound,
        // and during it every call has its deadline.
        $setupWait = $cfg->timeout * 3 + 10;
        $ready = $this->gather($workers, $setupWait);
        $first = $ready[0];
        $bad = null;
        foreach ($ready as $i => $r) {
            $bad = match (true) {
                $r === null => ['kind' => CallError::RECEIVE, 'message' => "worker $i did not answer within {$setupWait}s"],
                isset($r['eof']) => ['kind' => 'setup', 'message' => "worker $i exited before it was ready (its stderr says why)"],
                !$r['ok'] => $r,
                default => null,
            };
            if ($bad !== null) {
                break;
            }
        }
        if ($bad !== null) {
            $this->broadcast($workers, "quit\n");
            $unreachable = CallError::isUnreachable($bad['kind']);
            $this->logf('%s: %s', $unreachable ? 'server unreachable' : 'verify failed', $bad['message']);
            return $unreachable ? self::EXIT_UNREACHABLE : self::EXIT_VERIFY;
        }
        $this->logf('verify ok (%d bytes)', $first['bytes']);

        // Warm-up, excluded from every figure.
        $w0 = hrtime(true);
        $warmDeadline = $cfg->warmupSeconds > 0 ? $w0 + (int) ($cfg->warmupSeconds * 1e9) : 0;
        foreach ($workers as $i => $w) {
            fwrite($w['in'], sprintf("warmup %d\n", $warmDeadline));
        }
        $warm = $this->gather($workers, $cfg->warmupSeconds + $cfg->timeout * 2 + 10);
        $warmupCalls = 0;
        foreach ($warm as $r) {
            $warmupCalls += $r['calls'] ?? 0; // a worker that died shows up in the results
        }
        $warmupSeconds = $cfg->warmupSeconds > 0 ? (hrtime(true) - $w0) / 1e9 : 0.0;

        // The measured part.
        // Open loop: the schedule starts a little ahead, so every worker has its command.
        $start = hrtime(true) + ($cfg->rate > 0 ? 20_000_000 : 0);
        $deadline = $cfg->timeLimit > 0 ? $start + (int) ($cfg->timeLimit * 1e9) : 0;
        foreach ($workers as $i => $w) {
            $calls = $cfg->requests === Config::UNLIMITED ? Config::UNLIMITED : self::share($cfg->requests, $c, $i);
            if ($cfg->rate > 0) {
                // As go-client: worker i's calls are due every c/rate s, from i/rate s on.
                fwrite($w['in'], sprintf("run %d %d %d %d\n", $calls, $deadline,
                    (int) ($c * 1e9 / $cfg->rate), $start + (int) ($i * 1e9 / $cfg->rate)));
            } else {
                fwrite($w['in'], sprintf("run %d %d\n", $calls, $deadline));
            }
        }
        $results = $this->gather($workers, $cfg->timeLimit > 0 ? $cfg->timeLimit + $cfg->timeout * 2 + 30 : null);
        foreach ($workers as $i => $w) {
            fclose($w['in']);
            fclose($w['sock']);
            $code = proc_close($w['proc']);
            if ($code !== 0) {
                $this->logf('worker %d exited with %d', $i, $code);
            }
        }

        $report = $this->report($first, $results, $warmupSeconds, $warmupCalls);
        fwrite($out, $report->format());
        if ($cfg->jsonFile !== '') {
            $json = json_encode($report->toArray(), JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES | JSON_PRESERVE_ZERO_FRACTION);
            if (@file_put_contents($cfg->jsonFile, $json . "\n") === false) {
                $this->logf('-json: cannot write %s', $cfg->jsonFile);
                return 1;
            }
        }
        return self::EXIT_OK;
    }

    /** The part of $total that worker $i of $c does. */
    public static function share(int $total, int $c, int $i): int
    {
        return intdiv($total, $c) + ($i < $total % $c ? 1 : 0);
    }

    private function broadcast(array $workers, string $line): void
    {
        foreach ($workers as $w) {
            @fwrite($w['in'], $line);
        }
    }

    /**
     * Reads one JSON line from every worker, within $seconds (null: no bound).
     *
     * @return array<int, ?array<string, mixed>> ['eof' => true] for a worker that
     *         exited, null for one that was late
     */
    private function gather(array $workers, ?float $seconds): array
    {
        $got = [];
        $buf = array_fill_keys(array_keys($workers), '');
        $end = $seconds === null ? null : microtime(true) + $seconds;
        $open = array_map(static fn (array $w) => $w['sock'], $workers);
        while ($open) {
            $wait = $end === null ? null : max(0.0, $end - microtime(true));
            $r = array_values($open);
            $none = null;
            $n = @stream_select($r, $none, $none, $wait === null ? null : (int) $wait, $wait === null ? null : (int) (fmod($wait, 1.0) * 1e6));
            if ($n === false) {
                continue; // interrupted by a signal
            }
            if ($n === 0) {
                break;
            }
            foreach ($r as $sock) {
                $i = array_search($sock, $open, true);
                $chunk = fread($sock, 1 << 20);
                if ($chunk === '' || $chunk === false) {
                    if (feof($sock)) {
                        $got[$i] = ['eof' => true];
                        unset($open[$i]);
                    }
                    continue;
                }
                $buf[$i] .= $chunk;
                if (($nl = strpos($buf[$i], "\n")) !== false) {
                    $got[$i] = json_decode(substr($buf[$i], 0, $nl), true);
                    unset($open[$i]);
                }
            }
        }
        foreach (array_keys($workers) as $i) {
            $got[$i] ??= null;
        }
        ksort($got);
        return $got;
    }

    /** @param array<int, ?array<string, mixed>> $results */
    private function report(array $first, array $results, float $warmupSeconds, int $warmupCalls): Report
    {
        $cfg = $this->cfg;
        $rep = new Report();
        $rep->serverSoftware = (string) $first['server'];
        $rep->serverHostname = $cfg->host();
        $rep->serverPort = $cfg->port();
        $rep->documentPath = self::documentPath($cfg);
        $rep->documentLength = (int) $first['bytes'];
        $rep->concurrency = $cfg->concurrency;

        $start = PHP_INT_MAX;
        $end = 0;
        $lat = [];
        $errors = [];
        foreach ($results as $i => $r) {
            if ($r === null || isset($r['eof'])) {
                $this->logf('worker %d sent no result', $i);
                $errors['worker'] = ($errors['worker'] ?? 0) + 1;
                continue;
            }
            $start = min($start, $r['start']);
            $end = max($end, $r['end']);
            $rep->complete += $r['calls'];
            $rep->totalTransferred += $r['bytes'];
            foreach ($r['errors'] as $kind => $count) {
                $errors[$kind] = ($errors[$kind] ?? 0) + $count;
            }
            array_push($lat, ...$r['lat']);
        }
        $rep->timeTaken = $end > $start ? ($end - $start) / 1e9 : 0.0;
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

        $rep->protocol = $cfg->proto;
        $rep->call = $cfg->call;
        $rep->items = $cfg->call === 'datalist' ? $cfg->items : 0;
        $rep->connections = $cfg->concurrency;
        $rep->sharedConnections = false;
        $rep->loop = $cfg->rate > 0 ? 'open' : 'closed';
        $rep->targetRate = $cfg->rate;
        $rep->warmupSeconds = $warmupSeconds;
        $rep->warmupCalls = $warmupCalls;
        $self = getrusage(0);
        $children = getrusage(1);
        $rep->cpuUser = $self['ru_utime.tv_sec'] + $self['ru_utime.tv_usec'] / 1e6
            + $children['ru_utime.tv_sec'] + $children['ru_utime.tv_usec'] / 1e6;
        $rep->cpuSystem = $self['ru_stime.tv_sec'] + $self['ru_stime.tv_usec'] / 1e6
            + $children['ru_stime.tv_sec'] + $children['ru_stime.tv_usec'] / 1e6;
        $rep->versions = $first['versions'] ?? ['php' => PHP_VERSION];
        $rep->runtime = $cfg->runtime;
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
