package analysis

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/results/resultstest"
)

// Agree: cells within ±10 % count as agreeing, per figure; a cell outside is
// listed with whether the other run's median lies in its interval; calibration
// counts the cells whose intervals hold the other run's median.
func TestAgree(t *testing.T) {
	a, b := resultstest.Synthetic("a", 1), resultstest.Synthetic("b", 1)
	for i := range b.Cells {
		c := &b.Cells[i]
		for j := range c.Repeats {
			switch c.Name {
			case "go-grpc-datalist-2-c1": // throughput 20 % up, not noisy in either run
				c.Repeats[j].Metrics.RPS *= 1.2
			case "go-http-datalist-2-c1": // noisy in both runs, client CPU 30 % up
				c.Repeats[j].Metrics.ClientCPUUs *= 1.3
			}
		}
	}
	for i := range a.Cells { // B's cores ran the probe 10 % slower (client) and as fast (server)
		for j := range a.Cells[i].Repeats {
			a.Cells[i].Repeats[j].Probe = &results.Probe{ClientUs: [2]float64{6000, 6000}, ServerUs: [2]float64{5000, 5000}}
			b.Cells[i].Repeats[j].Probe = &results.Probe{ClientUs: [2]float64{6600, 6600}, ServerUs: [2]float64{5000, 5000}}
		}
	}
	ag := Agree(a, b, 0.10, 0.9)
	want := map[string][2]int{"req/s": {11, 12}, "client CPU/call": {11, 12}, "server CPU/call": {12, 12}}
	for _, f := range ag.Figures {
		if w := want[f.Name]; f.Agree != w[0] || f.Cells != w[1] {
			t.Errorf("%s: got %d of %d; want %d of %d", f.Name, f.Agree, f.Cells, w[0], w[1])
		}
	}
	if len(ag.Outside) != 2 || ag.Outside[0].Cell != "go-grpc-datalist-2-c1" || ag.Outside[1].Cell != "go-http-datalist-2-c1" {
		t.Errorf("outside: got %+v; want go-grpc-datalist-2-c1 and go-http-datalist-2-c1", ag.Outside)
	}
	if len(ag.Calibration) != 3 {
		t.Fatalf("calibration: %d figures; want 3", len(ag.Calibration))
	}
	if c := ag.Calibration[0]; c.Cells != 12 || c.BInA > 11 {
		t.Errorf("req/s calibration: B in A's interval %d of %d; want at most 11 of 12 (a cell moved 20 %% on quiet rounds)", c.BInA, c.Cells)
	}
	// Server CPU per call held the other run in 12 of 12 cells, past 98 %: wider
	// than the reruns need, so the goal does not hold at any share.
	if ag.Met(0.9) || ag.Met(0.5) {
		t.Errorf("goal: met at 90 %% %v, at 50 %% %v; want not met (12 of 12 is over-covered)", ag.Met(0.9), ag.Met(0.5))
	}
	if d, ok := ag.ProbeChange(0); !ok || math.Abs(d-0.10) > 1e-9 {
		t.Errorf("client probe change: got %v, %v; want +0.10", d, ok)
	}
	if d, ok := ag.ProbeChange(1); !ok || d != 0 {
		t.Errorf("server probe change: got %v, %v; want 0", d, ok)
	}
	if m := ag.Outside[0].Figures; len(m) != 1 || m[0].Figure != "req/s" || math.Abs(m[0].Change-0.2) > 1e-9 || m[0].InsideA {
		t.Errorf("go-grpc-datalist-2-c1 moved: got %+v; want req/s +20 %%, outside A's interval", m)
	}
}

