// Package stats holds the statistics behind rpcbed's figures: medians, spreads and
// the 95 % intervals every timed figure and ratio carries (docs/method.md,
// section 11).
//
// Timed figures are modelled on a log scale: a round's value is the cell's true
// value times a noise factor, so a deviation of 0.05 is 5 % whatever the figure's
// size, and ratios are differences of logs.
package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	mstats "github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

// Confidence is the level of every interval rpcbed prints.
const Confidence = 0.95

// Interval is a figure with its 95 % interval: Low <= Center <= High, all in the
// figure's unit. N is the number of rounds behind it. The zero value (N 0) is no
// interval.
type Interval struct {
	Center, Low, High float64
	N                 int
}

// Valid says the interval is finite and positive (a figure with rounds).
func (iv Interval) Valid() bool {
	return iv.N > 0 && iv.Center > 0 && iv.Low > 0 && !math.IsInf(iv.High, 0) && !math.IsNaN(iv.High)
}

// Contains says x lies inside [Low, High].
func (iv Interval) Contains(x float64) bool { return iv.Valid() && x >= iv.Low && x <= iv.High }

// HalfWidth is the interval's half-width relative to its center, on the log scale
// it was built on (0.05: the figure is known within about ±5 %); NaN when invalid.
func (iv Interval) HalfWidth() float64 {
	if !iv.Valid() {
		return math.NaN()
	}
	return (math.Log(iv.High) - math.Log(iv.Low)) / 2
}

// MedianCI is the order-statistics interval of v's median at the given confidence,
// as benchstat computes it (golang.org/x/perf/benchmath, AssumeNothing): it
// assumes nothing of the noise's shape, but needs 6 values for a finite 95 %
// interval (Low 0 or High +Inf below that; ok is false then).
func MedianCI(v []float64, confidence float64) (iv Interval, ok bool) {
	if len(v) == 0 {
		return Interval{}, false
	}
	th := benchmath.DefaultThresholds
	s := benchmath.AssumeNothing.Summary(benchmath.NewSample(v, &th), confidence)
	iv = Interval{Center: s.Center, Low: s.Lo, High: s.Hi, N: len(v)}
	return iv, !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0)
}

// BootstrapMedian is the percentile bootstrap interval of v's median: resamples
// of the rounds with replacement, seeded, so the same values give the same
// interval. With few rounds it is too narrow (docs/method.md, section 11:
// 3 rounds cover 73 % at a nominal 95 %), which is why rpcbed's published interval
// pools the noise over the run instead (Noise.Median).
func BootstrapMedian(v []float64, confidence float64, resamples int, seed uint64) Interval {
	if len(v) == 0 || resamples < 1 {
		return Interval{}
	}
	r := rand.New(rand.NewPCG(seed, 0x26))
	meds := make([]float64, resamples)
	buf := make([]float64, len(v))
	for i := range meds {
		for j := range buf {
			buf[j] = v[r.IntN(len(v))]
		}
		meds[i] = Median(buf)
	}
	slices.Sort(meds)
	a := (1 - confidence) / 2
	lo := meds[int(math.Floor(a*float64(resamples-1)))]
	hi := meds[int(math.Ceil((1-a)*float64(resamples-1)))]
	return Interval{Center: Median(v), Low: lo, High: hi, N: len(v)}
}

// Median of v (NaN for an empty v); v is not changed.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

// Logs is the natural log of every positive, finite value of v (others left out).
func Logs(v []float64) []float64 {
	out := make([]float64, 0, len(v))
	for _, x := range v {
		if positiveFinite(x) {
			out = append(out, math.Log(x))
		}
	}
	return out
}

// Pool accumulates the squared deviations of values from their own group's mean,
// over many groups (a run's cells): Var is the pooled variance, DF its degrees of
// freedom (the values less one per group).
type Pool struct {
	SS float64
	DF int
}

// Add puts one group's values (logs) into the pool; a group of fewer than two
// adds nothing.
func (p *Pool) Add(v []float64) {
	if len(v) < 2 {
		return
	}
	m := Mean(v)
	for _, x := range v {
		p.SS += (x - m) * (x - m)
	}
	p.DF += len(v) - 1
}

