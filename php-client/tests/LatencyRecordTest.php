<?php
declare(strict_types=1);

namespace Rpcbed\Client\Tests;

use PHPUnit\Framework\TestCase;
use Rpcbed\Client\LatencyRecord;
use Rpcbed\Client\Report;

/**
 * The PHP writer of the latency record (HdrHistogram V2). Go's decoder is the
 * judge: internal/stats' TestRecordsOfOtherWriters and java-client's
 * LatencyRecordTest decode the record pinned here, and the merge test in
 * internal/conformance merges records of running php-clients.
 */
final class LatencyRecordTest extends TestCase
{
    /** What this writer prints for 7 x4, 2047, 2048, 2049, 1000447 us; Go and Java read it back. */
    public const PINNED = 'HISTFAAAACp42pNpmSzMwMDAxQABzFCaEURcm7yEwf4DRICX4608E8v+PkYmAI2jBwg=';

    public function testPinnedRecord(): void
    {
        $this->assertSame(self::PINNED, LatencyRecord::of([7, 7, 7, 7, 2047, 2048, 2049, 1000447])->encode());
    }

    /** @return array<string, array{int, int}> */
    public static function indexes(): array
    {
        // HdrHistogram's layout at 3 digits: 1 us buckets up to 2047, then 2 us, 4 us, ...
        return [
            'zero' => [0, 0], 'one' => [1, 1], 'last exact' => [2047, 2047],
            'first 2us' => [2048, 2048], 'same 2us' => [2049, 2048], 'next 2us' => [2050, 2049],
            'first 4us' => [4096, 3072], 'same 4us' => [4099, 3072],
            'an hour' => [3_600_000_000, 22 * 1024 + (3_600_000_000 >> 21) - 1024],
        ];
    }

    /** @dataProvider indexes */
    public function testIndex(int $us, int $want): void
    {
        $this->assertSame($want, (new LatencyRecord())->index($us));
    }

    /** @return array<string, array{int, string}> */
    public static function zigZags(): array
    {
        return [
            '0' => [0, "\x00"], '1' => [1, "\x02"], '-1' => [-1, "\x01"], '63' => [63, "\x7e"],
            '64' => [64, "\x80\x01"], '-64' => [-64, "\x7f"], '-23000' => [-23000, "\xaf\xe7\x02"],
            '2^40' => [1 << 40, "\x80\x80\x80\x80\x80\x40"],
        ];
    }

    /** @dataProvider zigZags */
    public function testZigZag(int $n, string $want): void
    {
        $this->assertSame(bin2hex($want), bin2hex(LatencyRecord::zigZag($n)));
    }

    /** The header HdrHistogram's decoders check: cookies, lengths, geometry. */
    public function testHeader(): void
    {
        $raw = base64_decode(LatencyRecord::of([100, 5000, 5000])->encode(), true);
        $outer = unpack('Ncookie/Nlen', $raw);
        $this->assertSame(0x1c849314, $outer['cookie']);
        $this->assertSame(strlen($raw) - 8, $outer['len']);
        $inner = gzuncompress(substr($raw, 8));
        $h = unpack('Ncookie/Npayload/Noffset/Ndigits/Jlowest/Jhighest/Eratio', $inner);
        $this->assertSame(0x1c849313, $h['cookie']);
        $this->assertSame(strlen($inner) - 40, $h['payload']);
        $this->assertSame([0, 3, 1, 3_600_000_000, 1.0], [$h['offset'], $h['digits'], $h['lowest'], $h['highest'], $h['ratio']]);
    }

    /** A report carries the record of the latencies its figures come from, printed last. */
    public function testReportLine(): void
    {
        $r = new Report();
        $r->setLatencies([1_500_000, 900_000, 2_100_000]);
        $this->assertSame(LatencyRecord::of([900, 1500, 2100])->encode(), $r->latencyHistogram);
        $lines = explode("\n", rtrim($r->format(), "\n"));
        $this->assertSame(sprintf('%-24s%s [us]', 'Latency histogram:', $r->latencyHistogram), end($lines));
        $this->assertSame($r->latencyHistogram, $r->toArray()['rpcbed']['latency_histogram']);

        $empty = new Report();
        $empty->setLatencies([]);
        $this->assertSame(LatencyRecord::of([])->encode(), $empty->latencyHistogram);
    }
}
