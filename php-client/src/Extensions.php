<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * Extensions loads exactly what a protocol and runtime need. php-client restarts
 * PHP with -n (no ini: no extension a run does not name, and not php-zeroc-ice's
 * ice.so, which its ice.ini enables for every PHP) and names every extension with
 * -d extension=... (hostArgs). Ice runs load build-ext.sh's ice.so, php-zeroc-ice's
 * extension with upstream's PHP 8.2 fixes (3.7.8's dies with a multi-GB
 * allocation on an Ice local exception: README, Known library problems); its PHP
 * runtime files (Ice.php) stay php-zeroc-ice's.
 *
 * Runtime c (the default, as PHP services run): gRPC with Google's protobuf C
 * extension (protobuf.so, built by build-ext.sh) beside grpc.so, Thrift's binary
 * protocol with thrift_protocol.so. Runtime pure: no protobuf.so, so the pure-PHP
 * runtime (php-google-protobuf) decodes, and no thrift_protocol.so.
 *
 * The bench forks its callers from that process, so they inherit its extensions,
 * except grpc.so: a forked copy of an initialised gRPC core hangs on its first
 * call (also with grpc.enable_fork_support), so the parent never loads it and each
 * caller loads it with dl() after the fork (loadAfterFork). dl() takes a bare file
 * name from extension_dir, so extension_dir is grpc.so's directory and the other
 * extensions are named by their full path.
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
            'ice' => [self::ice()],
            default => [],
        };
    }

    /** ice.so (php-zeroc-ice's extension, patched for PHP 8.2): RPCBED_ICE_EXT, else build-ext.sh's. */
    public static function ice(): string
    {
        return getenv('RPCBED_ICE_EXT') ?: dirname(__DIR__) . '/ext/build/ice.so';
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

    /**
     * The file of the ice extension this process loaded, read from /proc/self/maps
     * (PHP names no extension's file): null when none is loaded or it is not known.
     * Tells build-ext.sh's ice.so from php-zeroc-ice's.
     */
    public static function loadedIce(): ?string
    {
        if (!extension_loaded('ice')) {
            return null;
        }
        $maps = @file_get_contents('/proc/self/maps');
        if (!is_string($maps) || !preg_match('~\s(/\S*/ice\.so)$~m', $maps, $m)) {
            return null;
        }
        return $m[1];
    }

    /** @return string|null why this process's ice extension is not build-ext.sh's patched one (null: it is) */
    public static function iceNotPatched(): ?string
    {
        $loaded = self::loadedIce();
        if ($loaded === null) {
            return extension_loaded('ice') ? 'cannot tell which ice.so this PHP loaded (no /proc/self/maps)' : 'the ice extension is not loaded';
        }
        $want = realpath(self::ice());
        if ($want === false || realpath($loaded) !== $want) {
            return "this PHP loaded $loaded, not " . self::ice() . ' (php-zeroc-ice 3.7.8 crashes under PHP 8.2: run php with'
                . ' -n or PHP_INI_SCAN_DIR=' . dirname(self::ice()) . '/php-conf.d and -d extension=' . self::ice() . ', as make test-php does)';
        }
        return null;
    }

    /** @return string|null what a run of $cfg lacks on disk, as an error message */
    public static function missing(Config $cfg): ?string
    {
        if ($cfg->proto === 'ice') {
            return is_file(self::ice()) ? null
                : self::ice() . ' is missing: run php-client/build-ext.sh (make setup-php); the system\'s php-zeroc-ice 3.7.8 crashes under PHP 8.2';
        }
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

    /** @return list<string> php's arguments before the script, for one run of $cfg */
    public static function phpArgs(Config $cfg): array
    {
        return self::hostArgs([$cfg->proto], $cfg->accel, $cfg->runtime);
    }

    /**
     * php's arguments before the script for a process that runs benches of these
     * protocols and forks their callers: every extension they need but grpc.so
     * (loadAfterFork), plus posix (a caller ends itself without PHP's shutdown).
     *
     * @param list<string> $protos
     * @param bool $quietStartup a worker for every protocol: no start-up warnings,
     *        extensions that are not installed left out (hostable says so)
     * @return list<string>
     */
    public static function hostArgs(array $protos, bool $accel, string $runtime, bool $quietStartup = false): array
    {
        $args = ['-n', '-d', 'memory_limit=1G', '-d', 'error_reporting=E_ALL & ~E_DEPRECATED', '-d', 'display_errors=stderr',
            '-d', 'extension_dir=' . dirname(self::grpc())];
        if ($quietStartup) {
            array_push($args, '-d', 'display_startup_errors=0', '-d', 'log_errors=0');
        }
        $exts = ['posix'];
        foreach ($protos as $p) {
            array_push($exts, ...self::for($p, $accel, $runtime));
        }
        foreach (array_unique($exts) as $e) {
            if ($e === self::grpc()) {
                continue;
            }
            $path = str_contains($e, '/') ? $e : PHP_EXTENSION_DIR . "/$e.so";
            if ($quietStartup && !is_file($path)) {
                continue;
            }
            $args[] = '-d';
            $args[] = 'extension=' . $path;
        }
        return $args;
    }

    /**
     * Whether this process can run $cfg in its forked callers: it has loaded
     * exactly the run's runtime (protobuf.so or not) and every extension the run
     * needs but grpc.so.
     */
    public static function hostable(Config $cfg): bool
    {
        if ($cfg->proto === 'grpc' && extension_loaded('grpc')) {
            return false; // a forked gRPC core hangs
        }
        if ($cfg->proto === 'grpc' && extension_loaded('protobuf') !== ($cfg->runtime === 'c')) {
            return false;
        }
        foreach (self::for($cfg->proto, $cfg->accel, $cfg->runtime) as $e) {
            if ($e !== self::grpc() && !extension_loaded(basename($e, '.so'))) {
                return false;
            }
        }
        return true;
    }

    /** In a forked caller: loads what the parent must not (grpc.so). */
    public static function loadAfterFork(string $proto): void
    {
        if ($proto !== 'grpc' || extension_loaded('grpc')) {
            return;
        }
        $so = self::grpc();
        if (ini_get('extension_dir') !== dirname($so)) {
            throw new \RuntimeException('grpc.so is loaded after the fork with dl(), which needs extension_dir=' . dirname($so)
                . ' (bin/php-client sets it)');
        }
        if (!@dl(basename($so))) {
            throw new \RuntimeException('dl(' . basename($so) . ') failed: ' . (error_get_last()['message'] ?? 'no reason given'));
        }
    }

    /**
     * In the parent, before the fork: compiles the protocol's generated code and
     * builds what it builds once per process (the protobuf descriptor pool), so
     * every caller inherits it instead of doing it again.
     */
    public static function preload(string $proto): void
    {
        switch ($proto) {
            case 'grpc':
                class_exists(GrpcTransport::class);
                new \Rpcbed\Pb\DataListRequest(); // builds the descriptor pool
                new \Rpcbed\Pb\DataListResponse();
                new \Rpcbed\Pb\DataTypeResponse();
                break;
            case 'thrift':
                class_exists(ThriftTransport::class);
                class_exists(\Rpcbed\Thrift\DataClient::class);
                class_exists(\Rpcbed\Thrift\DataListResponse::class);
                class_exists(\Rpcbed\Thrift\Item::class);
                class_exists(\Thrift\Protocol\TBinaryProtocolAccelerated::class);
                class_exists(\Thrift\Transport\TFramedTransport::class);
                break;
            case 'http':
                class_exists(HttpTransport::class);
                break;
            case 'ice':
                if (extension_loaded('ice')) {
                    class_exists(IceTransport::class);
                    Autoload::loadIce();
                }
                break;
        }
        class_exists(Reply::class);
        class_exists(Verify::class);
        class_exists(Versions::class);
    }
}
