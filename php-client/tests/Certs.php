<?php
declare(strict_types=1);

namespace Rpcbed\Client\Tests;

/**
 * Certs makes, once per test run, a throwaway CA and the certificates the TLS
 * tests need (ECDSA P-256, with PHP's OpenSSL): the server's for 127.0.0.1 and
 * localhost, one already expired, a client's, and a second CA (with its own
 * client certificate) that the servers do not trust. Files under Servers::tmp().
 */
final class Certs
{
    private static ?array $files = null;

    /**
     * @return array{ca: string, server: string, serverKey: string, expired: string, expiredKey: string,
     *   client: string, clientKey: string, otherCa: string, otherClient: string, otherClientKey: string}
     */
    public static function files(): array
    {
        if (self::$files !== null) {
            return self::$files;
        }
        $dir = Servers::tmp() . '/tls';
        @mkdir($dir, 0o700, true);
        $cnf = "$dir/openssl.cnf";
        file_put_contents($cnf, "[req]\ndistinguished_name=dn\n[dn]\n"
            . "[ca]\nbasicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n"
            . "[server]\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
            . "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
            . "[client]\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n");
        $f = [];
        [$ca, $caKey] = self::make($cnf, 'ca', 'rpcbed test CA', null, null, 1, "$dir/ca");
        self::make($cnf, 'server', 'rpcbed server', $ca, $caKey, 1, "$dir/server");
        // Valid for 0 days: its notAfter is its notBefore, so past a second later.
        [$expired] = self::make($cnf, 'server', 'rpcbed expired', $ca, $caKey, 0, "$dir/expired");
        self::make($cnf, 'client', 'rpcbed client', $ca, $caKey, 1, "$dir/client");
        [$other, $otherKey] = self::make($cnf, 'ca', 'rpcbed other CA', null, null, 1, "$dir/other-ca");
        self::make($cnf, 'client', 'rpcbed other client', $other, $otherKey, 1, "$dir/other-client");
        $until = openssl_x509_parse($expired)['validTo_time_t'];
        while (time() <= $until) {
            usleep(100_000);
        }
        return self::$files = [
            'ca' => "$dir/ca.pem", 'server' => "$dir/server.pem", 'serverKey' => "$dir/server-key.pem",
            'expired' => "$dir/expired.pem", 'expiredKey' => "$dir/expired-key.pem",
            'client' => "$dir/client.pem", 'clientKey' => "$dir/client-key.pem",
            'otherCa' => "$dir/other-ca.pem", 'otherClient' => "$dir/other-client.pem", 'otherClientKey' => "$dir/other-client-key.pem",
        ];
    }

    /**
     * A certificate ($ext: the config section of its extensions), self-signed
     * when $issuer is null; writes $base.pem and $base-key.pem.
     *
     * @return array{\OpenSSLCertificate, \OpenSSLAsymmetricKey}
     */
    private static function make(string $cnf, string $ext, string $cn, $issuer, $issuerKey, int $days, string $base): array
    {
        $key = openssl_pkey_new(['private_key_type' => OPENSSL_KEYTYPE_EC, 'curve_name' => 'prime256v1']);
        $opts = ['config' => $cnf, 'digest_alg' => 'sha256', 'x509_extensions' => $ext];
        $csr = openssl_csr_new(['commonName' => $cn, 'organizationName' => 'rpcbed'], $key, $opts);
        $cert = openssl_csr_sign($csr, $issuer, $issuerKey ?? $key, $days, $opts, random_int(1, PHP_INT_MAX));
        if ($cert === false) {
            throw new \RuntimeException("certificate $cn: " . openssl_error_string());
        }
        openssl_x509_export_to_file($cert, "$base.pem");
        openssl_pkey_export_to_file($key, "$base-key.pem");
        return [$cert, $key];
    }
}
