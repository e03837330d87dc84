package load

import (
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"google.golang.org/grpc"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// Report turns a result into the rpcbed report (docs/report-format.md, client
// "go"). The latency histogram holds the calls the server answered (successes,
// wrong answers, error statuses); connect, receive and timeout failures have no
// meaningful latency and count only in "Complete" and "Failed".
func (r *Result) Report() report.Report {
	cfg := r.Config
	host, port, _ := splitHostPort(cfg.Addr)
	x := &report.Extra{
		Client:            "go",
		Protocol:          cfg.Proto,
		Call:              cfg.Call,
		Items:             cfg.Items,
		Connections:       cfg.Conns,
		SharedConnections: cfg.sharedConns(),
		Loop:              "closed",
		TargetRate:        cfg.Rate,
		WarmupSeconds:     r.WarmupTime.Seconds(),
		WarmupCalls:       r.WarmupCalls,
		CPUUserSeconds:    r.CPUUser.Seconds(),
		CPUSystemSeconds:  r.CPUSystem.Seconds(),
		Errors:            r.Errors(),
		Versions:          Versions(cfg.Proto),
		Check:             cfg.Check,
		Runtime:           "go",
		CPUScope:          report.ScopeWindow, // getrusage(RUSAGE_SELF) deltas at the window's edges
		WindowStart:       unixSeconds(r.WindowStart),
		WindowEnd:         unixSeconds(r.WindowEnd),
		WarmupSettled:     r.Settled,
	}
	if r.Hist != nil {
		// The bytes.Buffer encoding cannot fail; a record is never left out quietly.
		rec, err := stats.EncodeLatency(r.Hist)
		if err != nil {
			panic(err)
		}
		x.LatencyHistogram = rec
	}
	if cfg.secure() {
		x.TLS = tlsReport(cfg.net, r.Handshakes, r.Resumed)
	}
	if cfg.perCall() {
		x.ConnectionsOpened = &r.Opened
	}
	if x.WarmupSettled == "" {
		x.WarmupSettled = report.SettledFixed
	}
	if cfg.Rate > 0 {
		x.Loop = "open"
	}
	return report.FromSamples(report.Samples{
		ServerSoftware: r.ServerSoftware,
		ServerHostname: host,
		ServerPort:     port,
		DocumentPath:   cfg.DocumentPath(),
		DocumentLength: r.DocLength,
		Concurrency:    cfg.Concurrency,
		Elapsed:        r.TimeTaken,
		Complete:       r.Complete,
		Failed: report.Failures{
			Connect:    r.ByKind[kindConnect],
			Receive:    r.ByKind[kindReceive] + r.ByKind[kindTimeout],
			Length:     r.ByKind[kindLength],
			Exceptions: r.ByKind[kindExceptions] + r.ByKind[kindUnauthenticated] + r.ByKind[kindInvalidArgument],
		},
		Non2xx:    r.Non2xx,
		KeepAlive: (cfg.Proto != ProtoHTTP || cfg.KeepAlive) && !cfg.perCall(),
		Bytes:     r.Bytes,
		Latency:   r.Hist,
		Rpcbed:    x,
	})
}

// unixSeconds is t in Unix seconds at microsecond resolution; 0 for the zero time.
func unixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixMicro()) / 1e6
}

// Versions names the runtime and the RPC library a protocol uses.
func Versions(proto string) map[string]string {
	v := map[string]string{"go": runtime.Version()}
	switch proto {
	case ProtoGRPC:
		v["grpc"] = grpc.Version
	case ProtoThrift:
		v["thrift"] = moduleVersion("github.com/apache/thrift")
	}
	return v
}

func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == path {
				if m.Replace != nil {
					m = m.Replace
				}
				return strings.TrimPrefix(m.Version, "v")
			}
		}
	}
	return "unknown"
}
