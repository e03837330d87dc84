<?php
declare(strict_types=1);

namespace Rpcbed\Client\Tests;

use PHPUnit\Framework\TestCase;
use Rpcbed\Client\Warmup;

/** The -warmup auto rule on synthetic series (docs/method.md section 5). */
final class WarmupTest extends TestCase
{
    /** @return array<string, array{list<int>, bool}> */
    public static function series(): array
    {
        return [
            'empty' => [[], false],
            'two windows only' => [[100, 100], false],
            'three equal' => [[100, 100, 100], true],
            'ramp then flat' => [[10, 40, 80, 100, 101, 99], true],
            'still ramping' => [[10, 40, 80, 100, 110, 120], false],
            'within 5 % of the mean' => [[95, 100, 105], true],
            'just outside 5 %' => [[94, 100, 106], false],
            'one outlier in the last three' => [[100, 100, 100, 100, 60], false],
            'settled earlier, not now' => [[100, 100, 100, 50], false],
            'nothing completes' => [[0, 0, 0], false],
            'slow calls: one a window' => [[1, 1, 1], true],
            'slow calls: a window without' => [[1, 0, 1], false],
        ];
    }

    /**
     * @dataProvider series
     * @param list<int> $calls
     */
    public function testSettled(array $calls, bool $want): void
    {
        $got = Warmup::settled($calls);
        $this->assertSame($want, $got, 'settled(' . implode(',', $calls) . '): got ' . var_export($got, true) . '; want ' . var_export($want, true));
    }

    public function testSeries(): void
    {
        $cases = [
            'no worker has reported' => [[], [0 => -1, 1 => -1], []],
            'the slowest worker bounds the series' => [
                [0 => [0 => 5, 1 => 6, 2 => 7], 1 => [0 => 4]], [0 => 2, 1 => 0], [9],
            ],
            'skipped windows count as none' => [
                // worker 1 completed nothing in windows 1 and 2 (one long call)
                [0 => [0 => 5, 1 => 6, 2 => 7], 1 => [0 => 4, 3 => 1]], [0 => 2, 1 => 2], [9, 6, 7],
            ],
            'a dead worker does not hold the series' => [
                [0 => [0 => 5, 1 => 6]], [0 => 1, 1 => PHP_INT_MAX], [5, 6],
            ],
        ];
        foreach ($cases as $name => [$ticks, $through, $want]) {
            $got = Warmup::series($ticks, $through);
            $this->assertSame($want, $got, "$name: got [" . implode(',', $got) . '] ; want [' . implode(',', $want) . ']');
        }
    }
}
