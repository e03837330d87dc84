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
        $tls = $cfg->secure() ? ['ca' => $cfg->caCert, 'cert' => $cfg->cert, 'key' => $cfg->key,
            'name' => $cfg->serverName, 'version' => $cfg->tlsVersion] : null;
        return match ($cfg->proto) {
            'grpc' => new GrpcTransport($cfg->addr, $id, $cfg->timeout, $tls, $cfg->perCall()),
            'thrift' => new ThriftTransport($cfg->host(), $cfg->port(), $id, $cfg->timeout, $cfg->accel,
                $cfg->thriftTransport, $cfg->thriftProtocol, $persistent,
                $cfg->secure() ? Tls::streamOptions($cfg) : null, $cfg->perCall()),
            'http' => new HttpTransport($cfg->addr, $id, $cfg->timeout, $cfg->keepAlive, $tls, $cfg->perCall()),
            'ice' => new IceTransport($cfg->host(), $cfg->port(), $id, $cfg->timeout, $persistent, $tls, $cfg->perCall()),
        };
    }
}
