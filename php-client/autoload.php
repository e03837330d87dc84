<?php
// The php-client autoloader: PSR-4 over src/ and gen/, plus the layouts Debian's
// packages install (php-google-protobuf and php-thrift ship no autoloader) and the
// Grpc\ library build-ext.sh keeps beside grpc.so.
declare(strict_types=1);

namespace Rpcbed\Client;

final class Autoload
{
    /** @var array<string, list<string>> namespace prefix => directories */
    public static array $roots = [];

    public static function register(): void
    {
        $here = __DIR__;
        $grpcLib = getenv('RPCBED_GRPC_LIB') ?: $here . '/ext/build/grpc/src/php/lib/Grpc';
        self::$roots = [
            'Rpcbed\\Client\\' => [$here . '/src'],
            'Rpcbed\\Pb\\' => [$here . '/gen/Rpcbed/Pb'],
            'Rpcbed\\Thrift\\' => [$here . '/gen/Rpcbed/Thrift'],
            'Google\\Protobuf\\' => ['/usr/share/php/Google/Protobuf'],
            'GPBMetadata\\Google\\Protobuf\\' => ['/usr/share/php/GPBMetadata/Google/Protobuf'],
            'Thrift\\' => ['/usr/lib/php', '/usr/share/php/Thrift'],
            'Grpc\\' => [$grpcLib],
        ];
        spl_autoload_register([self::class, 'load']);
    }

    public static function load(string $class): void
    {
        if (str_starts_with($class, 'rpcbedice\\')) {
            self::loadIce();
            return;
        }
        foreach (self::$roots as $prefix => $dirs) {
            if (!str_starts_with($class, $prefix)) {
                continue;
            }
            $rel = str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
            foreach ($dirs as $dir) {
                if (is_file($dir . '/' . $rel)) {
                    require $dir . '/' . $rel;
                    return;
                }
            }
        }
    }

    /** Ice's generated code is one file of many classes; it needs the Ice runtime first. */
    public static function loadIce(): void
    {
        if (!extension_loaded('ice')) {
            throw new \RuntimeException('the ice extension is not loaded (php -d extension=php-client/ext/build/ice.so)');
        }
        require_once 'Ice.php';
        require_once __DIR__ . '/gen/ice/data.php';
    }
}

Autoload::register();
