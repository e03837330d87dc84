package render

import (
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/results/resultstest"
)

// agree pooled over three seeded pairs, the third's run B moved 40 % in
// req/s: a golden file, and the lines a user reads it by.
func TestPooledGolden(t *testing.T) {
	var pairs []analysis.PairCalibration
	for i := range 3 {
		a := resultstest.Run(30, resultstest.Gaussian(uint64(40+2*i), 0.12), 3)
		b := resultstest.Run(30, resultstest.Gaussian(uint64(41+2*i), 0.12), 3)
		if i == 2 {
			for c := range b.Cells {
				for j := range b.Cells[c].Repeats {
					b.Cells[c].Repeats[j].Metrics.RPS *= 1.4
				}
			}
		}
		p := analysis.PairCalibration{A: "a" + string(rune('1'+i)), B: "b" + string(rune('1'+i))}
		p.Calibration, p.Flips = analysis.Calibrate(a, b)
		pairs = append(pairs, p)
	}
	var out strings.Builder
	if err := PooledText(&out, pairs, 0.90); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pair 3: A = a3, B = b3", "pooled over 3 pairs", "held ", "goal over the pairs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in\n%s", want, out.String())
		}
	}
	golden(t, "pooled.txt", []byte(out.String()))
}
