<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * Config is one bench run, parsed from the flags every client takes
 * (docs/report-format.md): -proto -call -items -c -n -t -warmup -warmup-max -k
 * -conns -rate -timeout -addr -client-id, plus php-client's own (-runtime, -json, -thrift-*).
 */
final class Config
{
    public const PROTOCOLS = ['grpc', 'thrift', 'http', 'ice'];
    public const CALLS = ['datatype', 'datalist'];
    /**
     * c: the runtimes PHP services run in production (Google's protobuf C extension
     * for gRPC, thrift_protocol.so's accelerated binary protocol for Thrift);
     * pure: the pure-PHP protobuf and Thrift runtimes (the matrix's php-pure).
     */
    public const RUNTIMES = ['c', 'pure'];
    /** go-server's default ports (the front's defaults; the bench takes -addr, required). */
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

    public string $proto = '';
    public string $call = '';
    public int $items = 0;
    public int $concurrency = 1;
    /** Measured calls in total; UNLIMITED when only -t bounds the run. */
    public int $requests = 0;
    /** Measured duration in seconds (ab -t); 0 = none. With -n, whichever ends first. */
    public float $timeLimit = 0.0;
    /** Warm-up duration in seconds, excluded from every figure (with $warmupAuto: unused). */
    public float $warmupSeconds = 0.0;
    /** -warmup auto: warm up until throughput settles (docs/method.md section 5), at most $warmupMax. */
    public bool $warmupAuto = false;
    /** -warmup-max: the longest an auto warm-up lasts, seconds. */
    public float $warmupMax = 10.0;
    public string $addr = '';
    public bool $keepAlive = false;
    /** Per-call deadline in seconds. */
    public float $timeout = 10.0;
    /** Client id sent in every request's auth; each caller appends "-<caller>". */
    public string $clientId = 'php-client';
    /** Also write the report as JSON (internal/report's field names) to this file. */
    public string $jsonFile = '';
    public string $thriftTransport = 'framed';
    public string $thriftProtocol = 'binary';
    /** c or pure (RUNTIMES); HTTP and Ice decode in C either way. */
    public string $runtime = 'c';
    /** Thrift: use the thrift_protocol extension (TBinaryProtocolAccelerated); set from -runtime. */
    public bool $accel = false;
    /** Open loop: calls per second in total; 0 = closed loop. */
    public int $rate = 0;

    private const VALUE_FLAGS = ['proto', 'call', 'items', 'c', 'n', 't', 'warmup', 'timeout', 'addr', 'json',
        'client-id', 'thrift-transport', 'thrift-protocol', 'conns', 'rate', 'runtime', 'warmup-max'];

    public const USAGE = <<<'TXT'
        usage:
          php-client -proto grpc|thrift|http|ice -call datatype|datalist [-items N] -c C
                     (-n N | -t DURATION | both) -addr HOST:PORT [-warmup 2s|auto]
                     [-warmup-max 10s] [-k] [-timeout 10s] [-json FILE] [-client-id ID]
                     [-runtime c|pure] [-thrift-transport framed|buffered] [-thrift-protocol binary|compact]
          php-client worker      (long-lived worker: runs read from stdin, see README.md)

        The same flags as go-client. Durations take Go syntax (30s, 1m) or whole seconds (30).
          -proto      protocol: grpc, thrift, http or ice
          -call       datatype or datalist
          -items      items asked for by datalist, 0..100000 (datatype takes none)
          -c          concurrent callers: processes, one connection each (default 1)
          -n          measured calls in total (as ab -n); with -t, whichever ends first
          -t          measured duration (as ab -t)
          -warmup     warm-up, excluded from every figure: a duration, or auto (until
                      3 consecutive 250 ms windows' throughput lie within 5 % of their
                      mean, at most -warmup-max) (default 0)
          -warmup-max the longest -warmup auto lasts (default 10s)
          -k          HTTP keep-alive (as ab -k); gRPC, Thrift and Ice always keep the connection
          -timeout    per-call deadline (default 10s)
          -addr       server HOST:PORT (required)
          -json       also write the report as JSON to this file
          -client-id  client id sent in every request's auth (default php-client)
          -conns      TCP connections (default = -c); php-client runs one process per
                      caller, each with its own connection, so only -conns = -c is accepted
          -rate       open loop: calls per second in total, latency from each call's
                      intended start (0 = closed loop)
          -runtime    c (default): gRPC decodes with Google's protobuf C extension, Thrift's
                      binary protocol with thrift_protocol.so; pure: the pure-PHP
                      protobuf and Thrift runtimes (the matrix's php-pure client)
          -thrift-transport, -thrift-protocol  as go-server's (default framed, binary;
                      compact has no C codec in php-thrift: pure PHP with either runtime)
          -accel      accepted for older scripts: the thrift_protocol extension, which
                      -runtime c already uses

