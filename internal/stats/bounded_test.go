package stats

import (
	"math"
	"testing"
)

func TestFractionMedian(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    []float64
		want func(Interval) bool
	}{
		{"near 1 stays under 1", []float64{0.98, 0.87, 0.99}, func(iv Interval) bool { return iv.High <= 1 && iv.Low < 0.98 && iv.Center == 0.98 }},
		{"over 1 is taken as 1", []float64{1.02, 1.01, 0.99}, func(iv Interval) bool { return iv.Center == 1 && iv.High <= 1 }},
		{"near 0 stays over 0", []float64{0.01, 0.2, 0.02}, func(iv Interval) bool { return iv.Low >= 0 && iv.High > 0.02 }},
		{"one value: its point", []float64{0.5}, func(iv Interval) bool { return iv.Low == 0.5 && iv.High == 0.5 && iv.N == 1 }},
		{"NaN left out", []float64{0.5, math.NaN(), 0.6}, func(iv Interval) bool { return iv.N == 2 }},
		{"none", nil, func(iv Interval) bool { return iv.N == 0 }},
	} {
		if iv := FractionMedian(tc.v); !tc.want(iv) {
			t.Errorf("%s: FractionMedian(%v) = %+v", tc.name, tc.v, iv)
		}
	}
}

// FuzzFractionMedian: whatever the values, the interval stays inside [0, 1]
// and holds its centre.
func FuzzFractionMedian(f *testing.F) {
	f.Add(0.98, 0.87, 1.12, 0.5)
	f.Add(0.0, 1.0, 0.0, 1.0)
	f.Add(-3.0, 7.0, math.Inf(1), math.NaN())
	f.Add(1e-300, 1-1e-16, 0.5, 0.5)
	f.Fuzz(func(t *testing.T, a, b, c, d float64) {
		for n := 1; n <= 4; n++ {
			v := []float64{a, b, c, d}[:n]
			iv := FractionMedian(v)
			if iv.N == 0 {
				continue
			}
			if !(iv.Low >= 0 && iv.Low <= iv.Center && iv.Center <= iv.High && iv.High <= 1) {
				t.Fatalf("FractionMedian(%v) = %+v; want 0 <= low <= centre <= high <= 1", v, iv)
			}
		}
	})
}
