package analysis

import (
	"reflect"
	"slices"
	"testing"

	"github.com/rpcbed/rpcbed/internal/results/resultstest"
)

// Compare: B's req/s 1.5 times A's is a significant change in every cell it
// holds (the interval tells even where 3 rounds a side leave the U test's p at
// 0.1); unchanged p99 is not; a cell failed on both sides is not compared and
// NotCompared says why.
func TestCompare(t *testing.T) {
	a, b := resultstest.Synthetic("a", 1), resultstest.Synthetic("b", 1.5)
	resultstest.FiveRepeats(a, b) // go-grpc-datalist-2-c1
	b.Cells = b.Cells[:len(b.Cells)-1]
	changes := Compare(a, b)
	byCell := map[string]CellChange{}
	for _, c := range changes {
		byCell[c.Cell] = c
	}
	for _, tc := range []struct {
		cell, metric string
		significant  bool
		delta        string
		verdict      string
	}{
		{"go-grpc-datalist-2-c1", "req/s", true, "+50.00%", Improved},
		// 3 vs 3 rounds: Mann-Whitney's smallest p is 0.1, but +50 % lies beyond the
		// interval (quiet rounds and a 6 % run shift): the interval tells.
		{"go-grpc-datalist-2-c50", "req/s", true, "+50.00%", Improved},
		{"go-grpc-datalist-2-c1", "p99", false, "~", NoChange}, // unchanged
		// Less CPU per call at 1.5 times the calls: better.
		{"go-grpc-datalist-2-c1", "client CPU/call", true, "-33.33%", Improved},
	} {
		i := slices.IndexFunc(byCell[tc.cell].Changes, func(c Change) bool { return c.Metric == tc.metric })
		if i < 0 {
			t.Errorf("%s %s: not compared", tc.cell, tc.metric)
			continue
		}
		ch := byCell[tc.cell].Changes[i]
		if ch.Significant != tc.significant || ch.Delta != tc.delta || ch.Verdict() != tc.verdict {
			t.Errorf("%s %s: got significant=%v delta %q verdict %s; want %v %q %s", tc.cell, tc.metric, ch.Significant, ch.Delta, ch.Verdict(), tc.significant, tc.delta, tc.verdict)
		}
	}
	last := a.Cells[len(a.Cells)-1].Name
	want := []Uncompared{{"php-http-datalist-2-c1", "no successful repeat in A nor B"}, {"php-http-datalist-2-c50", "no successful repeat in A nor B"},
		{"php-http-datalist-200-c1", "no successful repeat in A nor B"}, {last, "only in A"}}
	if got := NotCompared(a, b, changes); !reflect.DeepEqual(got, want) {
		t.Errorf("not compared: got %+v; want %+v", got, want)
	}
	n := Tally(changes)
	if total := n[Improved] + n[Regressed] + n[NoChange]; total != 4*len(changes) || n[Improved] == 0 {
		t.Errorf("tally %v: want every metric of the %d cells counted once, some improved", n, len(changes))
	}
}

// Verdict: no change without significance or when the medians are equal;
// better follows the metric's direction.
func TestChangeVerdict(t *testing.T) {
	for _, tc := range []struct {
		ch   Change
		want string
	}{
		{Change{A: 1, B: 2, Significant: true, HigherBetter: true}, Improved},
		{Change{A: 1, B: 2, Significant: true}, Regressed},
		{Change{A: 2, B: 1, Significant: true}, Improved},
		{Change{A: 1, B: 2}, NoChange},
		{Change{A: 1, B: 1, Significant: true}, NoChange},
	} {
		if got := tc.ch.Verdict(); got != tc.want {
			t.Errorf("%+v: got %s; want %s", tc.ch, got, tc.want)
		}
	}
}