// Var is the pooled variance (NaN for an empty pool).
func (p Pool) Var() float64 {
	if p.DF == 0 {
		return math.NaN()
	}
	return p.SS / float64(p.DF)
}

// PriorDF is the weight, in degrees of freedom, the run's pooled variance gets
// beside a cell's own (Noise.cellVar): a cell's 3 rounds give it 2 degrees of its
// own, so its own spread counts a third and the run's two thirds. A cell noisier
// than the run still widens its interval; a cell that was quiet by luck does not
// get an interval that its 3 rounds cannot support.
const PriorDF = 4

// Noise is the noise model of one figure over a run: the pooled within-cell
// variance of its log values (Pool), how much the cells share it (Prior, from
// Squeeze; zero: the pool counts PriorDF beside a cell's own), and the standard
// deviation of a whole run's shift against a rerun (RunShift, log scale),
// measured from the run's own probe (Drift) on ShiftDF degrees of freedom (0: a
// value taken as known; docs/method.md, section 11).
type Noise struct {
	Pool     Pool
	Prior    Prior
	RunShift float64
	ShiftDF  int
	// Between is the spread between a server's starts (forks), for the cells of
	// a group that forks; zero elsewhere.
	Between Between
	// Conf is the intervals' confidence (0: Confidence); LooksLevel's where
	// a claim is looked at again after added rounds.
	Conf float64
}

// Between is the variance (log scale) of a fork's shift: how far one start of a
// JVM's steady state lies from the next beyond its rounds' noise, pooled over a
// group's cells (BetweenForks), with its degrees of freedom and the forks each
// run makes.
type Between struct {
	Var   float64
	DF    int
	Forks int
}

// BetweenForks estimates the spread between forks from a group's cells, each
// given as its forks' logs: per cell, the variance of its forks' means less what
// the rounds' own noise puts there (the within-fork variance pooled over the
// cells, over each fork's rounds), averaged over the cells, floored at 0. A cell
// with fewer than two forks adds nothing; forks is the count a run makes. One
// start serves all the group's cells, so part of a fork's shift is common to
// them: the degrees of freedom are those of the common and the cells' own parts
// (sharedDF), not one per cell and fork.
func BetweenForks(cells [][][]float64, forks int) Between {
	var within Pool
	var ss, noise float64
	df := 0
	for _, fs := range cells {
		for _, f := range fs {
			within.Add(f)
		}
	}
	wv := within.Var()
	if math.IsNaN(wv) {
		wv = 0
	}
	for _, fs := range cells {
		var means []float64
		inv := 0.0
		for _, f := range fs {
			if len(f) > 0 {
				means = append(means, Mean(f))
				inv += 1 / float64(len(f))
			}
		}
		if len(means) < 2 {
			continue
		}
		m := Mean(means)
		for _, x := range means {
			ss += (x - m) * (x - m)
		}
		k := len(means) - 1
		df += k
		// E[sum of squares of the fork means] = (F-1) (sigma_b^2 + sigma_w^2 mean(1/n)).
		noise += float64(k) * wv * inv / float64(len(means))
	}
	if df == 0 {
		return Between{}
	}
	return Between{Var: max(0, (ss-noise)/float64(df)), DF: sharedDF(cells, forks, df, wv), Forks: forks}
}

