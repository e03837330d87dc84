package stats

import (
	"cmp"
	"math"
	"math/rand/v2"
	"testing"
)

// A synthetic run: cells whose rounds are the cell's true value times log-normal
// noise of a known sd (each cell its own, 3 % to 25 %, as this machine's cells
// spread), the whole run shifted by a log-normal factor of sd shift.
type synthRun struct {
	truth  []float64
	sd     []float64
	rounds [][]float64
}

func newSynthCells(r *rand.Rand, cells int) (truth, sd []float64) {
	for range cells {
		truth = append(truth, 100*math.Exp(r.NormFloat64()))
		sd = append(sd, math.Exp(math.Log(0.03)+r.Float64()*(math.Log(0.25)-math.Log(0.03))))
	}
	return truth, sd
}

func synth(r *rand.Rand, truth, sd []float64, n int, shift float64) synthRun {
	s := synthRun{truth: truth, sd: sd}
	k := math.Exp(shift * r.NormFloat64())
	for i := range truth {
		var v []float64
		for range n {
			v = append(v, truth[i]*k*math.Exp(sd[i]*r.NormFloat64()))
		}
		s.rounds = append(s.rounds, v)
	}
	return s
}

func (s synthRun) noise(shift float64) Noise {
	n := Noise{RunShift: shift}
	for _, v := range s.rounds {
		n.Pool.Add(Logs(v))
	}
	return n
}

// TestMedianCICoverage: benchstat's order-statistics interval covers the true
// median at least 93 % of 1000 seeded trials, whatever the noise's shape, from
// the 6 values it needs on.
func TestMedianCICoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 26))
	for _, n := range []int{6, 9, 15} {
		for _, dist := range []string{"lognormal", "uniform"} {
			hit := 0
			for range 1000 {
				v := make([]float64, n)
				for i := range v {
					if dist == "lognormal" {
						v[i] = 100 * math.Exp(0.1*r.NormFloat64())
					} else {
						v[i] = 90 + 20*r.Float64()
					}
				}
				iv, ok := MedianCI(v, Confidence)
				if !ok {
					t.Fatalf("n=%d: no finite interval", n)
				}
				if iv.Contains(100) {
					hit++
				}
			}
			if share := float64(hit) / 1000; share < 0.93 {
				t.Errorf("n=%d %s: MedianCI covered the median in %.1f %% of 1000 trials; want >= 93 %%", n, dist, share*100)
			}
		}
	}
	if _, ok := MedianCI([]float64{1, 2, 3, 4, 5}, Confidence); ok {
		t.Errorf("MedianCI of 5 values: finite; want none (benchstat needs 6 for 95 %%)")
	}
}

// TestRerunCoverage: the published interval (Noise.Median) holds where a rerun's
// median lands, in at least 93 % of cells over 1000 seeded pairs of runs, at 3 and
// 5 rounds per cell, with and without a whole-run shift, both ways.
func TestRerunCoverage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rounds int
		shift  float64
	}{
		{"3 rounds, no shift", 3, 0},
		{"3 rounds, 6 % run shift", 3, 0.06},
		{"5 rounds, 6 % run shift", 5, 0.06},
		{"8 rounds, 10 % run shift", 8, 0.10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(2, uint64(tc.rounds)))
			hit, all := 0, 0
			for range 1000 {
				truth, sd := newSynthCells(r, 20)
				// RunShift is the sd of one run's shift against the other: B carries it.
				a, b := synth(r, truth, sd, tc.rounds, 0), synth(r, truth, sd, tc.rounds, tc.shift)
				for _, pair := range [][2]synthRun{{a, b}, {b, a}} {
					n := pair[0].noise(tc.shift)
					for i := range truth {
						if n.Median(pair[0].rounds[i]).Contains(Median(pair[1].rounds[i])) {
							hit++
						}
						all++
					}
				}
			}
			share := float64(hit) / float64(all)
			t.Logf("rerun inside the interval: %.1f %% of %d cells", share*100, all)
			if share < 0.93 {
				t.Errorf("covered %.1f %%; want >= 93 %%", share*100)
			}
		})
	}
}

// TestInRunCoverage: the in-run interval (Noise.InRun) holds the cell's true
// median (the machine's, at this time) in at least 93 % of cells over 1000 seeded
// runs; the bootstrap over 3 rounds, for comparison, does not (it is why the
// interval pools the run's noise).
func TestInRunCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 26))
	for _, rounds := range []int{3, 5} {
		hit, boot, all := 0, 0, 0
		for trial := range 1000 {
			truth, sd := newSynthCells(r, 20)
			a := synth(r, truth, sd, rounds, 0)
			n := a.noise(0)
			for i := range truth {
				if n.InRun(a.rounds[i]).Contains(truth[i]) {
					hit++
				}
				if BootstrapMedian(a.rounds[i], Confidence, 200, uint64(trial*100+i)).Contains(truth[i]) {
					boot++
				}
				all++
			}
		}
		share, bshare := float64(hit)/float64(all), float64(boot)/float64(all)
		t.Logf("%d rounds: in-run interval covers %.1f %%, bootstrap %.1f %% of %d cells", rounds, share*100, bshare*100, all)
		if share < 0.93 {
			t.Errorf("%d rounds: InRun covered %.1f %%; want >= 93 %%", rounds, share*100)
		}
		if rounds == 3 && bshare > 0.9 {
			t.Errorf("3 rounds: the bootstrap covered %.1f %%; the docs say it under-covers (want < 90 %%)", bshare*100)
		}
	}
}

