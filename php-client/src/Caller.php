<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * Caller is one of a Bench's C concurrent callers: a process forked from the
 * Bench's, which owns one transport (one connection) and follows the parent's
 * commands on its socket (see Bench).
 *
 * Every call, warm-up calls too, decodes the whole response, checks it (item count
 * or codeId) and carries its token into the next call (docs/method.md section 1).
 * A call is measured when it completes inside the window [T0, T1]; the caller's CPU
 * over the window is the getrusage difference between the completion of its last
 * call before T0 and the completion of its last measured call, so it covers exactly
 * the calls it counts.
 */
final class Caller
{
    /** How long a closed-loop caller waits after a refused connection (as go-client). */
    public const CONNECT_PAUSE_US = 10_000;

    private int $warmCalls = 0;
    /** The current warm-up window (Warmup::WINDOW_NS from the origin) and its completed calls. */
    private int $window = 0;
    private int $windowCalls = 0;

    private bool $started = false;
    private int $t0 = 0;
    /** End of the window (hrtime ns), 0 = none (-n alone). */
    private int $t1 = 0;
    private int $share = 0;
    /** Open loop: ns between this caller's calls, 0 = closed loop; $due = the next call's due time. */
    private int $interval = 0;
    private int $due = 0;

    /** @var list<int> */
    private array $lat = [];
    /** @var array<string, int> */
    private array $errors = [];
    private int $bytes = 0;
    /** Connections opened, TLS handshakes and resumed ones by the measured calls. */
    private array $net = [0, 0, 0];
    /** The same for the call just made. */
    private array $callNet = [0, 0, 0];
    private int $done = 0;
    private int $lastEnd = 0;
    /** @var ?array{float, float} CPU user/system at the window's start and at its last measured call. */
    private ?array $cpuStart = null;
    private ?array $cpuEnd = null;

    private function __construct(
        private Config $cfg,
        private Transport $t,
        private $sock,
        private int $origin,
        private int $size,
    ) {
    }

    /** Sends one JSON line to the parent. */
    public static function send($sock, array $msg): void
    {
        $line = json_encode($msg, JSON_THROW_ON_ERROR | JSON_INVALID_UTF8_SUBSTITUTE) . "\n";
        for ($off = 0; $off < strlen($line);) {
            $n = @fwrite($sock, substr($line, $off));
            if ($n === false || $n === 0) {
                throw new \RuntimeException('parent went away');
            }
            $off += $n;
        }
    }

    /** @return list<string> the parent's next command, [] when it went away */
    private static function command($sock): array
    {
        $line = fgets($sock);
        return $line === false ? [] : explode(' ', trim($line));
    }

    /** @return ?list<string> a command when one is waiting, null when none is */
    private static function poll($sock): ?array
    {
        $r = [$sock];
        $none = null;
        if (@stream_select($r, $none, $none, 0, 0) < 1) {
            return null;
        }
        return self::command($sock);
    }

    /**
     * The CPU at instant $at inside a call that ran from $begin to $end (hrtime ns),
     * with $cpuBegin and $cpuEnd read around it: pro-rated by time, so a call that
     * straddles an edge of the window gives the window only its part inside.
     *
     * @param array{float, float} $cpuBegin
     * @param array{float, float} $cpuEnd
     * @return array{float, float}
     */
    public static function between(array $cpuBegin, array $cpuEnd, int $begin, int $end, int $at): array
    {
        $f = $end > $begin ? min(1.0, max(0.0, ($at - $begin) / ($end - $begin))) : 1.0;
        return [$cpuBegin[0] + ($cpuEnd[0] - $cpuBegin[0]) * $f, $cpuBegin[1] + ($cpuEnd[1] - $cpuBegin[1]) * $f];
    }

    /** @return array{float, float} this process's CPU user and system seconds so far */
    public static function cpu(): array
    {
        $u = getrusage(0);
        return [$u['ru_utime.tv_sec'] + $u['ru_utime.tv_usec'] / 1e6, $u['ru_stime.tv_sec'] + $u['ru_stime.tv_usec'] / 1e6];
    }

