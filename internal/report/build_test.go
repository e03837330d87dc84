package report

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// abStats is ab 2.3's output_results over a per-request table of total times in
// microseconds (Connect 0, so Processing = Waiting = Total), written out plainly
// as the reference FromSamples must match.
func abStats(us []int64) (ConnRow, []Percentile) {
	done := int64(len(us))
	s := slices.Clone(us)
	slices.Sort(s)
	var total int64
	minv, maxv := int64(math.MaxInt64), int64(0)
	for _, v := range s {
		total += v
		minv, maxv = min(minv, v), max(maxv, v)
	}
	mean := total / done
	var sd float64
	for _, v := range s {
		a := float64(v) - float64(mean)
		sd += a * a
	}
	if done > 1 {
		sd = math.Sqrt(sd / float64(done-1))
	} else {
		sd = 0
	}
	var median int64
	if done > 1 && done%2 == 1 {
		median = (s[done/2] + s[done/2+1]) / 2
	} else {
		median = s[done/2]
	}
	rms := func(v int64) int64 { return (v + 500) / 1000 }
	row := ConnRow{Min: rms(minv), Mean: rms(mean), SD: round(sd/1000, 1), Median: rms(median), Max: rms(maxv)}
	var pct []Percentile
	for _, p := range []int64{50, 66, 75, 80, 90, 95, 98, 99} {
		pct = append(pct, Percentile{int(p), rms(s[done*p/100])})
	}
	pct = append(pct, Percentile{100, rms(s[done-1])})
	return row, pct
}

func TestFromSamplesMatchesAB(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name string
		us   []int64
	}{
		{"one", []int64{1499}},
		{"two", []int64{400, 2600}},
		{"three odd median", []int64{1000, 2000, 9000}},
		{"ties at .5 ms", []int64{500, 1500, 2500, 3500}},
	}
	for _, n := range []int{10, 101, 1000, 5001} {
		us := make([]int64, n)
		for i := range us {
			// Long-tailed, as latencies are: mostly 1-20 ms, a few up to 200 ms.
			us[i] = 1000 + int64(rng.ExpFloat64()*6000)
			if rng.IntN(50) == 0 {
				us[i] += rng.Int64N(200000)
			}
		}
		tests = append(tests, struct {
			name string
			us   []int64
		}{name: fmt.Sprintf("random %d", n), us: us})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// 5 significant digits: the histogram holds these values exactly, so
			// FromSamples must give ab's figures to the digit.
			h := hdrhistogram.New(1, 60_000_000, 5)
			for _, v := range tc.us {
				if err := h.RecordValue(v); err != nil {
					t.Fatal(err)
				}
			}
			r := FromSamples(Samples{Concurrency: 4, Elapsed: time.Second, Complete: int64(len(tc.us)), Latency: h})
			row, pct := abStats(tc.us)
			if r.Total != row {
				t.Errorf("Total = %+v; want %+v", r.Total, row)
			}
			if r.Processing != row || r.Waiting != row {
				t.Errorf("Processing, Waiting = %+v, %+v; want %+v", r.Processing, r.Waiting, row)
			}
			if r.Connect != (ConnRow{}) {
				t.Errorf("Connect = %+v; want zeros", r.Connect)
			}
			if !reflect.DeepEqual(r.Percentiles, pct) {
				t.Errorf("Percentiles = %v; want %v", r.Percentiles, pct)
			}
		})
	}
}

