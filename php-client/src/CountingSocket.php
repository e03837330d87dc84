<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/** A TSocket that counts the bytes it reads, for Document Length and Total transferred. */
final class CountingSocket extends \Thrift\Transport\TSocket
{
    public int $bytesRead = 0;

    public function read($len)
    {
        $data = parent::read($len);
        $this->bytesRead += strlen($data);
        return $data;
    }
}
