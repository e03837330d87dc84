<?php
declare(strict_types=1);

namespace Rpcbed\Client\Tests;

use PHPUnit\Framework\TestCase;
use Rpcbed\Client\Config;
use Rpcbed\Client\Extensions;

/**
 * php-client over TLS, as a process, against real TLS servers on free ports:
 * go-server (grpc, thrift, http) and the Java Ice baseline (ice, IceSSL), each
 * started with this run's throwaway certificates (Certs). Every protocol: the
 * "TLS:" line with what its library tells, handshakes and connections counted
 * per call, mtls, and a certificate problem as exit 3 with its cause.
 */
final class TlsTest extends TestCase
{
    private static function field(string $report, string $label): ?string
    {
        return preg_match('/^' . preg_quote($label, '/') . ':\s+(.*)$/m', $report, $m) ? rtrim($m[1]) : null;
    }

    /** The server of $proto: $kind good (TLS), mtls (a client certificate required) or expired. */
    private function server(string $proto, string $kind = 'good'): string
    {
        if ($proto === 'grpc' && !is_file(Extensions::grpc())) {
            Servers::missing($this, Extensions::grpc() . ' is missing: run php-client/build-ext.sh');
        }
        $f = Certs::files();
        $flags = match ($kind) {
            'good' => ['-tls-cert', $f['server'], '-tls-key', $f['serverKey'], '-tls-min', '1.2'],
            'mtls' => ['-tls-cert', $f['server'], '-tls-key', $f['serverKey'], '-tls-min', '1.2', '-tls-client-ca', $f['ca']],
            'expired' => ['-tls-cert', $f['expired'], '-tls-key', $f['expiredKey'], '-tls-min', '1.2'],
        };
        return $proto === 'ice' ? Servers::ice($this, $flags) : Servers::go($this, $flags)[$proto];
    }

    /** What each protocol's library tells of the handshake (docs/clients.md). */
    private const TLS_LINE = [
        'grpc' => '/^- - - ALPN=h2$/',
        'thrift' => '/^TLSv1\.3 TLS_AES_\d+_GCM_SHA\d+ - ALPN=none$/',
        'http' => '/^TLSv1\.3 TLS_AES_\d+_GCM_SHA\d+ - ALPN=http\/1\.1$/',
        'ice' => '/^TLSv1\.3 TLS_AES_\d+_GCM_SHA\d+ - ALPN=none$/',
    ];

    /** @return array<string, array{string, string, list<string>, string, int, bool}> */
    public static function runs(): array
    {
        $cases = [];
        foreach (['grpc', 'thrift', 'http', 'ice'] as $p) {
            // proto, server, extra flags, TLS line, handshakes in the window, per call
            $cases["$p tls persistent"] = [$p, 'good', $p === 'http' ? ['-k'] : [], self::TLS_LINE[$p], 0, false];
            $cases["$p tls per-call"] = [$p, 'good', ['-connect', 'per-call'], self::TLS_LINE[$p], 20, true];
            $cases["$p mtls per-call"] = [$p, 'mtls', ['-connect', 'per-call', '-security', 'mtls'], self::TLS_LINE[$p], 20, true];
        }
        foreach (['thrift', 'http', 'ice'] as $p) {
            $cases["$p tls 1.2"] = [$p, 'good', ['-tls-version', '1.2', '-connect', 'per-call'],
                '/^TLSv1\.2 TLS_ECDHE_ECDSA_WITH_AES_\d+_GCM_SHA\d+ - ALPN=' . ($p === 'http' ? 'http\/1\.1' : 'none') . '$/', 20, true];
        }
        foreach (['grpc', 'thrift'] as $p) {
            $cases["$p pure tls per-call"] = [$p, 'good', ['-runtime', 'pure', '-connect', 'per-call'], self::TLS_LINE[$p], 20, true];
        }
        return $cases;
    }

