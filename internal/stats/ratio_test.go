package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// pairRounds is two cells run in the same rounds: each round's value is the
// cell's truth times a drift both share in that round (the machine's speed then)
// times noise of its own.
func pairRounds(r *rand.Rand, ta, tb float64, n int, drift, sd float64) (a, b map[int]float64) {
	a, b = map[int]float64{}, map[int]float64{}
	for i := 1; i <= n; i++ {
		d := math.Exp(drift * r.NormFloat64())
		a[i] = ta * d * math.Exp(sd*r.NormFloat64())
		b[i] = tb * d * math.Exp(sd*r.NormFloat64())
	}
	return a, b
}

// TestPairedRatioCoverage: the paired interval holds the true ratio in at least
// 93 % of 1000 seeded runs of 20 pairs, with a round drift (20 %) far larger than
// the cells' own noise, which cancels in a per-round ratio.
func TestPairedRatioCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 26))
	hit, all := 0, 0
	var width float64
	for range 1000 {
		var d Noise
		type pair struct{ a, b map[int]float64 }
		var pairs []pair
		var truth []float64
		for range 20 {
			ratio := math.Exp(0.5 * r.NormFloat64())
			a, b := pairRounds(r, 100*ratio, 100, 5, 0.2, 0.05)
			pairs = append(pairs, pair{a, b})
			truth = append(truth, ratio)
			d.Pool.Add(PairedLogRatios(a, b))
		}
		for i, p := range pairs {
			rt := d.PairedRatio(p.a, p.b, Noise{}, Noise{})
			if !rt.Paired || rt.Rounds != 5 {
				t.Fatalf("PairedRatio: paired %v over %d rounds; want paired over 5", rt.Paired, rt.Rounds)
			}
			if rt.Contains(truth[i]) {
				hit++
			}
			width += rt.HalfWidth()
			all++
		}
	}
	share := float64(hit) / float64(all)
	t.Logf("paired ratio covers %.1f %%, median half-width %.1f %%", share*100, width/float64(all)*100)
	if share < 0.93 {
		t.Errorf("covered %.1f %%; want >= 93 %%", share*100)
	}
	if hw := width / float64(all); hw > 0.15 {
		t.Errorf("mean half-width %.1f %%: the round drift (20 %%) did not cancel", hw*100)
	}
}

// TestVerdict: synthetic pairs with a known ratio get the verdict the ratio
// deserves in at least 93 % of 1000 seeded trials; equal cells are called
// faster or slower in at most 7 %.
func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		name         string
		ratio        float64
		higherBetter bool
		want         string
		atLeast      float64
	}{
		{"30 % more req/s", 1.3, true, Faster, 0.93},
		{"30 % fewer req/s", 1 / 1.3, true, Slower, 0.93},
		{"30 % less CPU per call", 1 / 1.3, false, Faster, 0.93},
		{"the same", 1, true, Indistinguishable, 0.93},
		{"the same, CPU", 1, false, Indistinguishable, 0.93},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(5, uint64(tc.ratio*1000)))
			got := 0
			for range 1000 {
				d := Noise{}
				var last [2]map[int]float64
				for range 10 {
					a, b := pairRounds(r, 100*tc.ratio, 100, 5, 0.15, 0.08)
					d.Pool.Add(PairedLogRatios(a, b))
					last = [2]map[int]float64{a, b}
				}
				if d.PairedRatio(last[0], last[1], Noise{}, Noise{}).Verdict(tc.higherBetter) == tc.want {
					got++
				}
			}
			if share := float64(got) / 1000; share < tc.atLeast {
				t.Errorf("verdict %q in %.1f %% of trials; want >= %.0f %%", tc.want, share*100, tc.atLeast*100)
			}
		})
	}
}

func TestVerdictOf(t *testing.T) {
	for _, tc := range []struct {
		iv           Interval
		higherBetter bool
		want         string
	}{
		{Interval{Center: 1.2, Low: 1.1, High: 1.3, N: 3}, true, Faster},
		{Interval{Center: 1.2, Low: 1.1, High: 1.3, N: 3}, false, Slower},
		{Interval{Center: 0.8, Low: 0.7, High: 0.9, N: 3}, true, Slower},
		{Interval{Center: 0.8, Low: 0.7, High: 0.9, N: 3}, false, Faster},
		{Interval{Center: 1.05, Low: 0.95, High: 1.15, N: 3}, true, Indistinguishable},
		{Interval{Center: 1.1, Low: 1, High: 1.2, N: 3}, true, Indistinguishable}, // at the edge: holds 1
		{Interval{}, true, Indistinguishable},
		{Interval{Center: 2, Low: 1.5, High: math.Inf(1), N: 1}, true, Indistinguishable},
	} {
		if got := VerdictOf(tc.iv, 1, tc.higherBetter); got != tc.want {
			t.Errorf("VerdictOf(%+v, higherBetter %v) = %s; want %s", tc.iv, tc.higherBetter, got, tc.want)
		}
	}
}

