<?php
declare(strict_types=1);

namespace Rpcbed\Client\Tests;

use PHPUnit\Framework\TestCase;
use Rpcbed\Client\Config;
use Rpcbed\Client\Extensions;

/**
 * Both runtimes (-runtime c: the protobuf C extension and the Thrift accelerator;
 * -runtime pure: the pure-PHP runtimes) make the same round trips against one
 * go-server and decode identical items. Each runs in its own PHP process, started
 * with the extensions php-client's workers load.
 */
final class RuntimeTest extends TestCase
{
    /** @return array<string, mixed> roundtrip.php's answer */
    private function roundTrip(string $proto, string $runtime): array
    {
        $cfg = Config::parse(['-proto', $proto, '-call', 'datalist', '-items', '200', '-n', '1', '-runtime', $runtime,
            '-addr', Servers::go($this)[$proto], '-timeout', '10s', '-client-id', 'phpunit']);
        if (($missing = Extensions::missing($cfg)) !== null) {
            Servers::missing($this, $missing);
        }
        // No fork here: grpc.so loads at start-up, not with dl() after a fork as in the bench.
        $grpc = $proto === 'grpc' ? ['-d', 'extension=' . Extensions::grpc()] : [];
        $cmd = [PHP_BINARY, ...Extensions::phpArgs($cfg), ...$grpc, __DIR__ . '/roundtrip.php',
            json_encode($cfg->toArray(), JSON_THROW_ON_ERROR)];
        $p = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $this->assertIsResource($p);
        $out = stream_get_contents($pipes[1]);
        $err = stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        $code = proc_close($p);
        $this->assertSame(0, $code, "$proto -runtime $runtime: exit $code\nstderr:\n$err");
        return json_decode((string) $out, true, 512, JSON_THROW_ON_ERROR);
    }

    /** @return array<string, array{string, string, string}> proto, runtime, the Versions key naming its codec */
    public static function runtimes(): array
    {
        return [
            'grpc c' => ['grpc', 'c', 'protobuf-c'],
            'grpc pure' => ['grpc', 'pure', 'protobuf-php'],
            'thrift c' => ['thrift', 'c', 'thrift_protocol'],
            'thrift pure' => ['thrift', 'pure', ''],
        ];
    }

    /** @dataProvider runtimes */
    public function testRoundTrips(string $proto, string $runtime, string $codecKey): void
    {
        $r = $this->roundTrip($proto, $runtime);
        $this->assertSame([], $r['problems'], "$proto -runtime $runtime: verify problems");
        $this->assertCount(200, $r['items']);
        $this->assertSame($runtime === 'c' && $proto === 'grpc', $r['protobuf_ext'], 'protobuf.so loaded');
        $this->assertSame($runtime === 'c' && $proto === 'thrift', $r['thrift_ext'], 'thrift_protocol.so loaded');
        if ($codecKey !== '') {
            $this->assertArrayHasKey($codecKey, $r['versions'], "$proto -runtime $runtime versions");
        }
        $other = $runtime === 'c' ? ($proto === 'grpc' ? 'protobuf-php' : '') : ($proto === 'grpc' ? 'protobuf-c' : 'thrift_protocol');
        if ($other !== '') {
            $this->assertArrayNotHasKey($other, $r['versions'], "$proto -runtime $runtime versions");
        }
    }

    /** @return array<string, array{string}> */
    public static function protocols(): array
    {
        return ['grpc' => ['grpc'], 'thrift' => ['thrift']];
    }

    /** @dataProvider protocols */
    public function testRuntimesDecodeTheSameItems(string $proto): void
    {
        $c = $this->roundTrip($proto, 'c');
        $pure = $this->roundTrip($proto, 'pure');
        $this->assertSame($pure['sizes'], $c['sizes'], "$proto: encoded response sizes, c vs pure");
        foreach ($pure['items'] as $i => $it) {
            $this->assertSame($it, $c['items'][$i], "$proto item $i: c runtime vs pure");
        }
    }
}
