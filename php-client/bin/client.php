<?php
// php-client bench mode:
//   php-client/bin/php-client -proto grpc -call datalist -items 200 -c 8 -n 2000
// (php php-client/bin/client.php ... works too). Flags and exit codes: README.md.
declare(strict_types=1);

use Rpcbed\Client\Bench;
use Rpcbed\Client\Config;
use Rpcbed\Client\Extensions;

require dirname(__DIR__) . '/autoload.php';

try {
    $cfg = Config::parse(array_slice($argv, 1));
} catch (InvalidArgumentException $e) {
    fwrite(STDERR, 'php-client: ' . $e->getMessage() . "\n" . Config::USAGE . "\n");
    exit(Bench::EXIT_USAGE);
}
if (($missing = Extensions::missing($cfg)) !== null) {
    fwrite(STDERR, "php-client: $missing\n");
    exit(Bench::EXIT_USAGE);
}
exit((new Bench($cfg))->run());
