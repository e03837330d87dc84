package stats

import (
	"math"

	"github.com/aclements/go-moremath/mathx"
	mstats "github.com/aclements/go-moremath/stats"
)

// Scaled is one zero-mean draw and the standard deviation estimated for it:
// D the draw (two runs' distance), SD its estimated sd (a run shift), DF the
// degrees of freedom of that estimate (0: taken as known).
type Scaled struct {
	D, SD, DF float64
}

// SpreadRatio is how many of their estimated standard deviations zero-mean
// draws lay from 0, with its 95 % interval: κ = sqrt(Σ D² / Σ SD²), 1 when the
// estimates read the draws' spread right. Were every draw D_i normal with sd
// κ·σ_i and every SD_i² an unbiased estimate of σ_i² on DF_i degrees, κ̂²/κ²
// is about F-distributed: the numerator χ² on the draws' worth ν1 = (Σσ²)² /
// Σσ⁴ (n for equal sds), the denominator on the estimates' Welch-Satterthwaite
// degrees ν2 = (Σσ²)² / Σ(σ⁴/DF) (infinite when all are known), σ² taken as
// the estimates and σ⁴ as SD⁴ / (1 + 2/DF), its unbiased estimate. The
// interval is κ̂ / sqrt(F's quantiles at 97.5 and 2.5 %). Draws without a
// positive finite SD are left out; N is the draws used (none: N = 0; one draw
// gives its interval, wide).
func SpreadRatio(draws []Scaled) Interval {
	var dd, ss, s4, s4df float64
	n := 0
	known := true
	for _, x := range draws {
		v := x.SD * x.SD
		if !(v > 0) || math.IsInf(v, 0) || math.IsNaN(x.D) || math.IsInf(x.D*x.D, 0) {
			continue
		}
		dd, ss = dd+x.D*x.D, ss+v
		if x.DF > 0 && !math.IsInf(x.DF, 1) {
			v4 := v * v / (1 + 2/x.DF) // E[SD⁴] = σ⁴ (1 + 2/DF)
			s4, s4df = s4+v4, s4df+v4/x.DF
			known = false
		} else {
			s4 += v * v
		}
		n++
	}
	if n == 0 {
		return Interval{}
	}
	k := math.Sqrt(dd / ss)
	nu1, nu2 := min(float64(n), ss*ss/s4), math.Inf(1)
	if !(nu1 >= 1) { // sums past float64's range: the one draw's worth
		nu1 = 1
	}
	if !known && ss*ss/s4df <= 1e6 { // past a million degrees: known
		nu2 = max(1, ss*ss/s4df)
	}
	lo, hi := invF(nu1, nu2, 1-(1-Confidence)/2), invF(nu1, nu2, (1-Confidence)/2)
	return Interval{Center: k, Low: k / math.Sqrt(lo), High: k / math.Sqrt(hi), N: n}
}

// invF is the F distribution's quantile at p on d1 and d2 degrees of freedom.
func invF(d1, d2, p float64) float64 { return mstats.InvCDF(fDist{d1, d2})(p) }

// fDist is Fisher's F distribution on D1 and D2 degrees of freedom (D2
// infinite: χ² on D1 over D1).
type fDist struct{ D1, D2 float64 }

func (f fDist) CDF(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return math.NaN()
	case x <= 0:
		return 0
	case math.IsInf(x, 1):
		return 1
	case math.IsInf(f.D2, 1):
		return mathx.GammaInc(f.D1/2, f.D1*x/2)
	}
	return mathx.BetaInc(f.D1*x/(f.D1*x+f.D2), f.D1/2, f.D2/2)
}

func (f fDist) Bounds() (float64, float64) { return 0, 10 }
