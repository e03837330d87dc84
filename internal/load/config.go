// Package load is go-client's load generator: a closed-loop (ab-like) or open-loop
// (wrk2-like) loop over gRPC, Thrift or HTTP that fills an rpcbed report.
// Its connections also serve other programs through DataListClient (the Go HTTP
// front, internal/front).
package load

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/rpcbed/rpcbed/internal/tlsbed"
)

// Config is one run: the whole job in one plain struct, as hey does it.
type Config struct {
	Proto       string        // grpc|thrift|http
	Call        string        // datatype|datalist
	Items       int           // n for datalist
	Concurrency int           // -c: concurrent callers
	Requests    int64         // -n: measured calls in total; 0 = no count limit
	Duration    time.Duration // -t: measured duration; 0 = no time limit
	Warmup      time.Duration // fixed warm-up, excluded from every figure
	WarmupAuto  bool          // -warmup auto: until throughput settles, at most WarmupMax
	WarmupMax   time.Duration // -warmup-max (auto only); 0 = 10s
	StartAt     time.Time     // -start-at: the measured window opens then, or when the warm-up ends if later; zero = none
	KeepAlive   bool          // -k (HTTP only; the RPC protocols always keep the connection)
	Conns       int           // -conns: TCP connections; 0 = one per caller (-c)
	Check       string        // -check: full (decode, count, token: docs/method.md) or length
	Rate        int           // -rate: calls/s in total; 0 = closed loop
	Timeout     time.Duration // per call
	Pin         string        // -pin: auto (""), on or off: load-generator mode's event loops each on a CPU of its own
	Addr        string        // HOST:PORT
	JSONFile    string        // -json
	ClientID    string
	CPUProfile  string // pprof CPU profile of the measured part
	// LatencyDump, when set, is a file that gets every recorded latency (µs, one
	// a line): the environment's RPCBED_LATENCY_DUMP, for the merge tests only.
	LatencyDump string

	ThriftTransport string // framed|buffered
	ThriftProtocol  string // binary|compact

	// Security is -security: plaintext (""), tls or mtls, with TLS's flags
	// (-cacert, -cert, -key, -servername, -tls-version, -resume). Connect is
	// -connect: persistent ("") or per-call, a new connection (and handshake)
	// for every call.
	Security string
	TLS      tlsbed.Client
	Connect  string

	tls *tls.Config  // built by Validate from TLS
	net *netCounters // the run's connections and handshakes (Run)
}

// Names of the protocols and calls, the project's one vocabulary.
const (
	ProtoGRPC   = "grpc"
	ProtoThrift = "thrift"
	ProtoHTTP   = "http"

	CallDataType = "datatype"
	CallDataList = "datalist"

	// The one key the published client asks for.
	GroupName = "USER_EVENT"
	EnName    = "app_call_connect_success"
	WantCode  = 101

	// -check: full decodes every response and checks its content (docs/method.md);
	// length checks status, token and byte count only, as ab, wrk and ghz do.
	CheckFull   = "full"
	CheckLength = "length"

	maxItems = 100000   // docs/contract.md: n outside 0..100000 is invalid
	maxRate  = 10000000 // calls/s; keeps the open-loop interval above 0

	// maxStartAhead bounds -start-at: a common start further off than this is a
	// wrong clock or a wrong unit, not a plan.
	maxStartAhead  = time.Hour
	maxUnixSeconds = 1e11 // -start-at: the year 5138; beyond is not a time

)

// go-client's defaults, the one place they are set: the flags show them and
// Defaults fills a Config's zero fields from them.
const (
	DefaultTimeout         = 10 * time.Second
	defaultConcurrency     = 1
	defaultClientID        = "go-client"
	defaultThriftTransport = "framed"
	defaultThriftProtocol  = "binary"
	defaultWarmupMax       = 10 * time.Second // -warmup auto only
)

// Defaults fills the zero fields the flags may leave, or a caller that builds a
// Config by hand: timeout, client id, Thrift settings, connections (one per
// caller), check, and the auto warm-up's bound. Concurrency is not filled: -c 0
// is an error, not a default.
func (c *Config) Defaults() {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.ClientID == "" {
		c.ClientID = defaultClientID
	}
	if c.ThriftTransport == "" {
		c.ThriftTransport = defaultThriftTransport
	}
	if c.ThriftProtocol == "" {
		c.ThriftProtocol = defaultThriftProtocol
	}
	if c.Conns == 0 {
		c.Conns = c.Concurrency // docs/method.md: one per caller, every protocol
	}
	if c.Check == "" {
		c.Check = CheckFull
	}
	if c.WarmupAuto && c.WarmupMax == 0 {
		c.WarmupMax = defaultWarmupMax
	}
}

