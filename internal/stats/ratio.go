package stats

import (
	"math"
	"slices"
)

// Verdicts of a comparison at 95 %: its interval lies wholly on one side of "the
// same", or straddles it.
const (
	Faster            = "faster"
	Slower            = "slower"
	Indistinguishable = "indistinguishable"
)

// Ratio is one figure of A over the same figure of B, with its 95 % interval.
// Paired says the interval comes from per-round ratios (A and B ran in the same
// rounds, close together in time, so the machine's slow drift cancels); unpaired
// intervals add both cells' noise and the run's shift between them.
type Ratio struct {
	Interval
	Paired bool
	// Rounds is the number of rounds (paired) or the smaller cell's rounds.
	Rounds int
}

// Verdict is faster when A beats B beyond the interval, slower when B beats A,
// indistinguishable when the interval holds 1. higherBetter says which way is
// better for the figure (req/s: higher; CPU per call, latency: lower).
func (r Ratio) Verdict(higherBetter bool) string {
	return VerdictOf(r.Interval, 1, higherBetter)
}

// VerdictOf judges interval iv against a reference value: above it is faster when
// higherBetter (slower otherwise), below it the opposite, and an interval that
// holds ref (or is not valid) is indistinguishable.
func VerdictOf(iv Interval, ref float64, higherBetter bool) string {
	switch {
	case !iv.Valid() || iv.Contains(ref):
		return Indistinguishable
	case (iv.Low > ref) == higherBetter:
		return Faster
	}
	return Slower
}

// PairedRatio is the median of the per-round ratios a[r]/b[r] over the rounds
// both ran (by round index), with its 95 % interval. The ratios' variance is d's own
// shrunk towards d.Pool (the run's pooled variance of per-round log ratios),
// so the interval is t * sqrt(f(n) * s^2 / n) wide on the log scale: within one
// run, a whole-run shift cancels in the ratio. Fewer than two shared rounds
// gives an unpaired ratio (UnpairedRatio).
func (d Noise) PairedRatio(a, b map[int]float64, na, nb Noise) Ratio {
	logs := PairedLogRatios(a, b)
	if len(logs) < 2 {
		return UnpairedRatio(values(a), values(b), na, nb)
	}
	center := math.Exp(Median(logs))
	s2, df := d.cellVar(logs)
	k := float64(len(logs))
	hw := halfWidth(part{medianFactor(len(logs)) * s2 / k, df})
	return Ratio{Interval: around(center, hw, len(logs)), Paired: true, Rounds: len(logs)}
}

// PairedLogRatios are log(a[r]/b[r]) over the rounds r both have (positive values
// only), in round order.
func PairedLogRatios(a, b map[int]float64) []float64 {
	var rounds []int
	for r := range a {
		if _, ok := b[r]; ok {
			rounds = append(rounds, r)
		}
	}
	slices.Sort(rounds)
	var out []float64
	for _, r := range rounds {
		if a[r] > 0 && b[r] > 0 {
			out = append(out, math.Log(a[r]/b[r]))
		}
	}
	return out
}

// forkPart is the variance a run's median carries from its forks' shifts: the
// spread between forks over the forks it averages (0 without forks).
func (b Between) forkPart() part {
	if b.Forks < 2 || b.DF == 0 {
		return part{}
	}
	return part{b.Var / float64(b.Forks), float64(b.DF)}
}

// UnpairedRatio is median(a)/median(b) for cells that did not share rounds (two
// server groups, minutes apart): its interval adds both medians' in-run variances
// and the run's shift between them (na.RunShift: the groups ran at different
// times, and a run's stretch of minutes moves as a whole).
func UnpairedRatio(a, b []float64, na, nb Noise) Ratio {
	la, lb := Logs(a), Logs(b)
	if len(la) == 0 || len(lb) == 0 {
		return Ratio{}
	}
	va, dfa := na.cellVar(la)
	vb, dfb := nb.cellVar(lb)
	if math.IsNaN(va) || math.IsNaN(vb) {
		return Ratio{}
	}
	center := Median(a) / Median(b)
	// A cell of a group that forks carries its forks' shifts (Between).
	hw := halfWidth(part{medianFactor(len(la)) * va / float64(len(la)), dfa}, part{medianFactor(len(lb)) * vb / float64(len(lb)), dfb},
		na.shift(), na.Between.forkPart(), nb.Between.forkPart())
	return Ratio{Interval: around(center, hw, min(len(la), len(lb))), Rounds: min(len(la), len(lb))}
}

func values(m map[int]float64) []float64 {
	out := make([]float64, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// PairedRounds is A's figure over B's when the two ran side by side in the same
// rounds (a[i] and b[i] in round i) and no other pair shares their noise:
// Noise.PairedRatio with an empty pool, so the centre is the median of the rounds'
// ratios and the interval a t interval on the rounds' own log ratios, t at n-1
// degrees of freedom times sqrt(f(n) s^2 / n). Rounds where either value is not
// positive and finite are left out; fewer than two rounds left give no interval
// (the zero Ratio).
func PairedRounds(a, b []float64) Ratio {
	am, bm := map[int]float64{}, map[int]float64{}
	for i := range min(len(a), len(b)) {
		if positiveFinite(a[i]) && positiveFinite(b[i]) {
			am[i], bm[i] = a[i], b[i]
		}
	}
	if len(am) < 2 {
		return Ratio{}
	}
	return Noise{}.PairedRatio(am, bm, Noise{}, Noise{})
}

// positiveFinite says x is positive and finite: a figure a log ratio can be taken of.
func positiveFinite(x float64) bool { return x > 0 && !math.IsInf(x, 0) && !math.IsNaN(x) }
