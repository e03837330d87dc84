<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * Config is one bench run, parsed from go-client's flags:
 * -proto -call -items -c -n -t -warmup -addr -k (plus -timeout and -accel).
 */
final class Config
{
    public const PROTOCOLS = ['grpc', 'thrift', 'http', 'ice'];
    public const CALLS = ['datatype', 'datalist'];
    public const DEFAULT_ADDR = [
        'grpc' => '127.0.0.1:50051',
        'thrift' => '127.0.0.1:9090',
        'http' => '127.0.0.1:8080',
        'ice' => '127.0.0.1:10000',
    ];
    public const GROUP_NAME = 'USER_EVENT';
    public const EN_NAME = 'app_call_connect_success';
    /** ab's default for -n when only -t is given is 50000; rpcbed runs for the whole -t instead. */
    public const UNLIMITED = PHP_INT_MAX;

    public string $proto = 'grpc';
    public string $call = 'datalist';
    public int $items = 200;
    public int $concurrency = 1;
    public int $requests = 1;
    /** Run length limit in seconds (ab -t); 0 = none. */
    public float $timeLimit = 0.0;
    /** Warm-up length in seconds, or ... */
    public float $warmupSeconds = 0.0;
    /** ... a number of warm-up calls (bare integer to -warmup). */
    public int $warmupCalls = 0;
    public string $addr = '';
    public bool $keepAlive = false;
    /** Per-call deadline in seconds. */
    public float $timeout = 10.0;
    /** Thrift: use the thrift_protocol extension (TBinaryProtocolAccelerated). */
    public bool $accel = false;

    public const USAGE = <<<'TXT'
        usage: php-client -proto grpc|thrift|http|ice -call datatype|datalist [-items N]
                          [-c C] [-n N] [-t 30s] [-warmup 2s|200] [-k] [-timeout 10s] [-accel]
                          [-addr HOST:PORT]
          -proto    protocol (default grpc)
          -call     datatype | datalist (default datalist)
          -items    items per DataList call, 0..100000 (default 200)
          -c        concurrency: forked worker processes, one connection each (default 1)
          -n        calls in the measured part, shared by the workers (default 1)
          -t        stop the measured part after this long (30, 30s, 1m); alone it runs
                    until the time is up
          -warmup   warm-up before timing, excluded from every figure: a duration (2s)
                    or a number of calls (200)
          -addr     server address (default: go-server's port for the protocol,
                    ice 127.0.0.1:10000)
          -k        HTTP keep-alive (one curl handle per worker); gRPC, Thrift and Ice
                    always keep their connection
          -timeout  per-call deadline (default 10s)
          -accel    thrift: TBinaryProtocolAccelerated (thrift_protocol extension)
        exit codes: 0 report printed (even with failed calls), 2 bad arguments,
                    3 verify failed (no report), 4 server unreachable before timing
        TXT;

