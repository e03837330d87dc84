package load

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rpcbed/rpcbed/internal/report"
)

const usageHead = `go-client: the rpcbed Go load client (closed loop like ab, open loop like wrk2)

usage:
  go-client -proto grpc|thrift|http -call datatype|datalist [-items N] [-c C]
            (-n N | -t DURATION | both) [-warmup 2s|auto [-warmup-max 10s]] [-k]
            [-conns K] [-rate R] [-check full|length] [-pin auto|on|off]
            [-timeout 10s] -addr HOST:PORT [-json FILE] [-client-id ID]
            [-start-at UNIX_SECONDS]
            [-security plaintext|tls|mtls -cacert FILE [-cert FILE -key FILE]
             [-servername NAME] [-tls-version 1.3|1.2] [-resume on|off]]
            [-connect persistent|per-call]
  go-client worker      (many runs in one process: docs/report-format.md, "Worker mode")
  go-client front -listen 127.0.0.1:8081 -proto grpc|thrift|http -addr HOST:PORT

Before timing one call is verified (codeId 101, or exactly -items items, and a
token). Every timed call decodes its whole response and checks it the same way
(-check full, docs/method.md); -check length checks status, token and size only,
as ab, wrk and ghz do (load-generator mode: on HTTP with -k, event loops and a
hand-written HTTP/1.1 response reader instead of net/http, docs/loadgen.md; not
over TLS). With -security tls every protocol speaks crypto/tls (ALPN h2 for gRPC,
http/1.1 for http, none for Thrift); the report adds "TLS:" and "TLS handshakes:"
(the window's), and with -connect per-call "Connections opened:". crypto/tls does
not resume sessions by default (no session cache): -resume on keeps them. The report (ab 2.3 layout + rpcbed block) goes to stdout,
logs to stderr. Durations take Go syntax (30s, 1m) or, as in ab, whole seconds (30).

exit codes:
  0  report printed (also when calls failed: see "Failed requests"); -h
  1  internal error: the report could not be written (stdout or -json)
  2  bad arguments (usage on stderr)
  3  verify failed: the server answered, but wrongly, or refused the call (no report);
     or a certificate problem: "verify: certificate: CAUSE: ..." (CAUSE: unknown CA,
     expired certificate, wrong name, client certificate refused)
  4  server unreachable before timing: no answer to the verify call (no report)
A failed verify prints "verify: KIND: message" on stderr (KIND: connect, receive,
timeout, length, unauthenticated, invalid_argument, exceptions).

flags:
`

// Main is go-client's whole command line; it returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "worker":
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return WorkerMain(ctx, args[1:], os.Stdin, stdout, stderr)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return RunMain(ctx, args, stdout, stderr)
}

// RunMain is one run of the one-shot command line (also what a worker's run
// command does); it returns the exit code.
func RunMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := ParseArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		Usage(stdout)
		return report.ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "go-client: %v\n", err)
		Usage(stderr)
		return report.ExitUsage
	}
	cfg.LatencyDump = os.Getenv(LatencyDumpEnv)
	res, err := Run(ctx, cfg, stderr)
	if err != nil {
		var ee *ExitError
		if errors.As(err, &ee) {
			if ee.Kind != "" {
				fmt.Fprintf(stderr, "verify: %s: %v\n", ee.Kind, ee.Err)
			} else {
				fmt.Fprintf(stderr, "go-client: %v\n", err)
			}
			return ee.Code
		}
		fmt.Fprintf(stderr, "go-client: %v\n", err)
		return report.ExitInternal
	}
	rep := res.Report()
	if cfg.LatencyDump != "" {
		if err := WriteLatencies(cfg.LatencyDump, res.RawLatency); err != nil {
			fmt.Fprintf(stderr, "go-client: %s: %v\n", LatencyDumpEnv, err)
			return report.ExitInternal
		}
	}
	if err := report.Write(stdout, rep); err != nil {
		fmt.Fprintf(stderr, "go-client: writing the report: %v\n", err)
		return report.ExitInternal
	}
	if cfg.JSONFile != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err == nil {
			err = os.WriteFile(cfg.JSONFile, append(b, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "go-client: -json: %v\n", err)
			return report.ExitInternal
		}
	}
	return report.ExitOK
}

