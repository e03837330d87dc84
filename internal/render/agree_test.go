package render

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/results/resultstest"
)

// The model's lines: the figures, the goal's repeats and the run time they imply,
// or that no repeat count reaches it.
func TestNoiseWrite(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b *results.Run
		want []string
	}{
		{"this machine", resultstest.Run(300, resultstest.Gaussian(10, 0.15), 3), resultstest.Run(300, resultstest.Gaussian(11, 0.15), 3), []string{
			"noise model (a repeat's distance from its cell's mean within a run, pooled over the cells, resampled 4000 times per repeat count; docs/method.md, section 6):",
			"  req/s            a repeat lies a median ", "% from its cell's mean (", " % in A, ", " % in B; 1800 repeats, 300 cells); the runs differ no more than that noise explains\n",
			"within ±10 % at 3 repeats (measured ", "; 90 % needs ", " repeats per cell (a run of about ", " min, from run A's 9m0s for 3)\n"}},
		{"run-long shift", resultstest.Run(50, resultstest.Gaussian(5, 0.01), 3), resultstest.Run(50, func(c, r int) float64 { return 1.3 }, 3), []string{
			"; across the cells B lies +30 % from A (the whole run moved)\n", "; 90 % needs more than 64 repeats per cell\n"}},
		{"per-cell offsets", resultstest.Run(200, resultstest.Gaussian(12, 0.01), 3), resultstest.Run(200, resultstest.CellOffsets(13, 0.2, 0.01), 3), []string{
			"; the runs differ beyond it by 1", " % per cell (sd)\n", "; 90 % needs more than 64 repeats per cell\n"}},
		{"one repeat per cell", resultstest.Run(10, resultstest.Gaussian(7, 0.1), 1), resultstest.Run(10, resultstest.Gaussian(8, 0.1), 1), []string{
			"  req/s            no cell has two repeats in both runs\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			if err := AgreeText(&out, analysis.Agree(tc.a, tc.b, 0.10, 0.90), 0.90); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

// agree's whole output for a pair of runs with this machine's noise, a cell that
// moved and one that is flagged: a golden file (the model is seeded).
func TestAgreeGolden(t *testing.T) {
	a, b := resultstest.Run(30, resultstest.Gaussian(20, 0.12), 3), resultstest.Run(30, resultstest.Gaussian(21, 0.12), 3)
	for j := range b.Cells[0].Repeats {
		b.Cells[0].Repeats[j].Metrics.RPS *= 1.5
	}
	var out strings.Builder
	if err := AgreeText(&out, analysis.Agree(a, b, 0.10, 0.90), 0.90); err != nil {
		t.Fatal(err)
	}
	golden(t, "agree.txt", []byte(out.String()))
}

// Repeat order's line: a worker that drifts is named with each repeat's
// distance and its JIT flags; none drifting says so; one repeat per cell, no
// line (analysis.RepeatOrders decides who drifts).
func TestRepeatOrderMarkdown(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  *results.Run
		want string
	}{
		{"warming", resultstest.Drifting(1.2, true), "- repeat order (req/s, each repeat's mean distance from its cell's mean, per worker; a worker is named when its last repeat differs from its first by over 10 %, 2.5 standard errors and, among 4 or more workers, 3 times their median drift): go-grpc r1 -17 %, r2 +0 %, r3 +21 % (6 cells; the last repeat +46 % on the first; 6 of 18 repeats jit-compiling)\n"},
		{"flat", resultstest.Drifting(1.0, false), "- repeat order (req/s, each repeat's mean distance from its cell's mean, per worker; a worker is named when its last repeat differs from its first by over 10 %, 2.5 standard errors and, among 4 or more workers, 3 times their median drift): no worker's repeats drift (2 workers)\n"},
		{"slow drift", resultstest.Drifting(1.04, false), "no worker's repeats drift (2 workers)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := repeatOrderMarkdown(tc.run); !strings.Contains(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
	// The table's note column carries it for every cell of the worker.
	warm := resultstest.Drifting(1.2, true)
	warm.Spec, _ = plan.ParseSpec([]byte("clients: {go: [grpc, http]}\nrepeats: 3\n"))
	var md strings.Builder
	if err := Markdown(&md, warm); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(md.String(), "worker drifts (repeat order)"); n != 6 {
		t.Errorf("matrix.md notes \"worker drifts\" on %d cells; want go-grpc's 6:\n%s", n, md.String())
	}
	one := resultstest.Drifting(1.2, false)
	one.Spec.Rounds = 1
	if got := repeatOrderMarkdown(one); got != "" {
		t.Errorf("one repeat per cell: got %q; want no line", got)
	}
}

// AgreeText prints what analysis.Agree computed: each figure's share, the probe
// lines, the cells outside with where B's median lies, the calibration and the
// goal's verdict.
func TestAgreeText(t *testing.T) {
	probeA := [2]float64{6000, 5000}
	ag := analysis.Agreement{
		Tol:     0.10,
		Figures: []analysis.FigureAgreement{{Name: "req/s", Agree: 11, Cells: 12}, {Name: "client CPU/call", Cells: 0}},
		ProbeA:  probeA, ProbeB: [2]float64{6600, 5000},
		CacheA: [2]float64{2000, math.NaN()}, CacheB: [2]float64{2500, math.NaN()},
		Outside: []analysis.Disagreement{{Cell: "go-grpc-datalist-2-c1", Figures: []analysis.Moved{
			{Figure: "req/s", A: 1020, B: 1224, Change: 0.2},
			{Figure: "client CPU/call", A: 10, B: 7, Change: -0.3, InsideA: true}}}},
		Calibration: []analysis.Calibration{{Figure: analysis.FigRPS.Figure(), Cells: 12, BInA: 11, AInB: 12, HalfA: 0.05, HalfB: 0.06, InRunA: 0.02, InRunB: 0.03, RoundsFor5: 4,
			RerunP95: 0.05, ShiftA: 0.04, ShiftB: 0.05, Measured: true, Apart: 0.12}},
		Flips: []analysis.Flips{{Kind: analysis.VsGo, Figure: "req/s", Compared: 3, SameVerdict: 2, Flipped: []string{"php-grpc vs go-grpc: faster -> slower"}}},
	}
	for _, tc := range []struct {
		share float64
		want  []string
	}{
		{0.9, []string{"req/s            11 of 12 cells within ±10 %: 92 %\n",
			"client CPU/call  0 of 0 cells within ±10 %: -\n",
			"CPU probe, client core: median 6000 µs in A, 6600 µs in B (+10 %: the same work took that much longer in B)\n",
			"CPU probe, server core: median 5000 µs in A, 5000 µs in B (+0 %: the same time in both runs)\ncache probe, client core: median 2000 µs in A, 2500 µs in B (+25 %: the same work took that much longer in B)\n\n1 cells outside ±10 %:\n  go-grpc-datalist-2-c1: req/s 1020 -> 1224 (+20 %, outside A's interval), client CPU/call 10.0 -> 7.00 (-30 %, inside A's interval)\n",
			"  req/s            B in A's: 11 of 12, 92 %; A in B's: 12 of 12, 100 %; median half-width ±5 % (A), ±6 % (B), 1.20 x the rerun difference's 95th percentile (±5 %); in-run alone ±2 % (A), ±3 % (B); ±5 % in-run needs 4 rounds\n",
			"  run shift against a rerun, from each run's CPU probe along the run: ±4 % (A), ±5 % (B) (sd); across the cells B lay +12 % (req/s) from A: 2.83 times A's run shift, 2.27 times B's\n",
			"    flipped: php-grpc vs go-grpc: faster -> slower\n",
			"): not met: req/s A in B's 12 of 12 (100.0 %), over 98 %; verdicts flipped between faster and slower: 1" + poolHint + "\n"}},
		// Under the goal's share, a way whose runs lay apart past twice the shift of
		// the run whose intervals missed says so after the misses.
		{0.95, []string{"): not met: req/s B in A's 11 of 12 (91.7 %), under 95 %; req/s A in B's 12 of 12 (100.0 %), over 98 %; verdicts flipped between faster and slower: 1; in req/s B in A's the runs lay more than 2 times the interval's run shift apart (above): the machine moved between the runs more than that run's probe saw" + poolHint + "\n"}},
	} {
		var out bytes.Buffer
		if err := AgreeText(&out, ag, tc.share); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("output lacks %q:\n%s", w, out.String())
			}
		}
	}
}

// Tally counts every claim once by verdict, the known verdicts first and a
// saved run's older words after them.
func TestTally(t *testing.T) {
	secs := []results.Section{
		{Name: "a", Findings: []results.Finding{{Holds: results.No}, {Holds: results.Yes}, {Holds: "not distinguishable here"}}},
		{Name: "b", Findings: []results.Finding{{Holds: results.Yes}, {Holds: results.NotDistinguished}}},
	}
	if got, want := Tally(secs), "5 claims: 2 yes, 1 no, 1 inconclusive, 1 not distinguishable here"; got != want {
		t.Errorf("Tally = %q; want %q", got, want)
	}
}

// The figures along the run: each server group's change from a cell's first
// round to its last, with the probe's beside it and whether it moved; a run
// without windows has no line.
func TestRunDriftMarkdown(t *testing.T) {
	run := &results.Run{Spec: plan.Spec{Rounds: 3}}
	for c := range analysis.DriftCells {
		cell := plan.Cell{Client: "go", Protocol: "grpc", Call: "datalist", Items: c + 1, Concurrency: 1, ServerLang: "go"}
		res := results.CellResult{Name: cell.Name(), Cell: cell, Status: results.StatusOK}
		for k := 1; k <= 3; k++ {
			v := 1000 * math.Pow(1.07, float64(k-1)) * (1 + 0.01*float64(c%2))
			start := 1.8e9 + 90*float64(k)
			res.Repeats = append(res.Repeats, results.Repeat{Index: k, Report: &report.Report{},
				Metrics: results.Metrics{RPS: v, ClientCPUUs: 1e6 / v, ServerCPUUs: 2e6 / v},
				Window:  &results.Window{StartUnix: start, EndUnix: start + 1},
				Probe:   &results.Probe{ClientUs: [2]float64{6000, 6000}, ServerUs: [2]float64{6000 * (1 + 0.01*float64(k)), 6000}}})
		}
		run.Cells = append(run.Cells, res)
	}
	want := "- the figures along the run (each cell's last round on its first, before rounds were added, in one fork; the mean over a server group's cells ± 2 standard errors; moved: past ±5 % and 2.5 standard errors over at least 8 cells; docs/method.md, section 11): go-server (8 cells, 3.0 min apart) req/s +14 ±0 %, client CPU/call -13 ±0 %, server CPU/call -13 ±0 %, CPU probe +1 %: moved\n"
	if got := runDriftMarkdown(run); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// With the cache probe timed, its change follows the CPU probe's, with its
	// standard error over the cells.
	for _, c := range run.Cells {
		for _, rep := range c.Repeats {
			x := 2000 * math.Pow(0.9, float64(rep.Index-1))
			rep.Probe.ClientCacheUs, rep.Probe.ServerCacheUs = [2]float64{x, x}, [2]float64{x, x}
		}
	}
	if got := runDriftMarkdown(run); !strings.Contains(got, "CPU probe +1 %, cache probe -19 ±0 %: moved\n") {
		t.Errorf("with the cache probe: got %q; want its change after the CPU probe's", got)
	}
	if got := runDriftMarkdown(resultstest.Drifting(1.2, false)); got != "" {
		t.Errorf("a run without windows: got %q; want no line", got)
	}
	// README's reproducibility block: each run's groups of at least DriftCells.
	if got := driftsLine(run, resultstest.Drifting(1.2, false)); !strings.Contains(got, "A: go-server (8 cells, 3.0 min apart) req/s +14 ±0 %") || strings.Contains(got, "B:") {
		t.Errorf("drifts line: got %q; want run A's go-server, nothing of B", got)
	}
	if got := driftsLine(resultstest.Drifting(1.2, false), resultstest.Drifting(1.0, false)); got != "" {
		t.Errorf("runs without windows: got %q; want no line", got)
	}
}
