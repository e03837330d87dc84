<?php
declare(strict_types=1);

require dirname(__DIR__) . '/autoload.php';
require __DIR__ . '/Servers.php';
require __DIR__ . '/Certs.php';
