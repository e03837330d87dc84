package render

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// RunFacts prints one line on where and how a run ran: cells, rounds, failures,
// runner, machine and the time it took.
func RunFacts(w io.Writer, run *results.Run) error {
	ok, failed, partial := run.Tally()
	m := run.Machine
	fmt.Fprintf(w, "%d cells x %d rounds (%d ok, %d failed, %d partial)", len(run.Cells), run.Spec.Rounds, ok, failed, partial)
	forked, rounds := 0, 0
	for _, c := range run.Cells {
		if run.Spec.ForksFor(c.Cell) > 1 {
			forked, rounds = forked+1, run.Spec.RoundsFor(c.Cell)
		}
	}
	if forked > 0 {
		fmt.Fprintf(w, "; the %d cells on Java servers %d rounds over %d server starts (forks)", forked, rounds, run.Spec.Forks)
	}
	added := 0
	for _, r := range run.Rounds {
		if r.Added {
			added += len(r.Order)
		}
	}
	if added > 0 {
		fmt.Fprintf(w, "; %d cell runs added in extra rounds where the intervals were widest (precision %s, budget %v)", added, pctOf(float64(run.Spec.Precision)), run.Spec.Budget.D())
	}
	fmt.Fprintf(w, ", %s runner, on %s (%d cores, %d MB, %s)", run.Runner, orDash(m.CPU), m.Cores, m.MemMB, orDash(m.OS))
	if !run.Started.IsZero() && run.Finished.After(run.Started) {
		fmt.Fprintf(w, ", %s on %s", run.Finished.Sub(run.Started).Round(1e9), run.Started.Format("2006-01-02"))
	}
	_, err := fmt.Fprintln(w, ".")
	return err
}

// ResultsTable prints the run's requests/s as one Markdown table: a row per
// client-protocol pair in the run's order, a column per items and concurrency
// of the run's first call (the median over the good repeats, ± its 95 %
// interval's half-width: where a rerun lands), and the client's CPU µs per call
// at the middle items count and the highest concurrency.
func ResultsTable(w io.Writer, run *results.Run) error {
	s := run.Spec
	if len(s.Calls) == 0 || len(s.Items) == 0 || len(s.Concurrency) == 0 {
		return fmt.Errorf("run %s: its spec has no calls, items or concurrency", run.ID)
	}
	call := s.Calls[0]
	items, concs := slices.Sorted(slices.Values(s.Items)), slices.Sorted(slices.Values(s.Concurrency))
	cpuItems, cpuConc := items[len(items)/2], concs[len(concs)-1]
	cells := map[string]results.CellResult{}
	var pairs []string
	for _, c := range run.Cells {
		if c.Call != call || c.Link != "" || c.Nodes != 0 {
			continue
		}
		p := c.Client + "-" + c.Protocol
		if !slices.Contains(pairs, p) {
			pairs = append(pairs, p)
		}
		cells[plan.Cell{Client: c.Client, Protocol: c.Protocol, Call: call, Items: c.Items, Concurrency: c.Concurrency}.Name()] = c
	}
	if len(pairs) == 0 {
		return fmt.Errorf("run %s: no %s cell", run.ID, call)
	}
	u := analysis.UncertaintyOf(run)
	rps, _ := analysis.FigureByKey("rps")
	ccpu, _ := analysis.FigureByKey("client_cpu_us_per_call")
	var b strings.Builder
	b.WriteString("| client-protocol |")
	for _, n := range items {
		for _, c := range concs {
			fmt.Fprintf(&b, " %d items c%d |", n, c)
		}
	}
	fmt.Fprintf(&b, " client CPU µs/call (%d, c%d) |\n|---|", cpuItems, cpuConc)
	for range len(items)*len(concs) + 1 {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, p := range pairs {
		client, proto, _ := plan.SplitClient(p)
		fig := func(n, c int, f analysis.Figure) string {
			cell, ok := cells[plan.Cell{Client: client, Protocol: proto, Call: call, Items: n, Concurrency: c}.Name()]
			if !ok || cell.Status == results.StatusFailed {
				return "—"
			}
			v := cell.Stat(f.F).Median
			if math.IsNaN(v) {
				return "—"
			}
			if iv := u.Interval(cell, f); iv.Valid() {
				return sig(v) + pm(iv, 1) // ±% only when symmetric, else [low-high]
			}
			return sig(v)
		}
		fmt.Fprintf(&b, "| %s |", p)
		for _, n := range items {
			for _, c := range concs {
				fmt.Fprintf(&b, " %s |", fig(n, c, rps))
			}
		}
		fmt.Fprintf(&b, " %s |\n", fig(cpuItems, cpuConc, ccpu))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Reproducibility prints, for two runs of one spec, how well their intervals
// held each other's medians (analysis.Calibrate) as a Markdown table, and the
// verdicts that flipped, with the goal beside them (at least 90 % both ways, no
// flip; docs/method.md, section 11).
func Reproducibility(w io.Writer, a, b *results.Run) error {
	cal, flips := analysis.Calibrate(a, b)
	if len(cal) == 0 {
		return fmt.Errorf("runs %s and %s share no cell", a.ID, b.ID)
	}
	var sb strings.Builder
	sb.WriteString("| figure | B's median in A's interval | A's in B's | median half-width A / B | rerun difference, 95th percentile | half-width / rerun p95 | this run alone A / B | rounds ±5 % in-run would need |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	share := func(n, of int) string {
		return fmt.Sprintf("%d of %d, %.0f %%", n, of, 100*float64(n)/float64(max(1, of)))
	}
	for _, c := range cal {
		fmt.Fprintf(&sb, "| %s | %s | %s | ±%.0f %% / ±%.0f %% | ±%.0f %% | %.2f | ±%.0f %% / ±%.0f %% | %d |\n", c.Figure.Name, share(c.BInA, c.Cells), share(c.AInB, c.Cells),
			100*c.HalfA, 100*c.HalfB, 100*c.RerunP95, c.Sharpness(), 100*c.InRunA, 100*c.InRunB, c.RoundsFor5)
	}
	line := shiftLine(cal[0]) + apartPhrase(cal)
	sb.WriteString("\n" + strings.ToUpper(line[:1]) + line[1:] + ".\n")
	sb.WriteString(driftsLine(a, b))
	compared, flipped, moved := 0, 0, 0
	for _, f := range flips {
		compared += f.Compared
		flipped += len(f.Flipped)
		moved += f.ToIndist + f.FromIndist
	}
	fmt.Fprintf(&sb, "\nVerdicts (faster, slower, indistinguishable at 95 %%) of B against A's: %d compared, %d flipped between faster and slower, %d moved to or from indistinguishable.\n", compared, flipped, moved)
	_, err := io.WriteString(w, sb.String())
	return err
}

// driftsLine says how far each run's figures moved along it in its server
// groups of at least analysis.DriftCells cells (analysis.RunDrifts); "" when
// neither run has such a group.
func driftsLine(a, b *results.Run) string {
	var parts []string
	for i, r := range []*results.Run{a, b} {
		for _, g := range analysis.RunDrifts(r) {
			if g.Cells >= analysis.DriftCells {
				parts = append(parts, []string{"A", "B"}[i]+": "+groupDriftString(g))
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "\nThe figures along each run (each cell's last round on its first, ± 2 standard errors; docs/method.md, section 11): " + strings.Join(parts, "; ") + ".\n"
}
