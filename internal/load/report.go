package load

import (
	"math"
	"runtime"
	"runtime/debug"
	"strings"

	"google.golang.org/grpc"

	"github.com/rpcbed/rpcbed/internal/report"
)

// abPercents is ab's percentile table.
var abPercents = []int{50, 66, 75, 80, 90, 95, 98, 99, 100}

// Report turns a result into the rpcbed report (docs/report-format.md, client "go").
func (r *Result) Report() report.Report {
	cfg := r.Config
	host, port, _ := splitHostPort(cfg.Addr)
	secs := r.TimeTaken.Seconds()
	rep := report.Report{
		ServerSoftware:   r.ServerSoftware,
		ServerHostname:   host,
		ServerPort:       port,
		DocumentPath:     cfg.DocumentPath(),
		DocumentLength:   r.DocLength,
		Concurrency:      cfg.Concurrency,
		TimeTakenSeconds: secs,
		Complete:         r.Complete,
		Failed:           r.Failed,
		FailedBy: report.Failures{
			Connect:    r.ByKind[kindConnect],
			Receive:    r.ByKind[kindReceive] + r.ByKind[kindTimeout],
			Length:     r.ByKind[kindLength],
			Exceptions: r.ByKind[kindExceptions] + r.ByKind[kindUnauthenticated] + r.ByKind[kindInvalidArgument],
		},
		Non2xx:           r.Non2xx,
		TotalTransferred: r.Bytes,
		HTMLTransferred:  r.Bytes,
	}
	if cfg.Proto != ProtoHTTP || cfg.KeepAlive {
		rep.KeepAlive = r.Complete
	}
	if r.Complete > 0 && secs > 0 {
		rep.RequestsPerSecond = float64(r.Complete) / secs
		rep.TimePerRequestMs = float64(cfg.Concurrency) * secs * 1000 / float64(r.Complete)
		rep.TimePerRequestAllMs = secs * 1000 / float64(r.Complete)
	}
	if secs > 0 {
		rep.TransferRateKBps = float64(r.Bytes) / 1024 / secs
	}

	h := r.Hist
	row := report.ConnRow{}
	if h != nil && h.TotalCount() > 0 {
		row = report.ConnRow{
			Min:    msRound(float64(h.Min())),
			Mean:   msRound(h.Mean()),
			SD:     math.Round(h.StdDev()/100) / 10,
			Median: msRound(float64(h.ValueAtQuantile(50))),
			Max:    msRound(float64(h.Max())),
		}
	}
	rep.Processing, rep.Waiting, rep.Total = row, row, row
	for _, p := range abPercents {
		var ms int64
		if h != nil && h.TotalCount() > 0 {
			if p == 100 {
				ms = msRound(float64(h.Max()))
			} else {
				ms = msRound(float64(h.ValueAtQuantile(float64(p))))
			}
		}
		rep.Percentiles = append(rep.Percentiles, report.Percentile{Percent: p, Ms: ms})
	}

	x := &report.Extra{
		Client:            "go",
		Protocol:          cfg.Proto,
		Call:              cfg.Call,
		Items:             cfg.Items,
		Connections:       cfg.Conns,
		SharedConnections: cfg.sharedConns(),
		Loop:              "closed",
		TargetRate:        cfg.Rate,
		WarmupSeconds:     cfg.Warmup.Seconds(),
		WarmupCalls:       r.WarmupCalls,
		CPUUserSeconds:    r.CPUUser.Seconds(),
		CPUSystemSeconds:  r.CPUSystem.Seconds(),
		Errors:            r.Errors(),
		Versions:          Versions(cfg.Proto),
	}
	if cfg.Rate > 0 {
		x.Loop = "open"
	}
	if h != nil && h.TotalCount() > 0 {
		x.P50Us = h.ValueAtQuantile(50)
		x.P90Us = h.ValueAtQuantile(90)
		x.P99Us = h.ValueAtQuantile(99)
		x.P999Us = h.ValueAtQuantile(99.9)
		x.MeanUs = math.Round(h.Mean()*10) / 10
		x.MaxUs = h.Max()
	}
	rep.Rpcbed = x
	return rep
}

// msRound turns µs into whole ms, rounded to nearest as ab rounds.
func msRound(us float64) int64 { return int64(math.Round(us / 1000)) }

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
