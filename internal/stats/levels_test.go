package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// PoolLevels on synthetic levels: 5 levels sharing one true ratio, each level
// two cells of 3 rounds with noise 2-8 % (log-uniform, as the measured-coverage
// test's cells), variances squeezed over the levels'
// cells: the pooled interval holds the true ratio in 93-97 % of 2000 seeded
// claims, and is narrower than the envelope of the levels' intervals.
func TestPoolLevelsCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 5))
	const truth = 0.85
	hit, narrower := 0, 0
	const trials = 2000
	for range trials {
		var cells [][]float64
		var pools []Pool
		for range 10 {
			sd := math.Exp(math.Log(0.02) + r.Float64()*(math.Log(0.08)-math.Log(0.02)))
			base := 1000.0
			if len(cells)%2 == 0 {
				base *= truth
			}
			v := make([]float64, 3)
			for i := range v {
				v[i] = base * math.Exp(sd*r.NormFloat64())
			}
			var p Pool
			p.Add(Logs(v))
			pools = append(pools, p)
			cells = append(cells, v)
		}
		n := Noise{Prior: Squeeze(pools)}
		var levels []LogRatio
		lo, hi := math.Inf(1), 0.0
		for i := 0; i < len(cells); i += 2 {
			l, ok := UnpairedLog(cells[i], cells[i+1], n, n)
			if !ok {
				t.Fatal("no level ratio")
			}
			levels = append(levels, l)
			iv := l.Interval()
			lo, hi = min(lo, iv.Low), max(hi, iv.High)
		}
		p, ok := PoolLevels(levels)
		if !ok {
			t.Fatal("no pooled ratio")
		}
		iv := p.Interval()
		if iv.Contains(truth) {
			hit++
		}
		if iv.High-iv.Low < hi-lo {
			narrower++
		}
	}
	share := float64(hit) / trials
	t.Logf("pooled interval holds the true ratio in %.1f %%; narrower than the envelope in %d of %d", share*100, narrower, trials)
	if share < 0.93 || share > 0.97 {
		t.Errorf("covered %.1f %%; want 93-97 %%", share*100)
	}
	if narrower != trials {
		t.Errorf("narrower than the envelope in %d of %d; want all", narrower, trials)
	}
	if _, ok := PoolLevels(nil); ok {
		t.Errorf("no levels: ok; want none")
	}
}

// TestPairedLogCoverage: five levels of two cells run in the same 3 rounds,
// the machine's drift between rounds (15 %) far above the cells' own noise
// (2-8 %, log-uniform per level); the paired interval, its noise shared over
// the levels (PairedNoise), holds the true ratio in 93-97 % of 1000 seeded
// claims at each level and pooled (PoolLevels), and is narrower than the
// unpaired interval of the same rounds, which carries the drift.
func TestPairedLogCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 7))
	const trials = 1000
	const truth = 0.85
	hit, pooledHit, narrower, levels := 0, 0, 0, 0
	for range trials {
		var as, bs []map[int]float64
		var logs [][]float64
		for range 5 {
			sd := math.Exp(math.Log(0.02) + r.Float64()*(math.Log(0.08)-math.Log(0.02)))
			a, b := pairRounds(r, 1000*truth, 1000, 3, 0.15, sd)
			as, bs = append(as, a), append(bs, b)
			logs = append(logs, PairedLogRatios(a, b))
		}
		n := PairedNoise(logs, 0)
		var ls []LogRatio
		var pools []Pool
		for i := range as {
			var pa, pb Pool
			pa.Add(Logs(values(as[i])))
			pb.Add(Logs(values(bs[i])))
			pools = append(pools, pa, pb)
		}
		un := Noise{Prior: Squeeze(pools)}
		for i := range as {
			l, ok := PairedLog(as[i], bs[i], n)
			if !ok {
				t.Fatal("no paired ratio")
			}
			ls = append(ls, l)
			iv := l.Interval()
			levels++
			if iv.Contains(truth) {
				hit++
			}
			if u, ok := UnpairedLog(values(as[i]), values(bs[i]), un, un); ok && iv.HalfWidth() < u.Interval().HalfWidth() {
				narrower++
			}
		}
		p, ok := PoolLevels(ls)
		if !ok {
			t.Fatal("no pooled ratio")
		}
		if p.Interval().Contains(truth) {
			pooledHit++
		}
	}
	per, pooled := float64(hit)/float64(levels), float64(pooledHit)/trials
	t.Logf("paired: a level's interval holds the truth in %.1f %%, the pooled one in %.1f %%; narrower than unpaired at %d of %d levels", per*100, pooled*100, narrower, levels)
	for name, share := range map[string]float64{"per level": per, "pooled": pooled} {
		if share < 0.93 || share > 0.97 {
			t.Errorf("%s: covered %.1f %%; want 93-97 %%", name, share*100)
		}
	}
	if float64(narrower) < 0.9*float64(levels) {
		t.Errorf("narrower than unpaired at %d of %d levels; want at least 90 %%", narrower, levels)
	}
	if _, ok := PairedLog(map[int]float64{1: 1}, map[int]float64{1: 2}, Noise{}); ok {
		t.Errorf("one shared round: ok; want none")
	}
}
