<?php
declare(strict_types=1);

namespace Rpcbed\Client;

use rpcbedice\Auth;
use rpcbedice\DataError;
use rpcbedice\DataListRequest;
use rpcbedice\DataPrxHelper;
use rpcbedice\DataTypeRequest;

/**
 * ZeroC Ice through php-zeroc-ice's runtime (Ice.php) and build-ext.sh's ice.so
 * (its extension with upstream's PHP 8.2 fixes: Extensions::ice), calling the Java
 * Ice baseline server (go-server speaks no Ice). One communicator, hence one
 * connection, per caller process. The object identity is RPCBED_ICE_IDENTITY (default "data").
 * An Ice local exception (connection refused or lost, timeout) is a PHP exception
 * like any other: failure() gives it its kind.
 *
 * With TLS the endpoint is IceSSL's (ssl -h -p), the IceSSL plug-in (C++, OpenSSL)
 * checking the server's certificate against -cacert and the host; with -connect
 * per-call every call has a communicator of its own, destroyed after it.
 */
final class IceTransport extends IdlTransport
{
    protected const NAME = 'ice';
    protected const DATA_ERROR = DataError::class;

    private ?\Ice\Communicator $ic = null;
    /** @var \rpcbedice\DataPrx */
    private $data;

    private string $key = '';
    private \Ice\InitializationData $init;
    private string $proxy;
    private int $ms;

    /**
     * @param ?array{ca: string, cert: string, key: string, name: string, version: string} $tls
     *        PEM files and -tls-version for IceSSL; null: tcp
     */
    public function __construct(
        private string $host,
        private int $port,
        string $clientId,
        private float $timeoutSeconds,
        private bool $persistent = false,
        private ?array $tls = null,
        private bool $perCall = false,
    ) {
        parent::__construct($clientId);
        if (!extension_loaded('ice')) {
            throw new \RuntimeException('the ice extension is not loaded (php-client/ext/build/ice.so: run php-client/build-ext.sh)');
        }
        Autoload::loadIce();
        $ms = $this->ms = max(1, (int) ($timeoutSeconds * 1000));
        $init = $this->init = new \Ice\InitializationData();
        $init->properties = \Ice\createProperties();
        $init->properties->setProperty('Ice.Warn.Connections', '0');
        $init->properties->setProperty('Ice.RetryIntervals', '-1');
        // DataList(100000) is about 3 MB; Ice's default limit is 1 MB.
        $init->properties->setProperty('Ice.MessageSizeMax', '65536');
        if ($tls !== null) {
            // IceSSL (C++, OpenSSL), loaded as a plug-in: the server's certificate checked
            // against -cacert and against the host of the endpoint; ours with mtls.
            foreach ([
                'Ice.Plugin.IceSSL' => 'IceSSL:createIceSSL',
                'IceSSL.CAs' => $tls['ca'],
                'IceSSL.VerifyPeer' => '2',
                'IceSSL.CheckCertName' => '1',
                'IceSSL.CertFile' => $tls['cert'],
                'IceSSL.KeyFile' => $tls['key'],
                'IceSSL.Protocols' => $tls['version'] === '1.2' ? 'TLS1_2' : '',
            ] as $k => $v) {
                if ($v !== '') {
                    $init->properties->setProperty($k, $v);
                }
            }
        }
        $identity = getenv('RPCBED_ICE_IDENTITY') ?: 'data';
        $this->proxy = sprintf('%s:%s -h %s -p %d -t %d', $identity, $tls !== null ? 'ssl' : 'tcp', $host, $port, $ms);
        // persistent: the communicator (and so its connection) is registered with
        // php-zeroc-ice, which keeps it for later PHP requests of this process.
        $this->key = "rpcbed-$host-$port-$ms" . ($tls !== null ? '-ssl' : '');
        $ic = $persistent ? \Ice\find($this->key) : null;
        if ($ic !== null) {
            $this->ic = $ic;
            $this->connection = 'reused';
            $this->proxyOf($ic);
        } elseif (!$perCall) {
            $this->connect();
            if ($persistent) {
                \Ice\register($this->ic, $this->key);
            }
        }
    }

    /** A new communicator (its connection made at its first call). */
    private function connect(): void
    {
        $this->ic = \Ice\initialize($this->init);
        $this->proxyOf($this->ic);
    }

