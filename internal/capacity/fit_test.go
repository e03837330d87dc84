package capacity

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// TestOverCount: a run's p99 exceeds the budget exactly when more than 1 % of
// its answered calls are counted over it, over seeded latency records and
// budgets around their p99 (but for the half call by which the p99's nearest
// rank rounds).
func TestOverCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 40 {
		h := stats.NewLatency()
		n := 200 + rng.IntN(3000)
		for range n {
			_ = h.RecordValue(int64(200 + rng.ExpFloat64()*float64(1000+trial*100)))
		}
		p99 := h.ValueAtQuantile(99)
		for _, budget := range []int64{p99 / 2, p99 - 1, p99, p99 + 1, p99 * 2} {
			over := overCount(h, budget)
			if math.Abs(float64(over)-SLOQuantile*float64(n)) <= 1 {
				continue
			}
			if got, want := float64(over) > SLOQuantile*float64(n), p99 > budget; got != want {
				t.Errorf("trial %d: %d calls, p99 %d µs, budget %d µs: %d over (more than 1 %%: %v); want %v", trial, n, p99, budget, over, got, want)
			}
		}
	}
}

// TestPoolLoad: the summed runs' load by criterion, 1 at the limit.
func TestPoolLoad(t *testing.T) {
	slo := SLO{P99: plan.Duration(10 * time.Millisecond), Errors: 0.001}
	run := func(calls, failed, over int64, window float64) Obs {
		return Obs{Offered: 1000, Calls: calls, Failed: failed, WindowS: window, P50Us: 1000, Over: map[string]int64{"10ms": over}}
	}
	for _, tc := range []struct {
		name   string
		runs   []Obs
		load   float64
		breach string
	}{
		{"clean", []Obs{run(1000, 0, 5, 1.001), run(1000, 0, 5, 1.001)}, 0.5, ""},
		{"one stalled run of two is averaged", []Obs{run(1000, 0, 30, 1.001), run(1000, 0, 0, 1.001)}, 1.5, "p99"},
		{"a stall under half the allowance", []Obs{run(1000, 0, 15, 1.001), run(1000, 0, 3, 1.001)}, 0.9, ""},
		{"errors", []Obs{run(1000, 2, 0, 1.001), run(1000, 2, 0, 1.001)}, 2.0, "errors"},
		{"rate missed: 3 % short", []Obs{run(970, 0, 0, 1.001), run(970, 0, 0, 1.001)}, 60.0 / 22, "rate"},
		{"a run without figures", []Obs{run(1000, 0, 0, 1.001), {Offered: 1000, Error: "exit 4"}}, math.Inf(1), "run"},
	} {
		var p pool
		for _, o := range tc.runs {
			p.add(o, slo)
		}
		l, b := p.load(slo, 0.01)
		if math.Abs(l-tc.load) > 0.01 && !(math.IsInf(l, 1) && math.IsInf(tc.load, 1)) {
			t.Errorf("%s: load %.3f; want %.3f", tc.name, l, tc.load)
		}
		if got := joinBreach(b); got != tc.breach {
			t.Errorf("%s: breach %q; want %q", tc.name, got, tc.breach)
		}
	}
}

// TestFitKnee: the pooled load made non-decreasing in the rate, and the rate
// where it crosses 1.
func TestFitKnee(t *testing.T) {
	slo := SLO{P99: plan.Duration(10 * time.Millisecond)}
	// share is the calls over the budget per run of 1,000 (1 % is the limit).
	mk := func(shares ...float64) []pool {
		ps := make([]pool, len(shares))
		for i, s := range shares {
			ps[i] = pool{runs: 1, calls: 1000, over: s * 1000, want: 1000}
		}
		return ps
	}
	rates := []float64{100, 200, 400, 800}
	for _, tc := range []struct {
		name   string
		pools  []pool
		rate   float64
		where  int
		within float64
	}{
		{"monotone: between 200 and 400", mk(0.001, 0.005, 0.015, 0.5), math.Exp(math.Log(200) + 0.5*math.Log(2)), fitInside, 0.001},
		// 1.2 at 200 and 0.6 at 400 pool to 0.9: within the SLO up to 400.
		{"a stalled run at 200 is pooled with 400", mk(0.001, 0.012, 0.006, 0.5), 400 * math.Pow(2, (1-0.9)/(50-0.9)), fitInside, 0.001},
		{"every rate breached", mk(0.02, 0.03, 0.04, 0.05), 100, fitBelow, 0},
		{"no rate breached", mk(0.001, 0.002, 0.003, 0.004), 800, fitAbove, 0},
	} {
		rate, where := fitKnee(tc.pools, rates, slo, 0.01)
		if where != tc.where || math.Abs(rate/tc.rate-1) > tc.within {
			t.Errorf("%s: knee %.1f (where %d); want %.1f (where %d)", tc.name, rate, where, tc.rate, tc.where)
		}
	}
}