    /**
     * Parses Go-flag-style arguments (-name value, -name=value, --name; bool flags
     * take no value unless written -k=false).
     *
     * @param list<string> $argv arguments without the program name
     * @throws \InvalidArgumentException with a message naming the bad flag
     */
    public static function parse(array $argv): self
    {
        $c = new self();
        $seen = [];
        $bools = ['k' => true, 'accel' => true];
        for ($i = 0; $i < count($argv); $i++) {
            $arg = $argv[$i];
            if ($arg === '--') {
                $i++;
                break;
            }
            if ($arg === '' || $arg[0] !== '-' || $arg === '-') {
                throw new \InvalidArgumentException("unexpected argument \"$arg\"");
            }
            $name = ltrim($arg, '-');
            $value = null;
            if (($eq = strpos($name, '=')) !== false) {
                $value = substr($name, $eq + 1);
                $name = substr($name, 0, $eq);
            }
            if ($name === 'h' || $name === 'help') {
                throw new \InvalidArgumentException('help requested');
            }
            if (isset($bools[$name])) {
                $b = $value === null ? true : filter_var($value, FILTER_VALIDATE_BOOL, FILTER_NULL_ON_FAILURE);
                if ($b === null) {
                    throw new \InvalidArgumentException("invalid boolean value \"$value\" for flag -$name");
                }
                $name === 'k' ? $c->keepAlive = $b : $c->accel = $b;
                $seen[$name] = true;
                continue;
            }
            if ($value === null) {
                if ($i + 1 >= count($argv)) {
                    throw new \InvalidArgumentException("flag needs an argument: -$name");
                }
                $value = $argv[++$i];
            }
            $seen[$name] = true;
            switch ($name) {
                case 'proto':
                    $c->proto = $value;
                    break;
                case 'call':
                    $c->call = $value;
                    break;
                case 'items':
                    $c->items = self::int($name, $value);
                    break;
                case 'c':
                    $c->concurrency = self::int($name, $value);
                    break;
                case 'n':
                    $c->requests = self::int($name, $value);
                    break;
                case 't':
                    $c->timeLimit = self::seconds($name, $value);
                    break;
                case 'timeout':
                    $c->timeout = self::seconds($name, $value);
                    break;
                case 'warmup':
                    if (preg_match('/^\d+$/', $value)) {
                        $c->warmupCalls = (int) $value;
                    } else {
                        $c->warmupSeconds = self::seconds($name, $value);
                    }
                    break;
                case 'addr':
                    $c->addr = $value;
                    break;
                default:
                    throw new \InvalidArgumentException("flag provided but not defined: -$name");
            }
        }
        if ($i < count($argv)) {
            throw new \InvalidArgumentException('unexpected argument "' . $argv[$i] . '"');
        }
        if (!in_array($c->proto, self::PROTOCOLS, true)) {
            throw new \InvalidArgumentException("-proto: \"$c->proto\" is not one of " . implode('|', self::PROTOCOLS));
        }
        if (!in_array($c->call, self::CALLS, true)) {
            throw new \InvalidArgumentException("-call: \"$c->call\" is not one of " . implode('|', self::CALLS));
        }
        if ($c->items < 0 || $c->items > 100000) {
            throw new \InvalidArgumentException("-items: $c->items is outside 0..100000");
        }
        if ($c->call === 'datatype' && !isset($seen['items'])) {
            $c->items = 0;
        }
        if ($c->concurrency < 1) {
            throw new \InvalidArgumentException("-c: $c->concurrency is not a positive number");
        }
        if ($c->timeLimit > 0 && !isset($seen['n'])) {
            $c->requests = self::UNLIMITED;
        }
        if ($c->requests < 1) {
            throw new \InvalidArgumentException("-n: $c->requests is not a positive number");
        }
        if ($c->concurrency > $c->requests) {
            throw new \InvalidArgumentException("-c: concurrency $c->concurrency is greater than -n $c->requests");
        }
        if ($c->timeout <= 0) {
            throw new \InvalidArgumentException('-timeout: must be greater than 0');
        }
        if ($c->addr === '') {
            $c->addr = self::DEFAULT_ADDR[$c->proto];
        }
        [$host, $port] = self::splitAddr($c->addr);
        if ($host === '' || $port < 1 || $port > 65535) {
            throw new \InvalidArgumentException("-addr: \"$c->addr\" is not HOST:PORT");
        }
        return $c;
    }

    /** @return array<string, mixed> every field, for a worker's command line */
    public function toArray(): array
    {
        return get_object_vars($this);
    }

    /** @param array<string, mixed> $a what toArray returned */
    public static function fromArray(array $a): self
    {
        $c = new self();
        foreach (get_object_vars($c) as $k => $v) {
            if (array_key_exists($k, $a)) {
                $c->$k = is_float($v) ? (float) $a[$k] : $a[$k];
            }
        }
        return $c;
    }

    /** @return array{string, int} */
    public static function splitAddr(string $addr): array
    {
        $colon = strrpos($addr, ':');
        if ($colon === false || !preg_match('/^\d+$/', substr($addr, $colon + 1))) {
            return ['', 0];
        }
        return [trim(substr($addr, 0, $colon), '[]'), (int) substr($addr, $colon + 1)];
    }

    public function host(): string
    {
        return self::splitAddr($this->addr)[0];
    }

    public function port(): int
    {
        return self::splitAddr($this->addr)[1];
    }

    /** The stable cell name, e.g. php-grpc-datalist-200-c50. */
    public function cellName(): string
    {
        $items = $this->call === 'datalist' ? "-$this->items" : '';
        return "php-$this->proto-$this->call$items-c$this->concurrency";
    }

    private static function int(string $name, string $value): int
    {
        if (!preg_match('/^-?\d+$/', $value)) {
            throw new \InvalidArgumentException("invalid value \"$value\" for flag -$name: not an integer");
        }
        return (int) $value;
    }

    /** Go duration syntax (1h2m3.5s, 300ms, 10us), or a bare number of seconds. */
    public static function seconds(string $name, string $value): float
    {
        if (preg_match('/^\d+(\.\d+)?$/', $value)) {
            return (float) $value;
        }
        $units = ['ns' => 1e-9, 'us' => 1e-6, 'µs' => 1e-6, 'ms' => 1e-3, 's' => 1.0, 'm' => 60.0, 'h' => 3600.0];
        if (!preg_match('/^((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$/u', $value)) {
            throw new \InvalidArgumentException("invalid value \"$value\" for flag -$name: not a duration");
        }
        preg_match_all('/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/u', $value, $m, PREG_SET_ORDER);
        $s = 0.0;
        foreach ($m as [, $num, $unit]) {
            $s += (float) $num * $units[$unit];
        }
        return $s;
    }
}
