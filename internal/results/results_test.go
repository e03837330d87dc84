package results

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/report"
)

// ProbeSpread is (max-min)/median over every probe of the repeats, the larger
// side; a cell without probes has none (NaN), and Summarize records it.
func TestProbeSpread(t *testing.T) {
	c := CellResult{Repeats: []Repeat{
		{Probe: &Probe{ClientUs: [2]float64{100, 110}, ServerUs: [2]float64{100, 100}}},
		{Probe: &Probe{ClientUs: [2]float64{90, 100}, ServerUs: [2]float64{100, 130}}},
		{}, // not probed
	}}
	if got := c.ProbeSpread(); math.Abs(got-0.30) > 1e-9 {
		t.Errorf("ProbeSpread = %v; want 0.30 (server: 100..130 over a median of 100)", got)
	}
	if got := c.Summarize().ProbeSpread; math.Abs(got-0.30) > 1e-9 {
		t.Errorf("Summary.ProbeSpread = %v; want 0.30", got)
	}
	if got := (CellResult{Repeats: []Repeat{{}}}).ProbeSpread(); !math.IsNaN(got) {
		t.Errorf("no probes: ProbeSpread = %v; want NaN", got)
	}
	run := &Run{Cells: []CellResult{c}}
	if cl, sv := run.ProbeMedian(); cl != 100 || sv != 100 {
		t.Errorf("ProbeMedian = %v, %v; want 100, 100", cl, sv)
	}
	// A run recorded before the cache probe has none; one with it gives its
	// median per side, apart from the compute probe's.
	if cl, sv := run.CacheProbeMedian(); !math.IsNaN(cl) || !math.IsNaN(sv) {
		t.Errorf("no cache probe: CacheProbeMedian = %v, %v; want NaN, NaN", cl, sv)
	}
	c.Repeats[0].Probe.ClientCacheUs, c.Repeats[0].Probe.ServerCacheUs = [2]float64{20, 30}, [2]float64{10, 0}
	if cl, sv := run.CacheProbeMedian(); cl != 25 || sv != 10 {
		t.Errorf("CacheProbeMedian = %v, %v; want 25 (20, 30), 10 (0: not timed)", cl, sv)
	}
}

// A repeat's probe keeps the cache probe's times under their own keys, and a
// repeat recorded before them reads back without (omitted, not zeros).
func TestProbeJSON(t *testing.T) {
	for _, tc := range []struct {
		p    Probe
		want string
	}{
		{Probe{ClientUs: [2]float64{1, 2}, ServerUs: [2]float64{3, 4}}, `{"client_us":[1,2],"server_us":[3,4]}`},
		{Probe{ClientUs: [2]float64{1, 2}, ServerUs: [2]float64{3, 4}, ClientCacheUs: [2]float64{5, 6}, ServerCacheUs: [2]float64{7, 8}},
			`{"client_us":[1,2],"server_us":[3,4],"client_cache_us":[5,6],"server_cache_us":[7,8]}`},
	} {
		b, err := json.Marshal(tc.p)
		if err != nil || string(b) != tc.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tc.p, b, err, tc.want)
		}
		var back Probe
		if err := json.Unmarshal(b, &back); err != nil || back != tc.p {
			t.Errorf("Unmarshal(%s) = %+v, %v; want %+v", b, back, err, tc.p)
		}
	}
}

func TestBottleneck(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		c, s float64
		want string
	}{
		{0.95, 0.5, "client-bound"}, {0.5, 0.92, "server-bound"}, {0.95, 0.97, "server-bound"}, {0.97, 0.95, "client-bound"},
		{0.5, 0.5, "latency-bound"}, {0.5, nan, ""}, {nan, 0.95, "server-bound"}, {nan, nan, ""},
	} {
		if got := Bottleneck(tc.c, tc.s); got != tc.want {
			t.Errorf("Bottleneck(%v, %v): got %q; want %q", tc.c, tc.s, got, tc.want)
		}
	}
}

// cpu sets a repeat's client and server CPU per call.
func cpu(r Repeat, client, server float64) Repeat {
	r.Metrics.ClientCPUUs, r.Metrics.ServerCPUUs = client, server
	return r
}

func TestSummarizeNoisy(t *testing.T) {
	mk := func(rps, steal float64) Repeat {
		return Repeat{Report: &report.Report{}, Metrics: Metrics{RPS: rps}, Window: &Window{MachineKnown: true, StealCores: steal}}
	}
	for _, tc := range []struct {
		name   string
		reps   []Repeat
		noisy  bool
		reason string
	}{
		{"steady", []Repeat{mk(100, 0), mk(104, 0), mk(102, 0.01)}, false, ""},
		// A wide spread is no flag: the cell's interval gives it (Uncertainty).
		{"spread", []Repeat{mk(100, 0), mk(120, 0), mk(102, 0)}, false, ""},
		{"steal", []Repeat{mk(100, 0), mk(101, 0.03), mk(102, 0)}, true, "steal 3.0 % of a core"},
		{"server CPU/call spread", []Repeat{cpu(mk(100, 0), 50, 200), cpu(mk(101, 0), 50, 230), cpu(mk(102, 0), 51, 205)}, false, ""},
		{"client CPU/call spread", []Repeat{cpu(mk(100, 0), 50, 200), cpu(mk(101, 0), 60, 200), cpu(mk(102, 0), 51, 201)}, false, ""},
		{"CPU/call steady", []Repeat{cpu(mk(100, 0), 50, 200), cpu(mk(101, 0), 52, 204), cpu(mk(102, 0), 51, 202)}, false, ""},
	} {
		c := CellResult{Cell: plan.Cell{Concurrency: 4}, Repeats: tc.reps}
		s := c.Summarize()
		c.Summary = s
		if c.Flagged(FlagNoisy) != tc.noisy || !strings.Contains(strings.Join(s.Reasons, ";"), tc.reason) || s.Conns != 4 {
			t.Errorf("%s: got flags %v reasons %q conns %d; want noisy=%v with %q, conns 4", tc.name, s.Flags, s.Reasons, s.Conns, tc.noisy, tc.reason)
		}
	}
}

