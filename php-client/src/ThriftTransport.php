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
 * the thrift_protocol extension encodes and decodes (TBinaryProtocolAccelerated). One connection per caller process,
 * reopened after a transport error; with -connect per-call one per call. With TLS the socket is a PHP
 * OpenSSL stream (CountingSocket), the framing and counting unchanged.
 */
final class ThriftTransport extends IdlTransport
{
    protected const NAME = 'thrift';
    protected const DATA_ERROR = DataError::class;

    private CountingSocket $socket;
    private TTransport $transport;
    /** Bytes of framing around each response (the frame's 4-byte length), not counted. */
    private int $framing;
    private DataClient $client;
    /** The socket's bytes read before the current call. */
    private int $mark = 0;

    public function __construct(
        string $host,
        int $port,
        string $clientId,
        float $timeoutSeconds,
        bool $accel = false,
        string $transport = 'framed',
        string $protocol = 'binary',
        private bool $persistent = false,
        ?array $ssl = null,
        private bool $perCall = false,
    ) {
        parent::__construct($clientId);
        $ms = max(1, (int) ($timeoutSeconds * 1000));
        // persistent: pfsockopen, so the connection outlives the PHP request (the front).
        // $ssl: a TLS stream with these options (Tls::streamOptions), ALPN none.
        $this->socket = new CountingSocket($host, $port, $persistent, $ssl);
        $this->net = $this->socket->net;
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

    /** Opens the connection when it is not open, and marks the bytes read so far. */
    protected function before(): void
    {
        if (!$this->transport->isOpen()) {
            try {
                $this->transport->open();
                $this->connection = $this->socket->position() > 0 ? 'reused' : 'new';
            } catch (TException $e) {
                // No close(): php-thrift's TSocket::close() fails on a socket that never opened.
                throw new CallError(CallError::CONNECT, 'thrift: ' . $e->getMessage(), $e);
            }
        }
        $this->mark = $this->socket->bytesRead;
    }

    /** -connect per-call: the call's connection is closed after it, so the next opens its own. */
    protected function after(): void
    {
        if ($this->perCall) {
            $this->close();
        }
    }

    private function auth(): Auth
    {
        return new Auth(['clientId' => $this->clientId, 'token' => $this->token]);
    }

    protected function callDataType(string $groupName, string $enName): object
    {
        return $this->client->DataType(new DataTypeRequest([
            'auth' => $this->auth(), 'groupName' => $groupName, 'enName' => $enName,
        ]));
    }

    protected function callDataList(int $n): object
    {
        return $this->client->DataList(new DataListRequest(['auth' => $this->auth(), 'n' => $n]));
    }

    /** The message: its header and the result struct, without the frame length (always measured). */
    protected function responseBytes(object $resp, bool $list, bool $measure): int
    {
        return $this->socket->bytesRead - $this->mark - $this->framing;
    }

    protected function failure(\Throwable $e): CallError
    {
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
