package render

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/results"
)

// CompareMarkdown writes the comparison as one table: per cell and metric the
// medians, the change (~ when not significant) and the p-value.
func CompareMarkdown(w io.Writer, a, b *results.Run, changes []analysis.CellChange) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "# rpcbed compare: A = %s, B = %s\n\n", a.ID, b.ID)
	fmt.Fprintf(&sb, "Medians over the repeats; the change is B vs A, `~` when the Mann-Whitney U test "+
		"(benchstat's, alpha 0.05) finds no significant difference. With 3 repeats per side the smallest "+
		"possible p is 0.100: use 4 or more repeats (spec: repeats) to detect a change at alpha 0.05.\n\n")
	sb.WriteString("| cell | req/s A | req/s B | change | p99 ms A | p99 ms B | change | client CPU µs A | B | change | server CPU µs A | B | change |\n")
	sb.WriteString("|---|---:|---:|---|---:|---:|---|---:|---:|---|---:|---:|---|\n")
	warn := map[string]bool{}
	for _, cc := range changes {
		byMetric := map[string]analysis.Change{}
		for _, ch := range cc.Changes {
			byMetric[ch.Metric] = ch
			for _, w := range ch.Warnings {
				warn[w] = true
			}
		}
		fmt.Fprintf(&sb, "| %s", cc.Cell)
		for _, m := range analysis.Compared {
			ch, ok := byMetric[m.Name]
			if !ok {
				sb.WriteString(" | - | - | -")
				continue
			}
			scale := 1.0
			if m.Name == "p99" {
				scale = 1e-3
			}
			fmt.Fprintf(&sb, " | %s | %s | %s", sig(ch.A*scale), sig(ch.B*scale), changeString(ch))
		}
		sb.WriteString(" |\n")
	}
	if len(warn) > 0 {
		sb.WriteString("\nWarnings:\n")
		for _, w := range slices.Sorted(maps.Keys(warn)) { // sorted: a map has no order
			fmt.Fprintf(&sb, "- %s\n", w)
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func changeString(ch analysis.Change) string {
	p := fmt.Sprintf("p=%.3f n=%d+%d", ch.P, ch.NA, ch.NB)
	if !ch.Significant {
		return "~ (" + p + ")"
	}
	verdict := "worse"
	if (ch.B > ch.A) == ch.HigherBetter {
		verdict = "better"
	}
	if math.Abs(ch.B-ch.A) == 0 {
		verdict = "same"
	}
	return ch.Delta + " " + verdict + " (" + p + ")"
}