// sharedDF is the degrees of freedom of BetweenForks's estimate, df counted one
// per cell and fork, when a start shifts all its cells alike. Over the cells
// that ran every fork (n of them, F forks), a cell's fork mean less its own
// mean splits into the fork's mean over the cells (common: a mean square MSc on
// F-1 degrees) and the rest (the cells' own: MSo on (n-1)(F-1)); the estimate
// is MSc/n + (1-1/n) MSo less the rounds' noise in a fork's mean (wv, the
// within-fork variance, over its rounds: taken as known), and Satterthwaite's
// degrees of such a sum are its square over Σ (a_i MS_i)²/df_i: about F-1 when
// the start's shift is all there is, up to n(F-1) when each cell's is its own.
// Scaled to the cells counted in df; df itself when fewer than two cells ran
// every fork.
func sharedDF(cells [][][]float64, forks, df int, wv float64) int {
	var devs [][]float64 // per full cell: its fork means less their mean
	var noise float64    // the rounds' noise in a fork's mean, summed over them
	for _, fs := range cells {
		if len(fs) != forks || slices.ContainsFunc(fs, func(f []float64) bool { return len(f) == 0 }) {
			continue
		}
		d := make([]float64, forks)
		for j, f := range fs {
			d[j] = Mean(f)
			noise += wv / float64(len(f)) / float64(forks)
		}
		m := Mean(d)
		for j := range d {
			d[j] -= m
		}
		devs = append(devs, d)
	}
	n := len(devs)
	if n < 2 || forks < 2 {
		return df
	}
	var ssc, sso float64
	for j := range forks {
		var c float64
		for _, d := range devs {
			c += d[j]
		}
		c /= float64(n)
		ssc += float64(n) * c * c
		for _, d := range devs {
			sso += (d[j] - c) * (d[j] - c)
		}
	}
	dfc, dfo := float64(forks-1), float64((n-1)*(forks-1))
	a, b := ssc/dfc/float64(n), (1-1/float64(n))*sso/dfo
	v := a + b - noise/float64(n)
	if v <= 0 {
		return df
	}
	eff := v * v / (a*a/dfc + b*b/dfo)
	return max(1, min(df, int(eff*float64(df)/float64(n*(forks-1)))))
}

// cellVar is a cell's variance, its own shrunk towards the run's (Prior, or the
// pool at PriorDF), and the degrees of freedom behind it (+Inf: known).
func (n Noise) cellVar(logs []float64) (v, df float64) {
	own := Pool{}
	own.Add(logs)
	return n.cellVarOf(own)
}

// cellVarOf is cellVar of a cell whose own deviations are own (a forked cell's:
// each from its fork's mean).
func (n Noise) cellVarOf(own Pool) (v, df float64) {
	if n.Prior.DF > 0 {
		return n.Prior.Moderated(own)
	}
	pv := n.Pool.Var()
	switch {
	case math.IsNaN(pv) && own.DF == 0:
		return math.NaN(), 0
	case math.IsNaN(pv):
		return own.Var(), float64(own.DF)
	}
	prior := min(PriorDF, n.Pool.DF)
	v = (own.SS + float64(prior)*pv) / float64(own.DF+prior)
	// The estimate's degrees of freedom, were the pool's variance exact and the
	// cells alike: 2 E[v]^2 / Var[v] = (own+prior)^2 / own; at most all the run's.
	d := own.DF + n.Pool.DF
	if own.DF > 0 {
		d = min(d, (own.DF+prior)*(own.DF+prior)/own.DF)
	}
	return v, float64(d)
}

// medianFactor is the variance of the median of n normal values over the
// variance of their mean (1 for n <= 2, about 1.35 at 3, pi/2 as n grows):
// simulated, 100000 draws each.
func medianFactor(n int) float64 {
	f := []float64{1, 1, 1, 1.353, 1.199, 1.438, 1.287, 1.479, 1.354, 1.488, 1.382, 1.516}
	if n < len(f) {
		return f[n]
	}
	return math.Pi / 2
}

// TQuantile is Student's t quantile at p with df degrees of freedom (the
// normal's for df <= 0 or +Inf).
func TQuantile(p, df float64) float64 { return tQuantile(p, df) }

// tQuantile is Student's t quantile at p with df degrees of freedom (the normal's
// for df <= 0 or +Inf: a known variance).
func tQuantile(p float64, df float64) float64 {
	if math.IsNaN(df) || math.IsNaN(p) {
		return math.NaN() // a variance that is not a number (a zero figure's log): no interval, no panic
	}
	if df <= 0 || math.IsInf(df, 1) || df > 1e6 {
		df = math.Inf(1)
	}
	k := [2]float64{p, df}
	if q, ok := tQuantiles.Load(k); ok {
		return q.(float64)
	}
	var q float64
	if math.IsInf(df, 1) {
		q = mstats.InvCDF(mstats.StdNormal)(p)
	} else {
		q = mstats.InvCDF(mstats.TDist{V: df})(p)
	}
	tQuantiles.Store(k, q)
	return q
}

// tQuantiles keeps the quantiles tQuantile found: its inverse is a bisection
// over t's CDF, and a judgement asks for the same few (a precision loop's
// every pass judges every claim again).
var tQuantiles sync.Map

