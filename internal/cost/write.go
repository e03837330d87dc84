package cost

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rpcbed/rpcbed/internal/report"
)

// Files a cost run writes in its directory.
const (
	JSONFile = "cost.json"
	CSVFile  = "cost.csv"
	MDFile   = "cost.md"
)

// LeavesOut is the sentence every cost table carries.
const LeavesOut = "Instruction counts leave out kernel work (system calls are counted, not their cost), time spent waiting (a blocked read costs no instructions), and real caches (misses are simulated on a fixed geometry, estimated cycles are iai's formula L1 hits + 5 × LL hits + 35 × RAM hits, not a measured time)."

// FillSpeed sets MsPerCall from the kept client reports (raw/CELL_SIDE/N/report.txt)
// where a run recorded none.
func FillSpeed(dir string, r *Result) {
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Status != StatusOK || c.PerCall.MsPerCall != 0 || c.LongCalls <= c.ShortCalls {
			continue
		}
		var t [2]float64
		ok := true
		for j, n := range []int64{c.ShortCalls, c.LongCalls} {
			b, err := os.ReadFile(filepath.Join(dir, "raw", fileName(c.ID()), strconv.FormatInt(n, 10), "report.txt"))
			if err != nil {
				ok = false
				break
			}
			rep, err := report.Parse(bytes.NewReader(b))
			if err != nil {
				ok = false
				break
			}
			t[j] = rep.TimeTakenSeconds
		}
		if ok {
			c.PerCall.MsPerCall = 1000 * (t[1] - t[0]) / float64(c.LongCalls-c.ShortCalls)
		}
	}
}

