package stats

import "math"

// fractionEps keeps a fraction of exactly 0 or 1 finite on the logit scale.
const fractionEps = 1e-4

// FractionMedian is the 95 % interval of the median of fractions v (busy
// fractions of a core, shares, probabilities), which never leaves [0, 1]: the
// values clamped to [0, 1] (a busy fraction a hair over 1 is the window's
// edges, not a core busier than itself), the interval built on the logit scale
// log(p / (1 - p)), where a fraction's noise is about symmetric away from its
// bounds, and mapped back. Its half-width there is t · sqrt(f(n) s² / n) on the
// values' own spread (n - 1 degrees of freedom), as InRun with no pool. NaN,
// infinite and missing values are left out; one value gives its point.
func FractionMedian(v []float64) Interval { return FractionMedianAt(v, Confidence) }

// FractionMedianAt is FractionMedian at confidence conf (0: Confidence).
func FractionMedianAt(v []float64, conf float64) Interval {
	var c, l []float64
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		x = min(1, max(0, x))
		c = append(c, x)
		p := min(1-fractionEps, max(fractionEps, x))
		l = append(l, math.Log(p/(1-p)))
	}
	if len(c) == 0 {
		return Interval{}
	}
	med := Median(c)
	iv := Interval{Center: med, Low: med, High: med, N: len(c)}
	if len(l) < 2 {
		return iv
	}
	var own Pool
	own.Add(l)
	hw := halfWidthAt(conf, part{medianFactor(len(l)) * own.Var() / float64(len(l)), float64(own.DF)})
	m := Median(l)
	iv.Low, iv.High = min(med, logistic(m-hw)), max(med, logistic(m+hw))
	return iv
}

func logistic(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// ClusterShare is the share of members held over all, pooled over clusters
// (held[i] of all[i] in cluster i), with its 95 % interval, for members of one
// cluster that share a cause: the cells of one pair of runs share the run's
// shift, so a pair's cells land inside or outside their intervals together, and
// a pair is one cluster, not 66 independent draws. The share's variance is the
// ratio estimator's over the clusters, k/(k-1) · Σ(held_i - p · all_i)² / N²,
// never below the binomial's of N independent members; N over its design effect
// (that variance over the binomial's) is what the members are worth, and the
// interval is Wilson's score interval on that worth, with t at k-1 degrees of
// freedom for z: it never leaves [0, 1] and stays honest at a share of 1.
// Measured on synthetic clusters (TestClusterShareCoverage): it holds the true
// share in 93-99 % at 4-12 clusters; it leans wide with few clusters that
// barely scatter (t at k-1 for a variance near the binomial's). Clusters
// without members are left out; one cluster gives its share as a point (N = 1:
// one cluster cannot say how far clusters scatter); none gives N = 0.
func ClusterShare(held, all []int) Interval {
	var hs, ns []float64 // the clusters with members: held clamped to [0, all]
	var h, n float64
	for i := range min(len(held), len(all)) {
		if all[i] > 0 {
			hs, ns = append(hs, float64(min(max(held[i], 0), all[i]))), append(ns, float64(all[i]))
			h, n = h+hs[len(hs)-1], n+float64(all[i])
		}
	}
	k := len(ns)
	if k == 0 {
		return Interval{}
	}
	p := h / n
	iv := Interval{Center: p, Low: p, High: p, N: k}
	if k < 2 {
		return iv
	}
	var ss float64
	for i := range k {
		d := hs[i] - p*ns[i]
		ss += d * d
	}
	pt := (h + 0.5) / (n + 1)
	v := max(float64(k)/float64(k-1)*ss/(n*n), pt*(1-pt)/n)
	ne := pt * (1 - pt) / v // the members' worth: N over the design effect
	z := tQuantile(1-(1-Confidence)/2, float64(k-1))
	c := (p + z*z/(2*ne)) / (1 + z*z/ne)
	hw := z / (1 + z*z/ne) * math.Sqrt(p*(1-p)/ne+z*z/(4*ne*ne))
	iv.Low, iv.High = min(p, max(0, c-hw)), max(p, min(1, c+hw))
	return iv
}
