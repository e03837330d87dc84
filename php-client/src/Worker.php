<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * Worker is one worker process of a Bench: it owns one transport and answers the
 * parent's commands (see Bench) with one JSON line each.
 */
final class Worker
{
    /** How long a closed-loop worker waits after a refused connection (as go-client). */
    public const CONNECT_PAUSE_US = 10_000;

    /** Sends one JSON line to the parent. */
    private static function send($sock, array $msg): void
    {
        $line = json_encode($msg, JSON_THROW_ON_ERROR | JSON_INVALID_UTF8_SUBSTITUTE) . "\n";
        for ($off = 0; $off < strlen($line);) {
            $n = fwrite($sock, substr($line, $off));
            if ($n === false || $n === 0) {
                throw new \RuntimeException('parent went away');
            }
            $off += $n;
        }
    }

    /** @return list<string> the parent's command, [] when it went away */
    private static function command($sock): array
    {
        $line = fgets($sock);
        return $line === false ? [] : explode(' ', trim($line));
    }

    public static function run(Config $cfg, int $id, $in, $sock, \Closure $factory): void
    {
        $isList = $cfg->call === 'datalist';
        $n = $cfg->items;
        $g = Config::GROUP_NAME;
        $e = Config::EN_NAME;

        // Connect and check before anything is timed. Worker 0 checks both calls.
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
                self::send($sock, ['ok' => false, 'kind' => CallError::LENGTH, 'message' => $problem]);
                return;
            }
        } catch (CallError $err) {
            self::send($sock, ['ok' => false, 'kind' => $err->kind, 'message' => $err->getMessage()]);
            return;
        } catch (\Throwable $err) {
            self::send($sock, ['ok' => false, 'kind' => 'setup', 'message' => get_class($err) . ': ' . $err->getMessage()]);
            return;
        }
        $size = $r->bytes;
        self::send($sock, ['ok' => true, 'bytes' => $size, 'server' => $t->serverSoftware(),
            'versions' => Versions::of($cfg->proto, $cfg->accel)]);

        $cmd = self::command($in);
        if (($cmd[0] ?? '') !== 'warmup') {
            return;
        }
        $warmDeadline = (int) $cmd[1];
        $done = 0;
        while ($warmDeadline > 0 && hrtime(true) < $warmDeadline) {
            try {
                $isList ? $t->dataList($n) : $t->dataType($g, $e);
            } catch (CallError $err) {
                if ($err->kind === CallError::CONNECT) {
                    usleep(self::CONNECT_PAUSE_US);
                }
            }
            $done++;
        }
        self::send($sock, ['calls' => $done]);

        $cmd = self::command($in);
        if (($cmd[0] ?? '') !== 'run') {
            return;
        }
        $calls = (int) $cmd[1];
        $deadline = (int) $cmd[2];
        // Open loop (wrk2): this worker's calls are due every $interval ns from $due on,
        // whatever happened to the previous ones, and latency counts from the due time.
        $interval = (int) ($cmd[3] ?? 0);
        $due = (int) ($cmd[4] ?? 0);
        $lat = [];
        $errors = [];
        $bytes = 0;
        $done = 0;
        $start = $interval > 0 ? $due : hrtime(true);
        for (; $done < $calls; $done++) {
            if ($interval > 0) {
                if ($deadline > 0 && $due >= $deadline) {
                    break;
                }
                $wait = $due - hrtime(true);
                if ($wait > 0) {
                    time_nanosleep(intdiv($wait, 1_000_000_000), $wait % 1_000_000_000);
                }
                $t0 = $due;
                $due += $interval;
            } else {
                $t0 = hrtime(true);
                if ($deadline > 0 && $t0 >= $deadline) {
                    break;
                }
            }
            try {
                $r = $isList ? $t->dataList($n) : $t->dataType($g, $e);
                $lat[] = hrtime(true) - $t0;
                if ($isList ? ($r->count !== $n) : ($r->codeId !== 101)) {
                    $errors[CallError::LENGTH] = ($errors[CallError::LENGTH] ?? 0) + 1;
                    continue;
                }
                $bytes += $r->bytes >= 0 ? $r->bytes : $size;
            } catch (CallError $err) {
                $errors[$err->kind] = ($errors[$err->kind] ?? 0) + 1;
                if (CallError::answered($err->kind)) {
                    // The server answered (an error status): as ab, the call has a time.
                    $lat[] = hrtime(true) - $t0;
                } elseif ($err->kind === CallError::CONNECT && $interval === 0) {
                    usleep(self::CONNECT_PAUSE_US); // nothing listens: do not spin
                }
            }
        }
        $end = hrtime(true);
        $t->close();
        self::send($sock, [
            'start' => $start, 'end' => $end, 'calls' => $done, 'bytes' => $bytes,
            'errors' => (object) $errors, 'lat' => $lat,
        ]);
    }
}
