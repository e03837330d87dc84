<?php
declare(strict_types=1);

namespace Rpcbed\Client;

use Rpcbed\Pb\Auth;
use Rpcbed\Pb\DataClient;
use Rpcbed\Pb\DataListRequest;
use Rpcbed\Pb\DataTypeRequest;

/**
 * gRPC through the official extension (grpc.so) and the generated Grpc\BaseStub
 * client, as PHP users call gRPC. One channel per worker process.
 */
final class GrpcTransport implements Transport
{
    private DataClient $client;
    private string $token = '';
    private string $server = '';
    private int $timeoutUs;
    /** When the current call was made (hrtime ns): its deadline is timeoutUs after. */
    private int $callStart = 0;
    private string $connection;

    public function __construct(string $addr, private string $clientId, float $timeoutSeconds)
    {
        if (!extension_loaded('grpc')) {
            throw new \RuntimeException('the grpc extension is not loaded: run php-client/build-ext.sh');
        }
        $this->timeoutUs = (int) ($timeoutSeconds * 1e6);
        $this->client = new DataClient($addr, [
            'credentials' => \Grpc\ChannelCredentials::createInsecure(),
        ]);
        // grpc.so hands back the channel an earlier request of this process made with
        // the same target and arguments; a channel that never connected is IDLE.
        $this->connection = $this->client->getConnectivityState() === \Grpc\CHANNEL_IDLE ? 'new' : 'reused';
    }

    public function connection(): string
    {
        return $this->connection;
    }

    private function auth(): Auth
    {
        $a = new Auth();
        $a->setClientId($this->clientId);
        $a->setToken($this->token);
        return $a;
    }

    public function dataType(string $groupName, string $enName, bool $measure = false): Reply
    {
        $req = new DataTypeRequest();
        $req->setAuth($this->auth());
        $req->setGroupName($groupName);
        $req->setEnName($enName);
        $this->callStart = hrtime(true);
        $call = $this->client->DataType($req, [], ['timeout' => $this->timeoutUs]);
        $resp = $this->finish($call, $measure);
        return new Reply($this->token, (int) $resp->getCodeId(), $resp->getCnName(), 0, null, null,
            $measure ? strlen($resp->serializeToString()) : -1);
    }

    public function dataList(int $n, bool $measure = false): Reply
    {
        $req = new DataListRequest();
        $req->setAuth($this->auth());
        $req->setN($n);
        $this->callStart = hrtime(true);
        $call = $this->client->DataList($req, [], ['timeout' => $this->timeoutUs]);
        $resp = $this->finish($call, $measure);
        $items = $resp->getItems();
        $count = count($items);
        return new Reply($this->token, 0, '', $count,
            $count ? self::item($items[0]) : null,
            $count ? self::item($items[$count - 1]) : null,
            $measure ? strlen($resp->serializeToString()) : -1);
    }

    public function dataListItems(int $n): array
    {
        $req = new DataListRequest();
        $req->setAuth($this->auth());
        $req->setN($n);
        $this->callStart = hrtime(true);
        $resp = $this->finish($this->client->DataList($req, [], ['timeout' => $this->timeoutUs]), false);
        $out = [];
        foreach ($resp->getItems() as $it) {
            $out[] = self::item($it);
        }
        return $out;
    }

    /** @return \Rpcbed\Pb\DataTypeResponse|\Rpcbed\Pb\DataListResponse */
    private function finish(\Grpc\UnaryCall $call, bool $measure): object
    {
        [$resp, $status] = $call->wait();
        if ($status->code !== \Grpc\STATUS_OK) {
            if ($status->code === \Grpc\STATUS_UNAUTHENTICATED) {
                $this->token = '';
            }
            throw new CallError($this->kind($status->code, hrtime(true) - $this->callStart), "grpc status $status->code: $status->details");
        }
        if ($resp === null) {
            throw new CallError(CallError::RECEIVE, 'grpc: no response message');
        }
        if ($measure) {
            $md = $call->getMetadata();
            $this->server = $md['server'][0] ?? $this->server;
        }
        $this->token = $resp->getAuth()?->getToken() ?? '';
        return $resp;
    }

    /**
     * The kind of a failed call. A status the server declared is never connect or
     * timeout (docs/report-format.md): UNAVAILABLE is connect only when the channel
     * is not connected (a declared one leaves it READY), DEADLINE_EXCEEDED connect
     * when the channel never got ready (a server that accepts and never speaks
     * HTTP/2), timeout when the call's own deadline passed, else the server's.
     */
    private function kind(int $code, int $elapsedNs): string
    {
        return match ($code) {
            \Grpc\STATUS_UNAVAILABLE => $this->client->getConnectivityState() === \Grpc\CHANNEL_READY
                ? CallError::EXCEPTIONS : CallError::CONNECT,
            \Grpc\STATUS_DEADLINE_EXCEEDED => match (true) {
                $this->client->getConnectivityState() !== \Grpc\CHANNEL_READY => CallError::CONNECT,
                $elapsedNs >= $this->timeoutUs * 1000 - 1_000_000 => CallError::TIMEOUT,
                default => CallError::EXCEPTIONS,
            },
            \Grpc\STATUS_UNAUTHENTICATED => CallError::UNAUTHENTICATED,
            \Grpc\STATUS_INVALID_ARGUMENT => CallError::INVALID_ARGUMENT,
            default => CallError::EXCEPTIONS,
        };
    }

    /** @return array<string, mixed> */
    private static function item(\Rpcbed\Pb\Item $it): array
    {
        return [
            'id' => (int) $it->getId(), 'name' => $it->getName(), 'createdAt' => (int) $it->getCreatedAt(),
            'score' => $it->getScore(), 'enabled' => $it->getEnabled(), 'parentId' => (int) $it->getParentId(),
            'note' => $it->getNote(), 'tags' => iterator_to_array($it->getTags()),
        ];
    }

    public function serverSoftware(): string
    {
        return $this->server;
    }

    public function close(): void
    {
        // Nothing: the extension keeps channels per process and reuses them across
        // PHP requests (the front relies on that); closing one closes it for all.
    }
}
