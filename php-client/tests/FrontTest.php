<?php
declare(strict_types=1);

namespace Rpcbed\Client\Tests;

use PHPUnit\Framework\TestCase;
use Rpcbed\Client\Verify;

/** front.php under PHP's built-in server (bin/php-front), against go-server and the Ice baseline. */
final class FrontTest extends TestCase
{
    private static ?string $front = null;

    private function front(): string
    {
        if (self::$front !== null) {
            return self::$front;
        }
        if (!is_file(\Rpcbed\Client\Extensions::grpc())) {
            Servers::missing($this, \Rpcbed\Client\Extensions::grpc() . ' is missing: run php-client/build-ext.sh');
        }
        $go = Servers::go($this);
        $env = [
            'RPCBED_GRPC_ADDR' => $go['grpc'], 'RPCBED_THRIFT_ADDR' => $go['thrift'], 'RPCBED_HTTP_ADDR' => $go['http'],
            'LISTEN' => '127.0.0.1:' . Servers::freePort(), 'PHP_CLI_SERVER_WORKERS' => '4',
        ];
        $jar = Servers::root() . '/java-client/target/java-client.jar';
        if (is_file($jar) && is_file(\Rpcbed\Client\Extensions::ice())) {
            $env['RPCBED_ICE_ADDR'] = Servers::ice($this);
        }
        $proc = Servers::start([dirname(__DIR__) . '/bin/php-front'], Servers::tmp() . '/front.log', $env);
        if (!Servers::waitTcp($env['LISTEN'], 20, $proc)) {
            $this->fail('php-front did not start: ' . @file_get_contents(Servers::tmp() . '/front.log'));
        }
        return self::$front = $env['LISTEN'];
    }

    /** @return array{int, array<string, mixed>|null} */
    private function get(string $path): array
    {
        $h = curl_init('http://' . $this->front() . $path);
        curl_setopt_array($h, [CURLOPT_RETURNTRANSFER => true, CURLOPT_TIMEOUT => 30]);
        $body = curl_exec($h);
        $code = curl_getinfo($h, CURLINFO_RESPONSE_CODE);
        curl_close($h);
        return [$code, is_string($body) ? json_decode($body, true) : null];
    }

    /** @return array<string, array{string}> */
    public static function protocols(): array
    {
        return ['grpc' => ['grpc'], 'thrift' => ['thrift'], 'http' => ['http'], 'ice' => ['ice']];
    }

    /** @dataProvider protocols */
    public function testDataList(string $proto): void
    {
        if (!extension_loaded('curl')) {
            Servers::missing($this, 'the curl extension is not loaded');
        }
        if ($proto === 'ice') {
            Servers::ice($this);
        }
        foreach ([0, 2, 200] as $n) {
            [$code, $body] = $this->get("/v1/datalist?n=$n&proto=$proto");
            $this->assertSame(200, $code, "GET n=$n proto=$proto: status " . json_encode($body));
            $this->assertSame($n, $body['n'] ?? null, 'n');
            $this->assertCount($n, $body['items'] ?? []);
            if ($n > 0) {
                $this->assertEquals(Verify::item($n - 1), $body['items'][$n - 1], 'last item');
            }
        }
    }

    public function testBadRequests(): void
    {
        if (!extension_loaded('curl')) {
            Servers::missing($this, 'the curl extension is not loaded');
        }
        $cases = [
            'unknown proto' => ['/v1/datalist?n=2&proto=dubbo', 400],
            'n too big' => ['/v1/datalist?n=100001&proto=http', 400],
            'n missing' => ['/v1/datalist?proto=http', 400],
            'no route' => ['/v1/nothing', 404],
        ];
        foreach ($cases as $name => [$path, $want]) {
            [$code] = $this->get($path);
            $this->assertSame($want, $code, "$name: got status $code; want $want");
        }
    }

    /** The published experiment's driver: ab -c C -n C -k, every request answered. */
    public function testAb(): void
    {
        $ab = trim((string) shell_exec('command -v ab'));
        if ($ab === '') {
            Servers::missing($this, 'ab (apache2-utils) is not installed');
        }
        $front = $this->front();
        foreach (['grpc', 'http', 'thrift'] as $proto) {
            exec(escapeshellarg($ab) . ' -q -c 20 -n 20 -k ' . escapeshellarg("http://$front/v1/datalist?n=20&proto=$proto") . ' 2>&1', $out, $code);
            $text = implode("\n", $out);
            $out = [];
            $this->assertSame(0, $code, "ab $proto:\n$text");
            $this->assertMatchesRegularExpression('/^Complete requests:\s+20$/m', $text, "ab $proto");
            $this->assertMatchesRegularExpression('/^Failed requests:\s+0$/m', $text, "ab $proto");
            $this->assertDoesNotMatchRegularExpression('/^Non-2xx responses:/m', $text, "ab $proto");
        }
    }
}
