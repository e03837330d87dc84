<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * Transport is one protocol's client, owned by one caller process. It keeps the
 * auth token of its previous response and sends it with the next call.
 */
interface Transport
{
    /**
     * Calls DataType. With $measure the reply carries the encoded response size.
     *
     * @throws CallError
     */
    public function dataType(string $groupName, string $enName, bool $measure = false): Reply;

    /**
     * Calls DataList(n). With $measure the reply carries the encoded response size.
     *
     * @throws CallError
     */
    public function dataList(int $n, bool $measure = false): Reply;

    /**
     * Calls DataList(n) and returns every item in the JSON document's shape
     * (id, name, createdAt, score, enabled, parentId, note, tags): the front's call.
     *
     * @return list<array<string, mixed>>
     * @throws CallError
     */
    public function dataListItems(int $n): array;

    /** The server's name as it announces itself, '' when the protocol has no such thing. */
    public function serverSoftware(): string;

    /**
     * Whether this transport's connection was made for it ('new') or kept from an
     * earlier PHP request of the same process ('reused'): the front's proof that
     * php -S workers keep their channels (X-Rpcbed-Conn).
     */
    public function connection(): string;

    /** The connections (and TLS handshakes) this transport opened so far. */
    public function net(): Net;

    public function close(): void;
}
