<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * Warmup is the -warmup auto rule of docs/method.md section 5: warm-up runs in
 * back-to-back 250 ms windows and ends when the last 3 windows' throughput (calls
 * completed by all callers together) lie within ±5 % of their mean.
 */
final class Warmup
{
    public const WINDOW_NS = 250_000_000;
    public const WINDOWS = 3;
    public const TOLERANCE = 0.05;

    /**
     * Whether the series of per-window call counts has settled.
     *
     * @param list<int|float> $calls calls completed in each finished window, oldest first
     */
    public static function settled(array $calls): bool
    {
        if (count($calls) < self::WINDOWS) {
            return false;
        }
        $last = array_slice($calls, -self::WINDOWS);
        $mean = array_sum($last) / self::WINDOWS;
        if ($mean <= 0) {
            return false; // nothing completes: not a steady state, whatever the spread
        }
        foreach ($last as $v) {
            if (abs($v - $mean) > self::TOLERANCE * $mean) {
                return false;
            }
        }
        return true;
    }

    /**
     * Sums callers' tick reports into the finished windows' series.
     *
     * A caller reports window k (its calls completed in it) once a call of it
     * completes in a later window; the windows it skipped had no completion of its.
     * Window k is finished when every caller has reported k or a later one.
     *
     * @param array<int, array<int, int>> $ticks caller => window => calls
     * @param array<int, int> $through caller => highest window it reported (-1: none)
     * @return list<int> calls per finished window, window 0 first
     */
    public static function series(array $ticks, array $through): array
    {
        if ($through === []) {
            return [];
        }
        $done = min($through);
        $out = array_fill(0, $done + 1, 0);
        foreach ($ticks as $byWindow) {
            foreach ($byWindow as $w => $n) {
                if ($w <= $done) {
                    $out[$w] += $n;
                }
            }
        }
        return $out;
    }
}
