// Package render turns a matrix run (internal/matrix) into what people and tools
// read: matrix.csv, matrix.json, matrix.md, bench.txt (Go benchmark format, for
// benchstat), plots (PNG and SVG) and index.html (one self-contained page, html.go). Every renderer is computed from the saved run,
// never from a live one, so a run can be re-rendered by a newer rpcbed.
package render

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rpcbed/rpcbed/internal/stats"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// A Renderer writes one view of a run.
type Renderer func(w io.Writer, run *results.Run) error

// Files are the renderers All writes, by file name in the run directory.
var Files = []struct {
	Name   string
	Render Renderer
}{
	{"matrix.csv", CSV},
	{results.JSONFile, JSON},
	{"matrix.md", Markdown},
	{"bench.txt", Bench},
}

// All writes every file of Files, the plots and index.html into dir, each atomically.
func All(dir string, run *results.Run) error {
	for _, f := range Files {
		var b bytes.Buffer
		if err := f.Render(&b, run); err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
		if err := results.WriteFileAtomic(filepath.Join(dir, f.Name), b.Bytes()); err != nil {
			return err
		}
	}
	if _, err := Plots(filepath.Join(dir, "plots"), run); err != nil {
		return err
	}
	return writeIndex(dir, run)
}

// CSVHeader is matrix.csv's first row: one row per cell of the plan after it
// (status "missing" for a cell with no result), figures are the median over the
// good repeats unless named _min/_max. CPU figures are over each repeat's measured
// window and leave out repeats whose CPU is not used (a flag says why).
var CSVHeader = append([]string{
	"cell", "client", "protocol", "call", "items", "concurrency", "conns", "server", "status", "repeats_ok",
	"rps_median", "rps_min", "rps_max", "rps_spread",
	"p50_us_median", "p99_us_median", "p99_us_min", "p99_us_max",
	"client_cpu_us_per_call", "server_cpu_us_per_call", "client_cpu_process_us_per_call",
	"client_calls_per_cpu_s", "server_calls_per_cpu_s", "client_busy", "server_busy", "bottleneck",
	"max_steal_cores", "max_outside_cores", "flags",
	"bytes_per_response", "failed_calls", "error",
}, ciColumns()...)

// ciColumns are matrix.csv's interval columns, after CSVHeader's: for every timed
// figure, <figure>_ci_low and <figure>_ci_high, the 95 % interval where a rerun's
// median lands (docs/method.md, section 11), and in_run_half_width, the
// widest in-run half-width of req/s and CPU per call (what Spec.Precision holds).
func ciColumns() []string {
	var h []string
	for _, f := range analysis.Figures {
		h = append(h, f.Key+"_ci_low", f.Key+"_ci_high")
	}
	return append(h, "in_run_half_width")
}

// CSV writes matrix.csv.
func CSV(w io.Writer, run *results.Run) error {
	cw := csv.NewWriter(w)
	cw.Write(CSVHeader)
	u := analysis.UncertaintyOf(run)
	for _, c := range run.Cells {
		rps, p99 := c.Stat(results.RPS), c.Stat(results.P99)
		failed := 0.0
		for _, v := range c.Values(results.FailedCalls) {
			failed += v
		}
		sum := c.Summarized()
		spread := math.NaN()
		if rps.N > 0 {
			spread = sum.Spread
		}
		cw.Write(append([]string{
			c.Name, c.Client, c.Protocol, c.Call, strconv.Itoa(c.Items), strconv.Itoa(c.Concurrency), strconv.Itoa(sum.Conns), c.ServerLang, c.Status,
			strconv.Itoa(rps.N),
			num(rps.Median, 2), num(rps.Min, 2), num(rps.Max, 2), num(spread, 3),
			num(c.Stat(results.P50).Median, 0), num(p99.Median, 0), num(p99.Min, 0), num(p99.Max, 0),
			num(c.Stat(results.ClientCPU).Median, 1), num(c.Stat(results.ServerCPU).Median, 1), num(c.Stat(results.ClientCPUProcess).Median, 1),
			num(c.Stat(results.ClientCallsPerCPUS).Median, 0), num(c.Stat(results.ServerCallsPerCPUS).Median, 0),
			num(c.Stat(results.ClientBusy).Median, 3), num(c.Stat(results.ServerBusy).Median, 3), sum.Bottleneck,
			num(sum.MaxStealCores, 3), num(sum.MaxOutsideCores, 3), strings.Join(sum.Flags, " "),
			num(c.Stat(results.BytesPerResponse).Median, 0), num(failed, 0), c.Error,
		}, ciRow(u, c)...))
	}
	for _, c := range missing(run) {
		cw.Write([]string{c.Name(), c.Client, c.Protocol, c.Call, strconv.Itoa(c.Items), strconv.Itoa(c.Concurrency),
			strconv.Itoa(c.Load.ConnsFor(c.Concurrency)), c.ServerLang, "missing", "0",
			"", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "no result: the run did not reach it",
			"", "", "", "", "", "", "", "", "", "", ""})
	}
	cw.Flush()
	return cw.Error()
}

