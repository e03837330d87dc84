package stats

import "math"

// How much the cells of a run share their noise, and how far the whole run
// moves against a rerun, both from the run's own data (docs/method.md,
// section 11).

// Prior is what a run's cells say about one cell's variance before its own
// rounds are read: the cells' common variance Var, and DF, the degrees of freedom
// it is worth beside a cell's own (+Inf: every cell has the same variance, so a
// cell's own spread adds nothing; small: the cells' variances differ, and a
// cell's own counts for more). Squeeze estimates it.
type Prior struct {
	Var, DF float64
	// PoolDF is the degrees of freedom the prior was estimated from (the
	// cells' own, summed): however much the cells share, a cell's variance is
	// never known better than that.
	PoolDF int
}

// Squeeze is the empirical-Bayes prior of a set of cells' variances (Smyth 2004,
// limma's squeezeVar): each cell's own variance s² on d degrees of freedom
// (pools) is taken as its true variance times chi²(d)/d, the true variances as
// scaled inverse chi² around Var on DF degrees of freedom. The moments of log s²
// give both: the spread of the cells' log s² beyond what chi² alone puts there is
// trigamma(DF/2). Cells with no degrees of freedom, or a variance of 0, add
// nothing; fewer than 3 cells give the zero Prior (no pooling to speak of).
func Squeeze(pools []Pool) Prior {
	var z, tri []float64
	df := 0
	for _, p := range pools {
		v := p.Var()
		if p.DF == 0 || !(v > 0) {
			continue
		}
		d := float64(p.DF) / 2
		z = append(z, math.Log(v)-digamma(d)+math.Log(d))
		df += p.DF
		tri = append(tri, trigamma(d))
	}
	if len(z) < 3 {
		return Prior{}
	}
	zbar, sd := MeanSD(z)
	excess := sd*sd - Mean(tri)
	if excess <= 0 {
		return Prior{Var: math.Exp(zbar), DF: math.Inf(1), PoolDF: df}
	}
	d0 := 2 * trigammaInverse(excess)
	return Prior{Var: math.Exp(zbar + digamma(d0/2) - math.Log(d0/2)), DF: d0, PoolDF: df}
}

// Moderated is a cell's variance given its own (SS over DF), shrunk towards the
// prior: (own.SS + DF·Var) / (own.DF + DF), on own.DF + DF degrees of freedom,
// at most own.DF + PoolDF (the prior is itself an estimate; PoolDF 0: no cap).
func (p Prior) Moderated(own Pool) (v, df float64) {
	df = float64(own.DF) + p.DF
	if p.PoolDF > 0 {
		df = min(df, float64(own.DF+p.PoolDF))
	}
	if math.IsInf(p.DF, 1) {
		return p.Var, df
	}
	return (own.SS + p.DF*p.Var) / (float64(own.DF) + p.DF), df
}

// DriftSegments is the segments Drift cuts a run's probe into: 6 gives 5
// neighbouring pairs a probe (10 degrees of freedom over the client's and the
// server's); on the reference pair 3 segments gave 4 degrees and 9 segments
// minutes too short to hold 3 rounds of a group.
const DriftSegments = 6

// Drift is a run's shift against a back-to-back rerun, from a machine probe timed
// all along the run: each series is one probe's log times in the order they were
// taken (the client's core, the server's). Cut into segments of equal count, the
// level moves between neighbouring segments; taking the machine's speed as a
// random walk over the run (the reference pair's probes: a level that wanders
// ±2-3 % minute to minute and 5 % from one run to the next), the change over a
// whole run, which is what separates a cell from its rerun, has variance
// 1.5 · segments · E[(mean_j+1 - mean_j)²] (a random walk's averages over
// neighbouring windows differ by 2/3 of its change over one), less what the
// probe's own noise puts into the segments' means. SD is its square root, DF the
// neighbouring pairs behind it; ok is false when a series has fewer than two
// values a segment.
func Drift(series [][]float64, segments int) (sd float64, df int, ok bool) {
	var sum float64
	for _, s := range series {
		n := len(s)
		if segments < 2 || n < 2*segments {
			return 0, 0, false
		}
		means := make([]float64, segments)
		var noise Pool
		for j := range segments {
			seg := s[j*n/segments : (j+1)*n/segments]
			means[j] = Mean(seg)
			noise.Add(seg)
		}
		w := noise.Var() / (float64(n) / float64(segments)) // one segment mean's own variance
		for j := 1; j < segments; j++ {
			d := means[j] - means[j-1]
			sum += d*d - 2*w
			df++
		}
	}
	if df == 0 {
		return 0, 0, false
	}
	return math.Sqrt(max(0, 1.5*float64(segments)*sum/float64(df))), df, true
}

// digamma is ψ(x) for x > 0: the recurrence up to 6, then the asymptotic series.
func digamma(x float64) float64 {
	r := 0.0
	for x < 6 {
		r -= 1 / x
		x++
	}
	f := 1 / (x * x)
	return r + math.Log(x) - 0.5/x - f*(1.0/12-f*(1.0/120-f*(1.0/252-f*(1.0/240-f/132))))
}

// trigamma is ψ'(x) for x > 0: the recurrence up to 6, then the asymptotic series.
func trigamma(x float64) float64 {
	r := 0.0
	for x < 6 {
		r += 1 / (x * x)
		x++
	}
	f := 1 / (x * x)
	return r + 1/x + f/2 + f/x*(1.0/6-f*(1.0/30-f*(1.0/42-f/30)))
}

// tetragamma is ψ”(x) for x > 0.
func tetragamma(x float64) float64 {
	r := 0.0
	for x < 6 {
		r -= 2 / (x * x * x)
		x++
	}
	f := 1 / (x * x)
	return r - f - f/x - f*f*(0.5-f*(1.0/6-f*(1.0/6-f*0.3)))
}

// trigammaInverse is x with trigamma(x) = y (Newton's method on 1/trigamma, as
// limma does).
func trigammaInverse(y float64) float64 {
	switch {
	case y > 1e7:
		return 1 / math.Sqrt(y)
	case y < 1e-6:
		return 1 / y
	}
	x := 0.5 + 1/y
	for range 50 {
		t := trigamma(x)
		d := t * (1 - t/y) / tetragamma(x)
		x += d
		if -d/x < 1e-8 {
			break
		}
	}
	return x
}
