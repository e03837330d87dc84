package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/results"
)

// driftRun is a run of cells on one server: round k (1-based) of every cell
// starts at 90 s per round and its req/s is the cell's base times level(k) and
// a 2 % noise (CPU per call the inverse); the probe times are 6 ms on both
// cores whatever the level (a compute probe that does not see it).
func driftRun(cells int, serverLang string, forks, rounds int, level func(k int) float64, flag func(k int) []string) *results.Run {
	r := rand.New(rand.NewPCG(uint64(cells), uint64(rounds)))
	run := &results.Run{Spec: plan.Spec{Rounds: 3, Forks: forks}}
	for c := range cells {
		cell := plan.Cell{Client: "go", Protocol: "grpc", Call: "datalist", Items: c + 1, Concurrency: 1, ServerLang: serverLang}
		res := results.CellResult{Name: cell.Name(), Cell: cell, Status: results.StatusOK}
		for k := 1; k <= rounds; k++ {
			v := 1000 * float64(c+1) * level(k) * math.Exp(0.02*r.NormFloat64())
			start := 1.8e9 + 90*float64(k) + float64(c)
			rep := results.Repeat{Index: k, Fork: run.Spec.ForkOf(cell, k), Report: &report.Report{}, Flags: flag(k),
				Metrics: results.Metrics{RPS: v, ClientCPUUs: 1e6 / v, ServerCPUUs: 2e6 / v},
				Window:  &results.Window{StartUnix: start, EndUnix: start + 1},
				Probe:   &results.Probe{ClientUs: [2]float64{6000, 6000}, ServerUs: [2]float64{6000, 6000}}}
			res.Repeats = append(res.Repeats, rep)
		}
		run.Cells = append(run.Cells, res)
	}
	return run
}

// RunDrifts: a group whose figures rise round by round moved, with the change
// from its first round to its last and the probe's none beside it; a steady
// group did not; a rise over too few cells is not judged; the rounds
// precision added, a repeat the JIT was still compiling in and a fork's restart
// are not the machine moving.
func TestRunDrifts(t *testing.T) {
	none := func(int) []string { return nil }
	rising := func(k int) float64 { return math.Pow(1.07, float64(k-1)) }
	for _, tc := range []struct {
		name    string
		run     *results.Run
		moved   bool
		cells   int
		change  float64 // req/s, first round to last
		minutes float64
	}{
		{"the machine sped up 7 % a round", driftRun(20, "go", 0, 3, rising, none), true, 20, 0.145, 3},
		{"steady", driftRun(20, "go", 0, 3, func(int) float64 { return 1 }, none), false, 20, 0, 3},
		{"a rise over too few cells", driftRun(DriftCells-1, "go", 0, 3, rising, none), false, DriftCells - 1, 0.145, 3},
		{"a round precision added is left out", driftRun(20, "go", 0, 4, func(k int) float64 { return map[bool]float64{true: 1.3, false: 1}[k == 4] }, none), false, 20, 0, 3},
		{"a jit-compiling first repeat is left out", driftRun(20, "go", 0, 3, func(k int) float64 { return map[bool]float64{true: 0.5, false: 1}[k == 1] },
			func(k int) []string {
				if k == 1 {
					return []string{results.FlagJIT}
				}
				return nil
			}), false, 20, 0, 1.5},
		// Two forks of two rounds each: the second start 40 % faster is a fork's
		// level, not the machine's; the change is taken within the first fork.
		{"a fork's restart is not a drift", driftRun(20, "java", 2, 4, func(k int) float64 { return map[bool]float64{true: 1.4, false: 1}[k > 2] }, none), false, 20, 0, 1.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := RunDrifts(tc.run)
			if len(ds) != 1 {
				t.Fatalf("got %d groups; want 1: %+v", len(ds), ds)
			}
			d := ds[0]
			group := tc.run.Cells[0].Cell.GroupKey()
			if d.Group != group || d.Cells != tc.cells || d.Moved() != tc.moved {
				t.Errorf("got %s, %d cells, moved %v; want %s, %d cells, moved %v", d.Group, d.Cells, d.Moved(), group, tc.cells, tc.moved)
			}
			if math.Abs(d.Minutes-tc.minutes) > 0.05 {
				t.Errorf("%.2f min between a cell's first and last round; want %.1f", d.Minutes, tc.minutes)
			}
			if !d.ProbeOK || d.Probe != 0 {
				t.Errorf("probe %+.3f (ok %v); want 0", d.Probe, d.ProbeOK)
			}
			if len(d.Figures) != len(PrecisionFigures) {
				t.Fatalf("%d figures; want %d", len(d.Figures), len(PrecisionFigures))
			}
			// req/s rises as the level; CPU per call falls as its inverse.
			for i, want := range []float64{tc.change, 1/(1+tc.change) - 1, 1/(1+tc.change) - 1} {
				f := d.Figures[i]
				if f.Figure.Key != PrecisionFigures[i].Key || math.Abs(f.Change-want) > 0.03 || !(f.SE > 0 && f.SE < 0.015) {
					t.Errorf("%s: %+.3f (se %.4f); want %+.3f within 0.03, se under 0.015", f.Figure.Key, f.Change, f.SE, want)
				}
			}
		})
	}
}

