<?php
// front-guard: the bounded guard bin/php-front puts in front of `php -S`.
//   php -n front-guard.php LISTEN UPSTREAM
// php -S's HTTP parser allocates a request's claimed Content-Length before any PHP
// code runs (pemalloc(content_length) in sapi/cli/php_cli_server.c), so one request
// claiming 1 TiB kills the worker that reads it ("Out of memory"), workers are never
// replaced, and a 3 GiB body is buffered whole. No ini setting reaches that code
// (post_max_size applies later, to the script). This guard reads each request's
// head itself and passes on only requests php -S can hold:
//   - head (request line + headers) at most HEAD_MAX bytes, within HEAD_TIMEOUT;
//   - a body only with one Content-Length of at most BODY_MAX bytes; chunked
//     bodies and conflicting lengths are refused;
//   - at most CONN_MAX connections at once (two descriptors each, within the usual
//     1024 of a process): past that a new connection evicts the oldest one still
//     sending its head, so idle connections cannot lock callers out; a response
//     is relayed with bounded buffers (reading pauses while the other side has
//     RELAY_MAX bytes pending). At most about 200 MB in all.
// Refusals are JSON, like every front answer: 400, 408, 413, 431, 503.
// One process, one stream_select loop; php -S still closes every connection after
// its response, so a connection is one request.
declare(strict_types=1);

const HEAD_MAX = 96 << 10;  // php -S itself reads about 80 KiB of head
const HEAD_TIMEOUT = 30.0;  // seconds for a whole head (php -S has no limit)
const BODY_MAX = 64 << 10;  // the front serves GETs: a body is never needed
const CONN_MAX = 400;
const RELAY_MAX = 128 << 10;
const IDLE_TIMEOUT = 120.0; // seconds without a byte either way, once relaying

if ($argc !== 3) {
    fwrite(STDERR, "usage: front-guard.php LISTEN UPSTREAM\n");
    exit(2);
}
[, $listen, $upstream] = $argv;
// Listen only once php -S does, so a client that sees the port open is served.
for ($end = microtime(true) + 60; ; usleep(20_000)) {
    $probe = @stream_socket_client("tcp://$upstream", $errno, $errstr, 1);
    if ($probe !== false) {
        fclose($probe);
        break;
    }
    if (microtime(true) > $end) {
        fwrite(STDERR, "front-guard: php -S on $upstream did not listen within 60 s: $errstr\n");
        exit(1);
    }
}
$server = @stream_socket_server("tcp://$listen", $errno, $errstr);
if ($server === false) {
    fwrite(STDERR, "front-guard: listen $listen: $errstr\n");
    exit(1);
}
stream_set_blocking($server, false);
fwrite(STDERR, "front-guard: $listen -> php -S on $upstream\n");

$stop = false;
if (function_exists('pcntl_async_signals')) {
    pcntl_async_signals(true);
    foreach ([SIGTERM, SIGINT, SIGHUP] as $sig) {
        pcntl_signal($sig, static function () use (&$stop): void {
            $stop = true;
        });
    }
}

/**
 * One client connection: its socket, the upstream one once the head passed, and
 * what each side still has to write.
 */
final class Conn
{
    public string $head = '';
    /** @var resource|null */
    public $up = null;
    public string $toUp = '';
    public string $toClient = '';
    /** Body bytes the client may still send on to php -S. */
    public int $bodyLeft = 0;
    public bool $clientEof = false;
    public bool $upEof = false;
    public bool $closing = false; // write toClient, then close
    /** Whether a byte reached php -S (a failed asynchronous connect shows as a failed first write). */
    public bool $sent = false;
    public float $since;
    public float $active;

    /** @param resource $client */
    public function __construct(public $client)
    {
        $this->since = $this->active = microtime(true);
    }
}

/** A JSON refusal, then the connection closes. */
function refuse(Conn $c, int $status, string $reason, string $message): void
{
    $body = json_encode(['code' => $status === 503 ? 14 : 3, 'message' => $message], JSON_UNESCAPED_SLASHES);
    $c->toClient = "HTTP/1.1 $status $reason\r\nContent-Type: application/json\r\nContent-Length: " . strlen($body)
        . "\r\nConnection: close\r\n\r\n" . $body;
    $c->closing = true;
    $c->head = '';
}

