<?php
declare(strict_types=1);

namespace Rpcbed\Client\Tests;

use PHPUnit\Framework\TestCase;
use Rpcbed\Client\Report;

final class ReportTest extends TestCase
{
    private const TESTDATA = __DIR__ . '/../../internal/report/testdata';

    /** A Report holding what internal/report's JSON holds. */
    private static function fromJson(array $j): Report
    {
        $r = new Report();
        $r->serverSoftware = $j['server_software'];
        $r->serverHostname = $j['server_hostname'];
        $r->serverPort = $j['server_port'];
        $r->documentPath = $j['document_path'];
        $r->documentLength = $j['document_length'];
        $r->concurrency = $j['concurrency'];
        $r->timeTaken = (float) $j['time_taken_s'];
        $r->complete = $j['complete'];
        $r->failed = $j['failed'];
        $r->failedBy = $j['failed_by'];
        $r->keepAlive = $j['keep_alive'];
        $r->keepAliveUsed = $j['keep_alive'] > 0;
        $r->non2xx = $j['non_2xx'];
        $r->totalTransferred = $j['total_transferred'];
        $r->htmlTransferred = $j['html_transferred'];
        $r->requestsPerSecond = (float) $j['requests_per_second'];
        $r->timePerRequestMs = (float) $j['time_per_request_ms'];
        $r->timePerRequestAllMs = (float) $j['time_per_request_all_ms'];
        $r->transferRateKBps = (float) $j['transfer_rate_kbps'];
        foreach (['Connect:' => 'connect', 'Processing:' => 'processing', 'Waiting:' => 'waiting', 'Total:' => 'total'] as $label => $k) {
            $c = $j[$k];
            $r->times[$label] = [$c['min'], $c['mean'], (float) $c['sd'], $c['median'], $c['max']];
        }
        $r->percentiles = [];
        foreach ($j['percentiles'] as $p) {
            $r->percentiles[$p['percent']] = $p['ms'];
        }
        $x = $j['rpcbed'];
        $r->client = $x['client'];
        $r->protocol = $x['protocol'];
        $r->call = $x['call'];
        $r->items = $x['items'];
        $r->connections = $x['connections'];
        $r->sharedConnections = $x['shared_connections'];
        $r->loop = $x['loop'];
        $r->targetRate = $x['target_rate'];
        $r->warmupSeconds = (float) $x['warmup_s'];
        $r->warmupCalls = $x['warmup_calls'];
        $r->p50Us = $x['p50_us'];
        $r->p90Us = $x['p90_us'];
        $r->p99Us = $x['p99_us'];
        $r->p999Us = $x['p999_us'];
        $r->meanUs = (float) $x['mean_us'];
        $r->maxUs = $x['max_us'];
        $r->cpuUser = (float) $x['cpu_user_s'];
        $r->cpuSystem = (float) $x['cpu_system_s'];
        $r->errors = $x['errors'] ?? [];
        $r->versions = $x['versions'] ?? [];
        $r->check = $x['check'] ?? '';
        $r->runtime = $x['runtime'] ?? '';
        $r->cpuScope = $x['cpu_scope'] ?? '';
        $r->windowStart = (float) ($x['window_start_s'] ?? 0);
        $r->windowEnd = (float) ($x['window_end_s'] ?? 0);
        $r->warmupSettled = $x['warmup_settled'] ?? '';
        $r->latencyHistogram = $x['latency_histogram'] ?? '';
        if (isset($x['tls'])) {
            $t = $x['tls'];
            $r->tls = ['version' => $t['version'], 'cipher' => $t['cipher_suite'], 'group' => $t['group'], 'alpn' => $t['alpn']];
            [$r->tlsHandshakes, $r->tlsResumed] = [$t['handshakes'], $t['resumed']];
        }
        $r->connectionsOpened = $x['connections_opened'] ?? null;
        return $r;
    }

    /** @return array<string, array{string}> */
    public static function goldens(): array
    {
        $cases = [];
        // The Go writer's reference report and the PHP client's own goldens.
        foreach ([...glob(self::TESTDATA . '/write-*.txt'), ...glob(self::TESTDATA . '/php-*.txt')] as $txt) {
            $json = substr($txt, 0, -4) . '.json';
            $j = is_file($json) ? json_decode((string) file_get_contents($json), true) : null;
            // Only the rpcbed clients' reports: real ab output has no rpcbed block.
            if (is_array($j) && isset($j['rpcbed'])) {
                $cases[basename($txt, '.txt')] = [basename($txt, '.txt')];
            }
        }
        return $cases;
    }

