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
 */
final class IceTransport extends IdlTransport
{
    protected const NAME = 'ice';
    protected const DATA_ERROR = DataError::class;

    private \Ice\Communicator $ic;
    /** @var \rpcbedice\DataPrx */
    private $data;

    private string $key = '';

    public function __construct(
        private string $host,
        private int $port,
        string $clientId,
        private float $timeoutSeconds,
        private bool $persistent = false,
    ) {
        parent::__construct($clientId);
        if (!extension_loaded('ice')) {
            throw new \RuntimeException('the ice extension is not loaded (php-client/ext/build/ice.so: run php-client/build-ext.sh)');
        }
        Autoload::loadIce();
        $ms = max(1, (int) ($timeoutSeconds * 1000));
        $init = new \Ice\InitializationData();
        $init->properties = \Ice\createProperties();
        $init->properties->setProperty('Ice.Warn.Connections', '0');
        $init->properties->setProperty('Ice.RetryIntervals', '-1');
        // DataList(100000) is about 3 MB; Ice's default limit is 1 MB.
        $init->properties->setProperty('Ice.MessageSizeMax', '65536');
        // persistent: the communicator (and so its connection) is registered with
        // php-zeroc-ice, which keeps it for later PHP requests of this process.
        $key = $this->key = "rpcbed-$host-$port-$ms";
        $ic = $persistent ? \Ice\find($key) : null;
        if ($ic !== null) {
            $this->ic = $ic;
            $this->connection = 'reused';
        } else {
            $this->ic = \Ice\initialize($init);
            if ($persistent) {
                \Ice\register($this->ic, $key);
            }
        }
        $identity = getenv('RPCBED_ICE_IDENTITY') ?: 'data';
        $prx = $this->ic->stringToProxy(sprintf('%s:tcp -h %s -p %d -t %d', $identity, $host, $port, $ms));
        $this->data = DataPrxHelper::uncheckedCast($prx)->ice_invocationTimeout($ms);
    }

    protected function callDataType(string $groupName, string $enName): object
    {
        return $this->data->DataType(new DataTypeRequest(new Auth($this->clientId, $this->token), $groupName, $enName));
    }

    protected function callDataList(int $n): object
    {
        return $this->data->DataList(new DataListRequest(new Auth($this->clientId, $this->token), $n));
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
        $this->ic->destroy();
    }

    public function close(): void
    {
        if (!$this->persistent) {
            $this->ic->destroy();
        }
    }
}
