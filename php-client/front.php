<?php
// The PHP front of the published PHP-vs-Go experiment, served by PHP's built-in server:
//   php-client/bin/php-front            (php -S 127.0.0.1:8088 php-client/front.php)
// GET /v1/datalist?n=N&proto=grpc|http|thrift|ice makes one call to the backend over
// that protocol and answers the items as JSON, the way a PHP application would:
// build the client, call, turn the response into PHP arrays, json_encode.
// Backends: RPCBED_GRPC_ADDR (127.0.0.1:50051), RPCBED_THRIFT_ADDR (127.0.0.1:9090),
// RPCBED_HTTP_ADDR (127.0.0.1:8080), RPCBED_ICE_ADDR (127.0.0.1:10000, the Java
// Ice baseline); RPCBED_FRONT_TIMEOUT per-call deadline in seconds (10), also the
// request's PHP time limit; RPCBED_FRONT_RUNTIME c (default: Thrift's accelerated
// binary protocol; bin/php-front loads the protobuf C extension) or pure.
//
// Each php -S worker process keeps one gRPC channel, one Thrift connection and one
// Ice communicator across requests (persistent transports); X-Rpcbed-Conn says
// whether this request's was new or reused, X-Rpcbed-Pid which worker answered.
// Every answer is JSON, also when PHP itself gives up: a time limit is a 504, any
// other fatal error a 500 (the shutdown function below).
declare(strict_types=1);

use Rpcbed\Client\CallError;
use Rpcbed\Client\Config;
use Rpcbed\Client\Transport;
use Rpcbed\Client\Transports;

require __DIR__ . '/autoload.php';

$timeout = (float) (getenv('RPCBED_FRONT_TIMEOUT') ?: 10);
// PHP's own limit (CPU seconds under php -S) is the documented deadline too: a
// decode that outlasts it ends in the shutdown function's 504, not an empty 500.
set_time_limit(max(1, (int) ceil($timeout)));
/** @var Transport|null $inFlight the transport of a call that has not returned */
$inFlight = null;
$answered = false;
register_shutdown_function(static function () use (&$inFlight, &$answered): void {
    if ($inFlight !== null && method_exists($inFlight, 'discard')) {
        $inFlight->discard(); // half a response may be unread on a persistent connection
    }
    $e = error_get_last();
    if ($answered || $e === null || !in_array($e['type'], [E_ERROR, E_CORE_ERROR, E_COMPILE_ERROR, E_USER_ERROR], true)) {
        return;
    }
    $limit = str_starts_with($e['message'], 'Maximum execution time');
    if (!headers_sent()) {
        header($limit ? 'HTTP/1.1 504 Gateway Timeout' : 'HTTP/1.1 500 Internal Server Error', true, $limit ? 504 : 500);
        header('Content-Type: application/json');
        header('Connection: close');
    }
    echo json_encode($limit
        ? ['code' => 4, 'message' => 'deadline exceeded: ' . $e['message']]
        : ['code' => 13, 'message' => 'front: ' . $e['message']], JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE);
});

$reply = static function (int $status, array $body) use (&$answered): void {
    $answered = true;
    http_response_code($status);
    header('Content-Type: application/json');
    echo json_encode($body, JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES | JSON_PRESERVE_ZERO_FRACTION);
};

$path = parse_url($_SERVER['REQUEST_URI'] ?? '/', PHP_URL_PATH);
if ($path === '/healthz') {
    $reply(200, ['code' => 0, 'message' => 'ok']);
    return;
}
if ($path !== '/v1/datalist' || ($_SERVER['REQUEST_METHOD'] ?? 'GET') !== 'GET') {
    $reply(404, ['code' => 5, 'message' => "no route $path"]);
    return;
}
$proto = $_GET['proto'] ?? 'grpc'; // an array for ?proto[]=..: no (string) cast, it warns
$n = filter_var($_GET['n'] ?? '', FILTER_VALIDATE_INT);
if (!in_array($proto, Config::PROTOCOLS, true) || $n === false || $n < 0 || $n > 100000) {
    $reply(400, ['code' => 3, 'message' => 'want n=0..100000 and proto=' . implode('|', Config::PROTOCOLS)]);
    return;
}

$cfg = new Config();
$cfg->proto = $proto;
$cfg->addr = getenv('RPCBED_' . strtoupper($proto) . '_ADDR') ?: Config::DEFAULT_ADDR[$proto];
$cfg->timeout = $timeout;
$cfg->keepAlive = true;
$cfg->runtime = getenv('RPCBED_FRONT_RUNTIME') === 'pure' ? 'pure' : 'c';
$cfg->accel = $cfg->runtime === 'c' && $proto === 'thrift' && extension_loaded('thrift_protocol');
try {
    $t = Transports::make($cfg, 0, true);
    $inFlight = $t;
    try {
        $items = $t->dataListItems($n);
    } catch (CallError $e) {
        // A pooled connection the backend closed while this process was idle (its
        // idle cut): one new connection and one more try, as a connection pool does.
        // A fresh connection's failure is the answer. X-Rpcbed-Retried says so.
        if ($t->connection() !== 'reused' || !in_array($e->kind, [CallError::RECEIVE, CallError::CONNECT], true)) {
            throw $e;
        }
        $t = Transports::make($cfg, 0, true);
        $inFlight = $t;
        $items = $t->dataListItems($n);
        header('X-Rpcbed-Retried: 1');
    }
    $inFlight = null;
    header('X-Rpcbed-Conn: ' . $t->connection());
    header('X-Rpcbed-Pid: ' . getmypid());
    if ($proto === 'http') {
        $t->close();
    }
} catch (CallError $e) {
    $inFlight = null; // the transport closed what an error left in doubt
    // gRPC's codes: 4 DEADLINE_EXCEEDED (the call or PHP's time limit), 14 UNAVAILABLE.
    $timedOut = $e->kind === CallError::TIMEOUT;
    $reply($timedOut ? 504 : 502, ['code' => $timedOut ? 4 : 14, 'message' => $e->getMessage()]);
    return;
} catch (Throwable $e) {
    $reply(500, ['code' => 13, 'message' => get_class($e) . ': ' . $e->getMessage()]);
    return;
}
$reply(200, ['code' => 0, 'message' => 'ok', 'proto' => $proto, 'n' => count($items), 'items' => $items]);
