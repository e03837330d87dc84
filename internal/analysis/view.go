package analysis

import (
	"fmt"
	"math"
	"strings"

	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// View is a run as every renderer shows it, computed once (as ghz's Finalize
// builds the one Report its printers render): each cell's view, the noise model
// and the paired comparisons. matrix.csv, matrix.md, index.html and ratios.csv
// print it; none computes a figure of its own.
type View struct {
	Run         *results.Run
	U           *Uncertainty
	Cells       []CellView
	Comparisons []Comparison
	byName      map[string]int
}

// CellView is one cell as the tables show it: its summary under today's rules
// (results.CellResult.Summarized, computed once here), every timed figure's
// median and 95 % interval, the in-run half-width, and the note every table
// gives beside it.
type CellView struct {
	results.CellResult
	Sum      *results.Summary
	Median   [figureCount]float64
	Interval [figureCount]stats.Interval
	// Width is the widest in-run half-width (Uncertainty.Width); Wide says it is
	// past the precision the spec holds cells to.
	Width float64
	Wide  bool
	// Notes: partial, the cell's flags, a drifting worker, its errors and a wide
	// in-run interval, in that order (matrix.md's note, the page's note).
	Notes []string
}

// Flagged says whether the cell carries a flag: a reason not to trust a figure.
func (c CellView) Flagged() bool { return c.Sum != nil && len(c.Sum.Flags) > 0 }

// Noisy says whether the cell carries the noisy flag.
func (c CellView) Noisy() bool { return c.CellResult.Noisy() }

// ViewOf computes run's view.
func ViewOf(run *results.Run) *View {
	u := UncertaintyOf(run)
	v := &View{Run: run, U: u, Comparisons: u.Comparisons(), byName: map[string]int{}}
	drifting := map[string]bool{}
	for _, o := range RepeatOrders(run) {
		drifting[o.Worker] = o.Drifts
	}
	prec := PrecisionOf(run.Spec)
	for i, c := range run.Cells {
		cv := CellView{CellResult: c, Sum: c.Summarized(), Width: u.Width(c)}
		for _, f := range Figures {
			cv.Median[f.Index] = c.Stat(f.F).Median
			cv.Interval[f.Index] = u.Interval(c, f)
		}
		cv.Wide = cv.Width > prec
		if c.Status == results.StatusPartial {
			cv.Notes = append(cv.Notes, fmt.Sprintf("partial: %d of %d repeats", len(c.Repeats), run.Spec.Repeats))
		}
		if len(cv.Sum.Flags) > 0 {
			cv.Notes = append(cv.Notes, strings.Join(cv.Sum.Flags, ", "))
		}
		if drifting[c.Cell.Client+"-"+c.Cell.Protocol] {
			cv.Notes = append(cv.Notes, "worker drifts (repeat order)")
		}
		if c.Error != "" {
			cv.Notes = append(cv.Notes, shortText(c.Error, 120))
		}
		if cv.Wide {
			cv.Notes = append(cv.Notes, fmt.Sprintf("±%s in this run (wider than ±%s)", pctText(cv.Width), pctText(prec)))
		}
		v.Cells = append(v.Cells, cv)
		v.byName[c.Name] = i
	}
	return v
}

// Cell is the view of the cell named name.
func (v *View) Cell(name string) (CellView, bool) {
	i, ok := v.byName[name]
	if !ok {
		return CellView{}, false
	}
	return v.Cells[i], true
}

// FlaggedCells are the cells that carry a flag, in the run's order: the one
// count matrix.md and the page give.
func (v *View) FlaggedCells() []CellView {
	var out []CellView
	for _, c := range v.Cells {
		if c.Flagged() {
			out = append(out, c)
		}
	}
	return out
}

func shortText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// pctText prints a fraction as a whole percentage ("-" for NaN).
func pctText(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	return fmt.Sprintf("%.0f %%", f*100)
}
