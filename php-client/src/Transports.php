<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/** Transports makes the transport a Config names, one per caller process. */
final class Transports
{
    /** $persistent: connections outlive the PHP request (the front under php -S). */
    public static function make(Config $cfg, int $caller, bool $persistent = false): Transport
    {
        $id = "$cfg->clientId-$caller";
        return match ($cfg->proto) {
            'grpc' => new GrpcTransport($cfg->addr, $id, $cfg->timeout),
            'thrift' => new ThriftTransport($cfg->host(), $cfg->port(), $id, $cfg->timeout, $cfg->accel,
            $cfg->thriftTransport, $cfg->thriftProtocol, $persistent),
            'http' => new HttpTransport($cfg->addr, $id, $cfg->timeout, $cfg->keepAlive),
            'ice' => new IceTransport($cfg->host(), $cfg->port(), $id, $cfg->timeout, $persistent),
        };
    }
}