// Validate reports the first thing wrong with c, in words a user can act on.
func (c *Config) Validate() error {
	switch c.Proto {
	case ProtoGRPC, ProtoThrift, ProtoHTTP:
	default:
		return fmt.Errorf("-proto %q: want grpc, thrift or http", c.Proto)
	}
	switch c.Call {
	case CallDataType:
		if c.Items != 0 {
			return fmt.Errorf("-items %d: datatype takes no items", c.Items)
		}
	case CallDataList:
		if c.Items < 0 || c.Items > maxItems {
			return fmt.Errorf("-items %d: want 0..%d", c.Items, maxItems)
		}
	default:
		return fmt.Errorf("-call %q: want datatype or datalist", c.Call)
	}
	if c.Concurrency < 1 {
		return fmt.Errorf("-c %d: want at least 1", c.Concurrency)
	}
	if c.Requests < 0 {
		return fmt.Errorf("-n %d: want at least 1", c.Requests)
	}
	if c.Duration < 0 || c.Warmup < 0 || c.Timeout < 0 || c.WarmupMax < 0 {
		return errors.New("-t, -warmup, -warmup-max and -timeout must not be negative")
	}
	switch c.Pin {
	case "", PinAuto, PinOn, PinOff:
	default:
		return fmt.Errorf("-pin %q: want auto, on or off", c.Pin)
	}
	if c.WarmupAuto && c.Warmup != 0 {
		return errors.New("-warmup is either a duration or auto")
	}
	if ahead := time.Until(c.StartAt); !c.StartAt.IsZero() && ahead > maxStartAhead {
		return fmt.Errorf("-start-at %.6f: %v ahead of this host's clock (at most %v): another host's clock, or not Unix seconds", float64(c.StartAt.UnixMicro())/1e6, ahead.Round(time.Second), maxStartAhead)
	}

	if c.Requests == 0 && c.Duration == 0 {
		return errors.New("give -n (calls) or -t (duration), or both")
	}
	if c.Requests > 0 && c.Requests < int64(c.Concurrency) {
		return fmt.Errorf("-c %d is greater than -n %d (as ab, every caller needs a call)", c.Concurrency, c.Requests)
	}
	switch {
	case c.Proto == ProtoGRPC && (c.Conns < 1 || c.Conns > c.Concurrency):
		return fmt.Errorf("-conns %d: want 1..%d (-c): gRPC shares K connections among the callers", c.Conns, c.Concurrency)
	case c.Proto != ProtoGRPC && c.Conns != c.Concurrency:
		return fmt.Errorf("-conns %d: %s carries one call at a time per connection: want -conns = -c (%d)", c.Conns, c.Proto, c.Concurrency)
	}
	switch c.Check {
	case CheckFull, CheckLength:
	default:
		return fmt.Errorf("-check %q: want full or length", c.Check)
	}
	if c.Rate < 0 || c.Rate > maxRate {
		return fmt.Errorf("-rate %d: want 0..%d", c.Rate, maxRate)
	}
	if c.KeepAlive && c.Proto != ProtoHTTP {
		// Harmless: RPC protocols always keep the connection.
		c.KeepAlive = false
	}
	if _, _, err := splitHostPort(c.Addr); err != nil {
		return fmt.Errorf("-addr %q: %v", c.Addr, err)
	}
	switch c.ThriftTransport {
	case "framed", "buffered":
	default:
		return fmt.Errorf("-thrift-transport %q: want framed or buffered", c.ThriftTransport)
	}
	switch c.ThriftProtocol {
	case "binary", "compact":
	default:
		return fmt.Errorf("-thrift-protocol %q: want binary or compact", c.ThriftProtocol)
	}
	if err := c.validateSecurity(); err != nil {
		return err
	}
	if c.perCall() && c.Rate > 0 {
		return errors.New("-connect per-call: closed loop only (no -rate)")
	}
	if c.perCall() && c.Proto == ProtoHTTP {
		c.KeepAlive = false // a new connection per call: no keep-alive
	}
	return nil
}

func splitHostPort(addr string) (string, int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	if host == "" {
		return "", 0, errors.New("want HOST:PORT")
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return "", 0, fmt.Errorf("bad port %q", port)
	}
	return host, p, nil
}

// DocumentPath is ab's "Document Path" for this run (docs/report-format.md).
func (c *Config) DocumentPath() string {
	switch c.Proto {
	case ProtoGRPC:
		if c.Call == CallDataList {
			return "/rpcbed.data.Data/DataList?n=" + strconv.Itoa(c.Items)
		}
		return "/rpcbed.data.Data/DataType"
	case ProtoHTTP:
		return c.httpPath()
	default:
		if c.Call == CallDataList {
			return "/Data/DataList?n=" + strconv.Itoa(c.Items)
		}
		return "/Data/DataType"
	}
}

func (c *Config) httpPath() string {
	if c.Call == CallDataList {
		return "/v1/datalist?n=" + strconv.Itoa(c.Items)
	}
	return "/v1/datatype?groupName=" + GroupName + "&enName=" + EnName
}

// Values of -pin. auto pins the event loops in a closed loop and not in an open
// one, as measured (docs/loadgen.md, "Pinned loops"): pinned, a closed loop made
// x1.14 the requests/s; an open loop spent x1.4 the CPU per request at 5000/s.
const (
	PinAuto = "auto"
	PinOn   = "on"
	PinOff  = "off"
)

// pinned tells whether the event loops run each on a CPU of its own.
func (c *Config) pinned() bool {
	return c.Pin == PinOn || (c.Pin == "" || c.Pin == PinAuto) && c.Rate == 0
}

// eventLoop tells whether the run is in load-generator mode on HTTP/1.1
// (-check length with -k): event loops and a hand-written response reader
// (httploop_linux.go, httpwire.go) instead of net/http's codec in one goroutine
// per caller.
func (c *Config) eventLoop() bool {
	return loopSupported && c.Proto == ProtoHTTP && c.Check == CheckLength && c.KeepAlive && !c.secure()
}

// sharedConns tells whether the callers share the connections (gRPC with -conns
// below -c) or each caller owns one.
func (c *Config) sharedConns() bool {
	return c.Conns < c.Concurrency && !c.perCall()
}
