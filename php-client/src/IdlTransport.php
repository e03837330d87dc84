<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * IdlTransport is what Thrift's and Ice's transports share: clients generated from
 * an IDL (idl/data.thrift, idl/data.ice) whose calls take an Auth, answer with one
 * response struct and declare one exception, DataError {code, message}. It carries
 * the token from each response into the next request, turns a DataError into its
 * CallError kind (docs/report-format.md) and hands items back in the JSON
 * document's shape. Each subclass makes the calls and says what a failure that is
 * not a DataError means on its wire.
 */
abstract class IdlTransport implements Transport
{
    /** The protocol's name in error messages: thrift, ice. */
    protected const NAME = '';
    /** The generated DataError class. */
    protected const DATA_ERROR = '';

    protected string $token = '';
    /** 'reused' when the connection was kept from an earlier PHP request (the front). */
    protected string $connection = 'new';
    protected Net $net;

    protected function __construct(protected string $clientId)
    {
        $this->net = new Net();
    }

    /** Calls DataType with the current token; returns the generated response. */
    abstract protected function callDataType(string $groupName, string $enName): object;

    /** Calls DataList(n) with the current token; returns the generated response. */
    abstract protected function callDataList(int $n): object;

    /**
     * The encoded size of the response just received ($list: DataList's), -1 when
     * it is not measured.
     */
    abstract protected function responseBytes(object $resp, bool $list, bool $measure): int;

    /** The CallError for a failure that is not a declared DataError. */
    abstract protected function failure(\Throwable $e): CallError;

    /** Before each call: a subclass opens its connection here. */
    protected function before(): void
    {
    }

    /** After each call, answered or failed: a subclass closes a per-call connection here. */
    protected function after(): void
    {
    }

    public function dataType(string $groupName, string $enName, bool $measure = false): Reply
    {
        $resp = $this->answer(false, $groupName, $enName);
        return new Reply($this->token, (int) $resp->codeId, (string) $resp->cnName, 0, null, null,
            $this->responseBytes($resp, false, $measure));
    }

    public function dataList(int $n, bool $measure = false): Reply
    {
        $resp = $this->answer(true, '', '', $n);
        $items = $resp->items ?? [];
        $count = count($items);
        return new Reply($this->token, 0, '', $count,
            $count ? self::item($items[0]) : null,
            $count ? self::item($items[$count - 1]) : null,
            $this->responseBytes($resp, true, $measure));
    }

    public function dataListItems(int $n): array
    {
        return array_map(self::item(...), $this->answer(true, '', '', $n)->items ?? []);
    }

    /** One call ($list: DataList(n), else DataType), its token kept for the next. */
    private function answer(bool $list, string $groupName, string $enName, int $n = 0): object
    {
        try {
            $this->before();
            try {
                $resp = $list ? $this->callDataList($n) : $this->callDataType($groupName, $enName);
            } catch (\Throwable $e) {
                throw $this->error($e);
            }
        } finally {
            $this->after();
        }
        $this->token = (string) $resp->auth?->token;
        return $resp;
    }

    private function error(\Throwable $e): CallError
    {
        $declared = static::DATA_ERROR;
        if ($e instanceof $declared) {
            if ($e->code === 16) {
                $this->token = '';
            }
            return new CallError(CallError::kindForStatus((int) $e->code), static::NAME . " DataError $e->code: $e->message", $e);
        }
        return $this->failure($e);
    }

    /**
     * One generated Item in the JSON document's shape.
     *
     * @return array<string, mixed>
     */
    private static function item(object $it): array
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

    public function connection(): string
    {
        return $this->connection;
    }

    public function net(): Net
    {
        return $this->net;
    }
}