// Calibrated: coverage between the goal's share and 98 % both ways, and a
// half-width at most 1.3 x the rerun difference's 95th percentile.
func TestCalibrated(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Calibration
		want bool
	}{
		{"95 % both ways, half-width 1.1 x", Calibration{Cells: 100, BInA: 95, AInB: 94, HalfA: 0.11, HalfB: 0.10, RerunP95: 0.10}, true},
		{"100 % one way", Calibration{Cells: 100, BInA: 100, AInB: 94, HalfA: 0.11, HalfB: 0.10, RerunP95: 0.10}, false},
		{"89 % one way", Calibration{Cells: 100, BInA: 89, AInB: 94, HalfA: 0.11, HalfB: 0.10, RerunP95: 0.10}, false},
		{"half-width 1.4 x", Calibration{Cells: 100, BInA: 95, AInB: 95, HalfA: 0.14, HalfB: 0.10, RerunP95: 0.10}, false},
		{"identical runs (no rerun difference)", Calibration{Cells: 100, BInA: 95, AInB: 95, HalfA: 0.14, HalfB: 0.10}, false},
		{"no cells", Calibration{}, false},
	} {
		if got := tc.c.Calibrated(0.90); got != tc.want {
			t.Errorf("%s: Calibrated %v; want %v", tc.name, got, tc.want)
		}
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
			if len(ag.Noise) != len(AgreeFigures) {
				t.Fatalf("got %d models; want one per figure (%d)", len(ag.Noise), len(AgreeFigures))
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

// Noise, per run: each run's median deviation is its own repeats' (a quiet A
// beside a noisy B: the quieter run's intervals are the ones a rerun misses),
// and the pooled one lies between them.
func TestNoisePerRun(t *testing.T) {
	a := resultstest.Run(200, resultstest.Gaussian(3, 0.02), 3)
	b := resultstest.Run(200, resultstest.Gaussian(4, 0.10), 3)
	for _, m := range Agree(a, b, 0.10, 0.90).Noise {
		// The median of |N(0, sd)| is 0.674 sd: 1.3 % for A, 6.7 % for B.
		if m.MedianDevA < 0.008 || m.MedianDevA > 0.02 || m.MedianDevB < 0.05 || m.MedianDevB > 0.085 {
			t.Errorf("%s: median deviation A %.4f, B %.4f; want 0.008-0.020 and 0.050-0.085", m.Figure, m.MedianDevA, m.MedianDevB)
		}
		if m.MedianDev <= m.MedianDevA || m.MedianDev >= m.MedianDevB {
			t.Errorf("%s: pooled median deviation %.4f; want between A's %.4f and B's %.4f", m.Figure, m.MedianDev, m.MedianDevA, m.MedianDevB)
		}
	}
}

// scaledRun is r with every repeat's req/s times k.
func scaledRun(r *results.Run, k float64) *results.Run {
	out := &results.Run{Spec: r.Spec}
	for _, c := range r.Cells {
		c.Repeats = slices.Clone(c.Repeats)
		for i := range c.Repeats {
			c.Repeats[i].Metrics.RPS *= k
		}
		out.Cells = append(out.Cells, c)
	}
	return out
}

// How far run B lay from run A across the cells, and how many run shifts
// that is: a rerun 10 % faster in every cell lies 10 % apart, 1.59 times the
// fallback shift of runs without probes (6 %), inside the intervals; 20 %
// faster lies past twice it and outside them, both ways.
func TestCalibrationApart(t *testing.T) {
	a := forkedRun(0, 1)
	for _, tc := range []struct {
		k     float64
		times float64
		far   []string
	}{
		{1, 0, nil},
		{1.10, math.Log(1.10) / FallbackRunShift, nil},
		{1 / 1.10, math.Log(1.10) / FallbackRunShift, nil},
		{1.20, math.Log(1.20) / FallbackRunShift, []string{"req/s B in A's", "req/s A in B's"}},
	} {
		t.Run(fmt.Sprint(tc.k), func(t *testing.T) {
			cals, _ := Calibrate(a, scaledRun(a, tc.k))
			c := cals[0]
			if c.Figure.Key != "rps" {
				t.Fatalf("first figure %q; want rps", c.Figure.Key)
			}
			if math.Abs(c.Apart-(tc.k-1)) > 1e-9 {
				t.Errorf("Apart %.4f; want %.4f", c.Apart, tc.k-1)
			}
			for r := range 2 {
				if got := c.ApartTimes(r); math.Abs(got-tc.times) > 1e-9 {
					t.Errorf("ApartTimes(%d) %.4f; want %.4f", r, got, tc.times)
				}
			}
			if got := (Agreement{Calibration: cals}).FartherApart(CoverLow); !slices.Equal(got, tc.far) {
				t.Errorf("FartherApart %q; want %q", got, tc.far)
			}
		})
	}
	// Each way is judged on the shift of the run whose intervals took the other's
	// medians in: A's 8 % holds what B's 3 % does not.
	one := Calibration{Figure: FigRPS.Figure(), Cells: 10, BInA: 10, AInB: 6, ShiftA: 0.08, ShiftB: 0.03, Apart: 0.08}
	if got := (Agreement{Calibration: []Calibration{one}}).FartherApart(CoverLow); !slices.Equal(got, []string{"req/s A in B's"}) {
		t.Errorf("FartherApart %q; want only req/s A in B's", got)
	}
	if got := (Calibration{}).ApartTimes(0); !math.IsNaN(got) {
		t.Errorf("no cells: ApartTimes %v; want NaN", got)
	}
	if got := (Calibration{Cells: 3, Apart: 0.1}).ApartTimes(1); !math.IsNaN(got) {
		t.Errorf("no shift: ApartTimes %v; want NaN", got)
	}
}

// Each pool of cells (a client on a server group) gets its own distance and
// misses: a rerun whose php cells ran 30 % faster and whose java cells held
// lies +30 % apart in php's pool with all of its cells' ways outside, 0 % in
// java's with none.
func TestCalibrationPools(t *testing.T) {
	a := forkedRun(0, 1)
	for _, c := range slices.Clone(a.Cells) {
		c.Name = strings.Replace(c.Name, "php-", "java-", 1)
		c.Cell.Client = "java"
		a.Cells = append(a.Cells, c)
	}
	b := &results.Run{Spec: a.Spec}
	for _, c := range a.Cells {
		c.Repeats = slices.Clone(c.Repeats)
		for i := range c.Repeats {
			if c.Cell.Client == "php" {
				c.Repeats[i].Metrics.RPS *= 1.30
			}
		}
		b.Cells = append(b.Cells, c)
	}
	cals, _ := Calibrate(a, b)
	got := cals[0].Pools
	want := []PoolApart{{Pool: "java on java-ice", Cells: 6}, {Pool: "php on java-ice", Cells: 6, Missed: 12, Apart: 0.30}}
	if len(got) != len(want) {
		t.Fatalf("pools %+v; want %+v", got, want)
	}
	for i := range want {
		if got[i].Pool != want[i].Pool || got[i].Cells != want[i].Cells || got[i].Missed != want[i].Missed || math.Abs(got[i].Apart-want[i].Apart) > 1e-9 {
			t.Errorf("pool %d: %+v; want %+v", i, got[i], want[i])
		}
	}
}