    /**
     * internal/report's Write golden and every PHP golden are what this Report prints
     * for the same values, byte for byte.
     *
     * @dataProvider goldens
     */
    public function testFormatMatchesGoldens(string $name): void
    {
        $j = json_decode((string) file_get_contents(self::TESTDATA . "/$name.json"), true);
        $want = (string) file_get_contents(self::TESTDATA . "/$name.txt");
        $got = self::fromJson($j)->format();
        $this->assertSame($want, $got, "format() for testdata/$name.json: got the text on the right; want testdata/$name.txt");
    }

    /** @dataProvider goldens */
    public function testToArrayMatchesGoldens(string $name): void
    {
        $j = json_decode((string) file_get_contents(self::TESTDATA . "/$name.json"), true);
        $got = self::fromJson($j)->toArray();
        $this->assertEquals($j, $got, "toArray() for testdata/$name.json");
    }

    public function testDerivedFigures(): void
    {
        $r = new Report();
        $r->concurrency = 50;
        $r->timeTaken = 2.0;
        $r->complete = 10000;
        $r->totalTransferred = 2048000;
        $got = $r->toArray();
        foreach (['requests_per_second' => 5000.0, 'time_per_request_ms' => 10.0,
            'time_per_request_all_ms' => 0.2, 'transfer_rate_kbps' => 1000.0] as $k => $want) {
            $this->assertEqualsWithDelta($want, $got[$k], 1e-9, "$k: got {$got[$k]}; want $want");
        }
        $this->assertStringContainsString("Requests per second:    5000.00 [#/sec] (mean)\n", $r->format());
    }

    public function testLatencies(): void
    {
        $cases = [
            'one call' => [[1_500_000], 2, 2, 2, 1500, 1500],
            'ten calls' => [array_map(fn ($i) => $i * 1_000_000, range(1, 10)), 6, 10, 10, 5000, 10000],
            'unsorted' => [[9_000_000, 1_000_000, 5_000_000], 5, 9, 9, 5000, 9000],
        ];
        foreach ($cases as $name => [$lat, $p50ms, $p99ms, $maxms, $p50us, $maxus]) {
            $r = new Report();
            $r->setLatencies($lat);
            $this->assertSame($p50ms, $r->percentiles[50], "$name: 50% got {$r->percentiles[50]}; want $p50ms");
            $this->assertSame($p99ms, $r->percentiles[99], "$name: 99%");
            $this->assertSame($maxms, $r->percentiles[100], "$name: 100%");
            $this->assertSame($p50us, $r->p50Us, "$name: p50 us");
            $this->assertSame($maxus, $r->maxUs, "$name: max us");
            $this->assertSame($maxms, $r->times['Total:'][4], "$name: Total max");
        }
    }

    public function testNoCallsStillPrintsEverySection(): void
    {
        $r = new Report();
        $r->serverHostname = '127.0.0.1';
        $r->setLatencies([]);
        $text = $r->format();
        foreach (['Requests per second:    0.00 [#/sec] (mean)', 'Total:          0    0   0.0      0       0',
            ' 100%      0 (longest request)', "Errors:                 none\n"] as $line) {
            $this->assertStringContainsString($line, $text);
        }
    }

    public function testFailureLines(): void
    {
        $r = new Report();
        $r->complete = 10;
        $r->failed = 4;
        $r->failedBy = ['connect' => 1, 'receive' => 1, 'length' => 1, 'exceptions' => 1];
        $r->non2xx = 1;
        $r->errors = ['unauthenticated' => 1, 'connect' => 1, 'timeout' => 1, 'length' => 1];
        $text = $r->format();
        $this->assertStringContainsString("Failed requests:        4\n   (Connect: 1, Receive: 1, Length: 1, Exceptions: 1)\nNon-2xx responses:      1\n", $text);
        $this->assertStringContainsString("Errors:                 connect=1 length=1 timeout=1 unauthenticated=1\n", $text);
    }
}