// ciRow is a cell's ciColumns.
func ciRow(u *analysis.Uncertainty, c results.CellResult) []string {
	var row []string
	for _, f := range analysis.Figures {
		iv := u.Interval(c, f)
		if !iv.Valid() {
			row = append(row, "", "")
			continue
		}
		prec := 2
		if f.Key != "rps" {
			prec = 1
		}
		row = append(row, num(iv.Low, prec), num(iv.High, prec))
	}
	return append(row, num(u.Width(c), 3))
}

// missing lists the plan's cells that have no result in the run.
func missing(run *results.Run) []plan.Cell { return run.Missing() }

// num formats v with prec decimals; NaN (no successful repeat) is empty.
func num(v float64, prec int) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// JSON writes matrix.json: the whole run (machine, versions, commit, spec, verify
// pass, every cell with every repeat's report and figures). matrix.LoadRun reads
// it back.
func JSON(w io.Writer, run *results.Run) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(run)
}

// Markdown writes matrix.md: the run's facts, then one table per client, the
// flagged cells with their figures, and the cells of the plan with no result.
func Markdown(w io.Writer, run *results.Run) error {
	var b strings.Builder
	s := run.Spec
	fmt.Fprintf(&b, "# rpcbed matrix %s\n\n", run.ID)
	ok, failed, partial := run.Tally()
	miss := missing(run)
	planned := len(run.Cells) + len(miss)
	fmt.Fprintf(&b, "- %d cells: %d ok, %d failed", planned, ok, failed)
	if partial > 0 {
		fmt.Fprintf(&b, ", %d partial (repeats missing)", partial)
	}
	if len(miss) > 0 {
		fmt.Fprintf(&b, ", %d not run (listed below; rpcbed matrix -resume DIR runs them)", len(miss))
	}
	fmt.Fprintf(&b, "; runner %s; commit %s\n", run.Runner, orDash(run.Commit))
	m := run.Machine
	fmt.Fprintf(&b, "- machine: %s, %d cores, %d MB, %s, kernel %s\n", orDash(m.CPU), m.Cores, m.MemMB, orDash(m.OS), orDash(m.Kernel))
	fmt.Fprintf(&b, "- load per run: %s; %d rounds, %s%s; client cpuset %s, server cpuset %s; store %s; auth %s; clients as %s\n",
		loadString(s.Load), s.Repeats, orderWords(run), primeString(s.Prime, s.PrimeMax), orDash(s.ClientResources.CPUSet), orDash(s.ServerResources.CPUSet), s.Store, onOff(s.Auth != nil && *s.Auth), workerWords(s.Worker))
	for _, o := range s.Overrides {
		fmt.Fprintf(&b, "  - cells %s: %s\n", o.Match, overrideString(o))
	}
	if !run.Started.IsZero() {
		fmt.Fprintf(&b, "- started %s", run.Started.Format("2006-01-02 15:04:05 UTC"))
		if !run.Finished.IsZero() {
			fmt.Fprintf(&b, ", took %s", run.Finished.Sub(run.Started).Round(1e9))
		}
		b.WriteString("\n")
	}
	b.WriteString(linksMarkdown(run))
	b.WriteString(clusterMarkdown(run))
	b.WriteString(primesMarkdown(run))
	b.WriteString(forksMarkdown(run))
	b.WriteString(repeatOrderMarkdown(run))
	b.WriteString("\nEach figure is the median of the good rounds; [low-high] beside req/s and p99, and ±% beside CPU per call, " +
		"is its 95 % interval: where a rerun's median on this machine lands, this run's noise pooled over the cells that share it and " +
		runShiftPhrase(analysis.UncertaintyOf(run)) + " added (docs/method.md, section 11). A cell whose interval of this run alone is wider than ±" +
		pctOf(analysis.PrecisionOf(s)) + " says so in its note. " +
		"CPU figures are over the client's measured window on both sides (docs/method.md): client CPU µs per call " +
		"is the client's own CPU over the window; server CPU µs per call is the server's /stats interpolated to the " +
		"same window. Calls/CPU-s is calls per CPU-second, client / server. Busy is each side's CPU over the window / " +
		"the cores it may use, client / server; bound is client-bound or server-bound at 90 % busy, else latency-bound. " +
		"A repeat whose CPU breaks the invariant (busier than its cores + 5 %) is flagged cpu-invariant and its CPU " +
		"figures are left out. Bytes is the encoded response.\n")

	u := analysis.UncertaintyOf(run)
	drifting := map[string]bool{} // workers the repeat order names
	for _, o := range analysis.RepeatOrders(run) {
		drifting[o.Worker] = o.Drifts
	}
	for _, client := range plan.Clients {
		var rows []results.CellResult
		for _, c := range run.Cells {
			if c.Client == client {
				rows = append(rows, c)
			}
		}
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s client\n\n", client)
		b.WriteString("| cell | conns | req/s | p50 ms | p99 ms | client CPU µs/call | server CPU µs/call | calls/CPU-s | busy | bound | bytes | note |\n")
		b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|\n")
		for _, c := range rows {
			sum := c.Summarized()
			if c.Status == results.StatusFailed {
				fmt.Fprintf(&b, "| %s | %d | - | - | - | - | - | - | - | - | - | failed: %s |\n", c.Name, sum.Conns, mdEscape(short(c.Error, 160)))
				continue
			}
			rps, p99 := c.Stat(results.RPS), c.Stat(results.P99)
			var notes []string
			if c.Status == results.StatusPartial {
				notes = append(notes, fmt.Sprintf("partial: %d of %d repeats", len(c.Repeats), s.Repeats))
			}
			if len(sum.Flags) > 0 {
				notes = append(notes, strings.Join(sum.Flags, ", "))
			}
			if drifting[c.Cell.Client+"-"+c.Cell.Protocol] {
				notes = append(notes, "worker drifts (repeat order)")
			}
			if c.Error != "" {
				notes = append(notes, short(c.Error, 120))
			}
			riv, piv := u.Interval(c, analysis.Figures[0]), u.Interval(c, analysis.Figures[2])
			if w := u.Width(c); w > analysis.PrecisionOf(s) {
				notes = append(notes, fmt.Sprintf("±%s in this run (wider than ±%s)", pctOf(w), pctOf(analysis.PrecisionOf(s))))
			}
			fmt.Fprintf(&b, "| %s | %d | %s [%s-%s] | %s | %s [%s-%s] | %s%s | %s%s | %s / %s | %s / %s | %s | %s | %s |\n",
				c.Name, sum.Conns, sig(rps.Median), sig(riv.Low), sig(riv.High),
				ms(c.Stat(results.P50).Median), ms(p99.Median), ms(piv.Low), ms(piv.High),
				sig(c.Stat(results.ClientCPU).Median), pm(u.Interval(c, analysis.Figures[3])), sig(c.Stat(results.ServerCPU).Median), pm(u.Interval(c, analysis.Figures[4])),
				sig(c.Stat(results.ClientCallsPerCPUS).Median), sig(c.Stat(results.ServerCallsPerCPUS).Median),
				pctOf(c.Stat(results.ClientBusy).Median), pctOf(c.Stat(results.ServerBusy).Median), orDash(sum.Bottleneck),
				num(c.Stat(results.BytesPerResponse).Median, 0), mdEscape(strings.Join(notes, "; ")))
		}
	}
	b.WriteString(ratiosMarkdown(run, u))
	var flagged []results.CellResult
	for _, c := range run.Cells {
		if len(c.Summarized().Flags) > 0 {
			flagged = append(flagged, c)
		}
	}
	if len(flagged) > 0 {
		fmt.Fprintf(&b, "\n## Flagged cells\n\n%d cells carry a flag: noisy (steal over %.0f %% of a core; a wide spread is no flag, "+
			"the interval gives it), cpu-invariant (a side busier than its cores + 5 %%: its CPU figures left out), cpu-scope (the client could not measure its "+
			"CPU over the window), warmup-unsettled (only where an unsettled round's req/s lies outside the settled rounds' range), "+
			"jit-compiling (a JVM side's JIT compiled for over %.0f %% of the window), few-calls (under %d calls in a window: "+
			"one call moves req/s by over %.0f %%), server-restarted.\n\n", len(flagged), results.NoisyStealCores*100, results.JITQuiet*100, results.FewCalls, 100.0/results.FewCalls)
		for _, c := range flagged {
			sum := c.Summarized()
			fmt.Fprintf(&b, "- %s: %s; req/s spread %s, steal %s of a core, outside the cell %s cores", c.Name, strings.Join(sum.Flags, ", "),
				pctOf(sum.Spread), pctOf(sum.MaxStealCores), sig(sum.MaxOutsideCores))
			if sum.ProbeSpread > 0 {
				fmt.Fprintf(&b, ", CPU probe spread %s", pctOf(sum.ProbeSpread))
			}
			if len(sum.Reasons) > 0 {
				fmt.Fprintf(&b, ". %s", mdEscape(short(strings.Join(sum.Reasons, "; "), 600)))
			}
			b.WriteString("\n")
		}
	}
	if len(miss) > 0 {
		fmt.Fprintf(&b, "\n## Not run\n\n%d cells of the plan have no result (the run was interrupted):\n", len(miss))
		for _, c := range miss {
			fmt.Fprintf(&b, "- %s\n", c.Name())
		}
	}
	var bad []results.Verify
	for _, v := range run.Verify {
		if v.Status != results.StatusOK {
			bad = append(bad, v)
		}
	}
	if len(run.Verify) > 0 {
		fmt.Fprintf(&b, "\n## Verify pass\n\n%d client x protocol x call checked with one call before timing; %d failed.\n", len(run.Verify), len(bad))
		for _, v := range bad {
			fmt.Fprintf(&b, "- %s: %s (%s)\n", v.Pair, mdEscape(v.Error), v.Raw)
		}
	}
	if len(run.Versions) > 0 {
		b.WriteString("\n## Versions\n\n")
		keys := make([]string, 0, len(run.Versions))
		for k := range run.Versions {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "- %s: %s\n", k, run.Versions[k])
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// orderWords says how the rounds were ordered: seeded random, or a fixed
// interleaved order (a run from before the rounds were shuffled).
func orderWords(run *results.Run) string {
	if run.Seed == 0 {
		return "interleaved in a fixed order"
	}
	w := fmt.Sprintf("each in a random order (seed %d)", run.Seed)
	if s := run.Spec; s.Precision > 0 {
		added := 0
		for _, r := range run.Rounds {
			if r.Added {
				added += len(r.Order)
			}
		}
		w += fmt.Sprintf(", rounds added to cells wider than ±%s within a budget of %v: %d runs", pctOf(float64(s.Precision)), s.Budget.D(), added)
	}
	return w
}

// pm prints an interval's half-width as " ±12 %" ("" when it has none).
func pm(iv stats.Interval) string {
	if !iv.Valid() {
		return ""
	}
	return " ±" + pctOf(iv.HalfWidth())
}

func workerWords(w *bool) string {
	if w != nil && !*w {
		return "one process per run"
	}
	return "long-lived workers"
}

// pctOf prints a fraction as a whole percentage ("-" for NaN).
func pctOf(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	return strconv.FormatFloat(f*100, 'f', 0, 64) + " %"
}

// primeString is the spec's prime ("; primed: java 2s per item count"), "" for none.
func primeString(p, max map[string]plan.Duration) string {
	if len(p) == 0 {
		return ""
	}
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(p)) {
		part := c + " " + p[c].D().String()
		if m := max[c]; m > 0 {
			part += fmt.Sprintf(" per run, rounds until the JIT rests, at most %v", m.D())
		}
		parts = append(parts, part)
	}
	for _, k := range slices.Sorted(maps.Keys(max)) {
		if _, ok := p[k]; !ok { // a worker's own budget (java-grpc)
			parts = append(parts, fmt.Sprintf("%s at most %v", k, max[k].D()))
		}
	}
	return "; each worker primed before its first repeat, per item count: " + strings.Join(parts, ", ")
}

// primesMarkdown lists how each worker's priming went (Run.Primes).
func primesMarkdown(run *results.Run) string {
	if len(run.Primes) == 0 {
		return ""
	}
	var parts []string
	for _, p := range run.Primes {
		t := fmt.Sprintf("%s %d rounds in %.1f s", p.Worker, p.Rounds, p.Seconds)
		var jit []string
		if p.LastClientJITMs != nil {
			jit = append(jit, fmt.Sprintf("client %.0f ms of %.1f s", *p.LastClientJITMs, p.LastWindowS))
		}
		if p.LastServerJITMs != nil {
			jit = append(jit, fmt.Sprintf("server %.0f ms of %.1f s", *p.LastServerJITMs, p.LastRoundS))
		}
		if len(jit) > 0 {
			t += ", last round's JIT " + strings.Join(jit, ", ")
			if p.AtRest {
				t += " (at rest)"
			} else {
				t += " (not at rest: prime_max)"
			}
		}
		parts = append(parts, t)
	}
	return "- primes: " + strings.Join(parts, "; ") + "\n"
}

// forksMarkdown names the groups that forked (Spec.Forks) and the spread their
// server starts showed between them, beyond their rounds' noise: what the
// intervals of their cells add.
func forksMarkdown(run *results.Run) string {
	spreads := analysis.UncertaintyOf(run).ForkSpreads()
	if len(spreads) == 0 {
		return ""
	}
	var parts []string
	for i := 0; i < len(spreads); {
		g := spreads[i].Group
		var figs []string
		for ; i < len(spreads) && spreads[i].Group == g; i++ {
			figs = append(figs, fmt.Sprintf("%s %s", spreads[i].Figure.Name, pctOf(spreads[i].SD)))
		}
		parts = append(parts, fmt.Sprintf("%s %d server starts, apart by (sd) %s", strings.TrimSuffix(g, "@"), spreads[i-1].Forks, strings.Join(figs, ", ")))
	}
	return "- forks (a JVM server started again mid-group, with fresh workers; the intervals add this spread; docs/method.md, section 11): " + strings.Join(parts, "; ") + "\n"
}

func loadString(l plan.Load) string {
	var parts []string
	if l.N > 0 {
		parts = append(parts, fmt.Sprintf("n %d", l.N))
	}
	if l.Duration > 0 {
		parts = append(parts, "t "+l.Duration.D().String())
	}
	switch {
	case l.Warmup.IsAuto():
		parts = append(parts, "warm-up auto (at most "+l.WarmupBound().String()+")")
	case l.Warmup > 0:
		parts = append(parts, "warm-up "+l.Warmup.D().String())
	}
	switch {
	case l.RepeatWarmup.IsAuto():
		parts = append(parts, "later repeats in a warm worker: warm-up auto")
	case l.RepeatWarmup > 0:
		parts = append(parts, "later repeats in a warm worker: warm-up "+l.RepeatWarmup.D().String())
	}
	if l.Conns > 0 {
		parts = append(parts, fmt.Sprintf("conns %d", l.Conns))
	}
	return strings.Join(parts, ", ")
}

func overrideString(o plan.Override) string {
	var parts []string
	if o.N != nil {
		parts = append(parts, fmt.Sprintf("n %d", *o.N))
	}
	if o.Duration != nil {
		parts = append(parts, "t "+o.Duration.D().String())
	}
	if o.Warmup != nil {
		parts = append(parts, "warm-up "+o.Warmup.String())
	}
	if o.WarmupMax != nil {
		parts = append(parts, "warm-up at most "+o.WarmupMax.String())
	}
	if o.Conns != nil {
		parts = append(parts, fmt.Sprintf("conns %d", *o.Conns))
	}
	if o.Timeout != nil {
		parts = append(parts, "timeout "+o.Timeout.D().String())
	}
	return strings.Join(parts, ", ")
}

// sig prints v with three significant digits at most and no exponent.
func sig(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v == 0:
		return "0"
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case math.Abs(v) >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}

// ms prints microseconds as milliseconds.
func ms(us float64) string { return sig(us / 1000) }

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func short(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
