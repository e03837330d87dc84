package analysis

import (
	"fmt"

	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// Change is one metric of one cell, A vs B (`rpcbed compare`; internal/render
// prints it).
type Change struct {
	Metric string
	A, B   float64 // medians
	Delta  string  // "+12.34%", or "~" when the interval holds no change
	// Ratio is B's median over A's with its 95 % interval: both runs' noise and
	// the run shift between them (stats.UnpairedRatio); Faster says whether B is
	// faster than A (stats.Faster, Slower, Indistinguishable).
	Ratio  stats.Ratio
	Faster string
	// NA and NB are the rounds each run's median is taken over.
	NA, NB      int
	Significant bool // the interval excludes no change
	// HigherBetter: more is better (req/s); less for latency and CPU.
	HigherBetter bool
}

// CellChange is every compared metric of one cell present in both runs.
type CellChange struct {
	Cell    string
	Changes []Change
}

// Compared are the metrics Compare gives, in the order reports print them.
var Compared = []struct {
	Name, Key    string
	F            func(results.Metrics) float64
	HigherBetter bool
}{
	{"req/s", "rps", results.RPS, true},
	{"p99", "p99_us", results.P99, false},
	{"client CPU/call", "client_cpu_us_per_call", results.ClientCPU, false},
	{"server CPU/call", "server_cpu_us_per_call", results.ServerCPU, false},
}

// Compare matches the cells of two runs by name and gives each metric B's median
// over A's with its 95 % interval (each run's pooled noise and the run shift
// between them, docs/method.md, section 11): a change is significant when the
// interval excludes 1; that interval is the verdict's only ground (no rank test:
// with 3 rounds a side the Mann-Whitney U test cannot go below p = 0.100).
// Cells missing from either run, or without a successful repeat on one side,
// are left out.
func Compare(a, b *results.Run) []CellChange {
	ua, ub := UncertaintyOf(a), UncertaintyOf(b)
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
			ma, mb := stats.Median(va), stats.Median(vb)
			fig, _ := FigureByKey(m.Key)
			rt := stats.UnpairedRatio(vb, va, ub.Noise(fig, cb), ua.Noise(fig, ca))
			faster := rt.Verdict(m.HigherBetter)
			delta := "~"
			if faster != stats.Indistinguishable {
				delta = fmt.Sprintf("%+.2f%%", (mb/ma-1)*100)
			}
			ch := Change{Metric: m.Name, A: ma, B: mb, Delta: delta, Ratio: rt, Faster: faster,
				NA: len(va), NB: len(vb), Significant: faster != stats.Indistinguishable, HigherBetter: m.HigherBetter}
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

// Tally counts the compared metrics by Verdict.
func Tally(changes []CellChange) map[string]int {
	n := map[string]int{}
	for _, cc := range changes {
		for _, ch := range cc.Changes {
			n[ch.Verdict()]++
		}
	}
	return n
}

// Uncompared is a cell of either run that has no comparison, and why: "only in
// A", "only in B", or "no successful repeat in A" (B, A nor B).
type Uncompared struct {
	Cell, Why string
}

// NotCompared lists the cells of a and b that changes leaves out, A's first.
func NotCompared(a, b *results.Run, changes []CellChange) []Uncompared {
	done := map[string]bool{}
	for _, cc := range changes {
		done[cc.Cell] = true
	}
	inA, inB := map[string]results.CellResult{}, map[string]results.CellResult{}
	for _, c := range a.Cells {
		inA[c.Name] = c
	}
	for _, c := range b.Cells {
		inB[c.Name] = c
	}
	var out []Uncompared
	for _, c := range a.Cells {
		if done[c.Name] {
			continue
		}
		if _, ok := inB[c.Name]; !ok {
			out = append(out, Uncompared{c.Name, "only in A"})
		} else {
			out = append(out, Uncompared{c.Name, "no successful repeat in " + failedSides(c, inB[c.Name])})
		}
	}
	for _, c := range b.Cells {
		if _, ok := inA[c.Name]; !ok {
			out = append(out, Uncompared{c.Name, "only in B"})
		}
	}
	return out
}

func failedSides(a, b results.CellResult) string {
	na, nb := len(a.Values(results.RPS)), len(b.Values(results.RPS))
	switch {
	case na == 0 && nb == 0:
		return "A nor B"
	case na == 0:
		return "A"
	case nb == 0:
		return "B"
	}
	return "A or B"
}
