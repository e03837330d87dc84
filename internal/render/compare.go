package render

import (
	"fmt"
	"io"
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
// medians and the change with its interval and verdict (~ when the interval
// holds no change).
func CompareMarkdown(w io.Writer, a, b *results.Run, changes []analysis.CellChange) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "# rpcbed compare: A = %s, B = %s\n\n", a.ID, b.ID)
	fmt.Fprintf(&sb, "Medians over the rounds; the change is B vs A with its 95 %% interval [low, high] (both runs' noise and "+
		"the shift a whole run makes, docs/method.md, section 11), and the verdict: B faster or slower when the interval "+
		"excludes no change, `~` (indistinguishable) when it holds it; the interval is the verdict's only ground. "+
		"n is the rounds of A and of B.\n\n")
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
	_, err := io.WriteString(w, sb.String())
	return err
}

// changeWords are the Markdown's words for a significant change's Verdict.
var changeWords = map[string]string{analysis.Improved: "better", analysis.Regressed: "worse", analysis.NoChange: "same"}

func changeString(ch analysis.Change) string {
	n := fmt.Sprintf("n=%d+%d", ch.NA, ch.NB)
	iv := "[-]"
	if ch.Ratio.Valid() {
		iv = fmt.Sprintf("[%+.0f%%, %+.0f%%]", (ch.Ratio.Low-1)*100, (ch.Ratio.High-1)*100)
	}
	if !ch.Significant {
		return "~ " + iv + " indistinguishable (" + n + ")"
	}
	return ch.Delta + " " + iv + " " + ch.Faster + ", " + changeWords[ch.Verdict()] + " (" + n + ")"
}
