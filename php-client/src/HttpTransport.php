<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * HTTP/JSON through php-curl against go-server's /v1 routes. One curl handle per
 * worker process: with keep-alive it holds one connection, without it every call
 * opens a new one (as ab without -k). With -connect per-call every call has a
 * curl handle of its own, made and closed around it, as a PHP request makes.
 *
 * TLS: curl over https (libcurl's OpenSSL), HTTP/1.1 only (so ALPN offers
 * http/1.1), -cacert as CURLOPT_CAINFO, the client's certificate as
 * CURLOPT_SSLCERT/SSLKEY, TLS 1.2 up to the version asked (CURLOPT_SSLVERSION),
 * -servername by CURLOPT_RESOLVE (the URL carries the name, resolved to the host
 * of -addr). curl's session cache is off, so no connection resumes a session on
 * any handle (a per-call handle starts with an empty one anyway). php-curl tells
 * no version or suite: the verify call runs verbose and they are read from
 * libcurl's "SSL connection using" and "ALPN" lines; no line names the group.
 */
final class HttpTransport implements Transport
{
    /** @var \CurlHandle */
    private $curl;
    private string $token = '';
    private string $server = '';
    private bool $captureHeaders = false;
    private string $base;
    private Net $net;
    /** @var array<int, mixed> every handle's options */
    private array $opts;

    public function connection(): string
    {
        return 'new'; // a curl handle lives for one PHP request
    }

    /**
     * @param ?array{ca: string, cert: string, key: string, name: string, version: string} $tls
     *        PEM files, -servername ('' none) and -tls-version; null: plaintext
     */
    public function __construct(string $addr, private string $clientId, float $timeoutSeconds, private bool $keepAlive,
        private ?array $tls = null, private bool $perCall = false)
    {
        if (!extension_loaded('curl')) {
            throw new \RuntimeException('the curl extension is not loaded');
        }
        $this->net = new Net();
        $this->base = 'http://' . $addr;
        $ms = max(1, (int) ($timeoutSeconds * 1000));
        $this->opts = [
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
        ];
        if ($tls !== null) {
            [$host, $port] = Config::splitAddr($addr);
            $name = $tls['name'] !== '' ? $tls['name'] : $host;
            $this->base = 'https://' . (str_contains($name, ':') ? "[$name]" : $name) . ":$port";
            $this->opts += [
                CURLOPT_HTTP_VERSION => CURL_HTTP_VERSION_1_1,
                CURLOPT_SSL_VERIFYPEER => true,
                CURLOPT_SSL_VERIFYHOST => 2,
                CURLOPT_CAINFO => $tls['ca'],
                CURLOPT_SSL_SESSIONID_CACHE => false,
                CURLOPT_SSLVERSION => CURL_SSLVERSION_TLSv1_2
                    | ($tls['version'] === '1.2' ? CURL_SSLVERSION_MAX_TLSv1_2 : CURL_SSLVERSION_MAX_TLSv1_3),
            ];
            if ($name !== $host) {
                $this->opts[CURLOPT_RESOLVE] = ["$name:$port:$host"];
            }
            if ($tls['cert'] !== '') {
                $this->opts += [CURLOPT_SSLCERT => $tls['cert'], CURLOPT_SSLCERTTYPE => 'PEM',
                    CURLOPT_SSLKEY => $tls['key'], CURLOPT_SSLKEYTYPE => 'PEM'];
            }
        }
        if (!$perCall) {
            $this->curl = self::handle($this->opts);
        }
    }

    /** @param array<int, mixed> $opts */
    private static function handle(array $opts): \CurlHandle
    {
        $h = curl_init();
        curl_setopt_array($h, $opts);
        return $h;
    }

    public function net(): Net
    {
        return $this->net;
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
        $items = self::items($body);
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
        $items = self::items($body);
        if (!is_array($items)) {
            throw new CallError(CallError::LENGTH, 'http: body has no items');
        }
        return $items;
    }

    /**
     * The body's items; an empty list for "items": null, which Go's encoding/json
     * writes for an empty slice (go-server's DataList(0)); null when there is no such key.
     */
    private static function items(array $body): ?array
    {
        if (!array_key_exists('items', $body)) {
            return null;
        }
        return is_array($body['items']) ? $body['items'] : ($body['items'] === null ? [] : null);
    }

    /** @return array{array<string, mixed>, int} the decoded body and its size */
    private function get(string $path, bool $measure): array
    {
        $h = $this->perCall ? self::handle($this->opts) : $this->curl;
        try {
            return $this->exchange($h, $path, $measure);
        } finally {
            if ($this->perCall) {
                curl_close($h);
            }
        }
    }

    /** @return array{array<string, mixed>, int} */
    private function exchange(\CurlHandle $h, string $path, bool $measure): array
    {
        $headers = ['X-Client-Id: ' . $this->clientId, 'X-Token: ' . $this->token];
        if (!$this->keepAlive) {
            $headers[] = 'Connection: close';
        }
        curl_setopt($h, CURLOPT_URL, $this->base . $path);
        curl_setopt($h, CURLOPT_HTTPHEADER, $headers);
        $this->captureHeaders = $measure;
        // The verify call (and only it, before timing) tells what TLS negotiated.
        $verbose = $measure && $this->tls !== null ? fopen('php://temp', 'w+') : null;
        if ($verbose !== null) {
            curl_setopt_array($h, [CURLOPT_VERBOSE => true, CURLOPT_STDERR => $verbose]);
        }
        $raw = curl_exec($h);
        [$errno, $error] = [curl_errno($h), curl_error($h)]; // before curl_setopt, which clears them
        if ($verbose !== null) {
            curl_setopt($h, CURLOPT_VERBOSE, false);
            rewind($verbose);
            $this->negotiated((string) stream_get_contents($verbose));
            fclose($verbose);
        }
        $opened = (int) curl_getinfo($h, CURLINFO_NUM_CONNECTS);
        for ($i = 0; $i < $opened; $i++) {
            $this->net->open($this->tls !== null);
        }
        if ($raw === false) {
            $kind = match ($errno) {
                CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST => CallError::CONNECT,
                CURLE_OPERATION_TIMEDOUT => CallError::TIMEOUT,
                default => CallError::RECEIVE,
            };
            throw new CallError($kind, "http: curl error $errno: $error");
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

    /** Reads libcurl's verbose lines: "SSL connection using TLSv1.3 / TLS_AES_128_GCM_SHA256", "ALPN: server accepted http/1.1". */
    private function negotiated(string $log): void
    {
        if (preg_match('~SSL connection using (\S+) / (\S+)~', $log, $m)) {
            $this->net->version = Tls::version($m[1]);
            $this->net->cipher = Tls::cipher($m[2]);
        }
        if (preg_match('~ALPN(?::|,) server accepted(?: to use)? (\S+)~', $log, $m)) {
            $this->net->alpn = $m[1];
        } elseif (str_contains($log, 'ALPN') && preg_match('~ALPN(?::|,) server did not agree~', $log)) {
            $this->net->alpn = 'none';
        }
    }

    public function serverSoftware(): string
    {
        return $this->server;
    }

    public function close(): void
    {
        if (!$this->perCall) {
            curl_close($this->curl);
        }
    }
}