    /**
     * The caller's life: connect and verify, tell the parent, then warm up and run
     * the measured window as it commands. Returns when it is done or told to quit.
     */
    public static function run(Config $cfg, int $id, $sock, \Closure $factory): void
    {
        $isList = $cfg->call === 'datalist';
        $n = $cfg->items;
        $g = Config::GROUP_NAME;
        $e = Config::EN_NAME;

        // Connect and check before anything is timed. Caller 0 checks both calls.
        try {
            $t = $factory($id);
            if ($id === 0) {
                $dt = $t->dataType($g, $e, true);
                $problem = Verify::dataType($dt, $e);
                $dl = $problem === null ? $t->dataList($n, true) : null;
                $problem ??= Verify::dataList($dl, $n);
                $r = $isList ? $dl : $dt;
            } else {
                $r = $isList ? $t->dataList($n, true) : $t->dataType($g, $e, true);
                $problem = $isList ? Verify::dataList($r, $n) : Verify::dataType($r, $e);
            }
            if ($problem !== null) {
                self::send($sock, ['t' => 'ready', 'ok' => false, 'kind' => CallError::LENGTH, 'message' => $problem]);
                return;
            }
        } catch (CallError $err) {
            self::send($sock, ['t' => 'ready', 'ok' => false, 'kind' => $err->kind, 'message' => $err->getMessage()]);
            return;
        } catch (\Throwable $err) {
            self::send($sock, ['t' => 'ready', 'ok' => false, 'kind' => 'setup', 'message' => get_class($err) . ': ' . $err->getMessage()]);
            return;
        }
        self::send($sock, ['t' => 'ready', 'ok' => true, 'bytes' => $r->bytes, 'server' => $t->serverSoftware(),
            'versions' => $id === 0 ? Versions::of($cfg->proto, $cfg->accel) : null,
            'tls' => $id === 0 && $cfg->secure() ? $t->net()->negotiated() : null]);

        $cmd = self::command($sock);
        if (($cmd[0] ?? '') !== 'go') {
            $t->close();
            return;
        }
        $w = new self($cfg, $t, $sock, (int) $cmd[1], $r->bytes);
        if ($w->closedLoop() && $w->interval > 0) {
            $w->openLoop();
        }
        $t->close();
        if ($w->started) {
            $w->result();
        }
    }

    /**
     * One call, decoded whole and checked. Returns the error kind, null when the
     * call succeeded; $bytes gets the response size.
     */
    private function call(?int &$bytes): ?string
    {
        $cfg = $this->cfg;
        $net0 = $this->t->net()->counts();
        try {
            if ($cfg->call === 'datalist') {
                $r = $this->t->dataList($cfg->items);
                $ok = $r->count === $cfg->items;
            } else {
                $r = $this->t->dataType(Config::GROUP_NAME, Config::EN_NAME);
                $ok = $r->codeId === 101;
            }
            $bytes = $r->bytes >= 0 ? $r->bytes : $this->size;
            return $ok ? null : CallError::LENGTH;
        } catch (CallError $err) {
            $bytes = 0;
            return $err->kind;
        } finally {
            $net1 = $this->t->net()->counts();
            $this->callNet = [$net1[0] - $net0[0], $net1[1] - $net0[1], $net1[2] - $net0[2]];
        }
    }

    /** Counts one call of the measured window. */
    private function record(?string $kind, int $bytes, int $latency, int $end): void
    {
        $this->done++;
        $this->lastEnd = $end;
        foreach ($this->callNet as $k => $v) {
            $this->net[$k] += $v;
        }
        if ($kind === null) {
            $this->bytes += $bytes;
            $this->lat[] = $latency;
            return;
        }
        $this->errors[$kind] = ($this->errors[$kind] ?? 0) + 1;
        if (CallError::answered($kind)) {
            $this->lat[] = $latency; // the server answered (an error status): as ab, the call has a time
        }
    }

    /** Reports warm-up throughput per window to the parent, for -warmup auto. */
    private function tick(int $end): void
    {
        $k = intdiv(max(0, $end - $this->origin), Warmup::WINDOW_NS);
        if ($k > $this->window) {
            self::send($this->sock, ['t' => 'tick', 'w' => $this->window, 'calls' => $this->windowCalls, 'through' => $k - 1]);
            $this->window = $k;
            $this->windowCalls = 0;
        }
        $this->windowCalls++;
    }

    /** Takes the parent's start command: the window and this caller's share. */
    private function start(array $cmd): void
    {
        // start T0 T1 SHARE INTERVAL DUE
        $this->t0 = (int) $cmd[1];
        $this->t1 = (int) $cmd[2];
        $this->share = (int) $cmd[3];
        $this->interval = (int) ($cmd[4] ?? 0);
        $this->due = (int) ($cmd[5] ?? 0);
        $this->started = true;
        $this->cpuStart = self::cpu();
    }

