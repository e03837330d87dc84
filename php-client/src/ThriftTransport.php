<?php
declare(strict_types=1);

namespace Rpcbed\Client;

use Rpcbed\Thrift\Auth;
use Rpcbed\Thrift\DataClient;
use Rpcbed\Thrift\DataError;
use Rpcbed\Thrift\DataListRequest;
use Rpcbed\Thrift\DataTypeRequest;
use Thrift\Exception\TApplicationException;
use Thrift\Exception\TException;
use Thrift\Exception\TTransportException;
use Thrift\Protocol\TBinaryProtocol;
use Thrift\Protocol\TBinaryProtocolAccelerated;
use Thrift\Protocol\TCompactProtocol;
use Thrift\Transport\TBufferedTransport;
use Thrift\Transport\TFramedTransport;
use Thrift\Transport\TTransport;

/**
 * Thrift through Debian's php-thrift: TSocket + TFramedTransport + TBinaryProtocol,
 * as go-server serves it by default (buffered / compact on request). With $accel
 * the thrift_protocol extension encodes and decodes (TBinaryProtocolAccelerated). One connection per worker process,
 * reopened after a transport error.
 */
final class ThriftTransport implements Transport
{
    private CountingSocket $socket;
    private TTransport $transport;
    /** Bytes of framing around each response (the frame's 4-byte length), not counted. */
    private int $framing;
    private DataClient $client;
    private string $token = '';

    public function __construct(
        string $host,
        int $port,
        private string $clientId,
        float $timeoutSeconds,
        bool $accel = false,
        string $transport = 'framed',
        string $protocol = 'binary',
        private bool $persistent = false,
    ) {
        $ms = max(1, (int) ($timeoutSeconds * 1000));
        // persistent: pfsockopen, so the connection outlives the PHP request (the front).
        $this->socket = new CountingSocket($host, $port, $persistent);
        $this->socket->setSendTimeout($ms);
        $this->socket->setRecvTimeout($ms);
        $framed = $transport === 'framed';
        $this->transport = $framed ? new TFramedTransport($this->socket, true, true) : new TBufferedTransport($this->socket);
        $this->framing = $framed ? 4 : 0;
        if ($accel && !function_exists('thrift_protocol_write_binary')) {
            throw new \RuntimeException('-accel: the thrift_protocol extension is not loaded');
        }
        $proto = match (true) {
            $protocol === 'compact' => new TCompactProtocol($this->transport),
            $accel => new TBinaryProtocolAccelerated($this->transport),
            default => new TBinaryProtocol($this->transport),
        };
        $this->client = new DataClient($proto);
    }

    private string $connection = 'new';

    public function connection(): string
    {
        return $this->connection;
    }

    private function open(): void
    {
        if ($this->transport->isOpen()) {
            return;
        }
        try {
            $this->transport->open();
            $this->connection = $this->socket->position() > 0 ? 'reused' : 'new';
        } catch (TException $e) {
            // No close(): php-thrift's TSocket::close() fails on a socket that never opened.
            throw new CallError(CallError::CONNECT, 'thrift: ' . $e->getMessage(), $e);
        }
    }

    private function auth(): Auth
    {
        return new Auth(['clientId' => $this->clientId, 'token' => $this->token]);
    }

    public function dataType(string $groupName, string $enName, bool $measure = false): Reply
    {
        $this->open();
        $before = $this->socket->bytesRead;
        try {
            $resp = $this->client->DataType(new DataTypeRequest([
                'auth' => $this->auth(), 'groupName' => $groupName, 'enName' => $enName,
            ]));
        } catch (\Throwable $e) {
            throw $this->error($e);
        }
        $this->token = (string) $resp->auth?->token;
        // The message: its header and the result struct, without the frame length.
        return new Reply($this->token, (int) $resp->codeId, (string) $resp->cnName, 0, null, null,
            $this->socket->bytesRead - $before - $this->framing);
    }

    public function dataList(int $n, bool $measure = false): Reply
    {
        $this->open();
        $before = $this->socket->bytesRead;
        try {
            $resp = $this->client->DataList(new DataListRequest(['auth' => $this->auth(), 'n' => $n]));
        } catch (\Throwable $e) {
            throw $this->error($e);
        }
        $this->token = (string) $resp->auth?->token;
        $items = $resp->items ?? [];
        $count = count($items);
        return new Reply($this->token, 0, '', $count,
            $count ? self::item($items[0]) : null,
            $count ? self::item($items[$count - 1]) : null,
            $this->socket->bytesRead - $before - $this->framing);
    }

    public function dataListItems(int $n): array
    {
        $this->open();
        try {
            $resp = $this->client->DataList(new DataListRequest(['auth' => $this->auth(), 'n' => $n]));
        } catch (\Throwable $e) {
            throw $this->error($e);
        }
        $this->token = (string) $resp->auth?->token;
        return array_map(self::item(...), $resp->items ?? []);
    }

    private function error(\Throwable $e): CallError
    {
        if ($e instanceof DataError) {
            if ($e->code === 16) {
                $this->token = '';
            }
            return new CallError(CallError::kindForStatus((int) $e->code), "thrift DataError $e->code: $e->message", $e);
        }
        // Anything but a declared exception leaves the connection in an unknown state.
        $this->close();
        if ($e instanceof TApplicationException) {
            return new CallError(CallError::EXCEPTIONS, 'thrift: ' . $e->getMessage(), $e);
        }
        if ($e instanceof TTransportException) {
            $kind = $e->getCode() === TTransportException::TIMED_OUT || str_contains($e->getMessage(), 'timed out')
                ? CallError::TIMEOUT : CallError::RECEIVE;
            return new CallError($kind, 'thrift: ' . $e->getMessage(), $e);
        }
        return new CallError(CallError::RECEIVE, 'thrift: ' . get_class($e) . ': ' . $e->getMessage(), $e);
    }

    /** @return array<string, mixed> */
    private static function item(\Rpcbed\Thrift\Item $it): array
    {
        return [
            'id' => (int) $it->id, 'name' => (string) $it->name, 'createdAt' => (int) $it->createdAt,
            'score' => (float) $it->score, 'enabled' => (bool) $it->enabled, 'parentId' => (int) $it->parentId,
            'note' => (string) $it->note, 'tags' => $it->tags ?? [],
        ];
    }

    public function serverSoftware(): string
    {
        return '';
    }

    /** Drops the connection for good, a persistent one too: its state is unknown. */
    public function discard(): void
    {
        $this->close();
    }

    /** Closes the connection, a persistent one too (after an error its state is unknown). */
    public function close(): void
    {
        if ($this->transport->isOpen()) {
            $this->transport->close();
        }
    }
}