        exit codes:
          0  report printed (also when calls failed: see "Failed requests"); -h, -help
          1  internal error: the report could not be written, or the client itself failed
          2  bad arguments (or grpc.so / protobuf.so missing)
          3  verify failed: the server answered, but wrongly, or refused the call (no report)
          4  server unreachable before timing (no report)
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
        $bools = ['k' => 'keepAlive', 'accel' => 'accel'];
        $conns = null;
        for ($i = 0; $i < count($argv); $i++) {
            $arg = $argv[$i];
            if ($arg === '--') {
                $i++;
                break;
            }
            if ($arg === '' || $arg[0] !== '-' || $arg === '-') {
                break;
            }
            $name = ltrim($arg, '-');
            $value = null;
            if (($eq = strpos($name, '=')) !== false) {
                $value = substr($name, $eq + 1);
                $name = substr($name, 0, $eq);
            }
            if ($name === 'h' || $name === 'help') {
                throw new HelpRequested('help requested');
            }
            if (isset($bools[$name])) {
                $b = $value === null ? true : filter_var($value, FILTER_VALIDATE_BOOL, FILTER_NULL_ON_FAILURE);
                if ($b === null) {
                    throw new \InvalidArgumentException("invalid boolean value \"$value\" for flag -$name");
                }
                $c->{$bools[$name]} = $b;
                continue;
            }
            if (!in_array($name, self::VALUE_FLAGS, true)) {
                throw new \InvalidArgumentException("flag provided but not defined: -$name");
            }
            if ($value === null) {
                if ($i + 1 >= count($argv)) {
                    throw new \InvalidArgumentException("flag needs an argument: -$name");
                }
                $value = $argv[++$i];
            }
            $seen[$name] = true;
            match ($name) {
                'proto' => $c->proto = $value,
                'call' => $c->call = $value,
                'items' => $c->items = self::int($name, $value),
                'c' => $c->concurrency = self::int($name, $value),
                'n' => $c->requests = self::int($name, $value),
                't' => $c->timeLimit = self::seconds($name, $value),
                'warmup' => $c->warmup($value),
                'warmup-max' => $c->warmupMax = self::seconds($name, $value),
                'timeout' => $c->timeout = self::seconds($name, $value),
                'addr' => $c->addr = $value,
                'json' => $c->jsonFile = $value,
                'client-id' => $c->clientId = $value,
                'thrift-transport' => $c->thriftTransport = $value,
                'thrift-protocol' => $c->thriftProtocol = $value,
                'conns' => $conns = self::int($name, $value),
                'rate' => $c->rate = self::int($name, $value),
                'runtime' => $c->runtime = $value,
                default => throw new \InvalidArgumentException("flag provided but not defined: -$name"),
            };
        }
        if ($i < count($argv)) {
            throw new \InvalidArgumentException('unexpected argument "' . $argv[$i] . '"');
        }
        if (!in_array($c->proto, self::PROTOCOLS, true)) {
            throw new \InvalidArgumentException("-proto \"$c->proto\": want grpc, thrift, http or ice");
        }
        if ($c->call === 'datatype') {
            if ($c->items !== 0) {
                throw new \InvalidArgumentException("-items $c->items: datatype takes no items");
            }
        } elseif ($c->call === 'datalist') {
            if ($c->items < 0 || $c->items > 100000) {
                throw new \InvalidArgumentException("-items $c->items: want 0..100000");
            }
        } else {
            throw new \InvalidArgumentException("-call \"$c->call\": want datatype or datalist");
        }
        if ($c->concurrency < 1) {
            throw new \InvalidArgumentException("-c $c->concurrency: want at least 1");
        }
        if ($c->requests < 0) {
            throw new \InvalidArgumentException("-n $c->requests: want at least 1");
        }
        if ($c->requests === 0 && $c->timeLimit == 0) {
            throw new \InvalidArgumentException('give -n (calls) or -t (duration), or both');
        }
        if ($c->requests > 0 && $c->requests < $c->concurrency) {
            throw new \InvalidArgumentException("-c $c->concurrency is greater than -n $c->requests (as ab, every caller needs a call)");
        }
        if ($c->requests === 0) {
            $c->requests = self::UNLIMITED;
        }
        if ($c->timeout == 0) {
            throw new \InvalidArgumentException('-timeout must be above 0');
        }
        if ($conns !== null && $conns !== $c->concurrency) {
            throw new \InvalidArgumentException("-conns $conns: php-client runs one process per caller, each with its own "
                . "connection, so -conns must equal -c ($c->concurrency) (docs/method.md section 4)");
        }
        if ($c->warmupAuto && $c->warmupMax <= 0) {
            throw new \InvalidArgumentException('-warmup-max must be above 0 with -warmup auto');
        }
        if ($c->rate < 0) {
            throw new \InvalidArgumentException("-rate $c->rate: want >= 0");
        }
        if (!in_array($c->thriftTransport, ['framed', 'buffered'], true)) {
            throw new \InvalidArgumentException("-thrift-transport \"$c->thriftTransport\": want framed or buffered");
        }
        if (!in_array($c->thriftProtocol, ['binary', 'compact'], true)) {
            throw new \InvalidArgumentException("-thrift-protocol \"$c->thriftProtocol\": want binary or compact");
        }
        if (!in_array($c->runtime, self::RUNTIMES, true)) {
            throw new \InvalidArgumentException("-runtime \"$c->runtime\": want c or pure");
        }
        if ($c->accel && ($c->proto !== 'thrift' || $c->thriftProtocol !== 'binary')) {
            throw new \InvalidArgumentException('-accel: only for -proto thrift with the binary protocol');
        }
        if ($c->accel && $c->runtime === 'pure') {
            throw new \InvalidArgumentException('-accel: the thrift_protocol extension is the c runtime, not -runtime pure');
        }
        // The c runtime's Thrift codec: php-thrift's C extension speaks the binary protocol only.
        $c->accel = $c->runtime === 'c' && $c->proto === 'thrift' && $c->thriftProtocol === 'binary';
        if ($c->proto !== 'http') {
            $c->keepAlive = false; // harmless: RPC protocols always keep the connection
        }
        if ($c->addr === '') {
            throw new \InvalidArgumentException('-addr is required (HOST:PORT of the server)');
        }
        [$host, $port] = self::splitAddr($c->addr);
        if ($host === '' || $port < 1 || $port > 65535) {
            throw new \InvalidArgumentException("-addr \"$c->addr\": want HOST:PORT");
        }
        return $c;
    }

    /** @return array<string, mixed> every field, for a caller's command line */
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
        // e.g. php-grpc-datalist-200-c50, php-thrift-datatype-c10
        $client = $this->runtime === 'pure' ? 'php-pure' : 'php';
        return "$client-$this->proto-$this->call$items-c$this->concurrency";
    }

    /** -warmup: a duration, or auto. */
    private function warmup(string $value): void
    {
        $this->warmupAuto = $value === 'auto';
        $this->warmupSeconds = $this->warmupAuto ? 0.0 : self::seconds('warmup', $value);
    }

    private static function int(string $name, string $value): int
    {
        if (!preg_match('/^-?\d+$/', $value)) {
            throw new \InvalidArgumentException("-$name \"$value\": want an integer");
        }
        return (int) $value;
    }

    /** Go duration syntax (1h2m3.5s, 300ms, 10us) or a bare number of seconds, 0..24h. */
    public static function seconds(string $name, string $value): float
    {
        $s = self::duration($name, trim($value));
        if ($s > 86400) {
            throw new \InvalidArgumentException("-$name \"$value\": want 0 to 24h");
        }
        return $s;
    }

    private static function duration(string $name, string $value): float
    {
        if (preg_match('/^\d+(\.\d*)?$|^\.\d+$/', $value)) {
            return (float) $value;
        }
        $units = ['ns' => 1e-9, 'us' => 1e-6, 'µs' => 1e-6, 'ms' => 1e-3, 's' => 1.0, 'm' => 60.0, 'h' => 3600.0];
        if (!preg_match('/^((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$/u', $value)) {
            throw new \InvalidArgumentException("-$name \"$value\": want a duration like 30s or whole seconds");
        }
        preg_match_all('/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/u', $value, $m, PREG_SET_ORDER);
        $s = 0.0;
        foreach ($m as [, $num, $unit]) {
            $s += (float) $num * $units[$unit];
        }
        return $s;
    }
}