// part is one variance a half-width adds up, with the degrees of freedom of its
// estimate (0 or +Inf: known).
type part struct {
	v, df float64
}

// halfWidth is the 95 % half-width of a sum of estimated variances: t at the
// Welch-Satterthwaite degrees of freedom of the sum times its square root.
func halfWidth(parts ...part) float64 { return halfWidthAt(Confidence, parts...) }

// halfWidthAt is halfWidth at confidence conf (0: Confidence).
func halfWidthAt(conf float64, parts ...part) float64 {
	if conf <= 0 || conf >= 1 {
		conf = Confidence
	}
	var sum float64
	for _, p := range parts {
		sum += p.v
	}
	return tQuantile(1-(1-conf)/2, wsDF(parts...)) * math.Sqrt(sum)
}

// LooksLevel is the confidence of each of looks added looks at a claim that
// stops once decided: Bonferroni over them, so that a claim with no
// difference is declared one at most 1-Confidence of the time over all the
// added looks (on top of the first look's own 1-Confidence).
func LooksLevel(looks int) float64 {
	if looks <= 1 {
		return Confidence
	}
	return 1 - (1-Confidence)/float64(looks)
}

// shift is the run shift's part of a rerun's half-width.
func (n Noise) shift() part {
	return part{n.RunShift * n.RunShift, float64(n.ShiftDF)}
}

// Median is the interval where a rerun's median of this cell will land, at 95 %:
// centred on this run's median of v, its half-width on the log scale
// t * sqrt(2 * f(n) * s^2 / n + RunShift^2), where s^2 is the cell's variance
// (cellVar), f(n) the median's variance factor, 2 for the two runs' medians each
// carrying the noise, RunShift the whole run's shift, and t at the two parts'
// Welch-Satterthwaite degrees of freedom. RunShift 0 with the 2 left out is the
// interval of this run's median alone (InRun).
func (n Noise) Median(v []float64) Interval {
	return n.interval(v, 2, true)
}

// InRun is the 95 % interval of this run's median of v alone: where the median
// of many rounds on this machine, at this time, lies. It is what more rounds
// shrink (Spec.Precision); a rerun needs Median.
func (n Noise) InRun(v []float64) Interval {
	return n.interval(v, 1, false)
}

func (n Noise) interval(v []float64, runs float64, rerun bool) Interval {
	l := Logs(v)
	if len(l) == 0 {
		return Interval{}
	}
	med := Median(v)
	s2, df := n.cellVar(l)
	if math.IsNaN(s2) {
		if !rerun || n.RunShift == 0 {
			return Interval{}
		}
		s2, df = 0, 0
	}
	parts := []part{{runs * medianFactor(len(l)) * s2 / float64(len(l)), df}}
	if rerun {
		parts = append(parts, n.shift())
	}
	return around(med, halfWidthAt(n.Conf, parts...), len(l))
}

func around(center, hw float64, n int) Interval {
	return Interval{Center: center, Low: center * math.Exp(-hw), High: center * math.Exp(hw), N: n}
}

// MedianForks is Median for a cell of a group that forks, given its forks' values:
// where a rerun's median, over as many forks of its own, will land. The rounds'
// noise is each fork's own (cellVarOf); the forks add 2 * Between.Var / Forks
// (both runs' medians carry their forks' shifts), on degrees of freedom that
// Welch-Satterthwaite combines. Without a between-fork estimate it is Median of
// the values.
func (n Noise) MedianForks(forks [][]float64) Interval {
	var all []float64
	own := Pool{}
	for _, f := range forks {
		all = append(all, f...)
		own.Add(Logs(f))
	}
	if n.Between.Forks < 2 || n.Between.DF == 0 {
		return n.Median(all)
	}
	l := Logs(all)
	if len(l) == 0 {
		return Interval{}
	}
	s2, df := n.cellVarOf(own)
	if math.IsNaN(s2) {
		s2, df = 0, 0
	}
	k := float64(len(l))
	hw := halfWidth(part{2 * medianFactor(len(l)) * s2 / k, df},
		part{2 * n.Between.Var / float64(n.Between.Forks), float64(n.Between.DF)}, n.shift())
	return around(Median(all), hw, len(l))
}
