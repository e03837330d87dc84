<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * Report mirrors internal/report.Report and prints it in the layout of
 * docs/report-format.md: Apache Bench 2.3's lines, then the rpcbed block.
 */
final class Report
{
    public string $serverSoftware = '';
    public string $serverHostname = '';
    public int $serverPort = 0;
    public string $documentPath = '';
    public int $documentLength = 0;

    public int $concurrency = 0;
    public float $timeTaken = 0.0;
    public int $complete = 0;
    public int $failed = 0;
    /** @var array{connect: int, receive: int, length: int, exceptions: int} */
    public array $failedBy = ['connect' => 0, 'receive' => 0, 'length' => 0, 'exceptions' => 0];
    /** Keep-Alive requests; printed when $keepAliveUsed. */
    public int $keepAlive = 0;
    public bool $keepAliveUsed = false;
    public int $non2xx = 0;
    public int $totalTransferred = 0;
    public int $htmlTransferred = 0;

    /** Requests per second, both time-per-request means, transfer rate: null = computed
     *  from complete, time taken and bytes (set them to re-print a parsed report). */
    public ?float $requestsPerSecond = null;
    public ?float $timePerRequestMs = null;
    public ?float $timePerRequestAllMs = null;
    public ?float $transferRateKBps = null;

    /** @var array<string, array{int, int, float, int, int}> row => [min, mean, sd, median, max] in ms */
    public array $times = [
        'Connect:' => [0, 0, 0.0, 0, 0],
        'Processing:' => [0, 0, 0.0, 0, 0],
        'Waiting:' => [0, 0, 0.0, 0, 0],
        'Total:' => [0, 0, 0.0, 0, 0],
    ];
    /** @var array<int, int> percent => ms, for 50 66 75 80 90 95 98 99 100 */
    public array $percentiles = [50 => 0, 66 => 0, 75 => 0, 80 => 0, 90 => 0, 95 => 0, 98 => 0, 99 => 0, 100 => 0];

    // The rpcbed block.
    public string $client = 'php';
    public string $protocol = '';
    public string $call = '';
    public int $items = 0;
    public int $connections = 0;
    public bool $sharedConnections = false;
    public string $loop = 'closed';
    public int $targetRate = 0;
    public float $warmupSeconds = 0.0;
    public int $warmupCalls = 0;
    public int $p50Us = 0;
    public int $p90Us = 0;
    public int $p99Us = 0;
    public int $p999Us = 0;
    public float $meanUs = 0.0;
    public int $maxUs = 0;
    public float $cpuUser = 0.0;
    public float $cpuSystem = 0.0;
    /** @var array<string, int> */
    public array $errors = [];
    /** @var array<string, string> */
    public array $versions = [];

    // Report v1.1 (docs/method.md): printed when any of them is set, as internal/report.Write does.
    /** full (every response decoded whole, checked, its token carried) */
    public string $check = '';
    /** c or pure (the protobuf/Thrift runtime) */
    public string $runtime = '';
    /** window: Client CPU covers exactly the measured window */
    public string $cpuScope = '';
    /** The measured window, Unix seconds. */
    public float $windowStart = 0.0;
    public float $windowEnd = 0.0;
    /** fixed, yes or no (-warmup auto) */
    public string $warmupSettled = '';
    /** The latency record (LatencyRecord), "" for none: printed last, as "Latency histogram:". */
    public string $latencyHistogram = '';
    /**
     * What TLS negotiated (Net::negotiated(): version, cipher, group, alpn; "-" where the
     * library cannot tell), null without TLS; with it "TLS:" and "TLS handshakes:".
     *
     * @var ?array{version: string, cipher: string, group: string, alpn: string}
     */
    public ?array $tls = null;
    public int $tlsHandshakes = 0;
    public int $tlsResumed = 0;
    /** -connect per-call: the connections the window's calls opened ("Connections opened:"); null otherwise. */
    public ?int $connectionsOpened = null;

    /** Whether the v1.1 keys are set. */
    public function v11(): bool
    {
        return $this->check !== '' || $this->runtime !== '' || $this->cpuScope !== ''
            || $this->windowStart != 0 || $this->windowEnd != 0 || $this->warmupSettled !== '';
    }