/**
 * Checks a complete head: true when it may pass (bodyLeft set), else it is refused.
 */
function checkHead(Conn $c, string $head): bool
{
    $lines = explode("\r\n", $head);
    $length = null;
    foreach (array_slice($lines, 1) as $line) {
        $colon = strpos($line, ':');
        if ($colon === false) {
            continue; // php -S decides what a malformed header line is
        }
        $name = strtolower(trim(substr($line, 0, $colon)));
        $value = trim(substr($line, $colon + 1));
        if ($name === 'transfer-encoding') {
            refuse($c, 413, 'Payload Too Large', 'front: chunked request bodies are not accepted');
            return false;
        }
        if ($name === 'content-length') {
            if (!preg_match('/^\d{1,18}$/', $value) || ($length !== null && $length !== (int) $value)) {
                refuse($c, 400, 'Bad Request', 'front: bad Content-Length');
                return false;
            }
            $length = (int) $value;
        }
    }
    if ($length !== null && $length > BODY_MAX) {
        refuse($c, 413, 'Payload Too Large', sprintf('front: request body of %d bytes; at most %d', $length, BODY_MAX));
        return false;
    }
    $c->bodyLeft = $length ?? 0;
    return true;
}

/** @var array<int, Conn> $conns by the client socket's id */
$conns = [];
/** @var array<int, int> $byUp the upstream socket's id => the client socket's id */
$byUp = [];

function closeConn(int $id): void
{
    global $conns, $byUp;
    $c = $conns[$id];
    @fclose($c->client);
    if ($c->up !== null) {
        unset($byUp[(int) $c->up]);
        @fclose($c->up);
    }
    unset($conns[$id]);
}

/** Bytes from the client: the head until it is complete, then the declared body. */
function fromClient(Conn $c, int $id, string $data, string $upstream): void
{
    global $byUp;
    if ($c->up === null) {
        $c->head .= $data;
        $end = strpos($c->head, "\r\n\r\n");
        if (($end === false && strlen($c->head) > HEAD_MAX) || ($end !== false && $end + 4 > HEAD_MAX)) {
            refuse($c, 431, 'Request Header Fields Too Large', sprintf('front: request head above %d bytes', HEAD_MAX));
            return;
        }
        if ($end === false || !checkHead($c, substr($c->head, 0, $end + 4))) {
            return;
        }
        // Asynchronous: a php -S whose accept queue is full must not stall the loop.
        $up = @stream_socket_client("tcp://$upstream", $errno, $errstr, 5,
            STREAM_CLIENT_CONNECT | STREAM_CLIENT_ASYNC_CONNECT);
        if ($up === false) {
            refuse($c, 503, 'Service Unavailable', "front: php -S does not answer: $errstr");
            return;
        }
        stream_set_blocking($up, false);
        $c->up = $up;
        $byUp[(int) $up] = $id;
        // The head, and of what followed it only the declared body.
        $rest = substr($c->head, $end + 4);
        $c->toUp = substr($c->head, 0, $end + 4) . substr($rest, 0, $c->bodyLeft);
        $c->bodyLeft -= min($c->bodyLeft, strlen($rest));
        $c->head = '';
        return;
    }
    if ($c->bodyLeft > 0) {
        $part = substr($data, 0, $c->bodyLeft);
        $c->toUp .= $part;
        $c->bodyLeft -= strlen($part);
    }
    // Bytes past the declared body (a pipelined request) are dropped: php -S
    // answers one request per connection.
}

/** php -S closed its side: the end of the response, or, before a byte reached it, a failed connect (503). */
function upGone(Conn $c): void
{
    global $byUp;
    if ($c->sent || $c->toClient !== '') {
        $c->upEof = true;
        return;
    }
    unset($byUp[(int) $c->up]);
    @fclose($c->up);
    $c->up = null;
    refuse($c, 503, 'Service Unavailable', 'front: php -S does not answer');
}