    /**
     * @dataProvider runs
     * @param list<string> $flags
     */
    public function testReport(string $proto, string $server, array $flags, string $tlsLine, int $handshakes, bool $perCall): void
    {
        $f = Certs::files();
        $addr = $this->server($proto, $server);
        $args = ['-proto', $proto, '-call', 'datalist', '-items', '5', '-c', '2', '-n', '20', '-timeout', '5s',
            '-addr', $addr, '-security', 'tls', '-cacert', $f['ca'], ...$flags];
        if (in_array('mtls', $flags, true)) {
            array_push($args, '-cert', $f['client'], '-key', $f['clientKey']);
        }
        $json = Servers::tmp() . '/tls-' . md5(implode(' ', $args)) . '.json';
        [$code, $out, $err] = Servers::client([...$args, '-json', $json]);
        $this->assertSame(0, $code, "exit code: got $code; want 0\nstderr:\n$err");
        $this->assertSame('20', self::field($out, 'Complete requests'), $out);
        // -json carries the same figures under internal/report's names.
        $j = json_decode((string) file_get_contents($json), true)['rpcbed'] ?? [];
        $this->assertSame([$handshakes, 0], [$j['tls']['handshakes'] ?? null, $j['tls']['resumed'] ?? null], '-json tls');
        $this->assertSame($perCall ? 20 : null, $j['connections_opened'] ?? null, '-json connections_opened');
        $this->assertSame('none', self::field($out, 'Errors'), $out);
        $this->assertMatchesRegularExpression($tlsLine, (string) self::field($out, 'TLS'), $out);
        $this->assertSame("$handshakes (resumed 0)", self::field($out, 'TLS handshakes'), $out);
        $this->assertSame($perCall ? '20' : null, self::field($out, 'Connections opened'), $out);
    }

    /** @return array<string, array{string, string, list<string>, string}> */
    public static function refusals(): array
    {
        $cases = [];
        foreach (['grpc', 'thrift', 'http', 'ice'] as $p) {
            // proto, server, flags beyond -security tls (FILE: a Certs file), the cause named
            $cases["$p unknown CA"] = [$p, 'good', ['-cacert', 'otherCa'], 'unknown CA'];
            $cases["$p expired"] = [$p, 'expired', [], 'expired certificate'];
            $cases["$p client certificate refused"] = [$p, 'mtls',
                ['-security', 'mtls', '-cert', 'otherClient', '-key', 'otherClientKey'], 'client certificate refused'];
            if ($p !== 'ice') { // IceSSL checks the host of -addr only (-servername is refused)
                $cases["$p wrong name"] = [$p, 'good', ['-servername', 'elsewhere.invalid'], 'wrong name'];
            }
        }
        return $cases;
    }

    /**
     * A certificate problem is exit 3, "verify: certificate: CAUSE: ...", no report
     * (docs/report-format.md), whatever the protocol's library says of it.
     *
     * @dataProvider refusals
     * @param list<string> $flags
     */
    public function testCertificateProblem(string $proto, string $server, array $flags, string $cause): void
    {
        $f = Certs::files();
        $addr = $this->server($proto, $server);
        $flags = array_map(static fn (string $a): string => $f[$a] ?? $a, $flags);
        [$code, $out, $err] = Servers::client(['-proto', $proto, '-call', 'datatype', '-n', '2', '-timeout', '5s',
            '-addr', $addr, '-security', 'tls', '-cacert', $f['ca'], ...$flags]);
        $this->assertSame(3, $code, "exit code: got $code; want 3\nstderr:\n$err");
        $this->assertSame('', $out, 'no report');
        $this->assertStringContainsString("verify: certificate: $cause: $proto server at $addr: ", $err);
    }

    /** A TLS client against a plaintext server: no certificate, so unreachable (exit 4), not a certificate problem. */
    public function testPlaintextServer(): void
    {
        $f = Certs::files();
        $addr = Servers::go($this)['thrift'];
        [$code, , $err] = Servers::client(['-proto', 'thrift', '-call', 'datatype', '-n', '2', '-timeout', '3s',
            '-addr', $addr, '-security', 'tls', '-cacert', $f['ca']]);
        $this->assertSame(4, $code, "exit code: got $code; want 4\nstderr:\n$err");
        $this->assertStringContainsString('verify: connect: ', $err);
    }