    /**
     * Fills the timing figures from the measured calls' latencies.
     *
     * @param list<int> $latenciesNs latencies of the completed calls, nanoseconds
     */
    public function setLatencies(array $latenciesNs): void
    {
        sort($latenciesNs, SORT_NUMERIC);
        $n = count($latenciesNs);
        $us = self::micros($latenciesNs);
        $this->latencyHistogram = LatencyRecord::of($us)->encode();
        if ($n === 0) {
            return;
        }
        $mean = array_sum($us) / $n;
        // As ab: the deviation around the truncated mean over n-1, and its median
        // (odd count: the middle value and the one above it averaged; even: the upper middle).
        $m = (int) $mean;
        $sq = 0.0;
        foreach ($us as $v) {
            $sq += ($v - $m) ** 2;
        }
        $sd = $n > 1 ? sqrt($sq / ($n - 1)) : 0.0;
        $h = intdiv($n, 2);
        $median = $n > 1 && $n % 2 === 1 ? intdiv($us[$h] + $us[$h + 1], 2) : $us[$h];
        $row = [self::ms($us[0]), self::ms($m), round($sd / 1000.0, 1), self::ms($median), self::ms($us[$n - 1])];
        $this->times['Processing:'] = $row;
        $this->times['Waiting:'] = $row;
        $this->times['Total:'] = $row;
        foreach (array_keys($this->percentiles) as $p) {
            // ab: stats[done * p / 100], the longest request for 100 %.
            $this->percentiles[$p] = self::ms($p >= 100 ? $us[$n - 1] : $us[intdiv($n * $p, 100)]);
        }
        $this->p50Us = self::rank($us, 0.50);
        $this->p90Us = self::rank($us, 0.90);
        $this->p99Us = self::rank($us, 0.99);
        $this->p999Us = self::rank($us, 0.999);
        $this->meanUs = round($mean, 1);
        $this->maxUs = $us[$n - 1];
    }

    /**
     * Latencies in the microseconds every figure and the record use: to the nearest
     * microsecond, within the record's range.
     *
     * @param list<int> $latenciesNs
     * @return list<int>
     */
    public static function micros(array $latenciesNs): array
    {
        return array_map(static fn (int $ns): int => min(LatencyRecord::HIGHEST_US, max(0, intdiv($ns + 500, 1000))), $latenciesNs);
    }

    /** ab's ap_round_ms: microseconds to the nearest whole millisecond. */
    private static function ms(int $us): int
    {
        return intdiv($us + 500, 1000);
    }

    /** Nearest-rank percentile of sorted values. */
    private static function rank(array $sorted, float $q): int
    {
        $i = (int) ceil($q * count($sorted)) - 1;
        return $sorted[max(0, min($i, count($sorted) - 1))];
    }

    /** The derived ab figures: requests/s, both time-per-request means, transfer rate. */
    private function derived(): array
    {
        $t = $this->timeTaken;
        $ok = $this->complete > 0 && $t > 0;
        return [
            $this->requestsPerSecond ?? ($ok ? $this->complete / $t : 0.0),
            $this->timePerRequestMs ?? ($ok ? $this->concurrency * $t * 1000 / $this->complete : 0.0),
            $this->timePerRequestAllMs ?? ($ok ? $t * 1000 / $this->complete : 0.0),
            $this->transferRateKBps ?? ($t > 0 ? $this->totalTransferred / 1024 / $t : 0.0),
        ];
    }

