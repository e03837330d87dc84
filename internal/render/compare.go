package render

import (
	"fmt"
	"io"
	"math"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/rpcbed/rpcbed/internal/results"
)

// Change is one metric of one cell, A vs B.
type Change struct {
	Metric       string
	A, B         float64 // medians
	Delta        string  // benchstat's: "+12.34%", or "~" when not significant
	P            float64
	NA, NB       int
	Significant  bool
	Warnings     []string
	betterHigher bool
}

// CellChange is every compared metric of one cell present in both runs.
type CellChange struct {
	Cell    string
	Changes []Change
}

var compared = []struct {
	name         string
	f            func(results.Metrics) float64
	betterHigher bool
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
			ch := Change{Metric: m.name, A: ma, B: mb, Delta: cmp.FormatDelta(ma, mb), P: cmp.P,
				NA: cmp.N1, NB: cmp.N2, Significant: cmp.P <= cmp.Alpha, betterHigher: m.betterHigher}
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
	fmt.Fprintf(&sb, "Medians over the repeats; the change is B vs A, `~` when the Mann-Whitney U test "+
		"(benchstat's, alpha 0.05) finds no significant difference. With 3 repeats per side the smallest "+
		"possible p is 0.100: use 4 or more repeats (spec: repeats) to detect a change at alpha 0.05.\n\n")
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
		for w := range warn {
			fmt.Fprintf(&sb, "- %s\n", w)
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func changeString(ch Change) string {
	p := fmt.Sprintf("p=%.3f n=%d+%d", ch.P, ch.NA, ch.NB)
	if !ch.Significant {
		return "~ (" + p + ")"
	}
	verdict := "worse"
	if (ch.B > ch.A) == ch.betterHigher {
		verdict = "better"
	}
	if math.Abs(ch.B-ch.A) == 0 {
		verdict = "same"
	}
	return ch.Delta + " " + verdict + " (" + p + ")"
}
