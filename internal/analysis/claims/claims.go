// Package claims judges the three published experiments (results/published/)
// from the runs internal/reproduce measured: it reads each experiment's
// published figures, and turns its measured runs into reproduction.md's
// section. Every published claim is one named rule (rule.go; the bands sit
// beside each experiment's code): the claim's words, the published figure, the
// measured figure over the repeats (median [range]), the tolerance for yes /
// partly / no, and a verdict that says "inconclusive" when the 95 % interval
// holds the difference. A reason is printed only from this run's figures,
// naming the measurement behind it.
//
// It takes data and returns data: reproduce runs the experiments, render
// prints the sections.
package claims

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/rpcbed/rpcbed/internal/report"
)

// Setup is what the verdicts' set-up lines say about where the run ran.
type Setup struct {
	// Server and Client CPU sets, as in the matrix spec ("" = any).
	ServerCPUSet, ClientCPUSet string
	// AerospikeHosts and RedisAddr: the stores go-grpc-thrift-aerospike was given.
	AerospikeHosts, RedisAddr string
	// Across, when set, says the link between the hosts the server and the client
	// ran on (a reproduction with its network back); "" = one host, 127.0.0.1.
	Across string
	// MachineCores is the machine's cores, for its busy share (0: unknown).
	MachineCores int
}

// Run is one client run's outcome, both sides over the client's measured
// window (measure.RunPath).
type Run struct {
	Report    report.Report
	ClientCPU float64 // seconds over the window: the client's own (ab: the runner's)
	ServerCPU float64 // seconds over the window; 0 when the server has no /stats
	ServerN   int64   // calls the server served over the window
	// ServerKnown: the server's /stats was sampled over the window.
	ServerKnown bool
	Wall        float64 // the window's length
	Worker      bool    // the run went through a long-lived client worker
	Flags       []string
	// ClientJITMs, ServerJITMs: each JVM side's JIT compile time within the
	// window (ms); nil for a side without a JIT.
	ClientJITMs, ServerJITMs *float64
	// LinkCPU is the link's delayers' CPU seconds over the window, when the run
	// crossed a delayed link (LinkKnown).
	LinkCPU   float64
	LinkKnown bool
	// MachineBusy is the whole machine's busy cores over the window (/proc/stat),
	// when known (MachineKnown).
	MachineBusy  float64
	MachineKnown bool
	// Round is the round the run belongs to (1 on): runs of one round ran
	// close together in time, every alternative at a level once, so a
	// comparison between them is paired by round (pairedLevels). 0: unknown.
	Round int
}

// Failures are the runs that failed (not cancelled): each is left out of every
// figure and named in the section's set-up; the other runs still count.
type Failures []string

// Setup is the set-up line naming the failed runs (none when none failed).
func (f Failures) Setup() []string {
	if len(f) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("Failed runs, left out of every figure (%d): %s.", len(f), strings.Join(f, "; "))}
}

// figs collects one figure per run (NaN, so unknown, where f cannot say).
func figs(runs []Run, f func(Run) float64) Figure { return figsAt(runs, f, 0) }

// figsAt is figs at confidence conf (0: 95 %).
func figsAt(runs []Run, f func(Run) float64, conf float64) Figure {
	var v []float64
	for _, m := range runs {
		v = append(v, f(m))
	}
	return FigAt(v, conf)
}

// busy collects a busy fraction per run (srvBusy, cliBusy) as a bounded figure:
// never past 100 % (FigFraction).
func busy(runs []Run, f func(Run) float64) Figure { return busyAt(runs, f, 0) }

// busyAt is busy at confidence conf (0: 95 %).
func busyAt(runs []Run, f func(Run) float64, conf float64) Figure {
	var v []float64
	for _, m := range runs {
		v = append(v, f(m))
	}
	return FigFractionAt(v, conf)
}

func rps(m Run) float64 { return m.Report.RequestsPerSecond }

// srvBusy is the server's busy fraction of one core over the window.
func srvBusy(m Run) float64 {
	if !m.ServerKnown || m.Wall <= 0 {
		return math.NaN()
	}
	return m.ServerCPU / m.Wall
}

// linkBusy is the link's delayers' busy cores over the window.
func linkBusy(m Run) float64 {
	if !m.LinkKnown || m.Wall <= 0 {
		return math.NaN()
	}
	return m.LinkCPU / m.Wall
}

// machineBusy is the whole machine's busy cores over the window.
func machineBusy(m Run) float64 {
	if !m.MachineKnown {
		return math.NaN()
	}
	return m.MachineBusy
}

// srvPerCall is the server's CPU per call over the window, µs.
func srvPerCall(m Run) float64 {
	if !m.ServerKnown || m.ServerN <= 0 {
		return math.NaN()
	}
	return m.ServerCPU * 1e6 / float64(m.ServerN)
}

// cliBusy is the client's busy fraction of one core over the window.
func cliBusy(m Run) float64 {
	if m.Wall <= 0 || m.Report.Rpcbed == nil {
		return math.NaN()
	}
	return m.ClientCPU / m.Wall
}

// cliPerCall is the client's CPU per call over the window, µs.
func cliPerCall(m Run) float64 {
	if m.Report.Complete <= 0 || m.Report.Rpcbed == nil {
		return math.NaN()
	}
	return m.ClientCPU * 1e6 / float64(m.Report.Complete)
}

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

func f0(v float64) string { return fmt.Sprintf("%.0f", v) }

// pctOf prints a fraction figure as per cent.
func pctOf(f Figure) string { return scaled(f, 100).Show(" %", 0) }

func scaled(f Figure, k float64) Figure {
	return Figure{Median: f.Median * k, Lo: f.Lo * k, Hi: f.Hi * k, Known: f.Known}
}

func orAny(cpus string) string {
	if cpus == "" {
		return "(any)"
	}
	return cpus
}

// readCSV reads a published CSV as maps keyed by the header.
func readCSV(file string) ([]map[string]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(recs) < 1 {
		return nil, fmt.Errorf("%s: empty", file)
	}
	var rows []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, k := range recs[0] {
			if i < len(r) {
				m[k] = r[i]
			}
		}
		rows = append(rows, m)
	}
	return rows, nil
}

func splitList(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ';' || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}

func containsInt(v []int, x int) bool {
	for _, y := range v {
		if y == x {
			return true
		}
	}
	return false
}
