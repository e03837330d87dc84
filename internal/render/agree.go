package render

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/analysis"
)

// AgreeText prints an agreement as text: rpcbed agree's output.
func AgreeText(w io.Writer, ag analysis.Agreement, share float64) error {
	var b strings.Builder
	for _, f := range ag.Figures {
		pct := math.NaN()
		if f.Cells > 0 {
			pct = float64(f.Agree) / float64(f.Cells)
		}
		fmt.Fprintf(&b, "%-16s %d of %d cells within ±%.0f %%: %s\n", f.Name, f.Agree, f.Cells, ag.Tol*100, pctOf(pct))
	}
	for i, side := range []string{"client", "server"} {
		a, bb := ag.ProbeA[i], ag.ProbeB[i]
		if math.IsNaN(a) || math.IsNaN(bb) || a <= 0 {
			continue
		}
		d := (bb/a - 1) * 100
		how := "the same time in both runs"
		switch {
		case math.Round(d) > 0:
			how = "the same work took that much longer in B"
		case math.Round(d) < 0:
			how = "the same work took that much less time in B"
		}
		fmt.Fprintf(&b, "CPU probe, %s core: median %s µs in A, %s µs in B (%+.0f %%: %s)\n", side, sig(a), sig(bb), d, how)
	}
	unflagged := 0
	if len(ag.Outside) > 0 {
		fmt.Fprintf(&b, "\n%d cells outside ±%.0f %%:\n", len(ag.Outside), ag.Tol*100)
		for _, d := range ag.Outside {
			flag := "noisy in neither run"
			switch {
			case d.NoisyA && d.NoisyB:
				flag = "noisy in both runs"
			case d.NoisyA:
				flag = "noisy in run A"
			case d.NoisyB:
				flag = "noisy in run B"
			}
			if !d.NoisyA && !d.NoisyB {
				unflagged++
			}
			fmt.Fprintf(&b, "  %s: %s; %s\n", d.Cell, strings.Join(changeTexts(d.Changes), ", "), flag)
		}
	}
	writeNoise(&b, ag.Noise, ag.Tol, share, ag.Took)
	verdict := "met"
	if !ag.Met(share) {
		verdict = "not met"
	}
	fmt.Fprintf(&b, "\ngoal (>= %.0f %% of cells within ±%.0f %% for each figure, every cell outside flagged noisy in a run): %s", share*100, ag.Tol*100, verdict)
	if unflagged > 0 {
		fmt.Fprintf(&b, "; %d cells outside are flagged in neither run", unflagged)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeNoise prints the models; took is run A's wall time, which scales to the
// repeats the goal needs (start-up, verify and primes scale too: an upper bound).
func writeNoise(b *strings.Builder, models []analysis.NoiseModel, tol, goal float64, took time.Duration) {
	if len(models) == 0 {
		return
	}
	fmt.Fprintf(b, "\nnoise model (a repeat's distance from its cell's mean within a run, pooled over the cells, resampled %d times per repeat count; docs/method.md, section 6):\n", analysis.NoiseTrials)
	for _, m := range models {
		if m.Cells == 0 {
			fmt.Fprintf(b, "  %-16s no cell has two repeats in both runs\n", m.Figure)
			continue
		}
		var runs []string
		if m.Shift != 0 {
			runs = append(runs, fmt.Sprintf("across the cells B lies %+.0f %% from A (the whole run moved)", m.Shift*100))
		}
		if m.RunSD > 0 {
			runs = append(runs, fmt.Sprintf("the runs differ beyond it by %.0f %% per cell (sd)", m.RunSD*100))
		}
		if len(runs) == 0 {
			runs = append(runs, "the runs differ no more than that noise explains")
		}
		fmt.Fprintf(b, "  %-16s a repeat lies a median %.0f %% from its cell's mean (%d repeats, %d cells); %s\n", m.Figure, m.MedianDev*100, m.Deviations, m.Cells, strings.Join(runs, "; "))
		fmt.Fprintf(b, "  %-16s predicts %s within ±%.0f %% at %d repeats (measured %s); ", "", pctOf(m.Predicted), tol*100, m.Repeats, pctOf(m.Measured))
		switch {
		case m.Needed == 0:
			fmt.Fprintf(b, "%.0f %% needs more than %d repeats per cell\n", goal*100, analysis.NoiseRepeats[len(analysis.NoiseRepeats)-1])
		case took > 0 && m.Repeats > 0:
			est := took.Minutes() * float64(m.Needed) / float64(m.Repeats)
			fmt.Fprintf(b, "%.0f %% needs %d repeats per cell (a run of about %.0f min, from run A's %s for %d)\n", goal*100, m.Needed, est, took.Round(time.Second), m.Repeats)
		default:
			fmt.Fprintf(b, "%.0f %% needs %d repeats per cell\n", goal*100, m.Needed)
		}
	}
}

// changeTexts prints each figure's change: "req/s 1200 -> 1500 (+25 %)".
func changeTexts(cs []analysis.FigureChange) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s %s -> %s (%+.0f %%)", c.Figure, sig(c.A), sig(c.B), (c.B/c.A-1)*100))
	}
	return out
}
