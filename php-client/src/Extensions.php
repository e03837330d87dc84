<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * Extensions loads exactly what a protocol and runtime need. Runs start PHP with -n
 * (no ini, so Debian's php-zeroc-ice start-up warnings stay out of non-Ice runs) and
 * name every extension with -d extension=...
 *
 * Runtime c (the default, as PHP services run): gRPC with Google's protobuf C
 * extension (protobuf.so, built by build-ext.sh) beside grpc.so, Thrift's binary
 * protocol with thrift_protocol.so. Runtime pure: no protobuf.so, so the pure-PHP
 * runtime (php-google-protobuf) decodes, and no thrift_protocol.so.
 */
final class Extensions
{
    /** @return list<string> values for -d extension= */
    public static function for(string $proto, bool $accel = false, string $runtime = 'c'): array
    {
        return match ($proto) {
            // protobuf.so first: grpc.so's generated stubs need Google\Protobuf classes.
            'grpc' => $runtime === 'c' ? ['ctype', self::protobuf(), self::grpc()] : ['ctype', self::grpc()],
            'thrift' => $accel ? ['thrift_protocol'] : [],
            'http' => ['curl'],
            'ice' => ['ice'],
            default => [],
        };
    }

    /** grpc.so: RPCBED_GRPC_EXT, else the one build-ext.sh built. */
    public static function grpc(): string
    {
        return getenv('RPCBED_GRPC_EXT') ?: dirname(__DIR__) . '/ext/build/grpc.so';
    }

    /** protobuf.so (Google's protobuf C extension): RPCBED_PROTOBUF_EXT, else build-ext.sh's. */
    public static function protobuf(): string
    {
        return getenv('RPCBED_PROTOBUF_EXT') ?: dirname(__DIR__) . '/ext/build/protobuf.so';
    }

    /** @return string|null what a run of $cfg lacks on disk, as an error message */
    public static function missing(Config $cfg): ?string
    {
        if ($cfg->proto !== 'grpc') {
            return null;
        }
        foreach ($cfg->runtime === 'c' ? [self::grpc(), self::protobuf()] : [self::grpc()] as $so) {
            if (!is_file($so)) {
                $hint = $so === self::protobuf() ? ' (or -runtime pure for the pure-PHP protobuf runtime)' : '';
                return "$so is missing: run php-client/build-ext.sh (make setup-php)$hint";
            }
        }
        return null;
    }

    /** @return list<string> php's arguments before the script */
    public static function phpArgs(string $proto, bool $accel = false, string $runtime = 'c'): array
    {
        $args = ['-n', '-d', 'memory_limit=1G', '-d', 'error_reporting=E_ALL & ~E_DEPRECATED', '-d', 'display_errors=stderr'];
        foreach (self::for($proto, $accel, $runtime) as $e) {
            $args[] = '-d';
            $args[] = 'extension=' . $e;
        }
        return $args;
    }
}
