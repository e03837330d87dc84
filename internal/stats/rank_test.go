package stats

import (
	"math"
	"testing"
)

func TestSpearman(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		want float64
	}{
		{"same order", []float64{1, 2, 3, 4}, []float64{10, 20, 30, 400}, 1},
		{"reversed", []float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
		// d² = 1+1+1+1+0 = 4: 1 − 6·4/(5·24) = 0.8.
		{"one swap each end", []float64{1, 2, 3, 4, 5}, []float64{2, 1, 4, 3, 5}, 0.8},
		{"ties share ranks", []float64{1, 1, 2}, []float64{1, 2, 3}, math.Sqrt(3) / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Spearman(tc.x, tc.y); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("Spearman = %v; want %v", got, tc.want)
			}
		})
	}
	if got := Spearman([]float64{1, 2}, []float64{1, 2}); !math.IsNaN(got) {
		t.Errorf("2 pairs: got %v; want NaN", got)
	}
	if got := Spearman([]float64{1, 1, 1}, []float64{1, 2, 3}); !math.IsNaN(got) {
		t.Errorf("constant x: got %v; want NaN", got)
	}
}

func TestRanks(t *testing.T) {
	got := Ranks([]float64{30, 10, 20, 10})
	want := []float64{4, 1.5, 3, 1.5}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Ranks = %v; want %v", got, want)
		}
	}
}
