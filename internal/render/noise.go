package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/analysis"
)

// writeNoise prints the models; took is run A's wall time, which
// NoiseModel.RunMinutes scales to the repeats the goal needs.
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
		fmt.Fprintf(b, "  %-16s a repeat lies a median %.0f %% from its cell's mean (%.0f %% in A, %.0f %% in B; %d repeats, %d cells); %s\n", m.Figure, m.MedianDev*100, m.MedianDevA*100, m.MedianDevB*100, m.Deviations, m.Cells, strings.Join(runs, "; "))
		fmt.Fprintf(b, "  %-16s predicts %s within ±%.0f %% at %d repeats (measured %s); ", "", pctOf(m.Predicted), tol*100, m.Repeats, pctOf(m.Measured))
		switch {
		case m.Needed == 0:
			fmt.Fprintf(b, "%.0f %% needs more than %d repeats per cell\n", goal*100, analysis.NoiseRepeats[len(analysis.NoiseRepeats)-1])
		case m.RunMinutes(took) > 0:
			est := m.RunMinutes(took)
			fmt.Fprintf(b, "%.0f %% needs %d repeats per cell (a run of about %.0f min, from run A's %s for %d)\n", goal*100, m.Needed, est, took.Round(time.Second), m.Repeats)
		default:
			fmt.Fprintf(b, "%.0f %% needs %d repeats per cell\n", goal*100, m.Needed)
		}
	}
}