    /**
     * The report as internal/report.Report's JSON (the same names `rpcbed parse`
     * prints), for -json FILE.
     *
     * @return array<string, mixed>
     */
    public function toArray(): array
    {
        [$rps, $tpr, $tprAll, $rate] = $this->derived();
        $row = static fn (array $r): array => [
            'min' => $r[0], 'mean' => $r[1], 'sd' => round($r[2], 1), 'median' => $r[3], 'max' => $r[4],
        ];
        $percentiles = [];
        foreach ($this->percentiles as $p => $ms) {
            $percentiles[] = ['percent' => $p, 'ms' => $ms];
        }
        $extra = [
            'client' => $this->client, 'protocol' => $this->protocol, 'call' => $this->call,
            'items' => $this->items, 'connections' => $this->connections,
            'shared_connections' => $this->sharedConnections, 'loop' => $this->loop,
            'target_rate' => $this->targetRate, 'warmup_s' => round($this->warmupSeconds, 3),
            'warmup_calls' => $this->warmupCalls,
            'p50_us' => $this->p50Us, 'p90_us' => $this->p90Us, 'p99_us' => $this->p99Us,
            'p999_us' => $this->p999Us, 'mean_us' => round($this->meanUs, 1), 'max_us' => $this->maxUs,
            'cpu_user_s' => round($this->cpuUser, 3), 'cpu_system_s' => round($this->cpuSystem, 3),
        ];
        if ($errors = array_filter($this->errors)) {
            ksort($errors, SORT_STRING);
            $extra['errors'] = $errors;
        }
        if ($this->versions) {
            $extra['versions'] = $this->versions;
        }
        // internal/report's omitempty: only what is set.
        foreach (['check' => $this->check, 'runtime' => $this->runtime, 'cpu_scope' => $this->cpuScope,
            'window_start_s' => round($this->windowStart, 6), 'window_end_s' => round($this->windowEnd, 6),
            'warmup_settled' => $this->warmupSettled] as $k => $v) {
            if ($v !== '' && $v != 0) {
                $extra[$k] = $v;
            }
        }
        if ($this->latencyHistogram !== '') {
            $extra['latency_histogram'] = $this->latencyHistogram;
        }
        if ($this->tls !== null) {
            $extra['tls'] = ['version' => $this->tls['version'], 'cipher_suite' => $this->tls['cipher'],
                'group' => $this->tls['group'], 'alpn' => $this->tls['alpn'],
                'handshakes' => $this->tlsHandshakes, 'resumed' => $this->tlsResumed];
        }
        if ($this->connectionsOpened !== null) {
            $extra['connections_opened'] = $this->connectionsOpened;
        }
        return [
            'server_software' => $this->serverSoftware, 'server_hostname' => $this->serverHostname,
            'server_port' => $this->serverPort, 'document_path' => $this->documentPath,
            'document_length' => $this->documentLength, 'variable_length' => false,
            'concurrency' => $this->concurrency, 'time_taken_s' => round($this->timeTaken, 3),
            'complete' => $this->complete, 'failed' => $this->failed, 'failed_by' => $this->failedBy,
            'write_errors' => 0,
            'keep_alive' => $this->keepAliveUsed ? $this->keepAlive : 0, 'non_2xx' => $this->non2xx,
            'total_transferred' => $this->totalTransferred, 'html_transferred' => $this->htmlTransferred,
            'requests_per_second' => round($rps, 2), 'time_per_request_ms' => round($tpr, 3),
            'time_per_request_all_ms' => round($tprAll, 3), 'transfer_rate_kbps' => round($rate, 2),
            'connect' => $row($this->times['Connect:']), 'processing' => $row($this->times['Processing:']),
            'waiting' => $row($this->times['Waiting:']), 'total' => $row($this->times['Total:']),
            'percentiles' => $percentiles,
            'rpcbed' => $extra,
        ];
    }

