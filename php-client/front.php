<?php
// The PHP front of the published PHP-vs-Go experiment, served by PHP's built-in server:
//   php-client/bin/php-front            (php -S 127.0.0.1:8088 php-client/front.php)
// GET /v1/datalist?n=N&proto=grpc|http|thrift|ice makes one call to the backend over
// that protocol and answers the items as JSON, the way a PHP application would:
// build the client, call, turn the response into PHP arrays, json_encode.
// Backends: RPCBED_GRPC_ADDR (127.0.0.1:50051), RPCBED_THRIFT_ADDR (127.0.0.1:9090),
// RPCBED_HTTP_ADDR (127.0.0.1:8080), RPCBED_ICE_ADDR (127.0.0.1:10000, the Java
// Ice baseline); RPCBED_FRONT_TIMEOUT per-call deadline in seconds (10).
declare(strict_types=1);

use Rpcbed\Client\CallError;
use Rpcbed\Client\Config;
use Rpcbed\Client\Transports;

require __DIR__ . '/autoload.php';

$reply = static function (int $status, array $body): void {
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
$cfg->timeout = (float) (getenv('RPCBED_FRONT_TIMEOUT') ?: 10);
$cfg->keepAlive = true;
try {
    $t = Transports::make($cfg, 0);
    try {
        $items = $t->dataListItems($n);
    } finally {
        $t->close();
    }
} catch (CallError $e) {
    $reply($e->kind === CallError::TIMEOUT ? 504 : 502, ['code' => 14, 'message' => $e->getMessage()]);
    return;
} catch (Throwable $e) {
    $reply(500, ['code' => 13, 'message' => get_class($e) . ': ' . $e->getMessage()]);
    return;
}
$reply(200, ['code' => 0, 'message' => 'ok', 'proto' => $proto, 'n' => count($items), 'items' => $items]);