// JITBusy: more than JITQuiet of the time compiling; exactly at it is at rest.
func TestJITBusy(t *testing.T) {
	for _, tc := range []struct {
		ms, s float64
		want  bool
	}{{50, 1, false}, {50.1, 1, true}, {0, 1, false}, {2000, 1, true}, {149, 3, false}, {151, 3, true}} {
		if got := JITBusy(tc.ms, tc.s); got != tc.want {
			t.Errorf("JITBusy(%v ms, %v s) = %v; want %v", tc.ms, tc.s, got, tc.want)
		}
	}
}

// kept: a repeat flagged jit-compiling is left out of a cell's figures
// (Values, ValuesByFork, ByRound) while MinSteady repeats with the JIT at rest
// remain; with fewer every reported repeat counts; a failed repeat never does.
func TestKept(t *testing.T) {
	rep := func(i int, rps float64, flags ...string) Repeat {
		return Repeat{Index: i, Report: &report.Report{}, Metrics: Metrics{RPS: rps}, Flags: flags}
	}
	failed := Repeat{Index: 9, Error: "exit 1"}
	rps := func(m Metrics) float64 { return m.RPS }
	for _, tc := range []struct {
		name    string
		repeats []Repeat
		want    []float64
		rounds  []int
	}{
		{"none flagged", []Repeat{rep(1, 10), rep(2, 11), rep(3, 12)}, []float64{10, 11, 12}, []int{1, 2, 3}},
		{"one flagged, two at rest", []Repeat{rep(1, 20, FlagJIT), rep(2, 11), rep(3, 12)}, []float64{11, 12}, []int{2, 3}},
		{"two flagged, two at rest", []Repeat{rep(1, 20, FlagJIT), rep(2, 11), rep(3, 19, FlagJIT, FlagWarmup), rep(4, 12)}, []float64{11, 12}, []int{2, 4}},
		{"one at rest: all count", []Repeat{rep(1, 20, FlagJIT), rep(2, 11), rep(3, 19, FlagJIT)}, []float64{20, 11, 19}, []int{1, 2, 3}},
		{"a failed repeat is not at rest", []Repeat{rep(1, 20, FlagJIT), rep(2, 11), failed}, []float64{20, 11}, []int{1, 2}},
		{"other flags count", []Repeat{rep(1, 10, FlagWarmup), rep(2, 11, FlagFewCalls)}, []float64{10, 11}, []int{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := CellResult{Repeats: tc.repeats}
			if got := c.Values(rps); !slices.Equal(got, tc.want) {
				t.Errorf("Values = %v; want %v", got, tc.want)
			}
			var forks []float64
			for _, f := range c.ValuesByFork(rps) {
				forks = append(forks, f...)
			}
			if !slices.Equal(forks, tc.want) {
				t.Errorf("ValuesByFork = %v; want %v", forks, tc.want)
			}
			if got := slices.Sorted(maps.Keys(c.ByRound(rps))); !slices.Equal(got, tc.rounds) {
				t.Errorf("ByRound's rounds = %v; want %v", got, tc.rounds)
			}
		})
	}
}

// Spread and Noisy: from the repeats, the saved summary's spread when there is
// one, NaN under two repeats; a run saved with figures only is noisy past
// NoisySpread.
func TestSpreadAndNoisy(t *testing.T) {
	reps := func(rps ...float64) []Repeat {
		var out []Repeat
		for i, v := range rps {
			out = append(out, Repeat{Index: i + 1, Report: &report.Report{}, Metrics: Metrics{RPS: v}})
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		c      CellResult
		spread float64 // NaN: none
		noisy  bool
	}{
		{"one repeat", CellResult{Repeats: reps(100)}, math.NaN(), false},
		{"from the repeats", CellResult{Repeats: reps(90, 100, 110)}, 0.2, false},
		{"the saved summary's", CellResult{Repeats: reps(90, 100, 110), Summary: &Summary{Spread: 0.05}}, 0.05, false},
		{"figures only, quiet", CellResult{Summary: &Summary{Spread: 0.10}}, math.NaN(), false},
	} {
		got := tc.c.Spread()
		if math.IsNaN(tc.spread) != math.IsNaN(got) || (!math.IsNaN(got) && math.Abs(got-tc.spread) > 1e-12) {
			t.Errorf("%s: spread %v; want %v", tc.name, got, tc.spread)
		}
		if n := tc.c.Noisy(); n != tc.noisy {
			t.Errorf("%s: noisy %v; want %v", tc.name, n, tc.noisy)
		}
	}
}
