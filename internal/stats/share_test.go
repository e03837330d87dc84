package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestPolygamma(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"digamma(1)", digamma(1), -0.5772156649015329},
		{"digamma(0.5)", digamma(0.5), -1.9635100260214235},
		{"digamma(10)", digamma(10), 2.251752589066721},
		{"trigamma(1)", trigamma(1), math.Pi * math.Pi / 6},
		{"trigamma(0.5)", trigamma(0.5), math.Pi * math.Pi / 2},
		{"trigamma(7.5)", trigamma(7.5), 0.1426158966967038},
		{"tetragamma(1)", tetragamma(1), -2.4041138063191885},
		{"trigammaInverse(trigamma(3.3))", trigammaInverse(trigamma(3.3)), 3.3},
		{"trigammaInverse(trigamma(0.2))", trigammaInverse(trigamma(0.2)), 0.2},
		{"trigammaInverse(trigamma(400))", trigammaInverse(trigamma(400)), 400},
	} {
		if math.Abs(tc.got-tc.want) > 1e-6*max(1, math.Abs(tc.want)) {
			t.Errorf("%s = %.10f; want %.10f", tc.name, tc.got, tc.want)
		}
	}
}

// TestSqueeze: cells with one true variance give a prior worth (nearly)
// everything; cells whose variances spread give a finite prior whose DF a
// known spread of scaled inverse chi² recovers; too few cells give none.
func TestSqueeze(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 1))
	draw := func(cells, rounds int, sd func() float64) []Pool {
		var ps []Pool
		for range cells {
			s := sd()
			v := make([]float64, rounds)
			for i := range v {
				v[i] = s * r.NormFloat64()
			}
			var p Pool
			p.Add(v)
			ps = append(ps, p)
		}
		return ps
	}
	same := Squeeze(draw(400, 3, func() float64 { return 0.05 }))
	if same.DF < 50 || math.Abs(math.Sqrt(same.Var)-0.05) > 0.005 {
		t.Errorf("one variance: prior %+v; want DF >= 50 (or +Inf) and sd 0.05 within 0.005", same)
	}
	// True variances scaled inverse chi² on 6 degrees of freedom around 0.08².
	spread := Squeeze(draw(2000, 3, func() float64 {
		var c float64
		for range 6 {
			z := r.NormFloat64()
			c += z * z
		}
		return math.Sqrt(6 * 0.08 * 0.08 / c)
	}))
	if spread.DF < 3.5 || spread.DF > 12 {
		t.Errorf("variances spread on 6 df: prior DF %.1f; want 3.5..12", spread.DF)
	}
	if Squeeze(draw(2, 3, func() float64 { return 0.05 })) != (Prior{}) {
		t.Errorf("two cells: a prior; want none")
	}
	if v, df := (Prior{Var: 0.01, DF: math.Inf(1)}).Moderated(Pool{SS: 5, DF: 2}); v != 0.01 || !math.IsInf(df, 1) {
		t.Errorf("an infinite prior: %v on %v df; want the prior's 0.01, +Inf", v, df)
	}
	if v, df := (Prior{Var: 0.01, DF: 2}).Moderated(Pool{SS: 0.06, DF: 2}); math.Abs(v-0.02) > 1e-12 || df != 4 {
		t.Errorf("prior 0.01 on 2 df, own 0.03 on 2: %v on %v df; want 0.02 on 4", v, df)
	}
}

// walk is a machine's level (log speed) as a random walk of steps whose change
// over a whole run of steps has sd shift, continued from level.
func walk(r *rand.Rand, level float64, steps int, shift float64) []float64 {
	out := make([]float64, steps)
	sd := shift / math.Sqrt(float64(steps))
	for i := range out {
		level += sd * r.NormFloat64()
		out[i] = level
	}
	return out
}