func TestNoiseDegenerate(t *testing.T) {
	var n Noise
	if iv := n.Median(nil); iv.Valid() {
		t.Errorf("Median(nil) = %+v; want no interval", iv)
	}
	if iv := n.Median([]float64{100}); iv.Valid() {
		t.Errorf("one round, no pool, no shift: %+v; want no interval", iv)
	}
	n.RunShift = 0.06
	iv := n.Median([]float64{100})
	if !iv.Valid() || math.Abs(iv.HalfWidth()-1.96*0.06) > 0.001 {
		t.Errorf("one round, 6 %% shift: half-width %.4f; want %.4f (the shift alone)", iv.HalfWidth(), 1.96*0.06)
	}
	n.Pool.Add([]float64{0, 0.1})
	if iv := n.Median([]float64{100, 100, 100}); !(iv.Low < 100 && iv.High > 100) {
		t.Errorf("3 equal rounds in a noisy run: %+v; want an interval around 100 (the run's noise, not the cell's luck)", iv)
	}
	if iv := n.Median([]float64{100, -1, math.NaN()}); iv.N != 1 {
		t.Errorf("non-positive and NaN rounds: N %d; want 1 (left out)", iv.N)
	}
	// A variance that is not a number (every figure 0, logged) gives no
	// half-width; it panicked in the t quantile's inversion.
	if h := halfWidth(part{v: math.NaN(), df: 7}, part{v: 0.01, df: 2}); !math.IsNaN(h) {
		t.Errorf("a NaN variance: half-width %v; want NaN", h)
	}
	if q := tQuantile(0.975, math.NaN()); !math.IsNaN(q) {
		t.Errorf("tQuantile at NaN degrees of freedom = %v; want NaN", q)
	}
}

func TestMedianFactor(t *testing.T) {
	if medianFactor(1) != 1 || medianFactor(3) < 1.3 || medianFactor(100) != math.Pi/2 {
		t.Errorf("medianFactor 1, 3, 100 = %v %v %v", medianFactor(1), medianFactor(3), medianFactor(100))
	}
}

// synthForks is a run of a group that forks: each cell's rounds split over forks,
// each fork the cell's true value times the run's shift, a fork's own shift of
// sd between (a JVM start's steady state), and the rounds' noise. Each cell's
// fork draws its own shift; synthForksShared shares part of it.
func synthForks(r *rand.Rand, truth, sd []float64, sizes []int, shift, between float64) [][][]float64 {
	return synthForksShared(r, truth, sd, sizes, shift, between, 0)
}

// synthForksShared is synthForks where one start serves all the group's cells,
// as it does: a share of each fork's shift variance (shared, 0..1) is the
// start's, common to every cell of the fork, the rest each cell's own (its own
// JIT luck).
func synthForksShared(r *rand.Rand, truth, sd []float64, sizes []int, shift, between, shared float64) [][][]float64 {
	k := math.Exp(shift * r.NormFloat64())
	common := make([]float64, len(sizes))
	for f := range common {
		common[f] = math.Sqrt(shared) * between * r.NormFloat64()
	}
	out := make([][][]float64, len(truth))
	for i := range truth {
		for f, per := range sizes {
			fk := math.Exp(common[f] + math.Sqrt(1-shared)*between*r.NormFloat64())
			var v []float64
			for range per {
				v = append(v, truth[i]*k*fk*math.Exp(sd[i]*r.NormFloat64()))
			}
			out[i] = append(out[i], v)
		}
	}
	return out
}

func forkNoise(cells [][][]float64, forks int, shift float64) Noise {
	n := Noise{RunShift: shift}
	var logs [][][]float64
	for _, fs := range cells {
		var lf [][]float64
		for _, f := range fs {
			n.Pool.Add(Logs(f))
			lf = append(lf, Logs(f))
		}
		logs = append(logs, lf)
	}
	n.Between = BetweenForks(logs, forks)
	return n
}

