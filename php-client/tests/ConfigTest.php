<?php
declare(strict_types=1);

namespace Rpcbed\Client\Tests;

use PHPUnit\Framework\TestCase;
use Rpcbed\Client\Config;
use Rpcbed\Client\Extensions;

final class ConfigTest extends TestCase
{
    /** @return array<string, array{list<string>, string}> */
    public static function badArgs(): array
    {
        $ok = ['-proto', 'grpc', '-call', 'datalist', '-items', '20', '-n', '10', '-addr', '127.0.0.1:1'];
        return [
            'no proto' => [['-call', 'datalist', '-n', '1'], '-proto ""'],
            'unknown proto' => [['-proto', 'dubbo', '-call', 'datalist', '-n', '1'], '-proto "dubbo"'],
            'unknown call' => [['-proto', 'grpc', '-call', 'ping', '-n', '1'], '-call "ping"'],
            'items on datatype' => [['-proto', 'grpc', '-call', 'datatype', '-items', '5', '-n', '1'], 'datatype takes no items'],
            'too many items' => [[...$ok, '-items', '100001'], '-items 100001'],
            'negative items' => [[...$ok, '-items', '-1'], '-items -1'],
            'no -n or -t' => [['-proto', 'grpc', '-call', 'datatype'], 'give -n'],
            'c above n' => [[...$ok, '-c', '11'], '-c 11 is greater than -n 10'],
            'zero c' => [[...$ok, '-c', '0'], '-c 0'],
            'n not a number' => [[...$ok, '-n', 'ten'], '-n "ten"'],
            'bad duration' => [[...$ok, '-t', '5 minutes'], '-t "5 minutes"'],
            'duration beyond a day' => [[...$ok, '-warmup', '25h'], '-warmup "25h"'],
            'zero timeout' => [[...$ok, '-timeout', '0'], '-timeout must be above 0'],
            'unknown flag' => [[...$ok, '-q'], 'flag provided but not defined: -q'],
            'missing value' => [[...$ok, '-addr'], 'flag needs an argument: -addr'],
            'bad addr' => [[...$ok, '-addr', 'localhost'], '-addr "localhost"'],
            'stray argument' => [[...$ok, 'extra'], 'unexpected argument "extra"'],
            'conns other than c' => [[...$ok, '-conns', '1', '-c', '2'], '-conns 1: php-client runs one process per caller'],
            'conns alone, other than the default c' => [[...$ok, '-conns', '3'], 'so -conns must equal -c (1)'],
            'no -addr' => [['-proto', 'grpc', '-call', 'datatype', '-n', '1'], '-addr is required'],
            'bad warmup' => [[...$ok, '-warmup', 'soon'], '-warmup "soon"'],
            'bad warmup-max' => [[...$ok, '-warmup', 'auto', '-warmup-max', 'x'], '-warmup-max "x"'],
            'zero warmup-max' => [[...$ok, '-warmup', 'auto', '-warmup-max', '0'], '-warmup-max must be above 0'],
            'negative rate' => [[...$ok, '-rate', '-5'], '-rate -5'],
            'accel on grpc' => [[...$ok, '-accel'], '-accel'],
            'bad thrift transport' => [['-proto', 'thrift', '-call', 'datatype', '-n', '1', '-addr', '127.0.0.1:1', '-thrift-transport', 'http'], '-thrift-transport "http"'],
            'unknown runtime' => [[...$ok, '-runtime', 'jit'], '-runtime "jit": want c or pure'],
            'accel with the pure runtime' => [['-proto', 'thrift', '-call', 'datatype', '-n', '1', '-runtime', 'pure', '-accel'], '-runtime pure'],
            'bad bool' => [[...$ok, '-k=maybe'], 'invalid boolean value "maybe" for flag -k'],
            'start-at not a time' => [[...$ok, '-start-at', 'soon'], '-start-at "soon"'],
            'start-at negative' => [[...$ok, '-start-at', '-5'], '-start-at "-5"'],
            'start-at zero' => [[...$ok, '-start-at', '0'], '-start-at "0"'],
            'start-at in milliseconds' => [[...$ok, '-start-at', sprintf('%d', (int) (microtime(true) * 1000))], '-start-at'],
            'start-at hours ahead' => [[...$ok, '-start-at', sprintf('%.6f', microtime(true) + 3 * 3600)], "ahead of this host's clock"],
        ];
    }

    /**
     * @dataProvider badArgs
     * @param list<string> $args
     */
    public function testBadArgs(array $args, string $want): void
    {
        try {
            Config::parse($args);
        } catch (\InvalidArgumentException $e) {
            $this->assertStringContainsString($want, $e->getMessage(), "got error \"{$e->getMessage()}\"; want one containing \"$want\"");
            return;
        }
        $this->fail('got no error; want one containing "' . $want . '"');
    }

