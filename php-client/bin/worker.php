<?php
// One worker process of php-client's bench (see src/Bench.php): started by the
// parent as `php -n -d extension=... worker.php CONFIG_JSON ID`, commands on stdin,
// one JSON line per answer on stdout.
declare(strict_types=1);

use Rpcbed\Client\Config;
use Rpcbed\Client\Transports;
use Rpcbed\Client\Worker;

require dirname(__DIR__) . '/autoload.php';

$cfg = Config::fromArray(json_decode($argv[1], true, 512, JSON_THROW_ON_ERROR));
Worker::run($cfg, (int) $argv[2], STDIN, STDOUT, static fn (int $id) => Transports::make($cfg, $id));
