package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFDist: the F quantiles SpreadRatio takes, against tabulated values.
func TestFDist(t *testing.T) {
	for _, tc := range []struct {
		d1, d2, p, want float64
	}{
		{5, 10, 0.975, 4.236},
		{5, 10, 0.025, 0.1510},
		{4, math.Inf(1), 0.975, 11.143 / 4},         // χ² on 4
		{4, math.Inf(1), 0.025, 0.4844 / 4},         // χ² on 4
		{12, 120, 0.975, 2.05},                      // tabulated to 3 digits
		{1, math.Inf(1), 0.95, 1.959964 * 1.959964}, // z² at 97.5 %
	} {
		got := invF(tc.d1, tc.d2, tc.p)
		if math.Abs(got-tc.want) > 0.003*tc.want+1e-4 {
			t.Errorf("F(%g, %g) at %g = %.4f, want %.4f", tc.d1, tc.d2, tc.p, got, tc.want)
		}
	}
}

// TestSpreadRatio: the ratio and the draws it leaves out.
func TestSpreadRatio(t *testing.T) {
	for _, tc := range []struct {
		name  string
		draws []Scaled
		want  float64
		n     int
	}{
		{"none", nil, 0, 0},
		{"no sd", []Scaled{{D: 0.05}, {D: 0.02, SD: math.NaN()}}, 0, 0},
		{"equal", []Scaled{{D: 0.05, SD: 0.05, DF: 10}, {D: -0.05, SD: 0.05, DF: 10}}, 1, 2},
		{"twice", []Scaled{{D: 0.10, SD: 0.05}, {D: 0.06, SD: 0.03}}, 2, 2},
		{"not a number left out", []Scaled{{D: math.NaN(), SD: 0.05}, {D: 0.03, SD: 0.03, DF: 4}}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			iv := SpreadRatio(tc.draws)
			if iv.N != tc.n {
				t.Fatalf("N = %d, want %d", iv.N, tc.n)
			}
			if tc.n == 0 {
				return
			}
			if math.Abs(iv.Center-tc.want) > 1e-9 {
				t.Errorf("ratio %.4f, want %.4f", iv.Center, tc.want)
			}
			if !(iv.Low > 0 && iv.Low < iv.Center && iv.High > iv.Center) || math.IsInf(iv.High, 0) {
				t.Errorf("interval [%.3f, %.3f] does not hold %.3f inside (0, Inf)", iv.Low, iv.High, iv.Center)
			}
		})
	}
}

// TestSpreadRatioCoverage: on synthetic pairs whose distances are normal with
// sd κ·σ and whose shifts estimate σ² on df degrees, the interval holds the
// true κ in 93-97 % of 3000 trials, from a few pairs to many, with sds that
// differ run to run as the machine's do.
func TestSpreadRatioCoverage(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pairs int
		kappa float64
		df    float64
	}{
		{"4 pairs, shift on 20 degrees", 4, 1, 20},
		{"6 pairs, 1.3 times the shift", 6, 1.3, 20},
		{"15 pairs", 15, 1, 20},
		{"6 pairs, shift on 4 degrees", 6, 0.6, 4},
		{"6 pairs, shift known", 6, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(38, uint64(tc.pairs)))
			const trials = 3000
			held := 0
			for range trials {
				draws := make([]Scaled, tc.pairs)
				for i := range draws {
					sigma := 0.02 + 0.06*r.Float64()
					est := sigma
					if tc.df > 0 {
						var chi float64
						for range int(tc.df) {
							z := r.NormFloat64()
							chi += z * z
						}
						est = sigma * math.Sqrt(chi/tc.df)
					}
					draws[i] = Scaled{D: tc.kappa * sigma * r.NormFloat64(), SD: est, DF: tc.df}
				}
				iv := SpreadRatio(draws)
				if tc.kappa >= iv.Low && tc.kappa <= iv.High {
					held++
				}
			}
			share := float64(held) / trials
			t.Logf("held the true ratio in %.1f %% of %d", 100*share, trials)
			if share < 0.93 || share > 0.97 {
				t.Errorf("held %.1f %%, want 93-97 %%", 100*share)
			}
		})
	}
}

// FuzzSpreadRatio: whatever the draws, the ratio is a non-negative number
// inside its interval, and draws without a usable sd are left out.
func FuzzSpreadRatio(f *testing.F) {
	f.Add(0.05, 0.05, 10.0, -0.1, 0.02, 0.0)
	f.Add(0.0, 0.0, 0.0, 1e300, 1e-300, 1e9)
	f.Add(math.NaN(), math.Inf(1), -3.0, 0.0, 0.03, math.Inf(1))
	f.Fuzz(func(t *testing.T, d1, s1, df1, d2, s2, df2 float64) {
		iv := SpreadRatio([]Scaled{{d1, s1, df1}, {d2, s2, df2}})
		if iv.N == 0 {
			return
		}
		if math.IsNaN(iv.Center) || iv.Center < 0 || !(iv.Low <= iv.Center) || !(iv.High >= iv.Center) || iv.Low < 0 {
			t.Errorf("draws (%g, %g, %g), (%g, %g, %g): %+v", d1, s1, df1, d2, s2, df2, iv)
		}
	})
}
