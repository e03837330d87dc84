// Package render turns a matrix run (internal/matrix) into what people and tools
// read: matrix.csv, matrix.json, matrix.md, bench.txt (Go benchmark format, for
// benchstat), plots (PNG and SVG) and index.html (one self-contained page, html.go). Every renderer is computed from the saved run,
// never from a live one, so a run can be re-rendered by a newer rpcbed.
package render

import (
	"bytes"
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
	{RatiosFile, RatiosCSV},
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

// JSON writes matrix.json: the whole run (machine, versions, commit, spec, verify
// pass, every cell with every repeat's report and figures) and its ratios, as
// ratios.csv's rows. results.LoadRun reads the run back (and leaves the ratios,
// which it recomputes).
func JSON(w io.Writer, run *results.Run) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	v := analysis.ViewOf(run)
	ratios := v.Records()
	if ratios == nil {
		ratios = []analysis.RatioRecord{}
	}
	return enc.Encode(struct {
		*results.Run
		Ratios []analysis.RatioRecord `json:"ratios"`
		// Handshakes: each per-call cell's handshakes per call and extra CPU
		// per call and per handshake on each side (matrix.md, "What a
		// connection per call costs"); absent without per-call cells.
		Handshakes []analysis.HandshakeRecord `json:"handshakes,omitempty"`
	}{run, ratios, v.HandshakeRecords()})
}

// RatiosFile is the run's comparisons, one row per ratio (docs/reports.md).
const RatiosFile = "ratios.csv"

// RatiosCSV writes ratios.csv: every ratio the page and matrix.md print.
func RatiosCSV(w io.Writer, run *results.Run) error {
	return analysis.WriteRatiosCSV(w, analysis.ViewOf(run).Records())
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

// pm prints an interval beside its figure: " ±12 %" when it is symmetric
// within 5 points (its bounds lie as far above as below the figure), else
// " [low-high]" in the figure's unit (scale: µs to ms), so that no ± reaches
// below zero; "" when it has none.
func pm(iv stats.Interval, scale float64) string {
	if !iv.Valid() {
		return ""
	}
	up, down := iv.High/iv.Center-1, 1-iv.Low/iv.Center
	if math.Abs(up-down) <= 0.05 {
		return " ±" + pctOf(math.Max(up, down))
	}
	return " [" + sig(iv.Low*scale) + "-" + sig(iv.High*scale) + "]"
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
// server starts showed between them, beyond their rounds' noise, with its
// degrees of freedom (few where a start moved all its cells alike): what the
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
			figs = append(figs, fmt.Sprintf("%s %s on %d df", spreads[i].Figure.Name, pctOf(spreads[i].SD), spreads[i].DF))
		}
		parts = append(parts, fmt.Sprintf("%s %d server starts, apart by (sd) %s", strings.TrimSuffix(g, "@"), spreads[i-1].Forks, strings.Join(figs, ", ")))
	}
	return "- forks (a JVM server started again mid-group, with fresh workers; the intervals add this spread, on the degrees of freedom its common and its cells' own parts give; docs/method.md, section 11): " + strings.Join(parts, "; ") + "\n"
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
