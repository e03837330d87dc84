package render

import (
	"encoding/csv"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// csvColumn is one named column of matrix.csv and how a cell fills it.
type csvColumn struct {
	Name  string
	Value func(c analysis.CellView) string
}

// stat is the median (or min, max) of figure f of c as text with prec decimals,
// in the figure's unit.
func statCol(name string, f func(results.Metrics) float64, pick func(s statValues) float64, scale float64, prec int) csvColumn {
	return csvColumn{name, func(c analysis.CellView) string {
		s := c.Stat(f)
		return num(pick(statValues{s.Median, s.Min, s.Max})*scale, prec)
	}}
}

type statValues struct{ median, min, max float64 }

func med(s statValues) float64  { return s.median }
func minv(s statValues) float64 { return s.min }
func maxv(s statValues) float64 { return s.max }

// csvColumns are matrix.csv's columns, in order (docs/reports.md describes
// each). Names take no word pandas, R or a spreadsheet reserve (a DataFrame has
// .flags and .items): items_per_response, cell_flags. Latency is in ms, as on
// the page and in matrix.md, the unit in the name.
var csvColumns = func() []csvColumn {
	cols := []csvColumn{
		{"cell", func(c analysis.CellView) string { return c.Name }},
		{"client", func(c analysis.CellView) string { return c.Client }},
		{"protocol", func(c analysis.CellView) string { return c.Protocol }},
		{"call", func(c analysis.CellView) string { return c.Call }},
		{"items_per_response", func(c analysis.CellView) string { return strconv.Itoa(c.Items) }},
		{"concurrency", func(c analysis.CellView) string { return strconv.Itoa(c.Concurrency) }},
		{"conns", func(c analysis.CellView) string { return strconv.Itoa(c.Sum.Conns) }},
		{"server", func(c analysis.CellView) string { return c.ServerLang }},
		{"status", func(c analysis.CellView) string { return c.Status }},
		{"repeats_ok", func(c analysis.CellView) string { return strconv.Itoa(c.Stat(results.RPS).N) }},
		statCol("rps_median", results.RPS, med, 1, 2),
		statCol("rps_min", results.RPS, minv, 1, 2),
		statCol("rps_max", results.RPS, maxv, 1, 2),
		{"rps_spread", func(c analysis.CellView) string {
			if c.Stat(results.RPS).N == 0 {
				return ""
			}
			return num(c.Sum.Spread, 3)
		}},
		statCol("p50_ms_median", results.P50, med, 1e-3, 3),
		statCol("p99_ms_median", results.P99, med, 1e-3, 3),
		statCol("p99_ms_min", results.P99, minv, 1e-3, 3),
		statCol("p99_ms_max", results.P99, maxv, 1e-3, 3),
		statCol("client_cpu_us_per_call", results.ClientCPU, med, 1, 1),
		statCol("server_cpu_us_per_call", results.ServerCPU, med, 1, 1),
		statCol("client_cpu_process_us_per_call", results.ClientCPUProcess, med, 1, 1),
		statCol("client_calls_per_cpu_s", results.ClientCallsPerCPUS, med, 1, 0),
		statCol("server_calls_per_cpu_s", results.ServerCallsPerCPUS, med, 1, 0),
		statCol("client_busy", results.ClientBusy, med, 1, 3),
		statCol("server_busy", results.ServerBusy, med, 1, 3),
		{"bottleneck", func(c analysis.CellView) string { return c.Sum.Bottleneck }},
		{"max_steal_cores", func(c analysis.CellView) string { return num(c.Sum.MaxStealCores, 3) }},
		{"max_outside_cores", func(c analysis.CellView) string { return num(c.Sum.MaxOutsideCores, 3) }},
		{"cell_flags", func(c analysis.CellView) string { return strings.Join(c.Sum.Flags, " ") }},
		statCol("bytes_per_response", results.BytesPerResponse, med, 1, 0),
		{"failed_calls", func(c analysis.CellView) string {
			failed := 0.0
			for _, v := range c.Values(results.FailedCalls) {
				failed += v
			}
			return num(failed, 0)
		}},
		{"error", func(c analysis.CellView) string { return c.Error }},
	}
	// Every timed figure's 95 % interval, where a rerun's median lands
	// (docs/method.md, section 11), in the figure's unit.
	for _, f := range analysis.Figures {
		prec := 1
		switch f.Unit {
		case "req/s":
			prec = 2
		case "ms":
			prec = 4
		}
		for _, side := range []struct {
			suffix string
			bound  func(lo, hi float64) float64
		}{{"_ci_low", func(lo, _ float64) float64 { return lo }}, {"_ci_high", func(_, hi float64) float64 { return hi }}} {
			cols = append(cols, csvColumn{f.Column + side.suffix, func(c analysis.CellView) string {
				iv := c.Interval[f.Index]
				if !iv.Valid() {
					return ""
				}
				return num(side.bound(iv.Low, iv.High)*f.Scale, prec)
			}})
		}
	}
	// The widest in-run half-width of req/s and CPU per call (what
	// Spec.Precision holds).
	return append(cols, csvColumn{"in_run_half_width", func(c analysis.CellView) string { return num(c.Width, 3) }})
}()

// CSVHeader is matrix.csv's first row: one row per cell of the plan after it
// (status "missing" for a cell with no result); figures are the median over the
// good repeats unless named _min/_max. CPU figures are over each repeat's
// measured window and leave out repeats whose CPU is not used (a flag says why).
var CSVHeader = func() []string {
	h := make([]string, len(csvColumns))
	for i, c := range csvColumns {
		h[i] = c.Name
	}
	return h
}()

// CSV writes matrix.csv.
func CSV(w io.Writer, run *results.Run) error {
	cw := csv.NewWriter(w)
	cw.Write(CSVHeader)
	for _, c := range analysis.ViewOf(run).Cells {
		row := make([]string, len(csvColumns))
		for i, col := range csvColumns {
			row[i] = col.Value(c)
		}
		cw.Write(row)
	}
	for _, c := range missing(run) {
		// The cell's coordinates, its status and why; no figure.
		known := map[string]string{"cell": c.Name(), "client": c.Client, "protocol": c.Protocol, "call": c.Call,
			"items_per_response": strconv.Itoa(c.Items), "concurrency": strconv.Itoa(c.Concurrency),
			"conns": strconv.Itoa(c.Load.ConnsFor(c.Concurrency)), "server": c.ServerLang, "status": "missing",
			"repeats_ok": "0", "error": "no result: the run did not reach it"}
		row := make([]string, len(csvColumns))
		for i, col := range csvColumns {
			row[i] = known[col.Name]
		}
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
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