    private function proxyOf(\Ice\Communicator $ic): void
    {
        $this->data = DataPrxHelper::uncheckedCast($ic->stringToProxy($this->proxy))->ice_invocationTimeout($this->ms);
    }

    /** -connect per-call: a communicator, and so a connection, of the call's own, as a PHP request without a registered one. */
    protected function before(): void
    {
        if ($this->perCall && $this->ic === null) {
            $this->connect();
        }
    }

    /** The first call on this communicator's connection is counted as its opening. */
    private bool $counted = false;

    protected function after(): void
    {
        if ($this->perCall && $this->ic !== null) {
            $this->ic->destroy();
            $this->ic = null;
            $this->counted = false;
        }
    }

    protected function callDataType(string $groupName, string $enName): object
    {
        return $this->answered(fn () => $this->data->DataType(new DataTypeRequest(new Auth($this->clientId, $this->token), $groupName, $enName)));
    }

    protected function callDataList(int $n): object
    {
        return $this->answered(fn () => $this->data->DataList(new DataListRequest(new Auth($this->clientId, $this->token), $n)));
    }

    /**
     * Runs one call and counts its connection once it answered (a reply or a
     * declared DataError): Ice opens it inside the call and tells nothing of it.
     */
    private function answered(\Closure $call): object
    {
        try {
            $r = $call();
        } catch (DataError $e) {
            $this->opened();
            throw $e;
        }
        $this->opened();
        return $r;
    }

    private function opened(): void
    {
        if ($this->counted) {
            return;
        }
        $this->counted = true;
        $this->net->open($this->tls !== null);
        if ($this->tls !== null && $this->net->cipher === '-') {
            // IceSSL's connection info names the suite (OpenSSL's name), not the
            // version or the group; the suite implies the version.
            $info = $this->data->ice_getConnection()->getInfo();
            $this->net->cipher = Tls::cipher($info->cipher ?? null);
            $this->net->version = Tls::versionOfCipher($this->net->cipher);
        }
    }

    /** Ice encoding 1.1 of the response's fields, counted from what was decoded (with $measure only). */
    protected function responseBytes(object $resp, bool $list, bool $measure): int
    {
        if (!$measure) {
            return -1;
        }
        if (!$list) {
            return self::strSize($resp->auth->token) + 8 + self::strSize($resp->cnName);
        }
        $items = $resp->items ?? [];
        $bytes = self::strSize($resp->auth->token) + self::sizeSize(count($items));
        foreach ($items as $it) {
            $bytes += 8 + self::strSize($it->name) + 8 + 8 + 1 + 8 + self::strSize($it->note) + self::sizeSize(count($it->tags));
            foreach ($it->tags as $tag) {
                $bytes += self::strSize($tag);
            }
        }
        return $bytes;
    }

    /** Ice encoding 1.1: a size is one byte below 255, else 255 plus a 4-byte int. */
    private static function sizeSize(int $n): int
    {
        return $n < 255 ? 1 : 5;
    }

    private static function strSize(string $s): int
    {
        return self::sizeSize(strlen($s)) + strlen($s);
    }

    protected function failure(\Throwable $e): CallError
    {
        $kind = match (true) {
            $e instanceof \Ice\ConnectFailedException, $e instanceof \Ice\ConnectTimeoutException,
            $e instanceof \Ice\DNSException => CallError::CONNECT,
            $e instanceof \Ice\TimeoutException, $e instanceof \Ice\InvocationTimeoutException => CallError::TIMEOUT,
            $e instanceof \Ice\ConnectionLostException, $e instanceof \Ice\SocketException,
            $e instanceof \Ice\CloseConnectionException => CallError::RECEIVE,
            default => CallError::EXCEPTIONS,
        };
        return new CallError($kind, 'ice: ' . get_class($e) . ($e->getMessage() !== '' ? ': ' . $e->getMessage() : ''), $e);
    }

    /** Drops the communicator for good, a registered one too: its connection's state is unknown. */
    public function discard(): void
    {
        if ($this->persistent) {
            \Ice\unregister($this->key);
        }
        $this->ic?->destroy();
        $this->ic = null;
    }

    public function close(): void
    {
        if (!$this->persistent) {
            $this->ic?->destroy();
            $this->ic = null;
        }
    }
}