    /**
     * Takes the parent's command if one is waiting. Returns false when it is not
     * start (quit, or the parent went away).
     */
    private function listen(): bool
    {
        $cmd = self::poll($this->sock);
        if ($cmd === null) {
            return true;
        }
        if (($cmd[0] ?? '') !== 'start') {
            return false;
        }
        $this->start($cmd);
        return true;
    }

    /**
     * Warm-up, then (closed loop) the measured window. Returns false when the
     * parent said quit or went away.
     *
     * The parent's commands are read after each call, before the call is counted:
     * a call that completed after T0 is measured even when the caller learns T0
     * only then (a long call), and its CPU counts from before it (read before
     * every warm-up call).
     */
    private function closedLoop(): bool
    {
        if (!$this->listen()) {
            return false;
        }
        for (;;) {
            if ($this->started) {
                if ($this->interval > 0) {
                    return true; // open loop: the schedule takes over
                }
                if ($this->done >= $this->share || ($this->t1 > 0 && hrtime(true) >= $this->t1)) {
                    break;
                }
            }
            $before = $this->started ? $this->cpuEnd : self::cpu();
            $begin = hrtime(true);
            $kind = $this->call($bytes);
            $end = hrtime(true);
            if (!$this->started) {
                if (!$this->listen()) {
                    return false;
                }
                if ($this->started && $this->interval === 0 && $end >= $this->t0) {
                    $this->cpuStart = $before; // this call is the window's first
                }
            }
            if (!$this->started || $this->interval > 0 || $end < $this->t0) {
                $this->warmCalls++;
                if (!$this->started) {
                    $this->tick($end);
                } else {
                    $this->cpuStart = self::cpu(); // the window's CPU starts after the last warm-up call
                }
                if ($kind === CallError::CONNECT) {
                    usleep(self::CONNECT_PAUSE_US);
                }
                continue;
            }
            if ($this->t1 > 0 && $end > $this->t1) {
                // Completed after the window: not counted, but its part before T1 is the
                // window's CPU (when the CPU before it is known: read after the call
                // that looked like the last).
                $now = self::cpu();
                $from = $before ?? ($this->done === 0 ? $this->cpuStart : null);
                if ($from === null) {
                    $this->cpuEnd = $now;
                } else {
                    $this->cpuEnd = self::between($from, $now, $begin, $end, $this->t1);
                    if ($this->done === 0 && $begin < $this->t0) {
                        $this->cpuStart = self::between($from, $now, $begin, $end, $this->t0); // it straddles both edges
                    }
                }
                break;
            }
            if ($this->done === 0 && $begin < $this->t0) {
                // The window's first call straddles T0: only its part after T0 is the window's.
                $this->cpuStart = self::between($this->cpuStart, self::cpu(), $begin, $end, $this->t0);
            }
            $this->record($kind, $bytes, $end - $begin, $end);
            // The CPU at the last measured call: read after every call that may be the last.
            $last = $this->done >= $this->share || ($this->t1 > 0 && $end + 2 * ($end - $begin) >= $this->t1);
            $this->cpuEnd = $last ? self::cpu() : null;
            if ($kind === CallError::CONNECT) {
                usleep(self::CONNECT_PAUSE_US); // nothing listens: do not spin
            }
        }
        $this->cpuEnd ??= self::cpu();
        return true;
    }

    /** The measured window, open loop (wrk2): calls due every $interval ns, latency from the due time. */
    private function openLoop(): void
    {
        while ($this->done < $this->share) {
            if ($this->t1 > 0 && $this->due >= $this->t1) {
                break;
            }
            $wait = $this->due - hrtime(true);
            if ($wait > 0) {
                time_nanosleep(intdiv($wait, 1_000_000_000), $wait % 1_000_000_000);
            }
            $begin = $this->due;
            $this->due += $this->interval;
            $kind = $this->call($bytes);
            $end = hrtime(true);
            $this->record($kind, $bytes, $end - $begin, $end);
        }
        $this->cpuEnd = self::cpu();
    }

    private function result(): void
    {
        [$u0, $s0] = $this->cpuStart;
        [$u1, $s1] = $this->cpuEnd ?? self::cpu();
        self::send($this->sock, [
            't' => 'result', 'end' => $this->lastEnd, 'calls' => $this->done, 'bytes' => $this->bytes,
            'errors' => (object) $this->errors, 'lat' => $this->lat, 'warmup' => $this->warmCalls,
            'cpu_user' => max(0.0, $u1 - $u0), 'cpu_system' => max(0.0, $s1 - $s0),
            'opened' => $this->net[0], 'handshakes' => $this->net[1], 'resumed' => $this->net[2],
        ]);
    }
}
