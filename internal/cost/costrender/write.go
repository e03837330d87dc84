// Package costrender prints cost runs: cost.csv, cost.md, the plots, the
// gate's verdict and the cost section of index.html. It runs nothing.
package costrender

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rpcbed/rpcbed/internal/cost"
	"github.com/rpcbed/rpcbed/internal/cost/coststats"
)

// Files costrender writes in a cost run's directory (cost.json is cost.JSONFile).
const (
	CSVFile = "cost.csv"
	MDFile  = "cost.md"
)

// WriteAll writes cost.json, cost.csv and cost.md into dir.
func WriteAll(dir string, r *cost.Result) error {
	if err := r.WriteJSON(filepath.Join(dir, cost.JSONFile)); err != nil {
		return err
	}
	for name, w := range map[string]func(io.Writer, *cost.Result) error{CSVFile: WriteCSV, MDFile: func(w io.Writer, r *cost.Result) error { return WriteMD(w, r, nil) }} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if err := w(f, r); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

var csvHeader = []string{"cell", "side", "client", "protocol", "items", "server", "status", "short_calls", "long_calls",
	"instructions", "est_cycles", "l1_misses", "ll_misses", "data_reads", "data_writes", "syscalls",
	"bytes_in", "bytes_out", "allocs",
	"layer_codec", "layer_rpc", "layer_crypto", "layer_transport", "layer_runtime", "layer_rpcbed", "layer_other", "gc_instructions",
	"time_driven_instructions", "bookkeeping_instructions", "ms_per_call_under_callgrind", "gc_cycles_short", "gc_cycles_long",
	"go_heap_bytes", "go_heap_objects", "server_live_heap_bytes", "seconds", "error",
	"security", "crypto_per_run_instructions", "flag_reason"}

// WriteCSV writes one row per cell and side, per-call figures.
func WriteCSV(w io.Writer, r *cost.Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	have := r.LayerSet()
	for _, c := range r.Cells {
		p := c.PerCall
		row := []string{c.Cell, c.Side, c.Client, c.Protocol, strconv.Itoa(c.Items), c.Server, c.Status,
			strconv.FormatInt(c.ShortCalls, 10), strconv.FormatInt(c.LongCalls, 10)}
		flag := c.OneTimeWork()
		if c.Status == cost.StatusOK && flag == "" {
			row = append(row, f0(p.Ir), f0(p.Cycles), f0(p.L1Misses()), f0(p.LLMisses()), f0(p.Dr), f0(p.Dw),
				f2(p.Syscalls), f0(p.BytesIn), f0(p.BytesOut), f2(c.Allocs))
			// A negative marginal is noise larger than the figure: no figure.
			for i := len(row) - 10; i < len(row); i++ {
				if strings.HasPrefix(row[i], "-") {
					row[i] = ""
				}
			}
			for _, l := range cost.LayerOrder {
				v := p.Layers[l]
				if l == cost.LayerGC {
					v = p.GC.Ir
				}
				if !slices.Contains(have, l) {
					row = append(row, "") // a run made before the layer existed
					continue
				}
				row = append(row, nonNeg(f0(v)))
			}
			row = append(row, nonNeg(f0(p.TimeDriven)), nonNeg(f0(p.Bookkeeping)), nonNeg(f2(p.MsPerCall)), f0(c.GCCycles[0]), f0(c.GCCycles[1]))
			heap := []string{"", "", ""} // the server side's, by go-server's runtime
			if c.LiveHeap > 0 {
				heap = []string{nonNeg(f0(p.HeapBytes)), nonNeg(f2(p.HeapObjects)), f0(c.LiveHeap)}
			}
			row = append(row, heap...)
		} else {
			row = append(row, make([]string, 18+len(cost.LayerOrder))...)
		}
		perRun := ""
		if v, ok := c.PerRun[cost.LayerCrypto]; ok && flag == "" {
			perRun = nonNeg(f0(v))
		}
		row = append(row, strconv.FormatFloat(c.Seconds, 'f', 1, 64), c.Error, c.Security, perRun, flag)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func f0(v float64) string { return strconv.FormatFloat(math.Round(v), 'f', 0, 64) }

// nonNeg blanks a negative figure: a marginal below zero is the noise of the
// two runs, larger than the figure, not a figure.
func nonNeg(s string) string {
	if strings.HasPrefix(s, "-") {
		return ""
	}
	return s
}

// NoFigure stands in a table for a per-call figure whose marginal came out
// negative (the long run counted less than the short one).
const NoFigure = "—"

// fig prints a per-call figure with thousands separators, or NoFigure when the
// marginal is negative.
func fig(v float64) string {
	if math.Round(v) < 0 {
		return NoFigure
	}
	return thousands(v)
}

// fig1 prints a per-call figure with one decimal, or NoFigure when negative.
func fig1(v float64) string {
	if math.Round(10*v) < 0 {
		return NoFigure
	}
	return strconv.FormatFloat(math.Max(v, 0), 'f', 1, 64)
}

// NoFigureNote explains NoFigure under every table that printed one.
const NoFigureNote = "— : the long run counted less than the short one: the noise of the two runs is larger than the figure, so there is no figure."

func f2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// thousands prints 1234567 as 1,234,567.
func thousands(v float64) string {
	s := strconv.FormatFloat(math.Round(math.Abs(v)), 'f', 0, 64)
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	if v < 0 && s != "0" {
		return "-" + b.String()
	}
	return b.String()
}

// WriteMD writes cost.md: a summary and a reading guide, the tables, PHP over
// Go, and (with a matrix run) the counts against the timed CPU per call.
func WriteMD(w io.Writer, r *cost.Result, timed cost.Timed) error {
	bw := &errWriter{w: w}
	bw.printf("# rpcbed cost run\n\n")
	bw.printf("## In plain words\n\n")
	for _, l := range Summary(r, timed) {
		bw.printf("- %s\n", l)
	}
	bw.printf("\n## How to read it\n\n%s\n\n", ReadingGuide)
	bw.printf("Per call, by the marginal method: (long run − short run) / (long calls − short calls), each side measured on its own under callgrind (docs/cost.md).\n\n")
	s := r.Setup
	bw.printf("- %s; %s\n- guest CPU (valgrind's CPUID): %s\n- host CPU: %s; %s\n- environment: %s\n- %s\n- load average before / after: %s / %s (the machine may have been shared: counts do not move with load)\n- %d cells in %.0f s\n\n",
		s.Valgrind, strings.Join(s.ValgrindArgs, " "), s.GuestCPU, s.HostCPU, s.Kernel, strings.Join(s.Env, " "), s.Pinning, s.LoadBefore, s.LoadAfter, len(r.Cells), r.Seconds)
	if s.ReadDelay != "" {
		bw.printf("- the measured side's peer bytes handed to it %s after they were written (read_delay: it always waits for them, as on a network)\n", s.ReadDelay)
	}
	if s.ServerRuns != "" {
		bw.printf("- server side: %s\n", s.ServerRuns)
	}
	if s.GC != "" {
		bw.printf("- %s\n", s.GC)
	}
	if s.TLS != "" {
		bw.printf("- %s\n", s.TLS)
	}
	if s.ReadDelay != "" || s.ServerRuns != "" || s.GC != "" || s.TLS != "" {
		bw.printf("\n")
	}
	for _, sd := range Sides(r) {
		bw.printf("## %s\n\n", sd.Title)
		bw.printf("| cell | %s |\n", strings.Join(Columns(r), " | "))
		bw.printf("|---|%s\n", strings.Repeat("---:|", len(Columns(r))))
		for _, rw := range sd.Rows {
			bw.printf("| %s | %s |\n", rw.Name(), strings.Join(rw.Figures, " | "))
		}
		if sd.NoFigure {
			bw.printf("\n%s\n", NoFigureNote)
		}
		if len(sd.Flagged) > 0 {
			bw.printf("\nFlagged (%s):\n\n", FlaggedMark)
			for _, rw := range sd.Flagged {
				bw.printf("- %s: %s.\n", rw.Cell, rw.Flag)
			}
		}
		bw.printf("\n")
	}
	if rows := TLSRows(r); len(rows) > 0 {
		bw.printf("## What TLS costs in instructions\n\n%s\n\n", TLSIntro)
		bw.printf("| cell | side | instructions, TLS | plaintext | TLS / plaintext | crypto per call | crypto share | handshake per run |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
		for _, x := range rows {
			bw.printf("| %s | %s | %s | %s | %.2fx | %s | %s | %s |\n", x.Cell, x.Side, fig(x.TLS), fig(x.Plain), x.Ratio, fig(x.Crypto), share(x.CryptoShare), fig(x.Handshake))
		}
		bw.printf("\n")
	}
	if rows := coststats.PHPOverGo(r); len(rows) > 0 {
		bw.printf("## PHP's client cost as a multiple of Go's\n\n| client | protocol | items | instructions | est. cycles |\n|---|---|---:|---:|---:|\n")
		for _, x := range rows {
			bw.printf("| %s | %s | %d | %.2fx | %.2fx |\n", x.Client, x.Protocol, x.Items, x.Instructions, x.Cycles)
		}
		bw.printf("\n")
	}
	if timed != nil {
		cmp := coststats.CompareTimed(r, timed)
		bw.printf("## Counts against the matrix's CPU per call\n\n%s\n\n", TimedIntro(cmp))
		bw.printf("| cell | side | instructions | est. cycles | CPU µs/call | instructions per CPU ns | syscalls |\n|---|---|---:|---:|---:|---:|---:|\n")
		low, high := cmp.Ends(4)
		for i, pts := range [][]coststats.TimedPoint{low, high} {
			if i == 1 && len(low) > 0 {
				bw.printf("| … | | | | | | |\n")
			}
			for _, p := range pts {
				bw.printf("| %s | %s | %s | %s | %.1f | %s | %.1f |\n", p.Cell, p.Side, thousands(p.Instructions), thousands(p.Cycles), p.CPUus, perNs(p), p.Syscalls)
			}
		}
		if beyond := Beyond(cmp); len(beyond) > 0 {
			bw.printf("\n%s\n", BeyondNote(beyond))
		}
		bw.printf("\n")
	}
	var skipped []cost.CellRun
	for _, c := range r.Cells {
		if c.Status != cost.StatusOK {
			skipped = append(skipped, c)
		}
	}
	if len(skipped) > 0 {
		bw.printf("## Not measured or failed\n\n| cell | side | status | why |\n|---|---|---|---|\n")
		for _, c := range skipped {
			bw.printf("| %s | %s | %s | %s |\n", c.Cell, c.Side, c.Status, strings.ReplaceAll(c.Error, "|", "/"))
		}
		bw.printf("\n")
	}
	return bw.err
}

func pct(v, total float64) string {
	if total == 0 {
		return ""
	}
	p := math.Round(100 * v / total)
	if p < 0 {
		return NoFigure
	}
	return fmt.Sprintf("%.0f %%", p+0) // +0: no "-0 %"
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}