// TestUnpairedRatio: cells of two groups (no shared rounds) get an interval that
// adds both cells' noise and the run shift, wider than a paired one.
func TestUnpairedRatio(t *testing.T) {
	na := Noise{RunShift: 0.06}
	na.Pool.Add([]float64{0, 0.1, -0.1})
	a := map[int]float64{1: 110, 2: 120, 3: 115}
	b := map[int]float64{4: 100, 5: 98, 6: 102}
	rt := na.PairedRatio(a, b, na, na)
	if rt.Paired || !rt.Valid() {
		t.Fatalf("no shared rounds: %+v; want a valid unpaired ratio", rt)
	}
	if rt.HalfWidth() < 1.96*0.06 {
		t.Errorf("unpaired half-width %.3f; want at least the run shift's %.3f", rt.HalfWidth(), 1.96*0.06)
	}
	if got := UnpairedRatio(nil, []float64{1}, na, na); got.Valid() {
		t.Errorf("UnpairedRatio with an empty side: %+v; want none", got)
	}
}

// TestPairedRoundsCoverage: a pair's interval from its own rounds alone (no pool,
// as make bench-loadgen prints each goal's ratio) holds the true ratio in at
// least 93 % of 2000 seeded runs at 3, 6 and 10 rounds, with a round drift (15 %)
// shared by both sides far larger than their own noise (4 %), which cancels.
func TestPairedRoundsCoverage(t *testing.T) {
	for _, n := range []int{3, 6, 10} {
		r := rand.New(rand.NewPCG(6, uint64(n)))
		hit := 0
		var width float64
		const trials = 2000
		for range trials {
			am, bm := pairRounds(r, 95, 100, n, 0.15, 0.04)
			var a, b []float64
			for i := 1; i <= n; i++ {
				a, b = append(a, am[i]), append(b, bm[i])
			}
			rt := PairedRounds(a, b)
			if !rt.Paired || rt.Rounds != n || !rt.Valid() {
				t.Fatalf("%d rounds: %+v; want a valid paired ratio over %d rounds", n, rt, n)
			}
			if rt.Contains(0.95) {
				hit++
			}
			width += rt.HalfWidth()
		}
		share := float64(hit) / trials
		t.Logf("%d rounds: covers %.1f %%, mean half-width %.1f %%", n, share*100, width/trials*100)
		if share < 0.93 {
			t.Errorf("%d rounds: covered %.1f %%; want >= 93 %%", n, share*100)
		}
	}
}

func TestPairedRoundsDegenerate(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []float64
		n    int // rounds behind a valid interval; 0: none
	}{
		{"none", nil, nil, 0},
		{"one round", []float64{2}, []float64{1}, 0},
		{"one usable round", []float64{2, -1, math.NaN()}, []float64{1, 1, 1}, 0},
		{"uneven lengths", []float64{2, 2.2, 9}, []float64{1, 1.1}, 2},
		{"infinite left out", []float64{2, 2.2, math.Inf(1)}, []float64{1, 1.1, 1}, 2},
		{"equal ratios", []float64{2, 4, 6}, []float64{1, 2, 3}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := PairedRounds(tc.a, tc.b)
			if tc.n == 0 {
				if rt.Valid() {
					t.Fatalf("%+v; want no interval", rt)
				}
				return
			}
			if !rt.Valid() || rt.N != tc.n || !(rt.Low <= rt.Center && rt.Center <= rt.High) {
				t.Fatalf("%+v; want a valid interval over %d rounds around its centre", rt, tc.n)
			}
		})
	}
	if rt := PairedRounds([]float64{2, 4, 6}, []float64{1, 2, 3}); math.Abs(rt.Center-2) > 1e-12 || rt.Low != rt.Center || rt.High != rt.Center {
		t.Errorf("equal ratios: %+v; want the interval [2, 2]", rt)
	}
}
