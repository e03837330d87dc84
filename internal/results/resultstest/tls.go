package resultstest

import (
	"math"
	"time"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/results"
)

// TLSCosts are the factors SyntheticTLS applies to a plaintext persistent
// cell's figures: TLS on each side's CPU per call and p50 (req/s follows), and a
// connection per call on top (plaintext) and its handshake (TLS).
var TLSCosts = struct {
	ClientCPU, ServerCPU, P50 float64
	// ConnClient, ConnServer: CPU µs per call a plaintext connection adds on
	// each side; HandshakeClient, HandshakeServer: what a TLS handshake adds
	// beyond it.
	ConnClient, ConnServer, HandshakeClient, HandshakeServer float64
}{1.3, 1.2, 1.1, 20, 15, 150, 100}

// SyntheticTLS builds a run of go over grpc and http, datalist 200 items, c 1
// and 50, each plaintext and tls, persistent and per-call: 16 cells, 3 rounds
// each, paired by round, with a round's noise of a few percent that every cell
// of the round shares half of. Each TLS cell's report says what it negotiated
// (TLSv1.3; handshakes: one per call per-call, none persistent) and each
// per-call cell's how many connections it opened (one per call). When
// mismatch is set, go-http-datalist-200-c50@tls negotiated TLSv1.2.
func SyntheticTLS(id string, mismatch bool) *results.Run {
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	spec, err := plan.ParseSpec([]byte("clients: {go: [grpc, http]}\nitems: [200]\nconcurrency: [1, 50]\nload: {duration: 1s, warmup: 0.5s}\nsecurity: [plaintext, tls]\nconnect: [persistent, per-call]\n"))
	if err != nil {
		panic(err)
	}
	run := &results.Run{ID: id, Started: t0, Finished: t0.Add(2 * time.Minute), Runner: "local", Commit: "abc1234",
		Machine: results.Machine{CPU: "Test CPU", Cores: 2, Kernel: "6.1.0", OS: "Debian GNU/Linux 12 (bookworm)", MemMB: 4096},
		Spec:    spec}
	k := TLSCosts
	for j, c := range spec.Plan() {
		res := results.CellResult{Name: c.Name(), Cell: c, Load: c.Load, Status: results.StatusOK, Started: t0, Finished: t0.Add(5 * time.Second)}
		tls, perCall := c.Sec().IsTLS(), c.ConnectMode() == plan.PerCall
		base := map[string]float64{"grpc": 60, "http": 90}[c.Protocol] * map[int]float64{1: 1.5, 50: 1}[c.Concurrency]
		ccpu, scpu, p50 := base, base*0.8, 300.0*float64(1+c.Concurrency/10)
		if perCall {
			ccpu, scpu = ccpu+k.ConnClient, scpu+k.ConnServer
		}
		if tls {
			ccpu, scpu, p50 = ccpu*k.ClientCPU, scpu*k.ServerCPU, p50*k.P50
			if perCall {
				ccpu, scpu = ccpu+k.HandshakeClient, scpu+k.HandshakeServer
			}
		}
		for i := 1; i <= 3; i++ {
			// A round's drift, shared by every cell of it, and each cell's own.
			f := (1 + 0.03*math.Sin(float64(i)*2.1)) * (1 + 0.01*math.Sin(float64(i*7+j)))
			cc, sc := ccpu*f, scpu*f
			// Calls in flight over the latency, or the busier side's core.
			rps := 0.9 * math.Min(float64(c.Concurrency)*1e6/(p50*f), 1e6/math.Max(cc, sc))
			n := int64(rps)
			r := &report.Report{DocumentLength: 28*200 + 29, Concurrency: c.Concurrency, TimeTakenSeconds: 1, Complete: n, RequestsPerSecond: rps,
				Rpcbed: &report.Extra{Client: c.Client, Protocol: c.Protocol, Call: c.Call, Items: c.Items, P50Us: int64(p50 * f), P99Us: int64(3 * p50 * f),
					CPUUserSeconds: cc * rps / 1e6 * 0.7, CPUSystemSeconds: cc * rps / 1e6 * 0.3, Connections: c.Concurrency}}
			if tls {
				t := &report.TLS{Version: "TLSv1.3", CipherSuite: "TLS_AES_128_GCM_SHA256", Group: "X25519", ALPN: map[string]string{"grpc": "h2", "http": "http/1.1"}[c.Protocol]}
				if perCall {
					t.Handshakes = n
				}
				if mismatch && c.Name() == "go-http-datalist-200-c50@tls" {
					t.Version = "TLSv1.2"
				}
				r.Rpcbed.TLS = t
			}
			if perCall {
				opened := n
				r.Rpcbed.ConnectionsOpened = &opened
			}
			rep := results.Repeat{Index: i, Raw: "raw/" + c.Name() + "-r" + string(rune('0'+i)) + ".txt", WallS: 1.6, Report: r,
				Metrics: results.Metrics{RPS: rps, P50Us: float64(r.Rpcbed.P50Us), P99Us: float64(r.Rpcbed.P99Us), ClientCPUUs: cc, ServerCPUUs: sc,
					ClientCallsPerCPUS: 1e6 / cc, ServerCallsPerCPUS: 1e6 / sc, ClientBusy: cc * rps / 1e6, ServerBusy: sc * rps / 1e6,
					BytesPerResponse: r.DocumentLength, Complete: n},
				Window: &results.Window{Seconds: 1, Source: "report", ClientCPUS: cc * rps / 1e6, ServerCPUS: sc * rps / 1e6, ServerKnown: true,
					ClientCores: 1, ServerCores: 1, ClientBusy: cc * rps / 1e6, ServerBusy: sc * rps / 1e6, MachineKnown: true}}
			res.Repeats = append(res.Repeats, rep)
		}
		res.Summary = res.Summarize()
		run.Cells = append(run.Cells, res)
	}
	return run
}
