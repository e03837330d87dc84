package render

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/rpcbed/rpcbed/internal/stats"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/results"
)

// Change is one metric of one cell, A vs B.
type Change struct {
	Metric string
	A, B   float64 // medians
	Delta  string  // "+12.34%", or "~" when the interval holds no change
	// Ratio is B's median over A's with its 95 % interval: both runs' noise and
	// the run shift between them (stats.UnpairedRatio); Faster says whether B is
	// faster than A (stats.Faster, Slower, Indistinguishable).
	Ratio  stats.Ratio
	Faster string
	// P is the Mann-Whitney U test's p-value over the repeats, as benchstat's.
	P            float64
	NA, NB       int
	Significant  bool // the interval excludes no change
	Warnings     []string
	betterHigher bool
}

// CellChange is every compared metric of one cell present in both runs.
type CellChange struct {
	Cell    string
	Changes []Change
}

var compared = []struct {
	name, key    string
	f            func(results.Metrics) float64
	betterHigher bool
}{
	{"req/s", "rps", results.RPS, true},
	{"p99", "p99_us", results.P99, false},
	{"client CPU/call", "client_cpu_us_per_call", results.ClientCPU, false},
	{"server CPU/call", "server_cpu_us_per_call", results.ServerCPU, false},
}

// Compare matches the cells of two runs by name and gives each metric B's median
// over A's with its 95 % interval (each run's pooled noise and the run shift
// between them, docs/method.md, section 11): a change is significant when the
// interval excludes 1. The Mann-Whitney U test's p over the repeats, as
// benchstat computes it (golang.org/x/perf/benchmath), is printed beside it.
// Cells missing from either run, or without a successful repeat on one side,
// are left out.
func Compare(a, b *results.Run) []CellChange {
	ua, ub := analysis.UncertaintyOf(a), analysis.UncertaintyOf(b)
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
		for _, m := range compared {
			va, vb := ca.Values(m.f), cb.Values(m.f)
			if len(va) == 0 || len(vb) == 0 {
				continue
			}
			th := benchmath.DefaultThresholds
			sa, sb := benchmath.NewSample(va, &th), benchmath.NewSample(vb, &th)
			cmp := benchmath.AssumeNothing.Compare(sa, sb)
			ma := benchmath.AssumeNothing.Summary(sa, 0.95).Center
			mb := benchmath.AssumeNothing.Summary(sb, 0.95).Center
			fig, _ := analysis.FigureByKey(m.key)
			rt := stats.UnpairedRatio(vb, va, ub.Noise(fig, cb.Client), ua.Noise(fig, ca.Client))
			faster := rt.Verdict(m.betterHigher)
			delta := "~"
			if faster != stats.Indistinguishable {
				delta = fmt.Sprintf("%+.2f%%", (mb/ma-1)*100)
			}
			ch := Change{Metric: m.name, A: ma, B: mb, Delta: delta, Ratio: rt, Faster: faster, P: cmp.P,
				NA: cmp.N1, NB: cmp.N2, Significant: faster != stats.Indistinguishable, betterHigher: m.betterHigher}
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

// CompareMarkdown writes the comparison as one table: per cell and metric the
// medians, the change (~ when not significant) and the p-value.
func CompareMarkdown(w io.Writer, a, b *results.Run, changes []CellChange) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "# rpcbed compare: A = %s, B = %s\n\n", a.ID, b.ID)
	fmt.Fprintf(&sb, "Medians over the rounds; the change is B vs A with its 95 %% interval [low, high] (both runs' noise and "+
		"the shift a whole run makes, docs/method.md, section 11), and the verdict: B faster or slower when the interval "+
		"excludes no change, `~` (indistinguishable) when it holds it. p is the Mann-Whitney U test over the rounds "+
		"(benchstat's), for reference: with 3 rounds a side its smallest possible p is 0.100.\n\n")
	sb.WriteString("| cell | req/s A | req/s B | change | p99 ms A | p99 ms B | change | client CPU µs A | B | change | server CPU µs A | B | change |\n")
	sb.WriteString("|---|---:|---:|---|---:|---:|---|---:|---:|---|---:|---:|---|\n")
	warn := map[string]bool{}
	for _, cc := range changes {
		byMetric := map[string]Change{}
		for _, ch := range cc.Changes {
			byMetric[ch.Metric] = ch
			for _, w := range ch.Warnings {
				warn[w] = true
			}
		}
		fmt.Fprintf(&sb, "| %s", cc.Cell)
		for _, m := range compared {
			ch, ok := byMetric[m.name]
			if !ok {
				sb.WriteString(" | - | - | -")
				continue
			}
			scale := 1.0
			if m.name == "p99" {
				scale = 1e-3
			}
			fmt.Fprintf(&sb, " | %s | %s | %s", sig(ch.A*scale), sig(ch.B*scale), changeString(ch))
		}
		sb.WriteString(" |\n")
	}
	if len(warn) > 0 {
		sb.WriteString("\nWarnings:\n")
		for _, w := range slices.Sorted(maps.Keys(warn)) { // a map's order would move between runs
			fmt.Fprintf(&sb, "- %s\n", w)
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func changeString(ch Change) string {
	p := fmt.Sprintf("p=%.3f n=%d+%d", ch.P, ch.NA, ch.NB)
	iv := "[-]"
	if ch.Ratio.Valid() {
		iv = fmt.Sprintf("[%+.0f%%, %+.0f%%]", (ch.Ratio.Low-1)*100, (ch.Ratio.High-1)*100)
	}
	if !ch.Significant {
		return "~ " + iv + " indistinguishable (" + p + ")"
	}
	verdict := "worse"
	if (ch.B > ch.A) == ch.betterHigher {
		verdict = "better"
	}
	if math.Abs(ch.B-ch.A) == 0 {
		verdict = "same"
	}
	return ch.Delta + " " + iv + " " + ch.Faster + ", " + verdict + " (" + p + ")"
}
