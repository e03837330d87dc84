package render

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/results"
)

// Agreement is how well two runs of the same spec agree, cell by cell: whether
// each run's median lies inside the other's 95 % interval (calibration), whether
// a ratio's verdict flipped, and the share of cells whose medians lie within Tol
// of each other, per figure, with the cells outside.
type Agreement struct {
	// Calibration per figure and Flips per kind of comparison and figure
	// (matrix.Calibrate); the goal: at least 90 % both ways, no flip.
	Calibration []analysis.Calibration
	Flips       []analysis.Flips
	Tol         float64
	Figures     []FigureAgreement
	// Outside lists every cell outside Tol on any figure.
	Outside []Disagreement
	// ProbeA and ProbeB: each run's median CPU probe time (µs), client and server
	// core; NaN for a run without probes.
	ProbeA, ProbeB [2]float64
	// Noise models each figure from the two runs' repeats; Took is run A's wall
	// time (0 when unknown).
	Noise []analysis.NoiseModel
	Took  time.Duration
}

// FigureAgreement is one figure's share of agreeing cells.
type FigureAgreement struct {
	Name         string
	Agree, Cells int // cells with the figure in both runs, and those within Tol
}

// Disagreement is one cell outside Tol on at least one figure.
type Disagreement struct {
	Cell    string
	Figures []string // "req/s 1200 -> 1500 (+25 %, outside A's interval)"
}

// Agree compares run b against run a; goal is the share of agreeing cells the
// noise model is asked about.
func Agree(a, b *results.Run, tol, goal float64) Agreement {
	ag := Agreement{Tol: tol}
	ag.ProbeA[0], ag.ProbeA[1] = a.ProbeMedian()
	ag.ProbeB[0], ag.ProbeB[1] = b.ProbeMedian()
	bcells := map[string]results.CellResult{}
	for _, c := range b.Cells {
		bcells[c.Name] = c
	}
	ag.Calibration, ag.Flips = analysis.Calibrate(a, b)
	ua := analysis.UncertaintyOf(a)
	out := map[string]*Disagreement{}
	var order []string
	for _, f := range analysis.AgreeFigures {
		fa := FigureAgreement{Name: f.Name}
		for _, ca := range a.Cells {
			cb, ok := bcells[ca.Name]
			if !ok {
				continue
			}
			ma, mb := ca.Stat(f.F).Median, cb.Stat(f.F).Median
			if math.IsNaN(ma) || math.IsNaN(mb) || ma <= 0 {
				continue
			}
			fa.Cells++
			d := mb/ma - 1
			if math.Abs(d) <= tol {
				fa.Agree++
				continue
			}
			dis, ok := out[ca.Name]
			if !ok {
				dis = &Disagreement{Cell: ca.Name}
				out[ca.Name] = dis
				order = append(order, ca.Name)
			}
			where := "outside A's interval"
			if fig, ok := figureOf(f.Name); ok && ua.Interval(ca, fig).Contains(mb) {
				where = "inside A's interval"
			}
			dis.Figures = append(dis.Figures, fmt.Sprintf("%s %s -> %s (%+.0f %%, %s)", f.Name, sig(ma), sig(mb), d*100, where))
		}
		ag.Figures = append(ag.Figures, fa)
	}
	for _, n := range order {
		ag.Outside = append(ag.Outside, *out[n])
	}
	ag.Noise = analysis.Noise(a, b, measuredShares(ag), tol, goal)
	if !a.Started.IsZero() && a.Finished.After(a.Started) {
		ag.Took = a.Finished.Sub(a.Started)
	}
	return ag
}

// figureOf is the matrix.Figure of an agree figure's name.
func figureOf(name string) (analysis.Figure, bool) {
	for _, f := range analysis.Figures {
		if f.Name == name {
			return f, true
		}
	}
	return analysis.Figure{}, false
}

// Met reports whether the goal holds: for every figure at least share of the
// cells have the other run's median inside their 95 % interval, both ways, and
// no verdict flipped between faster and slower.
func (ag Agreement) Met(share float64) bool {
	if len(ag.Calibration) == 0 {
		return false
	}
	for _, c := range ag.Calibration {
		if c.Cells == 0 || float64(c.BInA) < share*float64(c.Cells) || float64(c.AInB) < share*float64(c.Cells) {
			return false
		}
	}
	for _, f := range ag.Flips {
		if len(f.Flipped) > 0 {
			return false
		}
	}
	return true
}

// Write prints the agreement as text.
func (ag Agreement) Write(w io.Writer, share float64) error {
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
	if len(ag.Outside) > 0 {
		fmt.Fprintf(&b, "\n%d cells outside ±%.0f %%:\n", len(ag.Outside), ag.Tol*100)
		for _, d := range ag.Outside {
			fmt.Fprintf(&b, "  %s: %s\n", d.Cell, strings.Join(d.Figures, ", "))
		}
	}
	writeCalibration(&b, ag)
	writeNoise(&b, ag.Noise, ag.Tol, share, ag.Took)
	verdict := "met"
	if !ag.Met(share) {
		verdict = "not met"
	}
	fmt.Fprintf(&b, "\ngoal (for each figure, >= %.0f %% of cells with the other run's median inside their 95 %% interval, both ways; no verdict flipped between faster and slower): %s\n", share*100, verdict)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCalibration prints the calibration per figure and the verdict flips.
func writeCalibration(b *strings.Builder, ag Agreement) {
	if len(ag.Calibration) == 0 {
		return
	}
	b.WriteString("\ncalibration (the other run's median inside a cell's 95 % interval; docs/method.md, section 11):\n")
	for _, c := range ag.Calibration {
		share := func(n int) string {
			if c.Cells == 0 {
				return "-"
			}
			return pctOf(float64(n) / float64(c.Cells))
		}
		fmt.Fprintf(b, "  %-16s B in A's: %d of %d, %s; A in B's: %d of %d, %s; median half-width ±%s (A), ±%s (B); in-run alone ±%s (A), ±%s (B); ±5 %% in-run needs %d rounds\n",
			c.Figure.Name, c.BInA, c.Cells, share(c.BInA), c.AInB, c.Cells, share(c.AInB),
			pctOf(c.HalfA), pctOf(c.HalfB), pctOf(c.InRunA), pctOf(c.InRunB), c.RoundsFor5)
	}
	if len(ag.Flips) == 0 {
		return
	}
	b.WriteString("\nverdicts, B against A (faster/slower/indistinguishable at 95 %):\n")
	for _, f := range ag.Flips {
		fmt.Fprintf(b, "  %-16s %-16s %d compared: %d the same, %d flipped, %d to indistinguishable, %d from it\n",
			f.Kind, f.Figure, f.Compared, f.SameVerdict, len(f.Flipped), f.ToIndist, f.FromIndist)
		for _, x := range f.Flipped {
			fmt.Fprintf(b, "    flipped: %s\n", x)
		}
	}
}

// measuredShares is the share of cells within Tol per figure (NaN without cells).
func measuredShares(ag Agreement) []float64 {
	var out []float64
	for _, f := range ag.Figures {
		v := math.NaN()
		if f.Cells > 0 {
			v = float64(f.Agree) / float64(f.Cells)
		}
		out = append(out, v)
	}
	return out
}