    /** @return array<string, array{list<string>, string}> */
    public static function badFlags(): array
    {
        $ok = ['-proto', 'thrift', '-call', 'datatype', '-n', '1', '-addr', '127.0.0.1:1'];
        $tls = [...$ok, '-security', 'tls', '-cacert', __FILE__];
        return [
            'bad security' => [[...$ok, '-security', 'ssl'], '-security "ssl": want plaintext, tls or mtls'],
            'bad connect' => [[...$ok, '-connect', 'pooled'], '-connect "pooled": want persistent or per-call'],
            'tls flag without tls' => [[...$ok, '-cacert', __FILE__], 'need -security tls or mtls'],
            'no cacert' => [[...$ok, '-security', 'tls'], '-cacert: TLS needs the CA'],
            'unreadable cacert' => [[...$ok, '-security', 'tls', '-cacert', '/nonexistent/ca.pem'], '-cacert "/nonexistent/ca.pem": cannot read'],
            'mtls without cert' => [[...$ok, '-security', 'mtls', '-cacert', __FILE__], '-security mtls: give the client\'s certificate'],
            'cert without mtls' => [[...$tls, '-cert', __FILE__, '-key', __FILE__], '-cert and -key are for -security mtls'],
            'bad version' => [[...$tls, '-tls-version', '1.1'], '-tls-version "1.1": want 1.3 or 1.2'],
            'grpc 1.2' => [['-proto', 'grpc', '-call', 'datatype', '-n', '1', '-addr', '127.0.0.1:1', '-security', 'tls',
                '-cacert', __FILE__, '-tls-version', '1.2'], '-tls-version 1.2 with -proto grpc'],
            'resume on' => [[...$tls, '-resume', 'on'], '-resume on: no library php-client uses resumes'],
            'ice servername' => [['-proto', 'ice', '-call', 'datatype', '-n', '1', '-addr', '127.0.0.1:1', '-security', 'tls',
                '-cacert', __FILE__, '-servername', 'other'], 'IceSSL checks the certificate against the host of -addr'],
            'keep-alive per call' => [['-proto', 'http', '-call', 'datatype', '-n', '1', '-addr', '127.0.0.1:1', '-k',
                '-connect', 'per-call'], '-k with -connect per-call'],
        ];
    }

    /**
     * @dataProvider badFlags
     * @param list<string> $args
     */
    public function testBadFlags(array $args, string $want): void
    {
        try {
            Config::parse($args);
            $this->fail("got no error; want one containing \"$want\"");
        } catch (\InvalidArgumentException $e) {
            $this->assertStringContainsString($want, $e->getMessage());
        }
    }

    /** The report's names from what OpenSSL and the libraries say. */
    public function testNames(): void
    {
        foreach ([
            ['TLS_AES_128_GCM_SHA256', 'TLS_AES_128_GCM_SHA256', 'TLSv1.3'],
            ['TLS_CHACHA20_POLY1305_SHA256', 'TLS_CHACHA20_POLY1305_SHA256', 'TLSv1.3'],
            ['ECDHE-ECDSA-AES128-GCM-SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLSv1.2'],
            ['ECDHE-RSA-AES256-GCM-SHA384', 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLSv1.2'],
            ['SOME-UNKNOWN-SUITE', '-', '-'],
            ['', '-', '-'],
        ] as [$openssl, $iana, $version]) {
            $this->assertSame($iana, \Rpcbed\Client\Tls::cipher($openssl), "cipher($openssl)");
            $this->assertSame($version, \Rpcbed\Client\Tls::versionOfCipher($iana), "versionOfCipher($iana)");
        }
        foreach (['TLSv1.3' => 'TLSv1.3', 'TLSv1.2' => 'TLSv1.2', 'SSLv3' => '-', '' => '-'] as $in => $want) {
            $this->assertSame($want, \Rpcbed\Client\Tls::version($in), "version($in)");
        }
    }

    public function testCellName(): void
    {
        $f = __FILE__;
        foreach ([
            [[], 'php-http-datatype-c1'],
            [['-security', 'tls', '-cacert', $f], 'php-http-datatype-c1@tls'],
            [['-security', 'tls', '-cacert', $f, '-tls-version', '1.2', '-connect', 'per-call'], 'php-http-datatype-c1@tls+tls12+percall'],
            [['-connect', 'per-call'], 'php-http-datatype-c1@percall'],
        ] as [$extra, $want]) {
            $cfg = Config::parse(['-proto', 'http', '-call', 'datatype', '-n', '1', '-addr', '127.0.0.1:1', ...$extra]);
            $this->assertSame($want, $cfg->cellName());
        }
    }
}
