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
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rpcbed/rpcbed/internal/matrix"
)

// A Renderer writes one view of a run.
type Renderer func(w io.Writer, run *matrix.Run) error

// Files are the renderers All writes, by file name in the run directory.
var Files = []struct {
	Name   string
	Render Renderer
}{
	{"matrix.csv", CSV},
	{matrix.MatrixJSON, JSON},
	{"matrix.md", Markdown},
	{"bench.txt", Bench},
}

// All writes every file of Files, the plots and index.html into dir, each atomically.
func All(dir string, run *matrix.Run) error {
	for _, f := range Files {
		var b bytes.Buffer
		if err := f.Render(&b, run); err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
		if err := matrix.WriteFileAtomic(filepath.Join(dir, f.Name), b.Bytes()); err != nil {
			return err
		}
	}
	if _, err := Plots(filepath.Join(dir, "plots"), run); err != nil {
		return err
	}
	return writeIndex(dir, run)
}

// CSVHeader is matrix.csv's first row: one row per cell after it, figures are the
// median over the repeats unless named _min/_max.
var CSVHeader = []string{
	"cell", "client", "protocol", "call", "items", "concurrency", "server", "status", "repeats_ok",
	"rps_median", "rps_min", "rps_max",
	"p50_us_median", "p99_us_median", "p99_us_min", "p99_us_max",
	"client_cpu_us_per_call", "client_cpu_measured_us_per_call", "server_cpu_us_per_call",
	"bytes_per_response", "failed_calls", "error",
}

// CSV writes matrix.csv.
func CSV(w io.Writer, run *matrix.Run) error {
	cw := csv.NewWriter(w)
	cw.Write(CSVHeader)
	for _, c := range run.Cells {
		rps, p99 := c.Stat(matrix.RPS), c.Stat(matrix.P99)
		failed := 0.0
		for _, v := range c.Values(matrix.FailedCalls) {
			failed += v
		}
		cw.Write([]string{
			c.Name, c.Client, c.Protocol, c.Call, strconv.Itoa(c.Items), strconv.Itoa(c.Concurrency), c.Server, c.Status,
			strconv.Itoa(rps.N),
			num(rps.Median, 2), num(rps.Min, 2), num(rps.Max, 2),
			num(c.Stat(matrix.P50).Median, 0), num(p99.Median, 0), num(p99.Min, 0), num(p99.Max, 0),
			num(c.Stat(matrix.ClientCPU).Median, 1), num(c.Stat(matrix.ClientCPUMeasured).Median, 1),
			num(c.Stat(matrix.ServerCPU).Median, 1),
			num(c.Stat(matrix.BytesPerResponse).Median, 0), num(failed, 0), c.Error,
		})
	}
	cw.Flush()
	return cw.Error()
}

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
func JSON(w io.Writer, run *matrix.Run) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(run)
}

// Markdown writes matrix.md: the run's facts, then one table per client.
func Markdown(w io.Writer, run *matrix.Run) error {
	var b strings.Builder
	s := run.Spec
	fmt.Fprintf(&b, "# rpcbed matrix %s\n\n", run.ID)
	ok, failed := 0, 0
	for _, c := range run.Cells {
		if c.Status == matrix.StatusOK {
			ok++
		} else {
			failed++
		}
	}
	fmt.Fprintf(&b, "- %d cells: %d ok, %d failed; runner %s; commit %s\n", len(run.Cells), ok, failed, run.Runner, orDash(run.Commit))
	m := run.Machine
	fmt.Fprintf(&b, "- machine: %s, %d cores, %d MB, %s, kernel %s\n", orDash(m.CPU), m.Cores, m.MemMB, orDash(m.OS), orDash(m.Kernel))
	fmt.Fprintf(&b, "- load per run: %s; %d repeats; client cpuset %s, server cpuset %s; store %s; auth %s\n",
		loadString(s.Load), s.Repeats, orDash(s.Client.CPUSet), orDash(s.Server.CPUSet), s.Store, onOff(s.Auth != nil && *s.Auth))
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
	b.WriteString("\nEach figure is the median of the repeats; [min-max] beside req/s and p99. " +
		"Client CPU is the whole client process per call it made (start-up and warm-up included) " +
		"/ the client's own figure per measured call. Server CPU is the server's CPU per call it served " +
		"(go-server's /stats, the runner's usage for the Java baselines). Bytes is the encoded response.\n")

	for _, client := range matrix.Clients {
		var rows []matrix.CellResult
		for _, c := range run.Cells {
			if c.Client == client {
				rows = append(rows, c)
			}
		}
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s client\n\n", client)
		b.WriteString("| cell | req/s | p50 ms | p99 ms | client CPU µs/call | server CPU µs/call | bytes | note |\n")
		b.WriteString("|---|---:|---:|---:|---:|---:|---:|---|\n")
		for _, c := range rows {
			if c.Status != matrix.StatusOK {
				fmt.Fprintf(&b, "| %s | - | - | - | - | - | - | failed: %s |\n", c.Name, mdEscape(short(c.Error, 160)))
				continue
			}
			rps, p99 := c.Stat(matrix.RPS), c.Stat(matrix.P99)
			note := ""
			if c.Error != "" {
				note = mdEscape(short(c.Error, 120))
			}
			fmt.Fprintf(&b, "| %s | %s [%s-%s] | %s | %s [%s-%s] | %s / %s | %s | %s | %s |\n",
				c.Name, sig(rps.Median), sig(rps.Min), sig(rps.Max),
				ms(c.Stat(matrix.P50).Median), ms(p99.Median), ms(p99.Min), ms(p99.Max),
				sig(c.Stat(matrix.ClientCPU).Median), sig(c.Stat(matrix.ClientCPUMeasured).Median),
				sig(c.Stat(matrix.ServerCPU).Median), num(c.Stat(matrix.BytesPerResponse).Median, 0), note)
		}
	}
	var bad []matrix.Verify
	for _, v := range run.Verify {
		if v.Status != matrix.StatusOK {
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

func loadString(l matrix.Load) string {
	var parts []string
	if l.N > 0 {
		parts = append(parts, fmt.Sprintf("n %d", l.N))
	}
	if l.Duration > 0 {
		parts = append(parts, "t "+l.Duration.D().String())
	}
	if l.Warmup > 0 {
		parts = append(parts, "warm-up "+l.Warmup.D().String())
	}
	return strings.Join(parts, ", ")
}

func overrideString(o matrix.Override) string {
	var parts []string
	if o.N != nil {
		parts = append(parts, fmt.Sprintf("n %d", *o.N))
	}
	if o.Duration != nil {
		parts = append(parts, "t "+o.Duration.D().String())
	}
	if o.Warmup != nil {
		parts = append(parts, "warm-up "+o.Warmup.D().String())
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
