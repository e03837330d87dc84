<?php
// Ice calls in a PHP process of its own, for IceExtensionTest (php-zeroc-ice
// 3.7.8's ice.so under PHP 8.2 kills the process on the first local exception, and
// now and then on the first good reply):
//   php -n -d extension=ice.so ice-local-exception.php HOST:PORT
// makes three DataList calls through the generated proxy and one through
// IceTransport to a server that fails them, and prints one JSON line: the
// exception classes, the transport's error kind, then survived=true.
//   php -n -d extension=ice.so ice-local-exception.php HOST:PORT reply
// makes one DataList(200) through IceTransport to the Java Ice baseline and prints
// {"items":200,"survived":true}.
declare(strict_types=1);

use Rpcbed\Client\Autoload;
use Rpcbed\Client\CallError;
use Rpcbed\Client\Config;
use Rpcbed\Client\Transports;

require dirname(__DIR__) . '/autoload.php';

/** php-client's Ice transport to $addr. */
function transport(string $addr, float $timeout): \Rpcbed\Client\Transport
{
    $cfg = new Config();
    $cfg->proto = 'ice';
    $cfg->addr = $addr;
    $cfg->timeout = $timeout;
    $cfg->clientId = 'phpunit';
    return Transports::make($cfg, 0);
}

[$host, $port] = explode(':', $argv[1]);
if (($argv[2] ?? '') === 'reply') {
    $t = transport($argv[1], 10);
    $items = count($t->dataListItems(200));
    $t->close();
    echo json_encode(['items' => $items, 'survived' => true]), "\n";
    exit(0);
}
Autoload::loadIce();
$init = new \Ice\InitializationData();
$init->properties = \Ice\createProperties();
$init->properties->setProperty('Ice.RetryIntervals', '-1');
$init->properties->setProperty('Ice.Warn.Connections', '0');
$ic = \Ice\initialize($init);
$prx = \rpcbedice\DataPrxHelper::uncheckedCast($ic->stringToProxy("data:tcp -h $host -p $port -t 2000"))->ice_invocationTimeout(2000);
$raw = [];
for ($i = 0; $i < 3; $i++) {
    try {
        $prx->DataList(new \rpcbedice\DataListRequest(new \rpcbedice\Auth('phpunit', ''), 2));
        $raw[] = 'no exception';
    } catch (\Throwable $e) {
        $raw[] = get_class($e);
    }
}
$ic->destroy();

$t = transport($argv[1], 2);
try {
    $t->dataList(2);
    $kind = 'no error';
} catch (CallError $e) {
    $kind = $e->kind;
}
$t->close();
echo json_encode(['raw' => $raw, 'transport' => $kind, 'survived' => true]), "\n";