// TestForkCoverage: for a group that forks, MedianForks holds where a rerun's
// median (over forks of its own) lands in at least 93 % of cells over 1000 seeded
// pairs of runs, with and without a spread between forks; Median alone, blind to
// the forks, does not when the forks spread (the reason forks exist). Uneven
// forks fall short: 2 rounds and 1 round covered 90.2 % with a 20 % spread,
// which is why Spec.RoundsFor gives each fork the same count, at least 2.
func TestForkCoverage(t *testing.T) {
	for _, tc := range []struct {
		name           string
		sizes          []int // rounds per fork
		shift, between float64
		blindFails     bool
		shared         float64 // the share of the fork's shift one start gives every cell
		least          float64 // the coverage it holds at least (0: 93 %)
	}{
		{"2 forks x 2 rounds, no spread between forks", []int{2, 2}, 0.06, 0, false, 0, 0},
		{"2 forks x 2 rounds, 20 % between forks", []int{2, 2}, 0.06, 0.20, true, 0, 0},
		{"3 forks x 2 rounds, 15 % between forks", []int{2, 2, 2}, 0.06, 0.15, true, 0, 0},
		{"2 forks x 2 rounds, 10 % between forks, one start's", []int{2, 2}, 0.06, 0.10, false, 1, 0},
		{"2 forks x 2 rounds, 10 % between forks, 3/4 the start's", []int{2, 2}, 0.06, 0.10, false, 0.75, 0},
		{"3 forks x 2 rounds, 10 % between forks, one start's", []int{2, 2, 2}, 0.06, 0.10, false, 1, 0},
		// Two forks tell a start's shift once (1 degree): Welch-Satterthwaite's
		// degrees of the sum lean on a variance that small a sample often
		// reads low, and the interval falls short of 93 % (89.5 %); counting a
		// degree per cell and fork held 85.3 % here.
		{"2 forks x 2 rounds, 20 % between forks, one start's", []int{2, 2}, 0.06, 0.20, true, 1, 0.88},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forks := len(tc.sizes)
			r := rand.New(rand.NewPCG(3, uint64(forks*10+tc.sizes[forks-1])))
			hit, blind, all := 0, 0, 0
			for range 1000 {
				truth, sd := newSynthCells(r, 12)
				a := synthForksShared(r, truth, sd, tc.sizes, 0, tc.between, tc.shared)
				b := synthForksShared(r, truth, sd, tc.sizes, tc.shift, tc.between, tc.shared)
				for _, pair := range [][2][][][]float64{{a, b}, {b, a}} {
					n := forkNoise(pair[0], forks, tc.shift)
					plain := Noise{Pool: n.Pool, RunShift: tc.shift}
					for i := range truth {
						var other, mine []float64
						for _, f := range pair[1][i] {
							other = append(other, f...)
						}
						for _, f := range pair[0][i] {
							mine = append(mine, f...)
						}
						m := Median(other)
						if n.MedianForks(pair[0][i]).Contains(m) {
							hit++
						}
						if plain.Median(mine).Contains(m) {
							blind++
						}
						all++
					}
				}
			}
			share, bshare := float64(hit)/float64(all), float64(blind)/float64(all)
			t.Logf("rerun inside the forked interval: %.1f %%, inside the fork-blind one: %.1f %% of %d cells", share*100, bshare*100, all)
			least := cmp.Or(tc.least, 0.93)
			if share < least {
				t.Errorf("covered %.1f %%; want >= %.0f %%", share*100, least*100)
			}
			if tc.blindFails && bshare >= 0.93 {
				t.Errorf("the fork-blind interval covered %.1f %%: the test's spread between forks shows nothing", bshare*100)
			}
		})
	}
}

// TestBetweenForks: the estimate recovers a known spread between forks and
// floors at 0 where there is none; a cell with one fork adds nothing.
func TestBetweenForks(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 1))
	for _, want := range []float64{0, 0.10, 0.25} {
		truth, sd := newSynthCells(r, 400)
		for i := range sd {
			sd[i] = 0.08
		}
		cells := synthForks(r, truth, sd, []int{3, 3}, 0, want)
		var logs [][][]float64
		for _, fs := range cells {
			var lf [][]float64
			for _, f := range fs {
				lf = append(lf, Logs(f))
			}
			logs = append(logs, lf)
		}
		b := BetweenForks(logs, 2)
		// Each cell's forks draw their own shift: up to a degree per cell, less
		// what the rounds' noise, subtracted, takes from the estimate (268 at
		// 10 %, 367 at 25 %).
		if b.DF < 200 || b.DF > 400 || b.Forks != 2 {
			t.Errorf("DF %d, Forks %d; want 200..400, 2", b.DF, b.Forks)
		}
		if got := math.Sqrt(b.Var); math.Abs(got-want) > 0.03 {
			t.Errorf("between-fork sd %.3f; want %.2f within 0.03", got, want)
		}
	}
	// One start's shift, common to every cell: the 400 cells tell one fork's
	// shift from the other's once, about 1 degree of freedom, not 400.
	truth, sd := newSynthCells(r, 400)
	var logs [][][]float64
	for _, fs := range synthForksShared(r, truth, sd, []int{3, 3}, 0, 0.10, 1) {
		var lf [][]float64
		for _, f := range fs {
			lf = append(lf, Logs(f))
		}
		logs = append(logs, lf)
	}
	if b := BetweenForks(logs, 2); b.DF > 3 {
		t.Errorf("one start's shift: DF %d; want at most 3", b.DF)
	}
	if b := BetweenForks([][][]float64{{{1, 2, 3}}}, 2); b.DF != 0 || b.Var != 0 {
		t.Errorf("one fork: %+v; want none", b)
	}
}