// WriteAll writes cost.json, cost.csv and cost.md into dir.
func WriteAll(dir string, r *Result) error {
	if err := r.WriteJSON(filepath.Join(dir, JSONFile)); err != nil {
		return err
	}
	for name, w := range map[string]func(io.Writer, *Result) error{CSVFile: WriteCSV, MDFile: func(w io.Writer, r *Result) error { return WriteMD(w, r, nil) }} {
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

func sortCells(cells []CellRun) {
	rank := func(v []string, s string) int {
		if i := slices.Index(v, s); i >= 0 {
			return i
		}
		return len(v)
	}
	slices.SortStableFunc(cells, func(a, b CellRun) int {
		if a.Side != b.Side {
			return rank([]string{SideClient, SideServer}, a.Side) - rank([]string{SideClient, SideServer}, b.Side)
		}
		if a.Client != b.Client {
			return rank(clientOrder, a.Client) - rank(clientOrder, b.Client)
		}
		if a.Protocol != b.Protocol {
			return rank(protocolOrder, a.Protocol) - rank(protocolOrder, b.Protocol)
		}
		return a.Items - b.Items
	})
}

var csvHeader = []string{"cell", "side", "client", "protocol", "items", "server", "status", "short_calls", "long_calls",
	"instructions", "est_cycles", "l1_misses", "ll_misses", "data_reads", "data_writes", "syscalls",
	"bytes_in", "bytes_out", "allocs",
	"layer_codec", "layer_rpc", "layer_transport", "layer_runtime", "layer_rpcbed", "layer_other",
	"time_driven_instructions", "bookkeeping_instructions", "ms_per_call_under_callgrind", "seconds", "error"}

// WriteCSV writes one row per cell and side, per-call figures.
func WriteCSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for _, c := range r.Cells {
		p := c.PerCall
		row := []string{c.Cell, c.Side, c.Client, c.Protocol, strconv.Itoa(c.Items), c.Server, c.Status,
			strconv.FormatInt(c.ShortCalls, 10), strconv.FormatInt(c.LongCalls, 10)}
		if c.Status == StatusOK {
			row = append(row, f0(p.Ir), f0(p.Cycles), f0(p.L1Misses()), f0(p.LLMisses()), f0(p.Dr), f0(p.Dw),
				f2(p.Syscalls), f0(p.BytesIn), f0(p.BytesOut), f2(c.Allocs))
			for _, l := range LayerOrder {
				row = append(row, f0(p.Layers[l]))
			}
			row = append(row, f0(p.TimeDriven), f0(p.Bookkeeping), f2(p.MsPerCall))
		} else {
			row = append(row, make([]string, 13+len(LayerOrder))...)
		}
		row = append(row, strconv.FormatFloat(c.Seconds, 'f', 1, 64), c.Error)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func f0(v float64) string { return strconv.FormatFloat(math.Round(v), 'f', 0, 64) }
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

// Timed is what the matrix measured for a cell (CPU µs per call on each side),
// keyed by cell name; nil when no matrix run is given.
type Timed map[string]struct{ Client, Server float64 }

// WriteMD writes cost.md: the tables, PHP over Go, and (with a matrix run) the
// counts against the timed CPU per call.
func WriteMD(w io.Writer, r *Result, timed Timed) error {
	bw := &errWriter{w: w}
	bw.printf("# rpcbed cost run\n\n")
	bw.printf("Per call, by the marginal method: (long run − short run) / (long calls − short calls), each side measured on its own under callgrind (docs/cost.md).\n\n")
	bw.printf("%s\n\n", LeavesOut)
	s := r.Setup
	bw.printf("- %s; %s\n- guest CPU (valgrind's CPUID): %s\n- host CPU: %s; %s\n- environment: %s\n- %s\n- load average before / after: %s / %s (the machine may have been shared: counts do not move with load)\n- %d cells in %.0f s\n\n",
		s.Valgrind, strings.Join(s.ValgrindArgs, " "), s.GuestCPU, s.HostCPU, s.Kernel, strings.Join(s.Env, " "), s.Pinning, s.LoadBefore, s.LoadAfter, len(r.Cells), r.Seconds)
	for _, side := range []string{SideClient, SideServer} {
		title := "Client side (client under callgrind, native server)"
		if side == SideServer {
			title = "Server side (go-server under callgrind, native client)"
		}
		bw.printf("## %s\n\n", title)
		bw.printf("| cell | instructions | est. cycles | L1 misses | LL misses | syscalls | bytes in | bytes out | allocs | codec | RPC | transport | runtime | rpcbed | other | left out: time-driven, histogram | ms/call under callgrind |\n")
		bw.printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, c := range r.Cells {
			if c.Side != side || c.Status != StatusOK {
				continue
			}
			p := c.PerCall
			bw.printf("| %s | %s | %s | %s | %s | %.1f | %s | %s | %.1f |", c.Cell, thousands(p.Ir), thousands(p.Cycles),
				thousands(p.L1Misses()), thousands(p.LLMisses()), p.Syscalls, thousands(p.BytesIn), thousands(p.BytesOut), c.Allocs)
			for _, l := range LayerOrder {
				bw.printf(" %s |", pct(p.Layers[l], p.Ir))
			}
			bw.printf(" %s, %s | %.1f |\n", thousands(p.TimeDriven), thousands(p.Bookkeeping), p.MsPerCall)
		}
		bw.printf("\n")
	}
	if rows := PHPOverGo(r); len(rows) > 0 {
		bw.printf("## PHP's client cost as a multiple of Go's\n\n| client | protocol | items | instructions | est. cycles |\n|---|---|---:|---:|---:|\n")
		for _, x := range rows {
			bw.printf("| %s | %s | %d | %.2fx | %.2fx |\n", x.Client, x.Protocol, x.Items, x.Instructions, x.Cycles)
		}
		bw.printf("\n")
	}
	if timed != nil {
		cmp := CompareTimed(r, timed)
		bw.printf("## Estimated cycles against the matrix's CPU per call\n\n")
		bw.printf("Spearman's rank correlation over %d cells and sides: %.2f. Cycles per CPU µs (cycles / (CPU µs × 1000)) shows where the count leaves the most out: a low figure is kernel work, waiting or cache behaviour the count does not see.\n\n", len(cmp.Points), cmp.Spearman)
		bw.printf("| cell | side | est. cycles | CPU µs/call | est. cycles per CPU ns | syscalls |\n|---|---|---:|---:|---:|---:|\n")
		for _, p := range cmp.Outliers(8) {
			bw.printf("| %s | %s | %s | %.1f | %.2f | %.1f |\n", p.Cell, p.Side, thousands(p.Cycles), p.CPUus, p.PerNs, p.Syscalls)
		}
		bw.printf("\n")
	}
	var skipped []CellRun
	for _, c := range r.Cells {
		if c.Status != StatusOK {
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
	return fmt.Sprintf("%.0f %%", 100*v/total)
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

// Ratio is a PHP client's cost per call over go's on the same protocol and size.
type Ratio struct {
	Client, Protocol     string
	Items                int
	Instructions, Cycles float64
}

// PHPOverGo gives php's and php-pure's client-side cost as a multiple of go's.
func PHPOverGo(r *Result) []Ratio {
	m := r.Lookup()
	var out []Ratio
	for _, c := range r.Cells {
		if c.Side != SideClient || c.Status != StatusOK || (c.Client != "php" && c.Client != "php-pure") {
			continue
		}
		g, ok := m[strings.Replace(c.Cell, c.Client+"-", "go-", 1)+"/"+SideClient]
		if !ok || g.Status != StatusOK || g.PerCall.Ir == 0 {
			continue
		}
		out = append(out, Ratio{c.Client, c.Protocol, c.Items, c.PerCall.Ir / g.PerCall.Ir, c.PerCall.Cycles / g.PerCall.Cycles})
	}
	return out
}