// The cache probe's change along a group's repeats: each repeat's level the
// mean log of its four times, averaged over the cells with its standard error;
// a cell lacking a time is left out, and a run recorded before the cache probe
// has none (CacheOK false) while the compute probe's stays.
func TestRunDriftCache(t *testing.T) {
	steady := func(int) float64 { return 1 }
	none := func(int) []string { return nil }
	run := driftRun(10, "go", 0, 3, steady, none)
	if d := RunDrifts(run)[0]; d.CacheOK || !d.ProbeOK {
		t.Errorf("no cache probe times: CacheOK %v, ProbeOK %v; want false, true", d.CacheOK, d.ProbeOK)
	}
	for c := range run.Cells {
		for i := range run.Cells[c].Repeats {
			rep := &run.Cells[c].Repeats[i]
			// 10 % slower a round, the even cells' client core 4 % more so.
			x := 2000 * math.Pow(1.1, float64(rep.Index-1)) * map[bool]float64{true: math.Pow(1.04, float64(rep.Index-1)), false: 1}[c%2 == 0]
			rep.Probe.ClientCacheUs, rep.Probe.ServerCacheUs = [2]float64{x, x}, [2]float64{1000 * math.Pow(1.1, float64(rep.Index-1)), 1000}
		}
	}
	run.Cells[9].Repeats[2].Probe.ServerCacheUs[1] = 0 // not timed: cell 9 is left out
	d := RunDrifts(run)[0]
	// Per cell: (2 log 1.21 + log 1.21 + 0) / 4 on the odd cells, plus
	// (2 log 1.0816) / 4 on the even: a mean of 5 and 4 cells.
	even, odd := (3*math.Log(1.21)+2*math.Log(1.0816))/4, 3*math.Log(1.21)/4
	m := (5*even + 4*odd) / 9
	if !d.CacheOK || math.Abs(d.Cache-math.Expm1(m)) > 1e-9 {
		t.Errorf("cache probe %+.4f (ok %v); want %+.4f", d.Cache, d.CacheOK, math.Expm1(m))
	}
	sd := math.Sqrt((5*(even-m)*(even-m) + 4*(odd-m)*(odd-m)) / 8)
	if math.Abs(d.CacheSE-sd/3) > 1e-9 {
		t.Errorf("cache probe se %.5f; want %.5f", d.CacheSE, sd/3)
	}
}

