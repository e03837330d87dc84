package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/results/resultstest"
)

// Repeat order: a worker whose later repeats are faster beyond the threshold and
// its standard errors drifts, with each repeat's distance and its JIT flags; a
// flat one does not; among peers, only the one beyond their median drift.
func TestRepeatOrder(t *testing.T) {
	for _, tc := range []struct {
		name     string
		run      *results.Run
		drift    bool
		jit, all int
	}{
		{"warming", resultstest.Drifting(1.2, true), true, 6, 18},
		{"flat", resultstest.Drifting(1.0, false), false, 0, 18},
		// 5 % a repeat: 10 % over the run, under the threshold.
		{"slow drift", resultstest.Drifting(1.04, false), false, 0, 18},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os := RepeatOrders(tc.run)
			if len(os) != 2 || os[0].Worker != "go-grpc" || os[0].Cells != 6 || len(os[0].Dev) != 3 || os[0].Drifts != tc.drift || os[1].Drifts {
				t.Fatalf("got %+v; want go-grpc (drifts %v) and go-http (flat), 6 cells, 3 repeats each", os, tc.drift)
			}
			if os[0].JIT != tc.jit || os[0].All != tc.all {
				t.Errorf("go-grpc: %d of %d repeats jit-compiling; want %d of %d", os[0].JIT, os[0].All, tc.jit, tc.all)
			}
			if tc.drift && !(os[0].Dev[0] < 0 && os[0].Dev[2] > 0 && os[0].Drift > results.NoisySpread) {
				t.Errorf("go-grpc: deviations %v, drift %.3f; want rising past %.2f", os[0].Dev, os[0].Drift, results.NoisySpread)
			}
		})
	}
	// Among peers: three flat workers, two whose passes move 15 % a pass with the
	// machine (named by their standard errors alone) and one 2x: only that one.
	peers := resultstest.Run(0, nil, 3)
	peers.Spec.Rounds = 3
	r := rand.New(rand.NewPCG(40, 41))
	for _, w := range []string{"grpc", "thrift", "http", "ice", "dubbo", "front"} {
		step := map[string]float64{"grpc": 1.15, "thrift": 1 / 1.15, "dubbo": math.Sqrt2}[w]
		if step == 0 {
			step = 1
		}
		for k := range 6 {
			c := results.CellResult{Name: fmt.Sprintf("java-%s-datalist-%d-c1", w, k), Cell: plan.Cell{Client: "java", Protocol: w}, Status: results.StatusOK}
			for i := range 3 {
				v := 1000 * math.Pow(step, float64(i)) * math.Exp(0.02*r.NormFloat64())
				c.Repeats = append(c.Repeats, results.Repeat{Index: i + 1, Report: &report.Report{}, Metrics: results.Metrics{RPS: v}})
			}
			peers.Cells = append(peers.Cells, c)
		}
	}
	var named []string
	for _, o := range RepeatOrders(peers) {
		if o.Drifts {
			named = append(named, o.Worker)
		}
	}
	if strings.Join(named, " ") != "java-dubbo" {
		t.Errorf("among peers flat or drifting ±32 %%: named %q; want only java-dubbo (+100 %%)", named)
	}
}
