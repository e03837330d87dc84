<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * HTTP/JSON through php-curl against go-server's /v1 routes. One curl handle per
 * worker process: with keep-alive it holds one connection, without it every call
 * opens a new one (as ab without -k).
 */
final class HttpTransport implements Transport
{
    /** @var \CurlHandle */
    private $curl;
    private string $token = '';
    private string $server = '';
    private bool $captureHeaders = false;
    private string $base;

    public function connection(): string
    {
        return 'new'; // a curl handle lives for one PHP request
    }

    public function __construct(string $addr, private string $clientId, float $timeoutSeconds, private bool $keepAlive)
    {
        if (!extension_loaded('curl')) {
            throw new \RuntimeException('the curl extension is not loaded');
        }
        $this->base = 'http://' . $addr;
        $this->curl = curl_init();
        $ms = max(1, (int) ($timeoutSeconds * 1000));
        curl_setopt_array($this->curl, [
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_TIMEOUT_MS => $ms,
            CURLOPT_CONNECTTIMEOUT_MS => $ms,
            CURLOPT_NOSIGNAL => true,
            CURLOPT_FORBID_REUSE => !$keepAlive,
            CURLOPT_TCP_NODELAY => true,
            CURLOPT_HEADERFUNCTION => function ($h, string $line): int {
                if ($this->captureHeaders && stripos($line, 'server:') === 0) {
                    $this->server = trim(substr($line, 7));
                }
                return strlen($line);
            },
        ]);
    }

    public static function dataTypePath(string $groupName, string $enName): string
    {
        return '/v1/datatype?' . http_build_query(['groupName' => $groupName, 'enName' => $enName]);
    }

    public static function dataListPath(int $n): string
    {
        return "/v1/datalist?n=$n";
    }

    public function dataType(string $groupName, string $enName, bool $measure = false): Reply
    {
        [$body, $bytes] = $this->get(self::dataTypePath($groupName, $enName), $measure);
        return new Reply($this->token, (int) ($body['codeId'] ?? 0), (string) ($body['cnName'] ?? ''), 0, null, null, $bytes);
    }

    public function dataList(int $n, bool $measure = false): Reply
    {
        [$body, $bytes] = $this->get(self::dataListPath($n), $measure);
        $items = $body['items'] ?? null;
        if (!is_array($items)) {
            throw new CallError(CallError::LENGTH, 'http: body has no items');
        }
        $count = count($items);
        return new Reply($this->token, 0, '', $count,
            $count ? $items[0] : null, $count ? $items[$count - 1] : null, $bytes);
    }

    public function dataListItems(int $n): array
    {
        [$body] = $this->get(self::dataListPath($n), false);
        $items = $body['items'] ?? null;
        if (!is_array($items)) {
            throw new CallError(CallError::LENGTH, 'http: body has no items');
        }
        return $items;
    }

    /** @return array{array<string, mixed>, int} the decoded body and its size */
    private function get(string $path, bool $measure): array
    {
        $h = $this->curl;
        $headers = ['X-Client-Id: ' . $this->clientId, 'X-Token: ' . $this->token];
        if (!$this->keepAlive) {
            $headers[] = 'Connection: close';
        }
        curl_setopt($h, CURLOPT_URL, $this->base . $path);
        curl_setopt($h, CURLOPT_HTTPHEADER, $headers);
        $this->captureHeaders = $measure;
        $raw = curl_exec($h);
        if ($raw === false) {
            $errno = curl_errno($h);
            $kind = match ($errno) {
                CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST => CallError::CONNECT,
                CURLE_OPERATION_TIMEDOUT => CallError::TIMEOUT,
                default => CallError::RECEIVE,
            };
            throw new CallError($kind, "http: curl error $errno: " . curl_error($h));
        }
        $status = curl_getinfo($h, CURLINFO_RESPONSE_CODE);
        if ($status < 200 || $status > 299) {
            if ($status === 401) {
                $this->token = '';
                throw new CallError(CallError::UNAUTHENTICATED, "http: status 401: $raw");
            }
            throw new CallError($status === 400 ? CallError::INVALID_ARGUMENT : CallError::EXCEPTIONS,
                "http: status $status: " . substr((string) $raw, 0, 200));
        }
        $body = json_decode((string) $raw, true);
        if (!is_array($body)) {
            throw new CallError(CallError::LENGTH, 'http: body is not a JSON object');
        }
        $this->token = (string) ($body['auth']['token'] ?? '');
        return [$body, strlen((string) $raw)];
    }

    public function serverSoftware(): string
    {
        return $this->server;
    }

    public function close(): void
    {
        curl_close($this->curl);
    }
}
