<?php
declare(strict_types=1);

namespace Rpcbed\Client;

use Rpcbed\Pb\Auth;
use Rpcbed\Pb\DataClient;
use Rpcbed\Pb\DataListRequest;
use Rpcbed\Pb\DataTypeRequest;

/**
 * gRPC through the official extension (grpc.so) and the generated Grpc\BaseStub
 * client, as PHP users call gRPC. One channel per worker process; with -connect
 * per-call a new channel for every call, closed after it, with a subchannel pool
 * of its own (gRPC core shares connections between channels of equal arguments
 * otherwise), as a PHP request without persistent channels makes.
 *
 * TLS: Grpc\ChannelCredentials::createSsl with -cacert's roots (and, for mtls,
 * the client's key and certificate), the name checked overridden by -servername
 * (grpc.ssl_target_name_override). gRPC core offers TLS 1.2 and 1.3 whatever is
 * asked, and grpc.so tells neither the version, the suite nor the group it
 * negotiated (the report prints "-"); ALPN is h2, which gRPC core requires of
 * every TLS connection it keeps.
 */
final class GrpcTransport implements Transport
{
    private ?DataClient $client;
    private string $token = '';
    private string $server = '';
    private int $timeoutUs;
    /** When the current call was made (hrtime ns): its deadline is timeoutUs after. */
    private int $callStart = 0;
    private string $connection;
    private Net $net;
    /** @var array<string, mixed> the channel's options (credentials and arguments) */
    private array $opts;
    /** Persistent: the channel's one handshake is counted at its first answered call. */
    private bool $counted = false;

    /**
     * @param ?array{ca: string, cert: string, key: string, name: string} $tls PEM files and the
     *        -servername override ('' none); null: plaintext
     */
    public function __construct(private string $addr, private string $clientId, float $timeoutSeconds,
        private ?array $tls = null, private bool $perCall = false)
    {
        if (!extension_loaded('grpc')) {
            throw new \RuntimeException('the grpc extension is not loaded: run php-client/build-ext.sh');
        }
        $this->timeoutUs = (int) ($timeoutSeconds * 1e6);
        $this->net = new Net();
        $this->opts = ['credentials' => \Grpc\ChannelCredentials::createInsecure()];
        if ($tls !== null) {
            $pem = static fn (string $f): ?string => $f === '' ? null : (string) file_get_contents($f);
            $this->opts['credentials'] = \Grpc\ChannelCredentials::createSsl($pem($tls['ca']), $pem($tls['key']), $pem($tls['cert']));
            if ($tls['name'] !== '') {
                $this->opts['grpc.ssl_target_name_override'] = $tls['name'];
            }
            $this->net->alpn = 'h2';
        }
        if ($perCall) {
            $this->opts['force_new'] = true;
            $this->opts['grpc.use_local_subchannel_pool'] = 1;
        }
        $this->client = new DataClient($addr, $this->opts);
        // grpc.so hands back the channel an earlier request of this process made with
        // the same target and arguments; a channel that never connected is IDLE.
        $this->connection = $this->client->getConnectivityState() === \Grpc\CHANNEL_IDLE ? 'new' : 'reused';
    }

    public function connection(): string
    {
        return $this->connection;
    }

    public function net(): Net
    {
        return $this->net;
    }

    /** Per-call: the channel for the next call (the constructor's for the first). */
    private function channel(): DataClient
    {
        if ($this->perCall && $this->client === null) {
            $this->client = new DataClient($this->addr, $this->opts);
        }
        return $this->client;
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
        $call = $this->channel()->DataType($req, [], ['timeout' => $this->timeoutUs]);
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
        $call = $this->channel()->DataList($req, [], ['timeout' => $this->timeoutUs]);
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
        $resp = $this->finish($this->channel()->DataList($req, [], ['timeout' => $this->timeoutUs]), false);
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
        $kind = $status->code === \Grpc\STATUS_OK ? null : $this->kind($status->code, hrtime(true) - $this->callStart);
        if ($kind !== CallError::CONNECT && ($this->perCall || !$this->counted)) {
            $this->net->open($this->tls !== null); // the channel's connection answered
            $this->counted = true;
        }
        if ($this->perCall) {
            $this->client->close();
            $this->client = null;
        }
        if ($kind !== null) {
            if ($status->code === \Grpc\STATUS_UNAUTHENTICATED) {
                $this->token = '';
            }
            throw new CallError($kind, "grpc status $status->code: $status->details");
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
