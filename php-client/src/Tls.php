<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * Tls is what php-client's transports share for -security tls|mtls: PHP's OpenSSL
 * stream context (Thrift, and the certificate diagnosis), the names the report
 * prints, and the cause of a certificate problem.
 *
 * The libraries say little about why a handshake failed: grpc.so answers
 * UNAVAILABLE "Ssl handshake failed", a TLS stream a bare "certificate verify
 * failed", IceSSL a SecurityException. So when the verify call fails over TLS,
 * diagnose() makes up to four handshakes of its own with PHP's OpenSSL streams
 * to the same server, each checking one thing more, and names the first that
 * fails: the certificate's dates (expired certificate), its chain to -cacert
 * (unknown CA), its name (wrong name), then the server's answer to our
 * certificate (client certificate refused). The library's own error stays in the
 * message after the cause.
 */
final class Tls
{
    /** OpenSSL's names of the TLS 1.2 suites a server here can pick, by IANA name (the report's). */
    private const IANA = [
        'ECDHE-ECDSA-AES128-GCM-SHA256' => 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
        'ECDHE-ECDSA-AES256-GCM-SHA384' => 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
        'ECDHE-ECDSA-CHACHA20-POLY1305' => 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256',
        'ECDHE-RSA-AES128-GCM-SHA256' => 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
        'ECDHE-RSA-AES256-GCM-SHA384' => 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
        'ECDHE-RSA-CHACHA20-POLY1305' => 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256',
        'ECDHE-ECDSA-AES128-SHA256' => 'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256',
        'ECDHE-RSA-AES128-SHA256' => 'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256',
        'AES128-GCM-SHA256' => 'TLS_RSA_WITH_AES_128_GCM_SHA256',
        'AES256-GCM-SHA384' => 'TLS_RSA_WITH_AES_256_GCM_SHA384',
    ];

    /** The causes docs/report-format.md names, in the order diagnose() checks them. */
    public const CAUSES = ['expired certificate', 'unknown CA', 'wrong name', 'client certificate refused'];

    private function __construct()
    {
    }

    /**
     * PHP's OpenSSL stream options for $cfg: the server's certificate checked
     * against -cacert and the peer name, our certificate with mtls, TLS 1.2 up to
     * the version asked.
     *
     * @return array<string, mixed> the "ssl" context options
     */
    public static function streamOptions(Config $cfg): array
    {
        $o = [
            'verify_peer' => true,
            'verify_peer_name' => true,
            'peer_name' => $cfg->peerName(),
            'SNI_enabled' => true,
            'allow_self_signed' => false,
            'crypto_method' => self::cryptoMethod($cfg->tlsVersion),
        ];
        if ($cfg->caCert !== '') {
            $o['cafile'] = $cfg->caCert;
        }
        if ($cfg->security === 'mtls') {
            $o['local_cert'] = $cfg->cert;
            $o['local_pk'] = $cfg->key;
        }
        return $o;
    }

    /** STREAM_CRYPTO_METHOD_* for "1.3" (1.2 and 1.3 offered) or "1.2" (1.2 alone). */
    public static function cryptoMethod(string $version): int
    {
        return $version === '1.2'
            ? STREAM_CRYPTO_METHOD_TLSv1_2_CLIENT
            : STREAM_CRYPTO_METHOD_TLSv1_2_CLIENT | STREAM_CRYPTO_METHOD_TLSv1_3_CLIENT;
    }

    /** OpenSSL's "TLSv1.3" / "TLSv1.2" as the report writes versions ("-" for none). */
    public static function version(?string $openssl): string
    {
        return $openssl !== null && preg_match('/^TLSv1(\.[0-3])?$/', $openssl) ? $openssl : '-';
    }

    /**
     * A suite's IANA name: TLS 1.3's OpenSSL names are already IANA's
     * (TLS_AES_128_GCM_SHA256), TLS 1.2's are mapped; "-" for one not known.
     */
    public static function cipher(?string $openssl): string
    {
        if ($openssl === null || $openssl === '') {
            return '-';
        }
        if (str_starts_with($openssl, 'TLS_')) {
            return $openssl;
        }
        return self::IANA[$openssl] ?? '-';
    }