// LatencyDumpEnv names a file every client (go, php, java) writes each latency
// its record holds to, in microseconds, one a line (docs/report-format.md): how
// the merge tests compare merged percentiles with the raw latencies'.
const LatencyDumpEnv = "RPCBED_LATENCY_DUMP"

// WriteLatencies writes the raw latencies in LatencyDumpEnv's format.
func WriteLatencies(path string, us []int64) error {
	b := make([]byte, 0, len(us)*6)
	for _, v := range us {
		b = strconv.AppendInt(b, v, 10)
		b = append(b, '\n')
	}
	return os.WriteFile(path, b, 0o644)
}

// Usage prints the usage text and every flag.
func Usage(w io.Writer) {
	fs := newFlagSet(&Config{})
	fs.SetOutput(w)
	fmt.Fprint(w, usageHead)
	fs.PrintDefaults()
}

func newFlagSet(cfg *Config) *flag.FlagSet {
	fs := flag.NewFlagSet("go-client", flag.ContinueOnError)
	fs.Usage = func() {} // Main prints it: on stdout for -h, on stderr after an error
	fs.StringVar(&cfg.Proto, "proto", "", "protocol: grpc, thrift or http")
	fs.StringVar(&cfg.Call, "call", "", "call: datatype or datalist")
	fs.IntVar(&cfg.Items, "items", 0, "items asked for by datalist")
	fs.IntVar(&cfg.Concurrency, "c", defaultConcurrency, "concurrent callers (as ab -c)")
	fs.Int64Var(&cfg.Requests, "n", 0, "measured calls in total (as ab -n); with -t, whichever ends first")
	fs.Var((*seconds)(&cfg.Duration), "t", "measured duration (as ab -t); with -n, whichever ends first")
	fs.Var(warmupFlag{cfg}, "warmup", "warm-up, excluded from every figure: a duration, or auto (until 3 consecutive 250 ms windows' throughput are within ±5 % of their mean)")
	fs.Var((*unixTime)(&cfg.StartAt), "start-at", "open the measured window at this time (Unix seconds on this host's clock) or when the warm-up ends, whichever is later; calls before it are warm-up (a cluster's tasks share one window)")
	fs.Var((*seconds)(&cfg.WarmupMax), "warmup-max", "-warmup auto: the longest warm-up (default "+defaultWarmupMax.String()+")")
	fs.BoolVar(&cfg.KeepAlive, "k", false, "HTTP keep-alive (as ab -k); gRPC and Thrift always keep the connection")
	fs.IntVar(&cfg.Conns, "conns", 0, "TCP connections (default -c, one per caller); gRPC shares K < c round-robin, thrift and http take only K = c")
	fs.IntVar(&cfg.Rate, "rate", 0, "open loop: calls per second in total, latency from each call's intended start (0 = closed loop)")
	fs.StringVar(&cfg.Check, "check", CheckFull, "full: decode every response and check its items or codeId and token; length: status, token and size only (as ab, wrk, ghz)")
	fs.StringVar(&cfg.Pin, "pin", PinAuto, "load-generator mode on HTTP: each event loop's thread on a CPU of its own: on, off, or auto (on in a closed loop, off with -rate)")
	cfg.Timeout = DefaultTimeout
	fs.Var((*seconds)(&cfg.Timeout), "timeout", "per-call deadline")
	fs.StringVar(&cfg.Addr, "addr", "", "server HOST:PORT")
	fs.StringVar(&cfg.JSONFile, "json", "", "also write the report as JSON to this file")
	fs.StringVar(&cfg.ClientID, "client-id", defaultClientID, "client id sent in every request's auth")
	ThriftFlags(fs, cfg)
	fs.StringVar(&cfg.Security, "security", SecPlaintext, "plaintext, tls or mtls (TLS with a client certificate)")
	fs.StringVar(&cfg.TLS.CACert, "cacert", "", "TLS: the CA that signed the server's certificate (PEM)")
	fs.StringVar(&cfg.TLS.Cert, "cert", "", "mtls: the client's certificate (PEM)")
	fs.StringVar(&cfg.TLS.Key, "key", "", "mtls: the client's private key (PEM)")
	fs.StringVar(&cfg.TLS.ServerName, "servername", "", "TLS: the name the server's certificate must carry (default: the host of -addr)")
	fs.StringVar(&cfg.TLS.Version, "tls-version", "1.3", "TLS: the highest version asked, 1.3 or 1.2")
	fs.StringVar(&cfg.TLS.Resume, "resume", "", "TLS session resumption: on or off (default: crypto/tls's, off: no session cache)")
	fs.StringVar(&cfg.Connect, "connect", ConnectPersistent, "persistent (each caller keeps its connection) or per-call (a new connection, and with TLS a new handshake, for every call)")
	fs.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write a pprof CPU profile of the measured part to this file")
	return fs
}