    public function format(): string
    {
        $l = static fn (string $label, string $value): string => sprintf("%-24s%s\n", $label, $value);
        $o = "This is ApacheBench, Version 2.3 <\$Revision: 1903618 \$>\n"
            . "Copyright 1996 Adam Twiss, Zeus Technology Ltd, http://www.zeustech.net/\n"
            . "Licensed to The Apache Software Foundation, http://www.apache.org/\n"
            . "\n"
            . "Benchmarking $this->serverHostname (be patient).....done\n"
            . "\n\n";
        $o .= $l('Server Software:', $this->serverSoftware);
        $o .= $l('Server Hostname:', $this->serverHostname);
        $o .= $l('Server Port:', (string) $this->serverPort);
        $o .= "\n";
        $o .= $l('Document Path:', $this->documentPath);
        $o .= $l('Document Length:', "$this->documentLength bytes");
        $o .= "\n";
        $o .= $l('Concurrency Level:', (string) $this->concurrency);
        $o .= $l('Time taken for tests:', sprintf('%.3f seconds', $this->timeTaken));
        $o .= $l('Complete requests:', (string) $this->complete);
        $o .= $l('Failed requests:', (string) $this->failed);
        if ($this->failed > 0) {
            $f = $this->failedBy;
            $o .= sprintf("   (Connect: %d, Receive: %d, Length: %d, Exceptions: %d)\n",
                $f['connect'], $f['receive'], $f['length'], $f['exceptions']);
        }
        // ab prints Non-2xx before Keep-Alive, and Keep-Alive only when some were.
        if ($this->non2xx > 0) {
            $o .= $l('Non-2xx responses:', (string) $this->non2xx);
        }
        if ($this->keepAliveUsed && $this->keepAlive > 0) {
            $o .= $l('Keep-Alive requests:', (string) $this->keepAlive);
        }
        $o .= $l('Total transferred:', "$this->totalTransferred bytes");
        $o .= $l('HTML transferred:', "$this->htmlTransferred bytes");
        [$rps, $tpr, $tprAll, $rate] = $this->derived();
        $o .= $l('Requests per second:', sprintf('%.2f [#/sec] (mean)', $rps));
        $o .= $l('Time per request:', sprintf('%.3f [ms] (mean)', $tpr));
        $o .= $l('Time per request:', sprintf('%.3f [ms] (mean, across all concurrent requests)', $tprAll));
        $o .= $l('Transfer rate:', sprintf('%.2f [Kbytes/sec] received', $rate));
        $o .= "\nConnection Times (ms)\n";
        $o .= "              min  mean[+/-sd] median   max\n";
        foreach ($this->times as $label => [$min, $mean, $sd, $median, $max]) {
            $o .= sprintf("%-12s%5d %4d %5.1f %6d %7d\n", $label, $min, $mean, $sd, $median, $max);
        }
        $o .= "\nPercentage of the requests served within a certain time (ms)\n";
        foreach ($this->percentiles as $p => $ms) {
            $o .= $p >= 100 ? sprintf(" 100%%  %5d (longest request)\n", $ms) : sprintf(" %3d%%  %5d\n", $p, $ms);
        }

        $o .= "\nrpcbed report v1\n";
        $o .= $l('Client:', $this->client);
        $o .= $l('Protocol:', $this->protocol);
        $o .= $l('Call:', $this->call);
        $o .= $l('Items:', (string) $this->items);
        $o .= $l('Connections:', sprintf('%d (%s)', $this->connections, $this->sharedConnections ? 'shared' : 'per worker'));
        $o .= $l('Loop:', $this->loop);
        $o .= $l('Target rate:', sprintf('%d [#/sec]', $this->targetRate));
        $o .= $l('Warm-up:', sprintf('%.3f seconds, %d calls excluded', $this->warmupSeconds, $this->warmupCalls));
        $o .= $l('Latency p50:', "$this->p50Us [us]");
        $o .= $l('Latency p90:', "$this->p90Us [us]");
        $o .= $l('Latency p99:', "$this->p99Us [us]");
        $o .= $l('Latency p99.9:', "$this->p999Us [us]");
        $o .= $l('Latency mean:', sprintf('%.1f [us]', $this->meanUs));
        $o .= $l('Latency max:', "$this->maxUs [us]");
        $o .= $l('Client CPU user:', sprintf('%.3f [s]', $this->cpuUser));
        $o .= $l('Client CPU system:', sprintf('%.3f [s]', $this->cpuSystem));
        $errors = array_filter($this->errors);
        ksort($errors, SORT_STRING);
        $pairs = [];
        foreach ($errors as $k => $v) {
            $pairs[] = "$k=$v";
        }
        $o .= $l('Errors:', $pairs ? implode(' ', $pairs) : 'none');
        $versions = $this->versions;
        ksort($versions, SORT_STRING);
        $pairs = [];
        foreach ($versions as $k => $v) {
            $pairs[] = "$k=$v";
        }
        $o .= $l('Versions:', $pairs ? implode(' ', $pairs) : 'none');
        if ($this->v11()) {
            $o .= $l('Check:', $this->check);
            $o .= $l('Runtime:', $this->runtime);
            $o .= $l('CPU scope:', $this->cpuScope);
            $o .= $l('Window start:', sprintf('%.6f [s]', $this->windowStart));
            $o .= $l('Window end:', sprintf('%.6f [s]', $this->windowEnd));
            $o .= $l('Warm-up settled:', $this->warmupSettled);
        }
        if ($this->latencyHistogram !== '') {
            $o .= $l('Latency histogram:', "$this->latencyHistogram [us]");
        }
        if ($this->tls !== null) {
            $t = $this->tls;
            $o .= $l('TLS:', "{$t['version']} {$t['cipher']} {$t['group']} ALPN={$t['alpn']}");
            $o .= $l('TLS handshakes:', "$this->tlsHandshakes (resumed $this->tlsResumed)");
        }
        if ($this->connectionsOpened !== null) {
            $o .= $l('Connections opened:', (string) $this->connectionsOpened);
        }
        return $o;
    }
}