    /**
     * The version an IANA suite implies: TLS 1.3's suites (TLS_AES_*,
     * TLS_CHACHA20_POLY1305_SHA256) are 1.3's alone, the others 1.2's; "-" for "-".
     */
    public static function versionOfCipher(string $iana): string
    {
        return match (true) {
            $iana === '-' => '-',
            str_starts_with($iana, 'TLS_AES_'), $iana === 'TLS_CHACHA20_POLY1305_SHA256' => 'TLSv1.3',
            default => 'TLSv1.2',
        };
    }

    /**
     * The negotiated version and cipher suite of a PHP TLS stream
     * (stream_get_meta_data's "crypto"); PHP tells neither the group nor the ALPN.
     *
     * @param resource $stream
     * @return array{version: string, cipher: string}
     */
    public static function ofStream($stream): array
    {
        $c = stream_get_meta_data($stream)['crypto'] ?? [];
        return ['version' => self::version($c['protocol'] ?? null), 'cipher' => self::cipher($c['cipher_name'] ?? null)];
    }

    /**
     * Names the certificate problem that made a TLS verify call fail, by
     * handshakes of its own to the server (see the class comment): one of CAUSES,
     * null when every check passes (the failure was something else) or the
     * server cannot be reached.
     */
    public static function diagnose(Config $cfg): ?string
    {
        $timeout = min($cfg->timeout, 5.0);
        $base = ['SNI_enabled' => true, 'peer_name' => $cfg->peerName(), 'crypto_method' => self::cryptoMethod($cfg->tlsVersion)];
        $mine = $cfg->security === 'mtls' ? ['local_cert' => $cfg->cert, 'local_pk' => $cfg->key] : [];
        // 1. The server's certificate, taken without checking it.
        $s = self::handshake($cfg, $base + ['verify_peer' => false, 'verify_peer_name' => false, 'capture_peer_cert' => true], $timeout);
        if ($s === null) {
            return null; // no TLS handshake at all: not a certificate problem
        }
        $cert = stream_context_get_params($s)['options']['ssl']['peer_certificate'] ?? null;
        fclose($s);
        $info = $cert !== null ? openssl_x509_parse($cert) : false;
        if (is_array($info) && (($info['validTo_time_t'] ?? PHP_INT_MAX) < time() || ($info['validFrom_time_t'] ?? 0) > time())) {
            return 'expired certificate';
        }
        // 2. Its chain to -cacert (the dates are good).
        $chain = ['verify_peer' => true, 'verify_peer_name' => false, 'allow_self_signed' => false]
            + ($cfg->caCert !== '' ? ['cafile' => $cfg->caCert] : []);
        $s = self::handshake($cfg, $base + $chain, $timeout);
        if ($s === null) {
            return 'unknown CA';
        }
        fclose($s);
        // 3. Its name.
        $s = self::handshake($cfg, $base + ['verify_peer_name' => true] + $chain, $timeout);
        if ($s === null) {
            return 'wrong name';
        }
        fclose($s);
        if ($mine === []) {
            return null;
        }
        // 4. Ours: TLS 1.2 refuses it in the handshake, TLS 1.3 with an alert
        // after it, which the first read meets.
        $s = self::handshake($cfg, $base + ['verify_peer_name' => true] + $chain + $mine, $timeout);
        if ($s === null) {
            return 'client certificate refused';
        }
        $alert = self::alertOnRead($s, min($timeout, 2.0));
        fclose($s);
        return $alert ? 'client certificate refused' : null;
    }

    /** @return resource|null a stream that completed the handshake with $ssl, null when it did not */
    private static function handshake(Config $cfg, array $ssl, float $timeout)
    {
        $ctx = stream_context_create(['ssl' => $ssl]);
        $addr = sprintf('tls://%s:%d', str_contains($cfg->host(), ':') ? '[' . $cfg->host() . ']' : $cfg->host(), $cfg->port());
        $s = @stream_socket_client($addr, $errno, $errstr, $timeout, STREAM_CLIENT_CONNECT, $ctx);
        return $s === false ? null : $s;
    }

    /** Whether the server's first bytes on $s are a TLS alert (PHP warns "... alert ..."). */
    private static function alertOnRead($s, float $seconds): bool
    {
        stream_set_timeout($s, (int) $seconds, (int) (fmod($seconds, 1.0) * 1e6));
        $warnings = '';
        set_error_handler(static function (int $no, string $msg) use (&$warnings): bool {
            $warnings .= $msg . "\n";
            return true;
        });
        try {
            fread($s, 1);
        } finally {
            restore_error_handler();
        }
        return stripos($warnings, 'alert') !== false;
    }
}
