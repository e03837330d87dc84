package render

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// mdSections are matrix.md's sections, in order: each prints one part of the
// run's view.
var mdSections = []func(b *strings.Builder, v *analysis.View){
	mdFacts, mdLegend, mdClientTables, mdRatios, mdTLSCost, mdFlagged, mdNotRun, mdVerify, mdVersions,
}

// Markdown writes matrix.md: the run's facts, then one table per client, the
// ratios, the flagged cells with their figures, and the cells of the plan with
// no result.
func Markdown(w io.Writer, run *results.Run) error {
	v := analysis.ViewOf(run)
	var b strings.Builder
	for _, sec := range mdSections {
		sec(&b, v)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdFacts(b *strings.Builder, v *analysis.View) {
	run, s := v.Run, v.Run.Spec
	fmt.Fprintf(b, "# rpcbed matrix %s\n\n", run.ID)
	ok, failed, partial := run.Tally()
	miss := missing(run)
	fmt.Fprintf(b, "- %d cells: %d ok, %d failed", len(run.Cells)+len(miss), ok, failed)
	if partial > 0 {
		fmt.Fprintf(b, ", %d partial (repeats missing)", partial)
	}
	if len(miss) > 0 {
		fmt.Fprintf(b, ", %d not run (listed below; rpcbed matrix -resume DIR runs them)", len(miss))
	}
	fmt.Fprintf(b, "; runner %s; commit %s\n", run.Runner, orDash(run.Commit))
	m := run.Machine
	fmt.Fprintf(b, "- machine: %s, %d cores, %d MB, %s, kernel %s\n", orDash(m.CPU), m.Cores, m.MemMB, orDash(m.OS), orDash(m.Kernel))
	if sh := SharedMachine(v); sh != "" {
		fmt.Fprintf(b, "  -%s\n", sh)
	}
	fmt.Fprintf(b, "- load per run: %s; %d rounds, %s%s; client cpuset %s, server cpuset %s; store %s; auth %s; clients as %s\n",
		loadString(s.Load), s.Rounds, orderWords(run), primeString(s.Prime, s.PrimeMax), orDash(s.ClientResources.CPUSet), orDash(s.ServerResources.CPUSet), s.Store, onOff(s.Auth != nil && *s.Auth), workerWords(s.Worker))
	for _, o := range s.Overrides {
		fmt.Fprintf(b, "  - cells %s: %s\n", o.Match, overrideString(o))
	}
	if !run.Started.IsZero() {
		fmt.Fprintf(b, "- started %s", run.Started.Format("2006-01-02 15:04:05 UTC"))
		if !run.Finished.IsZero() {
			took := run.Finished.Sub(run.Started).Round(1e9)
			fmt.Fprintf(b, ", took %s", took)
			// The budget bounds only the rounds the precision loop adds: a run
			// over it spent that on the spec's own rounds (a slower or shared
			// machine), and says so rather than leave it to the reader.
			if bu := s.Budget.D(); bu > 0 && !s.Budget.IsAuto() && took > bu {
				fmt.Fprintf(b, ", over the spec's budget of %s by %s (the budget bounds only the rounds added for precision)", bu, took-bu)
			}
		}
		b.WriteString("\n")
	}
	b.WriteString(linksMarkdown(run))
	b.WriteString(clusterMarkdown(run))
	b.WriteString(primesMarkdown(run))
	b.WriteString(forksMarkdown(run))
	b.WriteString(repeatOrderMarkdown(run))
	b.WriteString(runDriftMarkdown(run))
}

func mdLegend(b *strings.Builder, v *analysis.View) {
	s := v.Run.Spec
	b.WriteString("\nEach figure is the median of the good rounds; beside it, its 95 % interval: ±% where it is symmetric, [low-high] " +
		"where it is not (in the figure's unit). It is where a rerun's median on this machine lands, this run's noise pooled over the cells that share it and " +
		runShiftPhrase(v.U) + " added (docs/method.md, section 11). A cell whose interval of this run alone is wider than ±" +
		pctOf(analysis.PrecisionOf(s)) + " says so in its note. " +
		"CPU figures are over the client's measured window on both sides (docs/method.md): client CPU µs per call " +
		"is the client's own CPU over the window; server CPU µs per call is the server's /stats interpolated to the " +
		"same window. Calls/CPU-s is calls per CPU-second, client / server. Busy is each side's CPU over the window / " +
		"the cores it may use, client / server; bound is client-bound or server-bound at " + pctOf(results.BoundBusy) + " busy, else latency-bound. " +
		"A flag in the note is a reason not to trust a figure (the list of flags closes this file). Bytes is the encoded response.\n")
}

func mdClientTables(b *strings.Builder, v *analysis.View) {
	for _, client := range plan.Clients {
		var rows []analysis.CellView
		for _, c := range v.Cells {
			if c.Client == client {
				rows = append(rows, c)
			}
		}
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(b, "\n## %s client\n\n", client)
		b.WriteString("| cell | conns | req/s | p50 ms | p99 ms | client CPU µs/call | server CPU µs/call | calls/CPU-s | busy | bound | bytes | note |\n")
		b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|\n")
		for _, c := range rows {
			b.WriteString(mdCellRow(c))
		}
	}
}

// mdCellRow is one cell's row of its client's table.
func mdCellRow(c analysis.CellView) string {
	if c.Status == results.StatusFailed {
		return fmt.Sprintf("| %s | %d | - | - | - | - | - | - | - | - | - | failed: %s |\n", c.Name, c.Sum.Conns, mdEscape(short(c.Error, 160)))
	}
	fig := func(i analysis.FigureIndex) string {
		f := i.Figure()
		return sig(c.Median[i]*f.Scale) + pm(c.Interval[i], f.Scale)
	}
	return fmt.Sprintf("| %s | %d | %s | %s | %s | %s | %s | %s / %s | %s / %s | %s | %s | %s |\n",
		mdFlagMark(c), c.Sum.Conns, fig(analysis.FigRPS), ms(c.Median[analysis.FigP50]), fig(analysis.FigP99),
		fig(analysis.FigClientCPU), fig(analysis.FigServerCPU),
		sig(c.Stat(results.ClientCallsPerCPUS).Median), sig(c.Stat(results.ServerCallsPerCPUS).Median),
		pctOf(c.Stat(results.ClientBusy).Median), pctOf(c.Stat(results.ServerBusy).Median), orDash(c.Sum.Bottleneck),
		num(c.Stat(results.BytesPerResponse).Median, 0), mdEscape(strings.Join(c.Notes, "; ")))
}

// mdFlagMark is a cell's name, marked "⚑" when it carries a flag (in every
// table that shows it).
func mdFlagMark(c analysis.CellView) string {
	if c.Flagged() {
		return c.Name + " ⚑"
	}
	return c.Name
}

func mdRatios(b *strings.Builder, v *analysis.View) { b.WriteString(ratiosMarkdown(v)) }

func mdFlagged(b *strings.Builder, v *analysis.View) {
	flagged := v.FlaggedCells()
	if len(flagged) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## Flagged cells\n\n%d cells carry a flag (⚑ in every table). What each flag means for the figures:\n\n", len(flagged))
	for _, d := range results.FlagRules {
		if n := countFlag(flagged, d.Flag); n > 0 {
			fmt.Fprintf(b, "- %s, %d of them: %s; %s.\n", d.Flag, n, d.Means, d.Reading)
		}
	}
	b.WriteString("\n")
	for _, c := range flagged {
		sum := c.Sum
		fmt.Fprintf(b, "- %s: %s; req/s spread %s, steal %s of a core, outside the cell %s cores", c.Name, strings.Join(sum.Flags, ", "),
			pctOf(sum.Spread), pctOf(sum.MaxStealCores), sig(sum.MaxOutsideCores))
		if sum.ProbeSpread > 0 {
			fmt.Fprintf(b, ", CPU probe spread %s", pctOf(sum.ProbeSpread))
		}
		if len(sum.Reasons) > 0 {
			fmt.Fprintf(b, ". %s", mdEscape(short(strings.Join(sum.Reasons, "; "), 600)))
		}
		b.WriteString("\n")
	}
}

// countFlag counts the cells carrying flag.
func countFlag(cells []analysis.CellView, flag string) int {
	n := 0
	for _, c := range cells {
		if slices.Contains(c.Sum.Flags, flag) {
			n++
		}
	}
	return n
}

func mdNotRun(b *strings.Builder, v *analysis.View) {
	miss := missing(v.Run)
	if len(miss) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## Not run\n\n%d cells of the plan have no result (the run was interrupted):\n", len(miss))
	for _, c := range miss {
		fmt.Fprintf(b, "- %s\n", c.Name())
	}
}

func mdVerify(b *strings.Builder, v *analysis.View) {
	run := v.Run
	if len(run.Verify) == 0 {
		return
	}
	var bad []results.Verify
	for _, x := range run.Verify {
		if x.Status != results.StatusOK {
			bad = append(bad, x)
		}
	}
	fmt.Fprintf(b, "\n## Verify pass\n\n%d client x protocol x call checked with one call before timing; %d failed.\n", len(run.Verify), len(bad))
	for _, x := range bad {
		fmt.Fprintf(b, "- %s: %s (%s)\n", x.Pair, mdEscape(x.Error), x.Raw)
	}
}

func mdVersions(b *strings.Builder, v *analysis.View) {
	if len(v.Run.Versions) == 0 {
		return
	}
	b.WriteString("\n## Versions\n\n")
	for _, k := range slices.Sorted(maps.Keys(v.Run.Versions)) {
		fmt.Fprintf(b, "- %s: %s\n", k, v.Run.Versions[k])
	}
}
