<?php
// One runtime's round trips for RuntimeTest, in a PHP process of its own (a loaded
// extension cannot be unloaded, so the c and pure runtimes never share a process):
//   php <Extensions::phpArgs(CONFIG)> [-d extension=grpc.so] roundtrip.php CONFIG_JSON
// prints one JSON line: the checks' problems, every decoded item, the versions.
declare(strict_types=1);

use Rpcbed\Client\Config;
use Rpcbed\Client\Transports;
use Rpcbed\Client\Verify;
use Rpcbed\Client\Versions;

require dirname(__DIR__) . '/autoload.php';

$cfg = Config::fromArray(json_decode($argv[1], true, 512, JSON_THROW_ON_ERROR));
$t = Transports::make($cfg, 0);
$problems = [];
$dt = $t->dataType(Config::GROUP_NAME, Config::EN_NAME, true);
$problems[] = Verify::dataType($dt, Config::EN_NAME);
$sizes = [];
foreach ([0, 1, 20, 200] as $n) {
    $dl = $t->dataList($n, true);
    $problems[] = Verify::dataList($dl, $n);
    $sizes[$n] = $dl->bytes;
}
$out = [
    'problems' => array_values(array_filter($problems)),
    'items' => $t->dataListItems(200),
    'sizes' => $sizes,
    'versions' => Versions::of($cfg->proto, $cfg->accel),
    'protobuf_ext' => extension_loaded('protobuf'),
    'thrift_ext' => extension_loaded('thrift_protocol'),
];
$t->close();
echo json_encode($out, JSON_THROW_ON_ERROR | JSON_PRESERVE_ZERO_FRACTION), "\n";
