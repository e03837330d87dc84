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