// TestDrift: a probe timed along a random walk recovers the walk's change over
// the run within a third, whatever the probe's own noise; too few probes say so.
func TestDrift(t *testing.T) {
	for _, tc := range []struct{ shift, noise float64 }{{0.05, 0.03}, {0.14, 0.05}, {0.02, 0.03}} {
		r := rand.New(rand.NewPCG(9, uint64(tc.shift*100)))
		var got []float64
		for range 400 {
			lv := walk(r, 0, 500, tc.shift)
			var series [][]float64
			for range 2 {
				s := make([]float64, len(lv))
				for i, l := range lv {
					s[i] = l + tc.noise*r.NormFloat64()
				}
				series = append(series, s)
			}
			sd, df, ok := Drift(series, DriftSegments)
			if !ok || df != 2*(DriftSegments-1) {
				t.Fatalf("Drift: ok %v, df %d; want true, %d", ok, df, 2*(DriftSegments-1))
			}
			got = append(got, sd*sd)
		}
		if est := math.Sqrt(Mean(got)); math.Abs(est-tc.shift) > tc.shift/3 {
			t.Errorf("a %.0f %% walk under %.0f %% probe noise: Drift's rms %.3f; want %.3f within a third", tc.shift*100, tc.noise*100, est, tc.shift)
		}
	}
	if _, _, ok := Drift([][]float64{{1, 2, 3}}, DriftSegments); ok {
		t.Errorf("3 probes: ok; want too few")
	}
}

// measuredRun is a synthetic run measured on a machine whose speed walks: cells
// run one after the other, each round's level the walk's at its time, and a
// probe timed before each round (the probe's own noise beside it). The next run
// continues the walk.
type measuredRun struct {
	rounds [][]float64
	probe  [][]float64 // two probes (client's core, server's), in time order
	level  float64     // the walk's last level
}

func measure(r *rand.Rand, truth, sd []float64, rounds int, start, shift, probeNoise float64) measuredRun {
	lv := walk(r, start, len(truth)*rounds, shift)
	m := measuredRun{rounds: make([][]float64, len(truth)), probe: make([][]float64, 2), level: lv[len(lv)-1]}
	for i := range truth {
		for k := range rounds {
			l := lv[i*rounds+k]
			m.rounds[i] = append(m.rounds[i], truth[i]*math.Exp(l+sd[i]*r.NormFloat64()))
			for p := range m.probe {
				m.probe[p] = append(m.probe[p], l+probeNoise*r.NormFloat64())
			}
		}
	}
	return m
}

// noiseOf is the run's noise model from the run alone: the cells' variances
// squeezed, the shift from the probe's drift.
func (m measuredRun) noiseOf() Noise {
	var n Noise
	var pools []Pool
	for _, v := range m.rounds {
		var p Pool
		p.Add(Logs(v))
		pools = append(pools, p)
		n.Pool.Add(Logs(v))
	}
	n.Prior = Squeeze(pools)
	n.RunShift, n.ShiftDF, _ = Drift(m.probe, DriftSegments)
	return n
}

// TestMeasuredCoverage: intervals built from the run alone (its cells' pooled
// noise, its probe's drift) hold a back-to-back rerun's median in 93-97 % of
// cells over 400 seeded pairs, both ways: calibrated, not wider than true; on
// a quiet machine (repeats 4 % from their mean, a 5 % run shift) and on a
// noisier one (13 %, 14 %).
func TestMeasuredCoverage(t *testing.T) {
	for _, tc := range []struct {
		name             string
		cells, rounds    int
		lo, hi           float64 // the cells' noise: sd drawn log-uniformly in [lo, hi]
		shift, probeNois float64
	}{
		{"quiet: 4 % repeats, 5 % shift, 82 cells x 3", 82, 3, 0.02, 0.08, 0.05, 0.03},
		{"noisy: 13 % repeats, 14 % shift, 82 cells x 3", 82, 3, 0.08, 0.25, 0.14, 0.06},
		{"quiet, 6 rounds", 82, 6, 0.02, 0.08, 0.05, 0.03},
		{"no shift", 82, 3, 0.02, 0.08, 0, 0.03},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(10, uint64(tc.rounds*1000+int(tc.shift*100))))
			hit, all := 0, 0
			var hws []float64
			for range 400 {
				truth, sd := make([]float64, tc.cells), make([]float64, tc.cells)
				for i := range truth {
					truth[i] = 100 * math.Exp(r.NormFloat64())
					sd[i] = math.Exp(math.Log(tc.lo) + r.Float64()*(math.Log(tc.hi)-math.Log(tc.lo)))
				}
				a := measure(r, truth, sd, tc.rounds, 0, tc.shift, tc.probeNois)
				b := measure(r, truth, sd, tc.rounds, a.level, tc.shift, tc.probeNois)
				for _, pair := range [][2]measuredRun{{a, b}, {b, a}} {
					n := pair[0].noiseOf()
					for i := range truth {
						iv := n.Median(pair[0].rounds[i])
						if iv.Contains(Median(pair[1].rounds[i])) {
							hit++
						}
						hws = append(hws, iv.HalfWidth())
						all++
					}
				}
			}
			share := float64(hit) / float64(all)
			t.Logf("rerun inside the interval: %.1f %% of %d cells, median half-width ±%.1f %%", share*100, all, 100*Median(hws))
			if share < 0.93 || share > 0.97 {
				t.Errorf("covered %.1f %%; want 93-97 %%", share*100)
			}
		})
	}
}