func TestFromSamplesFigures(t *testing.T) {
	h := hdrhistogram.New(1, 60_000_000, 3)
	for i := range 1000 {
		h.RecordValue(int64(1000 + i)) // 1000..1999 us
	}
	got := FromSamples(Samples{
		ServerSoftware: "rpcbed-go-server", ServerHostname: "127.0.0.1", ServerPort: 50051,
		DocumentPath: "/rpcbed.data.Data/DataType", DocumentLength: 60,
		Concurrency: 50, Elapsed: 2013 * time.Millisecond, Complete: 10000,
		Failed: Failures{Receive: 1, Exceptions: 2}, Non2xx: 2, KeepAlive: true, Bytes: 600000,
		Latency: h,
		Rpcbed: &Extra{Client: "go", Protocol: "grpc", Call: "datatype", Connections: 1,
			SharedConnections: true, Loop: "closed", WarmupSeconds: 2.0004, WarmupCalls: 5,
			CPUUserSeconds: 1.2345, CPUSystemSeconds: 0.0005, P50Us: 123 /* overwritten */},
	})
	tests := []struct {
		name      string
		got, want any
	}{
		{"time taken", got.TimeTakenSeconds, 2.013},
		{"failed", got.Failed, int64(3)},
		{"keep-alive", got.KeepAlive, int64(10000)},
		{"transferred", [2]int64{got.TotalTransferred, got.HTMLTransferred}, [2]int64{600000, 600000}},
		{"rps", got.RequestsPerSecond, 4967.71},                  // 10000/2.013 = 4967.709...
		{"time per request", got.TimePerRequestMs, 10.065},       // 50*2013/10000 = 10.065
		{"time per request all", got.TimePerRequestAllMs, 0.201}, // 0.2013
		{"transfer rate", got.TransferRateKBps, 291.08},          // 600000/1024/2.013 = 291.0767...
		{"total row", got.Total, ConnRow{Min: 1, Mean: 1, SD: 0.3, Median: 2, Max: 2}},
		{"p50 us", got.Rpcbed.P50Us, int64(1499)},
		{"p99.9 us", got.Rpcbed.P999Us, int64(1998)},
		{"mean us", got.Rpcbed.MeanUs, 1499.5},
		{"max us", got.Rpcbed.MaxUs, int64(1999)},
		{"warm-up", got.Rpcbed.WarmupSeconds, 2.0},
		{"cpu user", got.Rpcbed.CPUUserSeconds, 1.234}, // %.3f of 1.2345 (binary just below .5)
		{"cpu system", got.Rpcbed.CPUSystemSeconds, 0.001},
	}
	for _, tc := range tests {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: got %v; want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestFromSamplesZero(t *testing.T) {
	for _, h := range []*hdrhistogram.Histogram{nil, hdrhistogram.New(1, 1000, 3)} {
		r := FromSamples(Samples{Concurrency: 50, Latency: h, Rpcbed: &Extra{Client: "go"}})
		if r.RequestsPerSecond != 0 || r.TimePerRequestMs != 0 || r.Total != (ConnRow{}) {
			t.Errorf("zero run: rps %v, tpr %v, total %+v; want zeros", r.RequestsPerSecond, r.TimePerRequestMs, r.Total)
		}
		if len(r.Percentiles) != 9 || r.Percentiles[8] != (Percentile{100, 0}) {
			t.Errorf("zero run: percentiles %v; want the 9 rows with 0 ms", r.Percentiles)
		}
	}
}

// TestRoundTrip: Parse(Write(r)) == r for hand-made reports and for every report
// FromSamples makes.
func TestRoundTrip(t *testing.T) {
	zero := FromSamples(Samples{ServerHostname: "127.0.0.1", Concurrency: 50, Latency: hdrhistogram.New(1, 1000, 3),
		Rpcbed: &Extra{Client: "php", Protocol: "thrift", Call: "datatype", Connections: 50, Loop: "closed",
			Errors: map[string]int64{"connect": 50}}})
	failures := fullReport()
	failures.Failed, failures.FailedBy = 10, Failures{Connect: 1, Receive: 2, Length: 3, Exceptions: 4}
	failures.WriteErrors = 7
	failures.Rpcbed.Errors = map[string]int64{"connect": 1, "receive": 1, "timeout": 1, "length": 3, "exceptions": 3, "unauthenticated": 1}
	failures.Rpcbed.Versions = map[string]string{"php": "8.2.29", "ext-grpc": "1.51.1", "protobuf": "3.21.12"}
	plain := fullReport()
	plain.Rpcbed = nil
	plain.KeepAlive, plain.Non2xx = 0, 0
	variable := plain
	variable.VariableLength, variable.DocumentLength = true, 0
	variable.ServerSoftware = ""
	variable.Percentiles = nil // ab prints no table for one request
	variable.Complete, variable.Failed, variable.FailedBy = 1, 0, Failures{}
	open := fullReport()
	open.Rpcbed.Loop, open.Rpcbed.TargetRate, open.Rpcbed.SharedConnections, open.Rpcbed.Connections = "open", 5000, false, 2
	open.Rpcbed.Errors, open.Rpcbed.Versions = nil, nil
	v10 := fullReport()
	v10.Rpcbed.Check, v10.Rpcbed.Runtime, v10.Rpcbed.CPUScope, v10.Rpcbed.WarmupSettled = "", "", "", ""
	v10.Rpcbed.WindowStart, v10.Rpcbed.WindowEnd = 0, 0
	length := fullReport()
	length.Rpcbed.Check, length.Rpcbed.CPUScope, length.Rpcbed.WarmupSettled = CheckLength, ScopeProcess, SettledNo

	tests := []struct {
		name string
		r    Report
	}{
		{"full", fullReport()},
		{"zero complete", zero},
		{"failures", failures},
		{"plain ab", plain},
		{"variable length, no percentiles", variable},
		{"open loop, no errors or versions", open},
		{"v1.0 (no v1.1 keys)", v10},
		{"check length, process scope, not settled", length},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 50 {
		h := hdrhistogram.New(1, 60_000_000, 3)
		n := rng.Int64N(5000)
		for range n {
			h.RecordValue(1 + int64(rng.ExpFloat64()*float64(rng.Int64N(100000)+1)))
		}
		tests = append(tests, struct {
			name string
			r    Report
		}{name: fmt.Sprintf("FromSamples %d", i), r: FromSamples(Samples{
			ServerHostname: "127.0.0.1", ServerPort: rng.IntN(65536), DocumentPath: "/v1/datalist?n=200",
			DocumentLength: rng.Int64N(600000), Concurrency: 1 + rng.IntN(800),
			Elapsed: time.Duration(rng.Int64N(int64(time.Minute))), Complete: n,
			Failed: Failures{Receive: rng.Int64N(3), Exceptions: rng.Int64N(3)},
			Non2xx: rng.Int64N(2), KeepAlive: rng.IntN(2) == 0, Bytes: rng.Int64N(1 << 40), Latency: h,
			Rpcbed: &Extra{Client: "go", Protocol: "http", Call: "datalist", Items: 200, Connections: 50,
				Loop: "open", TargetRate: 1000, WarmupSeconds: rng.Float64() * 5, WarmupCalls: rng.Int64N(1000),
				CPUUserSeconds: rng.Float64() * 100, CPUSystemSeconds: rng.Float64() * 100,
				Versions: map[string]string{"go": "go1.26.8"},
				Check:    CheckFull, Runtime: "go", CPUScope: ScopeWindow, WarmupSettled: SettledFixed,
				WindowStart: float64(1764577000_000000+rng.Int64N(1e12)) / 1e6,
				WindowEnd:   float64(1764577000_000000+rng.Int64N(1e12)) / 1e6},
		})})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, tc.r); err != nil {
				t.Fatal(err)
			}
			text := b.String()
			got, err := Parse(&b)
			if err != nil {
				t.Fatalf("Parse(Write(r)): %v\n%s", err, text)
			}
			if !reflect.DeepEqual(got, tc.r) {
				t.Errorf("Parse(Write(r)):\n got %+v\nwant %+v\n%s", got, tc.r, text)
			}
		})
	}
}
