<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * Extensions loads exactly what a protocol needs. Runs start PHP with -n (no ini,
 * so Debian's php-zeroc-ice start-up warnings stay out of non-Ice runs) and name
 * every extension with -d extension=...
 */
final class Extensions
{
    /** Extensions shipped as shared objects by Debian's php8.2 packages. */
    private const BASE = [];

    /** @return list<string> values for -d extension= */
    public static function for(string $proto, bool $accel = false): array
    {
        $ext = match ($proto) {
            'grpc' => ['ctype', self::grpc()],
            'thrift' => $accel ? ['thrift_protocol'] : [],
            'http' => ['curl'],
            'ice' => ['ice'],
            default => [],
        };
        return array_merge(self::BASE, $ext);
    }

    /** grpc.so: RPCBED_GRPC_EXT, else the one build-ext.sh built. */
    public static function grpc(): string
    {
        return getenv('RPCBED_GRPC_EXT') ?: dirname(__DIR__) . '/ext/build/grpc.so';
    }

    /** @return list<string> php's arguments before the script */
    public static function phpArgs(string $proto, bool $accel = false): array
    {
        $args = ['-n', '-d', 'memory_limit=1G', '-d', 'error_reporting=E_ALL & ~E_DEPRECATED', '-d', 'display_errors=stderr'];
        foreach (self::for($proto, $accel) as $e) {
            $args[] = '-d';
            $args[] = 'extension=' . $e;
        }
        return $args;
    }
}
