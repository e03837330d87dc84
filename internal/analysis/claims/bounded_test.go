package claims

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/rpcbed/rpcbed/internal/report"
)

// busyRuns are runs whose server and client were busy the given fractions of
// the window.
func busyRuns(fr ...float64) []Run {
	var out []Run
	for _, f := range fr {
		out = append(out, Run{Report: report.Report{Rpcbed: &report.Extra{}}, Wall: 1, ServerKnown: true, ServerCPU: f, ClientCPU: f})
	}
	return out
}

var numbers = regexp.MustCompile(`-?[0-9]+(\.[0-9]+)?`)

// shownInBounds fails t when a printed busy figure has a number outside 0..100.
func shownInBounds(t *testing.T, fr []float64) {
	t.Helper()
	for _, f := range []func(Run) float64{srvBusy, cliBusy} {
		s := pctOf(busy(busyRuns(fr...), f))
		for _, n := range numbers.FindAllString(s, -1) {
			if v, _ := strconv.ParseFloat(n, 64); v < 0 || v > 100 {
				t.Fatalf("busy %v printed %q: %v is past 0..100", fr, s, v)
			}
		}
	}
}

// The reproduction's "98 % [87..112]": a busy fraction near a full core never
// prints past 100 %.
func TestBusyBounded(t *testing.T) {
	for _, fr := range [][]float64{{0.98, 0.87, 0.99}, {1.02, 0.97, 0.99}, {0.01, 0.3, 0.02}, {1, 1, 1}} {
		shownInBounds(t, fr)
	}
	// On the logit scale 0.87 lies far from 0.98 and 0.99: with 2 degrees of
	// freedom the interval reaches down to 46 %, and up to 100 %, not past it.
	if got := pctOf(busy(busyRuns(0.98, 0.87, 0.99), srvBusy)); got != "98 % [46..100]" {
		t.Errorf("busy 0.98, 0.87, 0.99: %q; want 98 %% [46..100]", got)
	}
}

func FuzzBusyBounded(f *testing.F) {
	f.Add(0.98, 0.87, 1.12)
	f.Add(0.0, 1.0, 0.5)
	f.Add(5.0, -1.0, 0.999)
	f.Fuzz(func(t *testing.T, a, b, c float64) {
		shownInBounds(t, []float64{a, b, c})
	})
}
