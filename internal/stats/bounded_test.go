package stats

import (
	"math"
	"math/rand/v2"
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

func TestClusterShare(t *testing.T) {
	for _, tc := range []struct {
		name      string
		held, all []int
		want      func(Interval) bool
	}{
		{"pooled share", []int{60, 64, 62}, []int{66, 66, 66}, func(iv Interval) bool {
			return iv.N == 3 && math.Abs(iv.Center-186.0/198) < 1e-12 && iv.Low < iv.Center && iv.High > iv.Center && iv.High <= 1
		}},
		{"all held stays at or under 1", []int{66, 66}, []int{66, 66}, func(iv Interval) bool { return iv.Center == 1 && iv.High == 1 && iv.Low < 1 }},
		{"none held stays at or over 0", []int{0, 0, 0}, []int{10, 10, 10}, func(iv Interval) bool { return iv.Center == 0 && iv.Low == 0 && iv.High > 0 }},
		{"one cluster: its point", []int{60}, []int{66}, func(iv Interval) bool { return iv.N == 1 && iv.Low == iv.High }},
		{"empty clusters left out", []int{60, 0}, []int{66, 0}, func(iv Interval) bool { return iv.N == 1 }},
		{"none", nil, nil, func(iv Interval) bool { return iv.N == 0 }},
		{"scattered clusters widen it", []int{50, 66, 52, 66}, []int{66, 66, 66, 66}, func(iv Interval) bool {
			even := ClusterShare([]int{58, 58, 59, 59}, []int{66, 66, 66, 66})
			return iv.High-iv.Low > 2*(even.High-even.Low)
		}},
	} {
		if iv := ClusterShare(tc.held, tc.all); !tc.want(iv) {
			t.Errorf("%s: ClusterShare(%v, %v) = %+v", tc.name, tc.held, tc.all, iv)
		}
	}
}

// TestClusterShareCoverage: clusters whose members share a cause (each
// cluster's rate drawn about the true share, as a pair of runs shares its
// shift; logit-normal, sd 0.6 and 1.0: clusters at about 85-99 % and 70-99 %, as
// pairs of default runs on the build machine scatter): the pooled interval holds
// the true share (the rates' mean) in 92-99.5 % at 4, 8 and 12 clusters of 66,
// where the binomial's over all members, blind to the clusters, holds it far
// less often.
func TestClusterShareCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 5))
	l0 := math.Log(0.95 / 0.05)
	for _, sd := range []float64{0.6, 1.0} {
		var truth float64
		for range 200000 {
			truth += logistic(l0+sd*r.NormFloat64()) / 200000
		}
		for _, k := range []int{4, 8, 12} {
			hit, naive := 0, 0
			const trials = 2000
			for range trials {
				held, all := make([]int, k), make([]int, k)
				for i := range k {
					rate := logistic(l0 + sd*r.NormFloat64())
					all[i] = 66
					for range 66 {
						if r.Float64() < rate {
							held[i]++
						}
					}
				}
				iv := ClusterShare(held, all)
				if iv.Low <= truth && truth <= iv.High {
					hit++
				}
				p := iv.Center
				if math.Abs(p-truth) <= 1.96*math.Sqrt(p*(1-p)/float64(66*k)) {
					naive++
				}
			}
			share, nshare := float64(hit)/trials, float64(naive)/trials
			t.Logf("sd %.1f, %2d clusters: the interval holds the true share in %.1f %% (the binomial's, blind to clusters: %.1f %%)", sd, k, 100*share, 100*nshare)
			if share < 0.92 || share > 0.995 {
				t.Errorf("sd %.1f, %d clusters: covered %.1f %%; want 92-99.5 %%", sd, k, 100*share)
			}
			if nshare > share-0.1 {
				t.Errorf("sd %.1f, %d clusters: the binomial held %.1f %%, the cluster interval %.1f %%: clusters should matter here", sd, k, 100*nshare, 100*share)
			}
		}
	}
}

// FuzzClusterShare: whatever the counts, the share and its interval stay in
// [0, 1] and the interval holds its centre.
func FuzzClusterShare(f *testing.F) {
	f.Add(60, 66, 64, 66, 66, 66)
	f.Add(0, 10, -3, 5, 9, 4)
	f.Add(1<<30, 1<<30, 0, 1, 7, 0)
	f.Fuzz(func(t *testing.T, h1, n1, h2, n2, h3, n3 int) {
		held, all := []int{h1, h2, h3}, []int{n1 % 100000, n2 % 100000, n3 % 100000}
		iv := ClusterShare(held, all)
		if iv.N == 0 {
			return
		}
		if !(iv.Low >= 0 && iv.Low <= iv.Center && iv.Center <= iv.High && iv.High <= 1) {
			t.Fatalf("ClusterShare(%v, %v) = %+v; want 0 <= low <= centre <= high <= 1", held, all, iv)
		}
	})
}
