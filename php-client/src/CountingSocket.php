<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/** A TSocket that counts the bytes it reads, for Document Length and Total transferred. */
final class CountingSocket extends \Thrift\Transport\TSocket
{
    public int $bytesRead = 0;

    /** Bytes the stream has carried; above 0 right after open() = a persistent socket reused. */
    public function position(): int
    {
        return is_resource($this->handle_) ? (int) ftell($this->handle_) : 0;
    }

    public function read($len)
    {
        $data = parent::read($len);
        $this->bytesRead += strlen($data);
        return $data;
    }
}
