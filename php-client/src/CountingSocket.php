<?php
declare(strict_types=1);

namespace Rpcbed\Client;

use Thrift\Exception\TException;
use Thrift\Exception\TTransportException;

/**
 * A TSocket that counts the bytes it reads (Document Length, Total transferred)
 * and the connections it opens. With $ssl it opens a TLS stream instead
 * (tls://, PHP's OpenSSL streams), as php-thrift's TSSLSocket does upstream
 * (Debian's php-thrift does not ship it); reads and writes stay TSocket's, so the
 * framing and the byte counts are the plaintext transport's.
 */
final class CountingSocket extends \Thrift\Transport\TSocket
{
    public int $bytesRead = 0;
    public Net $net;

    /**
     * @param ?array<string, mixed> $ssl the "ssl" stream context options (Tls::streamOptions); null: plaintext
     */
    public function __construct(string $host, int $port, bool $persist = false, private ?array $ssl = null)
    {
        parent::__construct($host, $port, $persist);
        $this->net = new Net();
    }

    /** Bytes the stream has carried; above 0 right after open() = a persistent socket reused. */
    public function position(): int
    {
        return is_resource($this->handle_) ? (int) ftell($this->handle_) : 0;
    }

    public function open()
    {
        if ($this->ssl === null) {
            parent::open();
            if ($this->position() === 0) {
                $this->net->open(false);
            }
            return;
        }
        if ($this->isOpen()) {
            throw new TTransportException('Socket already connected', TTransportException::ALREADY_OPEN);
        }
        // TCP_NODELAY, as TSocket sets it when PHP has its sockets extension: without it
        // Nagle holds the first request behind the client's unacknowledged Finished,
        // and the server's delayed ACK made each per-call handshake 40 ms longer.
        $ctx = stream_context_create(['ssl' => $this->ssl, 'socket' => ['tcp_nodelay' => true]]);
        $flags = STREAM_CLIENT_CONNECT | ($this->persist_ ? STREAM_CLIENT_PERSISTENT : 0);
        $host = str_contains($this->host_, ':') ? "[$this->host_]" : $this->host_;
        // PHP puts the handshake's reason in a warning, not in $errstr.
        $warnings = [];
        set_error_handler(static function (int $no, string $msg) use (&$warnings): bool {
            $warnings[] = preg_replace('/\s+/', ' ', $msg);
            return true;
        });
        try {
            $h = stream_socket_client("tls://$host:$this->port_", $errno, $errstr,
                $this->sendTimeoutSec_ + $this->sendTimeoutUsec_ / 1e6, $flags, $ctx);
        } finally {
            restore_error_handler();
        }
        if ($h === false) {
            throw new TException("TSocket: Could not connect to $this->host_:$this->port_ over TLS ("
                . trim("$errstr [$errno] " . implode('; ', $warnings)) . ')');
        }
        $this->handle_ = $h;
        if ($this->position() === 0) {
            $this->net->open(true);
            ['version' => $this->net->version, 'cipher' => $this->net->cipher] = Tls::ofStream($h);
        }
    }

    public function read($len)
    {
        $data = parent::read($len);
        $this->bytesRead += strlen($data);
        return $data;
    }
}