// TestPairShareScatter: one pair of runs is one draw of the run shift, so the
// share of cells whose rerun lands inside their intervals scatters from pair to
// pair even when the intervals are calibrated (synthetic quiet runs of 66
// cells, as the default matrix, intervals from the run alone as in
// TestMeasuredCoverage). Over 800 pairs the share holds 93-97 %, yet one pair's
// two ways both fall in 90-98 % in well under all pairs; pooled over 8 pairs
// (ClusterShare, a pair one cluster) the interval holds the 800 pairs' share in
// at least 88 % of 100 sets. So a single pair cannot say an interval is
// miscalibrated by a few cells; several pairs pooled can (rpcbed agree with
// several pairs).
func TestPairShareScatter(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 66))
	const cells, pairs, set = 66, 800, 8
	var held, all []int
	goal, over, under := 0, 0, 0 // pairs in the goal, with a way past 98 %, with a way under 90 %
	for range pairs {
		truth, sd := make([]float64, cells), make([]float64, cells)
		for i := range truth {
			truth[i] = 100 * math.Exp(r.NormFloat64())
			sd[i] = math.Exp(math.Log(0.02) + r.Float64()*(math.Log(0.08)-math.Log(0.02)))
		}
		a := measure(r, truth, sd, 3, 0, 0.05, 0.03)
		b := measure(r, truth, sd, 3, a.level, 0.05, 0.03)
		h, inGoal, hi, lo := 0, true, false, false
		for _, way := range [][2]measuredRun{{a, b}, {b, a}} {
			n, w := way[0].noiseOf(), 0
			for i := range truth {
				if n.Median(way[0].rounds[i]).Contains(Median(way[1].rounds[i])) {
					w++
				}
			}
			s := float64(w) / cells
			inGoal = inGoal && s >= 0.90 && s <= 0.98
			hi, lo = hi || s > 0.98, lo || s < 0.90
			h += w
		}
		if inGoal {
			goal++
		}
		if hi {
			over++
		}
		if lo {
			under++
		}
		held, all = append(held, h), append(all, 2*cells)
	}
	whole := ClusterShare(held, all)
	hits := 0
	for s := 0; s+set <= pairs; s += set {
		if ClusterShare(held[s:s+set], all[s:s+set]).Contains(whole.Center) {
			hits++
		}
	}
	t.Logf("over %d pairs: %.1f %% held [%.1f..%.1f]; a pair met 90-98 %% both ways in %.1f %% of pairs, had a way past 98 %% in %.1f %%, under 90 %% in %.1f %%; sets of %d pairs held the whole's share in %d of %d",
		pairs, 100*whole.Center, 100*whole.Low, 100*whole.High, 100*float64(goal)/pairs, 100*float64(over)/pairs, 100*float64(under)/pairs, set, hits, pairs/set)
	if whole.Center < 0.93 || whole.Center > 0.97 {
		t.Errorf("held %.1f %% over %d pairs; want 93-97 %%", 100*whole.Center, pairs)
	}
	if float64(goal)/pairs > 0.9 {
		t.Errorf("a pair met the goal in %.1f %% of pairs: the scatter this test shows is gone", 100*float64(goal)/pairs)
	}
	if hits < 88*pairs/set/100 {
		t.Errorf("sets of %d pairs held the whole's share in %d of %d; want at least 88 %%", set, hits, pairs/set)
	}
}
