<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/** Versions names the runtime and RPC libraries a run used, for the report. */
final class Versions
{
    /** @return array<string, string> */
    public static function of(string $proto, bool $accel = false): array
    {
        $v = ['php' => PHP_VERSION];
        switch ($proto) {
            case 'grpc':
                $v['grpc'] = (string) phpversion('grpc');
                // What decodes, read from the process itself: protobuf-c is Google's C
                // extension, protobuf-php the pure-PHP runtime (php-google-protobuf).
                if (extension_loaded('protobuf')) {
                    $v['protobuf-c'] = (string) phpversion('protobuf');
                } else {
                    $v['protobuf-php'] = self::deb('php-google-protobuf');
                }
                break;
            case 'thrift':
                $v['thrift'] = self::deb('php-thrift');
                if ($accel && extension_loaded('thrift_protocol')) {
                    // thrift_protocol.so's own version (1.0 in php-thrift 0.17).
                    $v['thrift_protocol'] = (string) phpversion('thrift_protocol');
                }
                break;
            case 'http':
                $v['curl'] = curl_version()['version'] ?? 'unknown';
                break;
            case 'ice':
                $v['ice'] = function_exists('Ice\\stringVersion') ? \Ice\stringVersion() : (string) phpversion('ice');
                // build-ext.sh's ice.so: Debian's 3.7.8 source with upstream's PHP 8.2 changes
                // (ext/ice-php82.patch), not the stock php-zeroc-ice.
                if (Extensions::iceNotPatched() === null) {
                    $v['ice'] .= '+php82';
                }
                break;
        }
        return $v;
    }

    /** The upstream version of an installed Debian package (the pure-PHP libraries carry none). */
    private static function deb(string $package): string
    {
        $out = @shell_exec('dpkg-query -W -f=\'${Version}\' ' . escapeshellarg($package) . ' 2>/dev/null');
        if (!is_string($out) || $out === '') {
            return 'unknown';
        }
        // 3.21.12-3+deb12u1 -> 3.21.12
        return preg_replace('/^\d+:/', '', preg_replace('/-[^-]*$/', '', trim($out)));
    }
}
