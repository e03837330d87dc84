<?php
declare(strict_types=1);

namespace Rpcbed\Client\Tests;

use PHPUnit\Framework\TestCase;
use Rpcbed\Client\CallError;
use Rpcbed\Client\Config;
use Rpcbed\Client\Transport;
use Rpcbed\Client\Transports;
use Rpcbed\Client\Verify;

/** Each transport against a live server: go-server, or the Java Ice baseline for ice. */
final class TransportTest extends TestCase
{
    /** @return array<string, array{string, array<string, mixed>}> */
    public static function transports(): array
    {
        return [
            'grpc' => ['grpc', []],
            'thrift' => ['thrift', []],
            'thrift accelerated' => ['thrift', ['accel' => true]],
            'thrift buffered compact' => ['thrift', ['thriftTransport' => 'buffered', 'thriftProtocol' => 'compact']],
            'http keep-alive' => ['http', ['keepAlive' => true]],
            'http' => ['http', []],
            'ice' => ['ice', []],
        ];
    }

    private function transport(string $proto, array $opts = [], ?string $addr = null): Transport
    {
        $need = ['grpc' => 'grpc', 'http' => 'curl', 'ice' => 'ice'][$proto] ?? null;
        if ($need !== null && !extension_loaded($need)) {
            Servers::missing($this, "the $need extension is not loaded (make test-php loads grpc.so; see php-client/README.md)");
        }
        if ($proto === 'ice' && ($why = \Rpcbed\Client\Extensions::iceNotPatched()) !== null) {
            Servers::missing($this, $why);
        }
        if (($opts['accel'] ?? false) && !function_exists('thrift_protocol_write_binary')) {
            $this->markTestSkipped('thrift_protocol.so is not loaded (Debian enables it for PHP 8.1 only; php -d extension=thrift_protocol.so)');
        }
        $cfg = new Config();
        $cfg->proto = $proto;
        $flags = isset($opts['thriftTransport'])
            ? ['-thrift-transport', $opts['thriftTransport'], '-thrift-protocol', $opts['thriftProtocol']] : [];
        $cfg->addr = $addr ?? ($proto === 'ice' ? Servers::ice($this) : Servers::go($this, $flags)[$proto]);
        $cfg->timeout = 5;
        $cfg->clientId = 'phpunit';
        foreach ($opts as $k => $v) {
            $cfg->$k = $v;
        }
        return Transports::make($cfg, 0);
    }

    /** @dataProvider transports */
    public function testCalls(string $proto, array $opts): void
    {
        $t = $this->transport($proto, $opts);
        $dt = $t->dataType(Config::GROUP_NAME, Config::EN_NAME, true);
        $this->assertNull(Verify::dataType($dt, Config::EN_NAME));
        $this->assertGreaterThan(0, $dt->bytes, 'DataType response size');
        foreach ([0, 1, 20, 200] as $n) {
            $dl = $t->dataList($n, true);
            $problem = Verify::dataList($dl, $n);
            $this->assertNull($problem, "$proto DataList($n): $problem");
            $this->assertGreaterThan(0, $dl->bytes, "DataList($n) response size");
        }
        $items = $t->dataListItems(3);
        $this->assertCount(3, $items);
        foreach ($items as $i => $it) {
            $this->assertEquals(Verify::item($i), $it, "$proto dataListItems(3)[$i]");
        }
        $t->close();
    }

    /** @dataProvider transports */
    public function testErrorKinds(string $proto, array $opts): void
    {
        $t = $this->transport($proto, $opts);
        $t->dataType(Config::GROUP_NAME, Config::EN_NAME);
        $cases = [
            'invalid argument' => [fn () => $t->dataList(-1), CallError::INVALID_ARGUMENT],
            'empty enName' => [fn () => $t->dataType(Config::GROUP_NAME, ''), CallError::INVALID_ARGUMENT],
            'forged token' => [function () use ($t) {
                (new \ReflectionProperty($t, 'token'))->setValue($t, 'AAAAAGsNZTlBPGKPL_6vnDyuECQ');
                $t->dataList(1);
            }, CallError::UNAUTHENTICATED],
        ];
        foreach ($cases as $name => [$call, $want]) {
            try {
                $call();
                $this->fail("$proto $name: got no error; want $want");
            } catch (CallError $e) {
                $this->assertSame($want, $e->kind, "$proto $name: got kind $e->kind ({$e->getMessage()}); want $want");
            }
        }
        // After an auth failure the next call starts over with a fresh token.
        $this->assertNull(Verify::dataList($t->dataList(2), 2), "$proto: call after unauthenticated");
    }

    /** @dataProvider transports */
    public function testUnreachable(string $proto, array $opts): void
    {
        $t = $this->transport($proto, $opts, '127.0.0.1:' . Servers::freePort());
        try {
            $t->dataType(Config::GROUP_NAME, Config::EN_NAME);
            $this->fail("$proto: got no error from a port nobody listens on; want connect");
        } catch (CallError $e) {
            $this->assertSame(CallError::CONNECT, $e->kind, "$proto: got kind $e->kind ({$e->getMessage()}); want connect");
        }
    }
}