// A moved figure needs all three: past DriftMoved, past 2.5 standard errors and
// at least DriftCells cells.
func TestFigureDriftMoved(t *testing.T) {
	for _, tc := range []struct {
		change, se float64
		cells      int
		want       bool
	}{
		{0.10, 0.01, DriftCells, true},
		{-0.10, 0.01, DriftCells, true},
		{0.04, 0.001, DriftCells, false}, // under DriftMoved
		{0.10, 0.05, DriftCells, false},  // within 2.5 standard errors
		{0.10, 0.01, DriftCells - 1, false},
		{0.10, math.NaN(), 1, false},
	} {
		t.Run(fmt.Sprintf("%+.2f/%.3f/%d", tc.change, tc.se, tc.cells), func(t *testing.T) {
			f := FigureDrift{Change: tc.change, SE: tc.se, Cells: tc.cells}
			if f.Moved() != tc.want {
				t.Errorf("moved %v; want %v", f.Moved(), tc.want)
			}
		})
	}
}

// Agreement.Moved names the runs with a group that moved; Undercovered says a
// figure held the other run's median in fewer cells than the goal's share, one
// way or the other (too wide is not under).
func TestAgreementMovedUndercovered(t *testing.T) {
	moved := GroupDrift{Figures: []FigureDrift{{Change: 0.14, SE: 0.03, Cells: 50}}}
	steady := GroupDrift{Figures: []FigureDrift{{Change: -0.01, SE: 0.01, Cells: 50}}}
	for _, tc := range []struct {
		name         string
		a, b         []GroupDrift
		bInA, aInB   int
		wantMoved    string
		wantUncovers bool
	}{
		{"A moved, B missed", []GroupDrift{moved, steady}, []GroupDrift{steady}, 80, 95, "A", true},
		{"both steady, too wide", []GroupDrift{steady}, []GroupDrift{steady}, 100, 99, "", false},
		{"B moved, A's missed", []GroupDrift{steady}, []GroupDrift{moved}, 95, 85, "B", true},
		{"both moved, held", []GroupDrift{moved}, []GroupDrift{moved}, 92, 96, "A B", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ag := Agreement{DriftA: tc.a, DriftB: tc.b, Calibration: []Calibration{{Cells: 100, BInA: tc.bInA, AInB: tc.aInB}}}
			if got := strings.Join(ag.Moved(), " "); got != tc.wantMoved {
				t.Errorf("moved %q; want %q", got, tc.wantMoved)
			}
			if got := ag.Undercovered(CoverLow); got != tc.wantUncovers {
				t.Errorf("undercovered %v; want %v", got, tc.wantUncovers)
			}
		})
	}
}

// Misses names each criterion the goal failed, with the exact share a rounded
// one hides; none when it is met.
func TestAgreementMisses(t *testing.T) {
	fig := FigServerCPU.Figure()
	for _, tc := range []struct {
		name string
		cal  Calibration
		flip int
		want string
	}{
		{"no cells", Calibration{Figure: fig}, 0, "server CPU/call: no cell with it in both runs"},
		{"met", Calibration{Figure: fig, Cells: 66, BInA: 62, AInB: 63, HalfA: 0.15, HalfB: 0.15, RerunP95: 0.19}, 0, ""},
		{"one cell over 98 %", Calibration{Figure: fig, Cells: 66, BInA: 62, AInB: 65, HalfA: 0.15, HalfB: 0.15, RerunP95: 0.19}, 0,
			"server CPU/call A in B's 65 of 66 (98.5 %), over 98 %"},
		{"under, too wide, flipped", Calibration{Figure: fig, Cells: 66, BInA: 45, AInB: 63, HalfA: 0.30, HalfB: 0.15, RerunP95: 0.19}, 2,
			"server CPU/call B in A's 45 of 66 (68.2 %), under 90 %; server CPU/call half-width 1.58 x the rerun difference's 95th percentile, over 1.3; verdicts flipped between faster and slower: 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ag := Agreement{Calibration: []Calibration{tc.cal}}
			if tc.flip > 0 {
				ag.Flips = []Flips{{Flipped: make([]string, tc.flip)}}
			}
			if got := strings.Join(ag.Misses(CoverLow), "; "); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
			if tc.cal.Cells > 0 && ag.Met(CoverLow) != (tc.want == "") {
				t.Errorf("met %v with misses %q", ag.Met(CoverLow), tc.want)
			}
		})
	}
}