    public function testParse(): void
    {
        $cases = [
            'go-client style' => [
                ['-proto', 'thrift', '-call', 'datalist', '-items', '200', '-c', '8', '-n', '2000', '-warmup', '2s', '-t', '30', '-addr', '127.0.0.1:9999'],
                ['proto' => 'thrift', 'items' => 200, 'concurrency' => 8, 'requests' => 2000, 'warmupSeconds' => 2.0, 'timeLimit' => 30.0, 'addr' => '127.0.0.1:9999'],
            ],
            'equals form and -k' => [
                ['-proto=http', '-call=datatype', '-n=5', '-k', '--timeout=1.5s'],
                ['proto' => 'http', 'call' => 'datatype', 'requests' => 5, 'keepAlive' => true, 'timeout' => 1.5, 'addr' => '127.0.0.1:9'],
            ],
            'only -t runs unlimited calls' => [
                ['-proto', 'ice', '-call', 'datatype', '-t', '1m30s'],
                ['requests' => Config::UNLIMITED, 'timeLimit' => 90.0, 'addr' => '127.0.0.1:9'],
            ],
            '-k is dropped for RPC protocols' => [
                ['-proto', 'grpc', '-call', 'datatype', '-n', '1', '-k'],
                ['keepAlive' => false, 'addr' => '127.0.0.1:9'],
            ],
            '-warmup auto with its default max' => [
                ['-proto', 'http', '-call', 'datatype', '-n', '5', '-warmup', 'auto'],
                ['warmupAuto' => true, 'warmupSeconds' => 0.0, 'warmupMax' => 10.0],
            ],
            '-warmup auto with -warmup-max' => [
                ['-proto', 'http', '-call', 'datatype', '-n', '5', '-warmup=auto', '-warmup-max', '3s'],
                ['warmupAuto' => true, 'warmupMax' => 3.0],
            ],
            'a fixed -warmup after auto wins' => [
                ['-proto', 'http', '-call', 'datatype', '-n', '5', '-warmup', 'auto', '-warmup', '2s'],
                ['warmupAuto' => false, 'warmupSeconds' => 2.0],
            ],
            '-conns equal to -c' => [
                ['-proto', 'grpc', '-call', 'datatype', '-n', '8', '-c', '4', '-conns', '4'],
                ['concurrency' => 4],
            ],
            'open loop' => [
                ['-proto', 'http', '-call', 'datatype', '-t', '2', '-rate', '500', '-c', '4'],
                ['rate' => 500, 'concurrency' => 4, 'requests' => Config::UNLIMITED],
            ],
            'runtime c by default: the Thrift accelerator' => [
                ['-proto', 'thrift', '-call', 'datatype', '-n', '1'],
                ['runtime' => 'c', 'accel' => true],
            ],
            'runtime pure: pure-PHP Thrift' => [
                ['-proto', 'thrift', '-call', 'datatype', '-n', '1', '-runtime', 'pure'],
                ['runtime' => 'pure', 'accel' => false],
            ],
            'compact has no C codec' => [
                ['-proto', 'thrift', '-call', 'datatype', '-n', '1', '-thrift-protocol', 'compact'],
                ['runtime' => 'c', 'accel' => false],
            ],
            'old -accel is the c runtime' => [
                ['-proto', 'thrift', '-call', 'datatype', '-n', '1', '-accel'],
                ['runtime' => 'c', 'accel' => true],
            ],
            'runtime on grpc' => [
                ['-proto', 'grpc', '-call', 'datatype', '-n', '1', '-runtime=pure'],
                ['runtime' => 'pure', 'accel' => false],
            ],
            'millisecond durations' => [
                ['-proto', 'grpc', '-call', 'datatype', '-n', '1', '-warmup', '250ms', '-timeout', '1m'],
                ['warmupSeconds' => 0.25, 'timeout' => 60.0],
            ],
        ];
        foreach ($cases as $name => [$args, $want]) {
            if (!in_array('-addr', $args, true)) {
                array_push($args, '-addr', '127.0.0.1:9');
            }
            $c = Config::parse($args);
            foreach ($want as $k => $v) {
                $this->assertSame($v, $c->$k, "$name: $k: got " . var_export($c->$k, true) . '; want ' . var_export($v, true));
            }
        }
    }

    public function testRoundTripThroughArray(): void
    {
        $c = Config::parse(['-proto', 'thrift', '-call', 'datalist', '-items', '7', '-n', '3', '-warmup', '1', '-accel', '-addr', '127.0.0.1:9']);
        $back = Config::fromArray(json_decode(json_encode($c->toArray()), true));
        $this->assertEquals($c, $back);
        $this->assertSame('php-thrift-datalist-7-c1', $back->cellName());
        $pure = Config::parse(['-proto', 'grpc', '-call', 'datalist', '-items', '7', '-n', '3', '-runtime', 'pure', '-addr', '127.0.0.1:9']);
        $this->assertSame('php-pure-grpc-datalist-7-c1', $pure->cellName());
    }

    /** @return array<string, array{list<string>}> */
    public static function helps(): array
    {
        return ['-h' => [['-h']], '-help' => [['-help']], '--help after flags' => [['-proto', 'grpc', '--help']]];
    }

    /**
     * @dataProvider helps
     * @param list<string> $args
     */
    public function testHelp(array $args): void
    {
        $this->expectException(\Rpcbed\Client\HelpRequested::class);
        Config::parse($args);
    }

    public function testExtensionsPerRuntime(): void
    {
        $cases = [
            'grpc c' => ['grpc', 'c', ['ctype', Extensions::protobuf(), Extensions::grpc()]],
            'grpc pure' => ['grpc', 'pure', ['ctype', Extensions::grpc()]],
            'thrift c' => ['thrift', 'c', ['thrift_protocol']],
            'thrift pure' => ['thrift', 'pure', []],
            'http pure' => ['http', 'pure', ['curl']],
        ];
        foreach ($cases as $name => [$proto, $runtime, $want]) {
            $c = Config::parse(['-proto', $proto, '-call', 'datatype', '-n', '1', '-runtime', $runtime, '-addr', '127.0.0.1:9']);
            $got = Extensions::for($c->proto, $c->accel, $c->runtime);
            $this->assertSame($want, $got, "$name: got " . implode(',', $got) . '; want ' . implode(',', $want));
        }
    }
}
