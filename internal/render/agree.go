package render

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/rpcbed/rpcbed/internal/analysis"
)

// probeLine is one probe's medians on one core in both runs and B's change on A.
func probeLine(name, side string, a, b, change float64) string {
	d := change * 100
	how := "the same time in both runs"
	switch {
	case math.Round(d) > 0:
		how = "the same work took that much longer in B"
	case math.Round(d) < 0:
		how = "the same work took that much less time in B"
	}
	return fmt.Sprintf("%s, %s core: median %s µs in A, %s µs in B (%+.0f %%: %s)\n", name, side, sig(a), sig(b), d, how)
}

// poolHint closes a one-pair goal that was not met: one pair is one draw of
// the machine's move (docs/method.md, section 11, "Calibration over several
// pairs").
const poolHint = "; one pair is one draw of the machine's move between runs, and even calibrated intervals meet its shares in a figure in about 1 pair of 5: pool several pairs (rpcbed agree A B A2 B2 ..., make bench-reproducibility PAIRS=4)"

// AgreeText prints an agreement (analysis.Agree) as `rpcbed agree` does; share
// is the goal's share of cells.
func AgreeText(w io.Writer, ag analysis.Agreement, share float64) error {
	var b strings.Builder
	for _, f := range ag.Figures {
		fmt.Fprintf(&b, "%-16s %d of %d cells within ±%.0f %%: %s\n", f.Name, f.Agree, f.Cells, ag.Tol*100, pctOf(f.Share()))
	}
	for _, p := range []struct {
		name   string
		a, b   [2]float64
		change func(int) (float64, bool)
	}{
		{"CPU probe", ag.ProbeA, ag.ProbeB, ag.ProbeChange},
		{"cache probe", ag.CacheA, ag.CacheB, ag.CacheChange},
	} {
		for i, side := range []string{"client", "server"} {
			if change, ok := p.change(i); ok {
				b.WriteString(probeLine(p.name, side, p.a[i], p.b[i], change))
			}
		}
	}
	if len(ag.Outside) > 0 {
		fmt.Fprintf(&b, "\n%d cells outside ±%.0f %%:\n", len(ag.Outside), ag.Tol*100)
		for _, d := range ag.Outside {
			var figs []string
			for _, m := range d.Figures {
				where := "outside A's interval"
				if m.InsideA {
					where = "inside A's interval"
				}
				figs = append(figs, fmt.Sprintf("%s %s -> %s (%+.0f %%, %s)", m.Figure, sig(m.A), sig(m.B), m.Change*100, where))
			}
			fmt.Fprintf(&b, "  %s: %s\n", d.Cell, strings.Join(figs, ", "))
		}
	}
	writeCalibration(&b, ag)
	writeNoise(&b, ag.Noise, ag.Tol, share, ag.Took)
	writeDrifts(&b, ag)
	verdict := "met"
	if !ag.Met(share) {
		verdict = "not met: " + strings.Join(ag.Misses(share), "; ")
		if moved := ag.Moved(); len(moved) > 0 && ag.Undercovered(share) {
			verdict += fmt.Sprintf("; the figures of run %s moved along the run (above): not a quiet pair", strings.Join(moved, " and "))
		}
		if far := ag.FartherApart(share); len(far) > 0 {
			verdict += fmt.Sprintf("; in %s the runs lay more than %.0f times the interval's run shift apart (above): the machine moved between the runs more than that run's probe saw", strings.Join(far, ", "), analysis.ApartBeyond)
		}
		verdict += poolHint
	}
	fmt.Fprintf(&b, "\ngoal (for each figure, %.0f-%.0f %% of cells with the other run's median inside their 95 %% interval, both ways, at a median half-width of at most %.1f x the rerun difference's 95th percentile; no verdict flipped between faster and slower): %s\n", share*100, analysis.CoverHigh*100, analysis.SharpGoal, verdict)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCalibration prints the calibration per figure and the verdict flips.
func writeCalibration(b *strings.Builder, ag analysis.Agreement) {
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
		fmt.Fprintf(b, "  %-16s B in A's: %d of %d, %s; A in B's: %d of %d, %s; median half-width ±%s (A), ±%s (B), %.2f x the rerun difference's 95th percentile (±%s); in-run alone ±%s (A), ±%s (B); ±5 %% in-run needs %d rounds\n",
			c.Figure.Name, c.BInA, c.Cells, share(c.BInA), c.AInB, c.Cells, share(c.AInB),
			pctOf(c.HalfA), pctOf(c.HalfB), c.Sharpness(), pctOf(c.RerunP95), pctOf(c.InRunA), pctOf(c.InRunB), c.RoundsFor5)
	}
	b.WriteString("  " + shiftLine(ag.Calibration[0]) + apartPhrase(ag.Calibration) + "\n")
	writePools(b, ag.Calibration)
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

// writePools prints, per pool of cells (a client on a server group), how far
// B lay from A across its cells and how many of its cells' two ways missed,
// per figure: where a machine's move between the runs fell hardest.
func writePools(b *strings.Builder, cals []analysis.Calibration) {
	var order []string
	per := map[string][]string{}
	for _, c := range cals {
		for _, p := range c.Pools {
			if _, ok := per[p.Pool]; !ok {
				order = append(order, p.Pool)
			}
			per[p.Pool] = append(per[p.Pool], fmt.Sprintf("%s %+.0f %% (%d of %d outside)", c.Figure.Name, math.Round(p.Apart*100)+0, p.Missed, 2*p.Cells))
		}
	}
	if len(order) < 2 {
		return
	}
	slices.Sort(order)
	b.WriteString("  by pool (a client on a server group): B from A across its cells, and its cells' medians outside the other run's interval, both ways counted:\n")
	for _, k := range order {
		fmt.Fprintf(b, "    %-24s %s\n", k, strings.Join(per[k], ", "))
	}
}

// shiftLine says what run shift the intervals took, and where it came from.
func shiftLine(c analysis.Calibration) string {
	if c.Measured {
		return fmt.Sprintf("run shift against a rerun, from each run's CPU probe along the run: ±%s (A), ±%s (B) (sd)", pctOf(c.ShiftA), pctOf(c.ShiftB))
	}
	return fmt.Sprintf("run shift against a rerun: ±%s (A), ±%s (B) (sd; a run without probe times to measure its own takes %s)", pctOf(c.ShiftA), pctOf(c.ShiftB), pctOf(analysis.FallbackRunShift))
}

// apartPhrase says how far the runs lay apart across the cells, per figure,
// and how many of each run's shift that is: "; across the cells B lay -9 %
// (req/s), ... from A: 1.80, ... times A's run shift, 2.95, ... times B's"; ""
// without cells.
func apartPhrase(cals []analysis.Calibration) string {
	var apart []string
	times := [2][]string{}
	for _, c := range cals {
		if c.Cells == 0 {
			continue
		}
		apart = append(apart, fmt.Sprintf("%+.0f %% (%s)", math.Round(c.Apart*100)+0, c.Figure.Name)) // +0: no "-0 %"
		for r := range times {
			if t := c.ApartTimes(r); !math.IsNaN(t) {
				times[r] = append(times[r], fmt.Sprintf("%.2f", t))
			}
		}
	}
	if len(apart) == 0 {
		return ""
	}
	out := "; across the cells B lay " + strings.Join(apart, ", ") + " from A"
	if len(times[0]) == len(apart) && len(times[1]) == len(apart) {
		out += ": " + strings.Join(times[0], ", ") + " times A's run shift, " + strings.Join(times[1], ", ") + " times B's"
	}
	return out
}

// runShiftPhrase names the run shift u's intervals add, and where it came from.
func runShiftPhrase(u *analysis.Uncertainty) string {
	if u.ShiftMeasured {
		return "a whole run's shift of " + pctOf(u.Shift) + " (sd), measured from the CPU probe timed before every round along the run"
	}
	return "a whole run's shift of " + pctOf(u.Shift) + " (sd; this run has no probe times to measure its own)"
}

// writeDrifts prints how far each run's figures moved along it, per server
// group (analysis.RunDrifts), beside the CPU probe over the same repeats.
func writeDrifts(b *strings.Builder, ag analysis.Agreement) {
	if len(ag.DriftA) == 0 && len(ag.DriftB) == 0 {
		return
	}
	b.WriteString("\nthe figures along each run " + driftLegend() + ":\n")
	for i, d := range [][]analysis.GroupDrift{ag.DriftA, ag.DriftB} {
		for _, g := range d {
			fmt.Fprintf(b, "  %s  %s\n", []string{"A", "B"}[i], groupDriftString(g))
		}
	}
}
