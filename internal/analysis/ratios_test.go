package analysis

import (
	"slices"
	"testing"

	"github.com/rpcbed/rpcbed/internal/stats"
)

// Ratios lays one kind's comparisons out by pair, in their order, with the
// figures as they first come, and counts each figure's verdicts.
func TestRatios(t *testing.T) {
	rps, ccpu, scpu := FigRPS.Figure(), FigClientCPU.Figure(), FigServerCPU.Figure()
	cs := []Comparison{
		{Kind: VsGo, A: "php-grpc", B: "go-grpc", Figure: rps, Verdict: stats.Slower},
		{Kind: VsGRPC, A: "go-http", B: "go-grpc", Figure: scpu, Verdict: stats.Faster},
		{Kind: VsGo, A: "php-grpc", B: "go-grpc", Figure: ccpu, Verdict: stats.Slower},
		{Kind: VsGo, A: "java-grpc", B: "go-grpc", Figure: rps, Verdict: stats.Indistinguishable},
	}
	for _, tc := range []struct {
		kind    string
		rows    []string // A of each row
		figures []string
		tally   map[string]int // of the first figure
	}{
		{VsGo, []string{"php-grpc", "java-grpc"}, []string{"rps", "client_cpu_us_per_call"}, map[string]int{stats.Slower: 1, stats.Indistinguishable: 1}},
		{VsGRPC, []string{"go-http"}, []string{"server_cpu_us_per_call"}, map[string]int{stats.Faster: 1}},
		{"none", nil, nil, map[string]int{}},
	} {
		tab := Ratios(cs, tc.kind)
		var rows, figs []string
		for _, r := range tab.Rows {
			rows = append(rows, r.A)
		}
		for _, f := range tab.Figures {
			figs = append(figs, f.Key)
		}
		if !slices.Equal(rows, tc.rows) || !slices.Equal(figs, tc.figures) {
			t.Errorf("%s: rows %q, figures %q; want %q, %q", tc.kind, rows, figs, tc.rows, tc.figures)
			continue
		}
		if len(tab.Figures) == 0 {
			continue
		}
		got := tab.Tally(tab.Figures[0])
		for k, v := range tc.tally {
			if got[k] != v {
				t.Errorf("%s: tally %v; want %v", tc.kind, got, tc.tally)
			}
		}
	}
	if _, ok := Ratios(cs, VsGo).Rows[1].By["client_cpu_us_per_call"]; ok {
		t.Error("java-grpc has a client CPU ratio it was never given")
	}
}
