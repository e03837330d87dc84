package render

import (
	"fmt"
	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/results/resultstest"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/report"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
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
			"  req/s            a repeat lies a median ", "% from its cell's mean (1800 repeats, 300 cells); the runs differ no more than that noise explains\n",
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
			if err := Agree(tc.a, tc.b, 0.10, 0.90).Write(&out, 0.90); err != nil {
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
	if err := Agree(a, b, 0.10, 0.90).Write(&out, 0.90); err != nil {
		t.Fatal(err)
	}
	golden(t, "agree.txt", []byte(out.String()))
}

// orderRun: cells of two workers, 3 repeats; go-grpc's repeats faster each time
// by factor step, go-http's noisy around a flat level.
func orderRun(step float64, jitFlags bool) *results.Run {
	run := resultstest.Run(0, nil, 3)
	run.Spec.Repeats = 3
	r := rand.New(rand.NewPCG(30, 31))
	for _, w := range []string{"grpc", "http"} {
		for k := range 6 {
			c := results.CellResult{Name: fmt.Sprintf("go-%s-datalist-%d-c1", w, k), Cell: plan.Cell{Client: "go", Protocol: w}, Status: results.StatusOK}
			for i := range 3 {
				v := 1000 * float64(k+1) * math.Exp(0.03*r.NormFloat64())
				if w == "grpc" {
					v *= math.Pow(step, float64(i))
				}
				rep := results.Repeat{Index: i + 1, Report: &report.Report{}, Metrics: results.Metrics{RPS: v}}
				if jitFlags && w == "grpc" && i == 0 {
					rep.Flags = []string{results.FlagJIT}
				}
				c.Repeats = append(c.Repeats, rep)
			}
			run.Cells = append(run.Cells, c)
		}
	}
	return run
}

// Repeat order: a worker whose later repeats are faster beyond the threshold and
// its standard errors is named, with each repeat's distance and its JIT flags; a
// flat one is not.
func TestRepeatOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		run   *results.Run
		drift bool
		want  string
	}{
		{"warming", orderRun(1.2, true), true, "- repeat order (req/s, each repeat's mean distance from its cell's mean, per worker; a worker is named when its last repeat differs from its first by over 10 %, 2.5 standard errors and, among 4 or more workers, 3 times their median drift): go-grpc r1 -17 %, r2 +0 %, r3 +21 % (6 cells; the last repeat +46 % on the first; 6 of 18 repeats jit-compiling)\n"},
		{"flat", orderRun(1.0, false), false, "- repeat order (req/s, each repeat's mean distance from its cell's mean, per worker; a worker is named when its last repeat differs from its first by over 10 %, 2.5 standard errors and, among 4 or more workers, 3 times their median drift): no worker's repeats drift (2 workers)\n"},
		// 5 % a repeat: 10 % over the run, under the threshold.
		{"slow drift", orderRun(1.04, false), false, "no worker's repeats drift (2 workers)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os := analysis.RepeatOrders(tc.run)
			if len(os) != 2 || os[0].Worker != "go-grpc" || os[0].Cells != 6 || len(os[0].Dev) != 3 || os[0].Drifts != tc.drift || os[1].Drifts {
				t.Errorf("got %+v; want go-grpc (drifts %v) and go-http (flat), 6 cells, 3 repeats each", os, tc.drift)
			}
			if got := repeatOrderMarkdown(tc.run); !strings.Contains(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
	// The table's note column carries it for every cell of the worker.
	warm := orderRun(1.2, true)
	warm.Spec, _ = plan.ParseSpec([]byte("clients: {go: [grpc, http]}\nrepeats: 3\n"))
	var md strings.Builder
	if err := Markdown(&md, warm); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(md.String(), "worker drifts (repeat order)"); n != 6 {
		t.Errorf("matrix.md notes \"worker drifts\" on %d cells; want go-grpc's 6:\n%s", n, md.String())
	}
	// Among peers: three flat workers, two whose passes move 15 % a pass with the
	// machine (named by their standard errors alone) and one 2x: only that one.
	peers := resultstest.Run(0, nil, 3)
	peers.Spec.Repeats = 3
	r := rand.New(rand.NewPCG(40, 41))
	for _, w := range []string{"grpc", "thrift", "http", "ice", "dubbo", "front"} {
		step := map[string]float64{"grpc": 1.15, "thrift": 1 / 1.15, "dubbo": math.Sqrt2}[w]
		if step == 0 {
			step = 1
		}
		for k := range 6 {
			c := results.CellResult{Name: fmt.Sprintf("java-%s-datalist-%d-c1", w, k), Cell: plan.Cell{Client: "java", Protocol: w}, Status: results.StatusOK}
			for i := range 3 {
				v := 1000 * math.Pow(step, float64(i)) * math.Exp(0.02*r.NormFloat64())
				c.Repeats = append(c.Repeats, results.Repeat{Index: i + 1, Report: &report.Report{}, Metrics: results.Metrics{RPS: v}})
			}
			peers.Cells = append(peers.Cells, c)
		}
	}
	var named []string
	for _, o := range analysis.RepeatOrders(peers) {
		if o.Drifts {
			named = append(named, o.Worker)
		}
	}
	if strings.Join(named, " ") != "java-dubbo" {
		t.Errorf("among peers flat or drifting ±32 %%: named %q; want only java-dubbo (+100 %%)", named)
	}
	one := orderRun(1.2, false)
	one.Spec.Repeats = 1
	if got := repeatOrderMarkdown(one); got != "" {
		t.Errorf("one repeat per cell: got %q; want no line", got)
	}
}

// Noise: the model's figures follow the repeats' noise; more noise needs more
// repeats, a shift between runs that repeats cannot average away needs none of
// them (Needed 0), and the same runs give the same model.
func TestNoise(t *testing.T) {
	for _, tc := range []struct {
		name                string
		a, b                *results.Run
		dev                 [2]float64 // MedianDev range
		runSD               [2]float64
		shift               [2]float64 // req/s
		predicted           [2]float64
		needed              [2]int // Needed range; {0, 0}: none reaches the goal
		wantCells, wantReps int
	}{
		{name: "no noise", a: resultstest.Run(40, func(int, int) float64 { return 1 }, 3), b: resultstest.Run(40, func(int, int) float64 { return 1 }, 3),
			dev: [2]float64{0, 0}, runSD: [2]float64{0, 0}, predicted: [2]float64{1, 1}, needed: [2]int{1, 1}, wantCells: 40, wantReps: 3},
		// A normal with sd 2 % per repeat: 3 repeats agree within ±10 % almost always.
		{name: "quiet", a: resultstest.Run(200, resultstest.Gaussian(1, 0.02), 3), b: resultstest.Run(200, resultstest.Gaussian(2, 0.02), 3),
			dev: [2]float64{0.008, 0.02}, runSD: [2]float64{0, 0.01}, predicted: [2]float64{0.99, 1}, needed: [2]int{1, 2}, wantCells: 200, wantReps: 3},
		// sd 15 %: the median of 3 has sd ~10 %, the difference of two ~14 %:
		// P(|d| <= ln 1.1) ~ 50 %; 90 % needs sd(d) <= 5.8 %, ~20 repeats.
		{name: "this machine", a: resultstest.Run(300, resultstest.Gaussian(10, 0.15), 3), b: resultstest.Run(300, resultstest.Gaussian(11, 0.15), 3),
			dev: [2]float64{0.08, 0.13}, runSD: [2]float64{0, 0.04}, predicted: [2]float64{0.42, 0.62}, needed: [2]int{15, 30}, wantCells: 300, wantReps: 3},
		// Every cell 30 % faster in B, repeats quiet: a shift common to the cells,
		// which no repeat count closes.
		{name: "run-long shift", a: resultstest.Run(50, resultstest.Gaussian(5, 0.01), 3), b: resultstest.Run(50, func(c, r int) float64 { return 1.3 * resultstest.Gaussian(6, 0.01)(c, r) }, 3),
			dev: [2]float64{0, 0.02}, runSD: [2]float64{0, 0}, shift: [2]float64{0.29, 0.31}, predicted: [2]float64{0, 0.01}, needed: [2]int{0, 0}, wantCells: 50, wantReps: 3},
		// Each cell of B off by its own factor (sd 20 % in logs), repeats quiet: the
		// runs differ per cell by 20/√2 % each, and no repeat count closes that.
		{name: "per-cell offsets", a: resultstest.Run(200, resultstest.Gaussian(12, 0.01), 3), b: resultstest.Run(200, resultstest.CellOffsets(13, 0.2, 0.01), 3),
			dev: [2]float64{0, 0.02}, runSD: [2]float64{0.11, 0.17}, predicted: [2]float64{0.28, 0.48}, needed: [2]int{0, 0}, wantCells: 200, wantReps: 3},
		{name: "one repeat per cell", a: resultstest.Run(10, resultstest.Gaussian(7, 0.1), 1), b: resultstest.Run(10, resultstest.Gaussian(8, 0.1), 1),
			wantCells: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ag := Agree(tc.a, tc.b, 0.10, 0.90)
			if len(ag.Noise) != len(analysis.AgreeFigures) {
				t.Fatalf("got %d models; want one per figure (%d)", len(ag.Noise), len(analysis.AgreeFigures))
			}
			for _, m := range ag.Noise {
				if m.Cells != tc.wantCells {
					t.Errorf("%s: cells %d; want %d", m.Figure, m.Cells, tc.wantCells)
				}
				if tc.wantCells == 0 {
					continue
				}
				if m.Repeats != tc.wantReps || m.Deviations != 2*tc.wantReps*tc.wantCells {
					t.Errorf("%s: repeats %d, deviations %d; want %d and %d", m.Figure, m.Repeats, m.Deviations, tc.wantReps, 2*tc.wantReps*tc.wantCells)
				}
				if m.MedianDev < tc.dev[0]-1e-9 || m.MedianDev > tc.dev[1]+1e-9 {
					t.Errorf("%s: median deviation %.4f; want %.3f-%.3f", m.Figure, m.MedianDev, tc.dev[0], tc.dev[1])
				}
				if m.RunSD < tc.runSD[0]-1e-9 || m.RunSD > tc.runSD[1]+1e-9 {
					t.Errorf("%s: run sd %.4f; want %.3f-%.3f", m.Figure, m.RunSD, tc.runSD[0], tc.runSD[1])
				}
				if m.Figure == "req/s" && (m.Shift < tc.shift[0]-1e-9 || m.Shift > tc.shift[1]+1e-9) {
					t.Errorf("%s: shift %.4f; want %.3f-%.3f", m.Figure, m.Shift, tc.shift[0], tc.shift[1])
				}
				if m.Predicted < tc.predicted[0] || m.Predicted > tc.predicted[1] {
					t.Errorf("%s: predicted %.3f; want %.2f-%.2f", m.Figure, m.Predicted, tc.predicted[0], tc.predicted[1])
				}
				if m.Needed < tc.needed[0] || m.Needed > tc.needed[1] {
					t.Errorf("%s: needed %d; want %d-%d", m.Figure, m.Needed, tc.needed[0], tc.needed[1])
				}
				// The model is checked against what the runs show.
				if math.Abs(m.Predicted-m.Measured) > 0.12 {
					t.Errorf("%s: predicted %.2f, measured %.2f: the model does not describe the runs it came from", m.Figure, m.Predicted, m.Measured)
				}
			}
			if again := Agree(tc.a, tc.b, 0.10, 0.90).Noise; !reflect.DeepEqual(again, ag.Noise) {
				t.Errorf("the same runs gave two models:\n%+v\n%+v", ag.Noise, again)
			}
		})
	}
}
