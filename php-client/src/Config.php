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
    public const SECURITY = ['plaintext', 'tls', 'mtls'];
    public const CONNECTS = ['persistent', 'per-call'];
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
    /** plaintext, tls or mtls (SECURITY). */
    public string $security = 'plaintext';
    /** PEM file of the CA the server's certificate must chain to (required with TLS). */
    public string $caCert = '';
    /** mtls: the client's certificate and key (PEM files). */
    public string $cert = '';
    public string $key = '';
    /** The name the server's certificate must carry; '' = the host of -addr. */
    public string $serverName = '';
    /** The TLS version asked: 1.3 or 1.2 (the highest offered; Tls says how each library caps it). */
    public string $tlsVersion = '1.3';
    /** persistent (one connection per caller for the whole run) or per-call (CONNECTS). */
    public string $connect = 'persistent';
    /** -resume: '' (the library's default), on or off. */
    public string $resume = '';
    /**
     * -start-at: Unix seconds on this host's clock; the measured window opens then, or
     * when the warm-up ends if later (calls before it are warm-up). 0.0 = none.
     */
    public float $startAt = 0.0;

    /** -start-at further ahead than this is another host's clock or not Unix seconds. */
    private const START_AHEAD_MAX = 3600.0;

    private const VALUE_FLAGS = ['proto', 'call', 'items', 'c', 'n', 't', 'warmup', 'timeout', 'addr', 'json',
        'client-id', 'thrift-transport', 'thrift-protocol', 'conns', 'rate', 'runtime', 'warmup-max',
        'security', 'cacert', 'cert', 'key', 'servername', 'tls-version', 'connect', 'resume', 'start-at'];

    public const USAGE = <<<'TXT'
        usage:
          php-client -proto grpc|thrift|http|ice -call datatype|datalist [-items N] -c C
                     (-n N | -t DURATION | both) -addr HOST:PORT [-warmup 2s|auto]
                     [-warmup-max 10s] [-k] [-timeout 10s] [-json FILE] [-client-id ID]
                     [-runtime c|pure] [-thrift-transport framed|buffered] [-thrift-protocol binary|compact]
                     [-security plaintext|tls|mtls [-cacert FILE] [-cert FILE -key FILE] [-servername NAME]
                      [-tls-version 1.3|1.2] [-resume off]] [-connect persistent|per-call]
                     [-start-at UNIX_SECONDS]
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
          -start-at   open the measured window at this time (Unix seconds on this host's
                      clock) or when the warm-up ends, whichever is later; calls before
                      it are warm-up (a cluster's tasks share one window)
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
          -security   plaintext (default), tls or mtls (a client certificate, -cert and -key):
                      grpc with grpc.so's ChannelCredentials::createSsl, thrift over PHP's
                      OpenSSL streams (tls://), http with curl over https (HTTP/1.1), ice
                      with IceSSL; the report adds "TLS:" and "TLS handshakes:"
          -cacert     the CA the server's certificate must chain to (PEM; required with TLS)
          -cert, -key the client's certificate and key (PEM), for -security mtls
          -servername the name the server's certificate must carry (default: the host of -addr)
          -tls-version 1.3 (default) or 1.2: the highest version offered (not grpc:
                      grpc.so takes no TLS version, gRPC core offers 1.2 and 1.3)
          -resume     off: no PHP library here resumes TLS sessions across the connections
                      php-client opens (its default), so only off is taken
          -connect    persistent (default: one connection per caller) or per-call: a new
                      connection, and handshake, for every call, as a PHP front without
                      persistent channels; the report adds "Connections opened:"

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
                'security' => $c->security = $value,
                'cacert' => $c->caCert = $value,
                'cert' => $c->cert = $value,
                'key' => $c->key = $value,
                'servername' => $c->serverName = $value,
                'tls-version' => $c->tlsVersion = $value,
                'connect' => $c->connect = $value,
                'resume' => $c->resume = $value,
                'start-at' => $c->startAt = self::unixSeconds($name, $value),
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
        if ($c->startAt - microtime(true) > self::START_AHEAD_MAX) {
            throw new \InvalidArgumentException(sprintf('-start-at %.6f: %.0f s ahead of this host\'s clock (at most %.0f s): '
                . 'another host\'s clock, or not Unix seconds', $c->startAt, $c->startAt - microtime(true), self::START_AHEAD_MAX));
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
        $c->validateSecurity();
        return $c;
    }

    /** Whether the run speaks TLS (tls or mtls). */
    public function secure(): bool
    {
        return $this->security !== 'plaintext';
    }

    /** Whether every call opens a connection of its own. */
    public function perCall(): bool
    {
        return $this->connect === 'per-call';
    }

    /** The name the server's certificate must carry: -servername, else the host of -addr. */
    public function peerName(): string
    {
        return $this->serverName !== '' ? $this->serverName : $this->host();
    }

    /** -security, -connect and the TLS flags, as go-client checks them. */
    private function validateSecurity(): void
    {
        if (!in_array($this->security, self::SECURITY, true)) {
            throw new \InvalidArgumentException("-security \"$this->security\": want plaintext, tls or mtls");
        }
        if (!in_array($this->connect, self::CONNECTS, true)) {
            throw new \InvalidArgumentException("-connect \"$this->connect\": want persistent or per-call");
        }
        if ($this->perCall() && $this->keepAlive) {
            throw new \InvalidArgumentException('-k with -connect per-call: a new connection for every call keeps none alive');
        }
        if (!in_array($this->tlsVersion, ['1.3', '1.2'], true)) {
            throw new \InvalidArgumentException("-tls-version \"$this->tlsVersion\": want 1.3 or 1.2");
        }
        if (!in_array($this->resume, ['', 'on', 'off'], true)) {
            throw new \InvalidArgumentException("-resume \"$this->resume\": want on or off");
        }
        if (!$this->secure()) {
            if ($this->caCert !== '' || $this->cert !== '' || $this->key !== '' || $this->serverName !== ''
                || $this->tlsVersion !== '1.3' || $this->resume !== '') {
                throw new \InvalidArgumentException('-cacert, -cert, -key, -servername, -tls-version and -resume need -security tls or mtls');
            }
            return;
        }
        if ($this->caCert === '') {
            throw new \InvalidArgumentException('-cacert: TLS needs the CA that signed the server\'s certificate');
        }
        if ($this->security === 'mtls' && ($this->cert === '' || $this->key === '')) {
            throw new \InvalidArgumentException('-security mtls: give the client\'s certificate, -cert and -key');
        }
        if ($this->security === 'tls' && ($this->cert !== '' || $this->key !== '')) {
            throw new \InvalidArgumentException('-cert and -key are for -security mtls');
        }
        if ($this->resume === 'on') {
            throw new \InvalidArgumentException('-resume on: no library php-client uses resumes TLS sessions across '
                . 'the connections it opens (grpc.so takes no session cache from PHP, PHP\'s OpenSSL streams keep '
                . 'none, a per-call curl handle starts empty, IceSSL keeps none); docs/clients.md');
        }
        foreach (['cacert' => $this->caCert, 'cert' => $this->cert, 'key' => $this->key] as $flag => $file) {
            if ($file !== '' && !is_readable($file)) {
                throw new \InvalidArgumentException("-$flag \"$file\": cannot read the file");
            }
        }
        if ($this->proto === 'grpc' && $this->tlsVersion === '1.2') {
            throw new \InvalidArgumentException('-tls-version 1.2 with -proto grpc: grpc.so\'s ChannelCredentials::createSsl '
                . 'takes no TLS version (gRPC core offers TLS 1.2 and 1.3 and picks 1.3 with any server that speaks it)');
        }
        if ($this->proto === 'ice' && $this->serverName !== '' && $this->serverName !== $this->host()) {
            throw new \InvalidArgumentException("-servername \"$this->serverName\" with -proto ice: IceSSL checks the "
                . 'certificate against the host of -addr and takes no other name; give -addr with that name');
        }
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
        // The conditions after "@" as plan.Cell.Name prints them: security, then percall.
        $cond = [];
        if ($this->secure()) {
            $cond[] = $this->security . ($this->tlsVersion === '1.2' ? '+tls12' : '') . ($this->resume === 'off' ? '+noresume' : '');
        }
        if ($this->perCall()) {
            $cond[] = 'percall';
        }
        return "$client-$this->proto-$this->call$items-c$this->concurrency" . ($cond ? '@' . implode('+', $cond) : '');
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

    /** -start-at: Unix seconds with a fraction, above 0 and before the year 5138 (as go-client). */
    private static function unixSeconds(string $name, string $value): float
    {
        $value = trim($value);
        if (!preg_match('/^\d+(\.\d*)?$/', $value) || (float) $value <= 0 || (float) $value > 1e11) {
            throw new \InvalidArgumentException("-$name \"$value\": want Unix seconds (as 1767225600.25)");
        }
        return (float) $value;
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
