<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * The report's latency record ("Latency histogram:", docs/report-format.md):
 * latencies in microseconds as an HdrHistogram in its V2 compressed encoding,
 * base64, with the one geometry every client uses (internal/stats: 1 us to one
 * hour, 3 significant digits), so it merges exactly with go's and java's.
 *
 * No HdrHistogram library can be installed for PHP here (no Packagist, no PECL),
 * so this is a native writer of the same format, following HdrHistogram's own
 * (AbstractHistogram.encodeIntoCompressedByteBuffer, hdrhistogram-go's
 * dumpV2CompressedEncoding): the same bucket layout for the same geometry, counts
 * as zig-zag LEB128 with a run of zeros written as its negative length, the V2
 * header, zlib (gzcompress). Go's decoder reads it: internal/stats' tests and the
 * merge test (internal/conformance) check that, and java-client's LatencyRecordTest
 * reads a record written here.
 */
final class LatencyRecord
{
    public const LOWEST_US = 1;
    /** One hour: open-loop latencies count from the intended start and may exceed the timeout. */
    public const HIGHEST_US = 3_600_000_000;
    public const DIGITS = 3;
    /** Names a file that gets every recorded latency (us, one a line): the merge tests only. */
    public const DUMP_ENV = 'RPCBED_LATENCY_DUMP';

    /** V2 cookies with the word-size nibble (0x10) HdrHistogram sets. */
    private const ENCODING_COOKIE = 0x1c849303 | 0x10;
    private const COMPRESSED_COOKIE = 0x1c849304 | 0x10;

    /** @var array<int, int> counts index => count, only the non-zero ones */
    private array $counts = [];
    private int $total = 0;
    private int $max = 0;

    private int $unitMagnitude;
    private int $subBucketHalfCountMagnitude;
    private int $subBucketHalfCount;
    private int $subBucketMask;

    public function __construct()
    {
        // As HdrHistogram's constructor derives its layout from (lowest, highest, digits).
        $largestSingleUnit = 2 * 10 ** self::DIGITS;
        $subBucketCountMagnitude = (int) ceil(log($largestSingleUnit) / log(2));
        $this->subBucketHalfCountMagnitude = max($subBucketCountMagnitude, 1) - 1;
        $this->unitMagnitude = (int) floor(log(self::LOWEST_US) / log(2));
        $subBucketCount = 1 << ($this->subBucketHalfCountMagnitude + 1);
        $this->subBucketHalfCount = $subBucketCount >> 1;
        $this->subBucketMask = ($subBucketCount - 1) << $this->unitMagnitude;
    }

    /**
     * The counts index a value falls in: its bucket (the power of two above the
     * sub-bucket range it needs) and its sub-bucket within it.
     */
    public function index(int $v): int
    {
        $bits = strlen(decbin($v | $this->subBucketMask)); // 64 - numberOfLeadingZeros
        $bucket = $bits - $this->unitMagnitude - ($this->subBucketHalfCountMagnitude + 1);
        $sub = $v >> ($bucket + $this->unitMagnitude);
        return (($bucket + 1) << $this->subBucketHalfCountMagnitude) + $sub - $this->subBucketHalfCount;
    }

    /** Records one latency (us), clamped to the range as go and java clamp theirs. */
    public function record(int $us): void
    {
        $this->recordValues($us, 1);
    }

    /** Records $n latencies of $us each. */
    public function recordValues(int $us, int $n): void
    {
        $us = max(0, min(self::HIGHEST_US, $us));
        $i = $this->index($us);
        $this->counts[$i] = ($this->counts[$i] ?? 0) + $n;
        $this->total += $n;
        $this->max = max($this->max, $us);
    }

    /** @param list<int> $us */
    public static function of(array $us): self
    {
        $r = new self();
        // Latencies repeat (whole microseconds): index each distinct value once.
        foreach (array_count_values($us) as $v => $n) {
            $r->recordValues((int) $v, $n);
        }
        return $r;
    }

    public function totalCount(): int
    {
        return $this->total;
    }

    /** The record: V2 compressed encoding, base64. */
    public function encode(): string
    {
        $payload = '';
        $limit = $this->index($this->max) + 1;
        for ($i = 0; $i < $limit;) {
            $count = $this->counts[$i] ?? 0;
            $i++;
            if ($count === 0) {
                $zeros = 1;
                while ($i < $limit && !isset($this->counts[$i])) {
                    $zeros++;
                    $i++;
                }
                $payload .= self::zigZag($zeros > 1 ? -$zeros : 0);
                continue;
            }
            $payload .= self::zigZag($count);
        }
        $inner = pack('NNNN', self::ENCODING_COOKIE, strlen($payload), 0, self::DIGITS)
            . pack('JJE', self::LOWEST_US, self::HIGHEST_US, 1.0)
            . $payload;
        $deflated = gzcompress($inner, 9);
        if ($deflated === false) {
            throw new \RuntimeException('latency record: gzcompress failed');
        }
        return base64_encode(pack('NN', self::COMPRESSED_COOKIE, strlen($deflated)) . $deflated);
    }

    /** A signed 64-bit value as HdrHistogram's ZigZag LEB128-64b9B. */
    public static function zigZag(int $n): string
    {
        // (n << 1) ^ (n >> 63), unsigned; counts and zero runs are far from 2^62.
        $z = $n >= 0 ? $n << 1 : ((-$n) << 1) - 1;
        $out = '';
        for ($k = 0; $k < 8 && $z >= 0x80; $k++) {
            $out .= chr(($z & 0x7f) | 0x80);
            $z >>= 7;
        }
        return $out . chr($z & 0xff);
    }

    /**
     * Writes raw latencies (us) one a line, as RPCBED_LATENCY_DUMP asks.
     *
     * @param list<int> $us
     */
    public static function dump(string $file, array $us): bool
    {
        return @file_put_contents($file, $us ? implode("\n", $us) . "\n" : '') !== false;
    }
}