/** Closes the oldest connection still sending its head; false when there is none. */
function evictOne(): bool
{
    global $conns;
    $oldest = null;
    foreach ($conns as $id => $c) {
        if ($c->up === null && !$c->closing && ($oldest === null || $c->since < $conns[$oldest]->since)) {
            $oldest = $id;
        }
    }
    if ($oldest === null) {
        return false;
    }
    closeConn($oldest);
    return true;
}

while (!$stop) {
    $read = [];
    $write = [];
    $read[] = $server;
    foreach ($conns as $c) {
        if (!$c->clientEof && !$c->closing && strlen($c->toUp) < RELAY_MAX) {
            $read[] = $c->client;
        }
        if ($c->toClient !== '') {
            $write[] = $c->client;
        }
        if ($c->up !== null) {
            if (!$c->upEof && strlen($c->toClient) < RELAY_MAX) {
                $read[] = $c->up;
            }
            if ($c->toUp !== '') {
                $write[] = $c->up;
            }
        }
    }
    $except = null;
    if (@stream_select($read, $write, $except, 1, 0) === false) {
        continue; // EINTR (a signal)
    }
    $now = microtime(true);
    foreach ($read as $s) {
        if ($s === $server) {
            $client = @stream_socket_accept($server, 0);
            if ($client === false) {
                continue;
            }
            if (count($conns) >= CONN_MAX && !evictOne()) {
                // Every connection is being answered: this one waits its turn nowhere.
                $busy = new Conn($client);
                refuse($busy, 503, 'Service Unavailable', sprintf('front: %d connections are being answered', CONN_MAX));
                @fwrite($client, $busy->toClient); // a short answer: the socket buffer takes it whole
                @fclose($client);
                continue;
            }
            stream_set_blocking($client, false);
            $conns[(int) $client] = new Conn($client);
            continue;
        }
        $sid = (int) $s;
        $up = isset($byUp[$sid]);
        $id = $up ? $byUp[$sid] : $sid;
        if (!isset($conns[$id])) {
            continue;
        }
        $c = $conns[$id];
        $data = @fread($s, 65536);
        if ($data === false || ($data === '' && feof($s))) {
            if ($up) {
                upGone($c);
            } else {
                $c->clientEof = true;
                if ($c->up === null || $c->bodyLeft > 0) {
                    closeConn($id); // gone before its request was complete
                }
            }
            continue;
        }
        $c->active = $now;
        if ($up) {
            $c->toClient .= $data;
        } else {
            fromClient($c, $id, $data, $upstream);
        }
    }
    foreach ($write as $s) {
        $sid = (int) $s;
        $up = isset($byUp[$sid]);
        $id = $up ? $byUp[$sid] : $sid;
        if (!isset($conns[$id])) {
            continue;
        }
        $c = $conns[$id];
        if ($up) {
            $w = @fwrite($s, $c->toUp);
            if ($w === false || ($w === 0 && !$c->sent)) {
                upGone($c);
                continue;
            }
            $c->sent = $c->sent || $w > 0;
            $c->toUp = (string) substr($c->toUp, $w);
            continue;
        }
        $w = @fwrite($s, $c->toClient);
        if ($w === false || ($w === 0 && feof($s))) {
            closeConn($id); // the client went away
            continue;
        }
        $c->toClient = (string) substr($c->toClient, $w);
        $c->active = $now;
    }
    foreach ($conns as $id => $c) {
        if ($c->up === null && !$c->closing && $now - $c->since > HEAD_TIMEOUT) {
            refuse($c, 408, 'Request Timeout', sprintf('front: request head not complete within %.0f s', HEAD_TIMEOUT));
            continue;
        }
        if ((($c->closing || $c->upEof) && $c->toClient === '') || $now - $c->active > IDLE_TIMEOUT) {
            closeConn($id);
        }
    }
}
foreach (array_keys($conns) as $id) {
    closeConn($id);
}
fclose($server);
