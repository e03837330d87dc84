package analysis

import (
	"golang.org/x/perf/benchmath"

	"github.com/rpcbed/rpcbed/internal/results"
)

// Change is one metric of one cell, A vs B.
type Change struct {
	Metric      string
	A, B        float64 // medians
	Delta       string  // benchstat's: "+12.34%", or "~" when not significant
	P           float64
	NA, NB      int
	Significant bool
	Warnings    []string
	// HigherBetter: more is better (req/s); less for latency and CPU.
	HigherBetter bool
}

// CellChange is every compared metric of one cell present in both runs.
type CellChange struct {
	Cell    string
	Changes []Change
}

// Compared are the figures Compare tests, in the order reports print them.
var Compared = []struct {
	Name         string
	F            func(results.Metrics) float64
	HigherBetter bool
}{
	{"req/s", results.RPS, true},
	{"p99", results.P99, false},
	{"client CPU/call", results.ClientCPU, false},
	{"server CPU/call", results.ServerCPU, false},
}

// Compare matches the cells of two runs by name and tests each metric's repeats
// with the Mann-Whitney U test, as benchstat does (golang.org/x/perf/benchmath,
// alpha 0.05). Cells missing from either run, or without a successful repeat on
// one side, are left out.
func Compare(a, b *results.Run) []CellChange {
	bc := map[string]results.CellResult{}
	for _, c := range b.Cells {
		bc[c.Name] = c
	}
	var out []CellChange
	for _, ca := range a.Cells {
		cb, ok := bc[ca.Name]
		if !ok {
			continue
		}
		cc := CellChange{Cell: ca.Name}
		for _, m := range Compared {
			va, vb := ca.Values(m.F), cb.Values(m.F)
			if len(va) == 0 || len(vb) == 0 {
				continue
			}
			th := benchmath.DefaultThresholds
			sa, sb := benchmath.NewSample(va, &th), benchmath.NewSample(vb, &th)
			cmp := benchmath.AssumeNothing.Compare(sa, sb)
			ma := benchmath.AssumeNothing.Summary(sa, 0.95).Center
			mb := benchmath.AssumeNothing.Summary(sb, 0.95).Center
			ch := Change{Metric: m.Name, A: ma, B: mb, Delta: cmp.FormatDelta(ma, mb), P: cmp.P,
				NA: cmp.N1, NB: cmp.N2, Significant: cmp.P <= cmp.Alpha, HigherBetter: m.HigherBetter}
			for _, w := range cmp.Warnings {
				ch.Warnings = append(ch.Warnings, w.Error())
			}
			cc.Changes = append(cc.Changes, ch)
		}
		if len(cc.Changes) > 0 {
			out = append(out, cc)
		}
	}
	return out
}

// Verdicts of one compared metric, as the compare page colours them.
const (
	Improved  = "improved"
	Regressed = "regressed"
	NoChange  = "nochange"
)

// Verdict says whether B is better or worse than A on this metric, or neither
// (the change is not significant, or there is none).
func (ch Change) Verdict() string {
	if !ch.Significant || ch.A == ch.B {
		return NoChange
	}
	if (ch.B > ch.A) == ch.HigherBetter {
		return Improved
	}
	return Regressed
}