// ParseArgs reads the load flags into a validated Config. -h and -help give
// flag.ErrHelp.
func ParseArgs(args []string) (Config, error) {
	var cfg Config
	fs := newFlagSet(&cfg)
	fs.SetOutput(io.Discard) // the error comes back; RunMain prints it once

	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if cfg.Timeout == 0 {
		return cfg, errors.New("-timeout must be above 0")
	}
	cfg.Defaults()
	return cfg, cfg.Validate()
}

// ThriftFlags adds -thrift-transport and -thrift-protocol, set into cfg, to fs.
func ThriftFlags(fs *flag.FlagSet, cfg *Config) {
	fs.StringVar(&cfg.ThriftTransport, "thrift-transport", defaultThriftTransport, "thrift transport: framed or buffered")
	fs.StringVar(&cfg.ThriftProtocol, "thrift-protocol", defaultThriftProtocol, "thrift protocol: binary or compact")
}

// SecondsFlag is a duration flag into d that also takes ab's whole seconds ("30").
func SecondsFlag(d *time.Duration) flag.Value { return (*seconds)(d) }

// seconds is a duration flag that also takes ab's whole seconds ("30").
type seconds time.Duration

func (s *seconds) String() string {
	if s == nil || *s == 0 {
		return "0"
	}
	return time.Duration(*s).String()
}

func (s *seconds) Set(v string) error {
	d, err := parseSeconds(v)
	if err != nil {
		return err
	}
	*s = seconds(d)
	return nil
}

// unixTime is -start-at: Unix seconds with a fraction (microseconds are kept).
type unixTime time.Time

func (u *unixTime) String() string {
	if u == nil || time.Time(*u).IsZero() {
		return ""
	}
	return strconv.FormatFloat(float64(time.Time(*u).UnixMicro())/1e6, 'f', 6, 64)
}

func (u *unixTime) Set(v string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f <= 0 || f != f || f > maxUnixSeconds {
		return fmt.Errorf("%q: want Unix seconds (as 1767225600.25)", v)
	}
	*u = unixTime(time.UnixMicro(int64(math.Round(f * 1e6))))
	return nil
}

// parseSeconds reads "30s", "1m30s", "1.5" or "30" (seconds). Negative values and
// durations beyond a day are refused: no run is meant to last that long.
func parseSeconds(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	var d time.Duration
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f < 0 || f > 86400 || f != f {
			return 0, fmt.Errorf("%q: want 0 to 86400 seconds", v)
		}
		d = time.Duration(f * float64(time.Second))
	} else {
		d, err = time.ParseDuration(v)
		if err != nil {
			return 0, fmt.Errorf("%q: want a duration like 30s or whole seconds", v)
		}
	}
	if d < 0 || d > 24*time.Hour {
		return 0, fmt.Errorf("%q: want 0 to 24h", v)
	}
	return d, nil
}
