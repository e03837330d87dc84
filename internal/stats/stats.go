package stats

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Stat is a figure over a cell's successful repeats.
type Stat struct {
	Median, Min, Max float64
	N                int
}

// Of is the median, min and max of v (NaN for an empty v).
func Of(v []float64) Stat {
	if len(v) == 0 {
		return Stat{Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return Stat{Median: Median(s), Min: s[0], Max: s[len(s)-1], N: len(s)}
}

// Spread is (max-min)/median of v: NaN for fewer than two values or a median
// that is not positive.
func Spread(v []float64) float64 {
	st := Of(v)
	if st.N < 2 || st.Median <= 0 {
		return math.NaN()
	}
	return (st.Max - st.Min) / st.Median
}

// Mean of v (NaN for an empty v).
func Mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// MeanSD is v's mean and sample standard deviation (0 for fewer than 2 values).
func MeanSD(v []float64) (mean, sd float64) {
	mean = Mean(v)
	if len(v) < 2 {
		return mean, 0
	}
	for _, x := range v {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(v)-1))
}

// ShareWithin resamples two runs of n values each from deviations (logs), B
// offset by shift and each run's offset drawn with sd runSD, trials times, and
// returns the share of trials whose medians lie within tol of each other.
func ShareWithin(r *rand.Rand, deviations []float64, shift, runSD float64, n, trials int, tol float64) float64 {
	a, b := make([]float64, n), make([]float64, n)
	ok := 0
	for range trials {
		for j := range n {
			a[j] = deviations[r.IntN(len(deviations))]
			b[j] = deviations[r.IntN(len(deviations))]
		}
		d := Median(b) - Median(a) + shift + runSD*(r.NormFloat64()-r.NormFloat64())
		if math.Abs(math.Expm1(d)) <= tol {
			ok++
		}
	}
	return float64(ok) / float64(trials)
}
