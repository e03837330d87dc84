package render

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/results"
)

// compareHeads are the compare reports' column heads and the scale from each
// analysis.Compared metric's unit.
var compareHeads = map[string]struct {
	head  string
	scale float64
}{
	"req/s":           {"req/s", 1},
	"p99":             {"p99 ms", 1e-3},
	"client CPU/call": {"client CPU µs/call", 1},
	"server CPU/call": {"server CPU µs/call", 1},
}

// CompareMarkdown writes the comparison as one table: per cell and metric the
// medians, the change (~ when not significant) and the p-value.
func CompareMarkdown(w io.Writer, a, b *results.Run, changes []analysis.CellChange) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "# rpcbed compare: A = %s, B = %s\n\n", a.ID, b.ID)
	fmt.Fprintf(&sb, "Medians over the rounds; the change is B vs A with its 95 %% interval [low, high] (both runs' noise and "+
		"the shift a whole run makes, docs/method.md, section 11), and the verdict: B faster or slower when the interval "+
		"excludes no change, `~` (indistinguishable) when it holds it. p is the Mann-Whitney U test over the rounds "+
		"(benchstat's), for reference: with 3 rounds a side its smallest possible p is 0.100.\n\n")
	sb.WriteString("| cell | req/s A | req/s B | change | p99 ms A | p99 ms B | change | client CPU µs A | B | change | server CPU µs A | B | change |\n")
	sb.WriteString("|---|---:|---:|---|---:|---:|---|---:|---:|---|---:|---:|---|\n")
	for _, cc := range changes {
		byMetric := map[string]analysis.Change{}
		for _, ch := range cc.Changes {
			byMetric[ch.Metric] = ch
		}
		fmt.Fprintf(&sb, "| %s", cc.Cell)
		for _, m := range analysis.Compared {
			ch, ok := byMetric[m.Name]
			if !ok {
				sb.WriteString(" | - | - | -")
				continue
			}
			scale := compareHeads[m.Name].scale
			fmt.Fprintf(&sb, " | %s | %s | %s", sig(ch.A*scale), sig(ch.B*scale), changeString(ch))
		}
		sb.WriteString(" |\n")
	}
	if warn := analysis.Warnings(changes); len(warn) > 0 {
		sb.WriteString("\nWarnings:\n")
		slices.Sort(warn) // one order on every run
		for _, w := range warn {
			fmt.Fprintf(&sb, "- %s\n", w)
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// changeWords are the Markdown's words for a significant change's Verdict.
var changeWords = map[string]string{analysis.Improved: "better", analysis.Regressed: "worse", analysis.NoChange: "same"}

func changeString(ch analysis.Change) string {
	p := fmt.Sprintf("p=%.3f n=%d+%d", ch.P, ch.NA, ch.NB)
	iv := "[-]"
	if ch.Ratio.Valid() {
		iv = fmt.Sprintf("[%+.0f%%, %+.0f%%]", (ch.Ratio.Low-1)*100, (ch.Ratio.High-1)*100)
	}
	if !ch.Significant {
		return "~ " + iv + " indistinguishable (" + p + ")"
	}
	return ch.Delta + " " + iv + " " + ch.Faster + ", " + changeWords[ch.Verdict()] + " (" + p + ")"
}
