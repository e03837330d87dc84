// Package reproduce re-runs the shape of the three published experiments
// (results/published/) on this machine and writes reproduction.md: for every
// published row the published and the measured figure, the ratios between
// frameworks or paths on both sides, and for every published finding whether it
// holds here — with the measured reason when it does not.
package reproduce

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/matrix"
	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/runner"
)

// Experiments in the order reproduction.md lists them.
var Experiments = []string{"go-grpc-thrift-aerospike", "php-go-growth", "java-rpc-2015"}

// Options is one reproduction run.
type Options struct {
	// Dir is the run directory (results/<run>); raw output goes to Dir/raw/.
	Dir string
	// Published holds the published CSV files (results/published).
	Published string
	// Runner starts servers and clients; Local runs ab, which no image carries.
	Runner     runner.Runner
	RunnerName string
	Local      runner.Runner
	Programs   matrix.Programs
	// Server and Client CPU sets, as in the matrix spec.
	ServerCPUSet, ClientCPUSet string
	// AerospikeHosts, when set, is go-grpc-thrift-aerospike's store, as published;
	// otherwise RedisAddr is tried, then go-server's memory store.
	AerospikeHosts string
	// RedisAddr is tried for the store of go-grpc-thrift-aerospike; "" = memory only.
	RedisAddr string
	// Quick shrinks every run (for tests): the shape stays, the numbers mean little.
	Quick bool
	Log   io.Writer
}

// Section is one experiment's part of reproduction.md.
type Section struct {
	Name     string     `json:"name"`
	Setup    []string   `json:"setup"` // how it ran and how it was scaled
	Table    [][]string `json:"table"` // header row first
	Findings []Finding  `json:"findings"`
	Err      string     `json:"error,omitempty"`
}

// Finding is a published claim and whether it holds here.
type Finding struct {
	Claim  string `json:"claim"`
	Holds  string `json:"holds"` // yes|no|partly|n/a
	Detail string `json:"detail"`
}

// Run runs the named experiments (all when which is empty) and writes
// Dir/reproduction.md and Dir/reproduction.json. An experiment that fails is
// reported with its error; the others still run.
func Run(ctx context.Context, o Options, which []string) ([]Section, error) {
	if len(which) == 0 || slices.Contains(which, "all") {
		which = Experiments
	}
	for _, w := range which {
		if !slices.Contains(Experiments, w) {
			return nil, fmt.Errorf("unknown experiment %q: want %s or all", w, strings.Join(Experiments, ", "))
		}
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, "raw"), 0o755); err != nil {
		return nil, err
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	// Sections of experiments not run now are kept from an earlier run in Dir.
	var secs []Section
	if b, err := os.ReadFile(filepath.Join(o.Dir, "reproduction.json")); err == nil {
		var old []Section
		if json.Unmarshal(b, &old) == nil {
			for _, s := range old {
				if !slices.Contains(which, s.Name) {
					secs = append(secs, s)
				}
			}
		}
	}
	for _, w := range Experiments {
		if !slices.Contains(which, w) {
			continue
		}
		fmt.Fprintf(o.Log, "reproduce: %s\n", w)
		var s Section
		var err error
		switch w {
		case "go-grpc-thrift-aerospike":
			s, err = goGRPCThrift(ctx, o)
		case "php-go-growth":
			s, err = phpGoGrowth(ctx, o)
		case "java-rpc-2015":
			s, err = javaRPC2015(ctx, o)
		}
		s.Name = w
		if err != nil {
			if ctx.Err() != nil {
				return secs, ctx.Err()
			}
			s.Err = err.Error()
			fmt.Fprintf(o.Log, "reproduce: %s: %v\n", w, err)
		}
		secs = append(secs, s)
		slices.SortStableFunc(secs, func(a, b Section) int {
			return slices.Index(Experiments, a.Name) - slices.Index(Experiments, b.Name)
		})
		if err := write(o.Dir, secs); err != nil {
			return secs, err
		}
	}
	return secs, nil
}

func write(dir string, secs []Section) error {
	var b bytes.Buffer
	Markdown(&b, secs)
	if err := matrix.WriteFileAtomic(filepath.Join(dir, "reproduction.md"), b.Bytes()); err != nil {
		return err
	}
	j, err := json.MarshalIndent(secs, "", "  ")
	if err != nil {
		return err
	}
	return matrix.WriteFileAtomic(filepath.Join(dir, "reproduction.json"), append(j, '\n'))
}

// Markdown writes reproduction.md.
func Markdown(w io.Writer, secs []Section) {
	fmt.Fprintf(w, "# Reproduction of the published experiments\n\n")
	fmt.Fprintf(w, "Published figures are in results/published/. Absolute numbers differ (other hardware, "+
		"newer libraries); what is checked is the shape: which framework or path wins, by roughly how much, "+
		"and how the gap moves with concurrency or payload.\n")
	fmt.Fprintf(w, "\n## Summary\n\n| experiment | finding | holds here |\n|---|---|---|\n")
	for _, s := range secs {
		if s.Err != "" {
			fmt.Fprintf(w, "| %s | (not run) | error: %s |\n", s.Name, esc(s.Err))
		}
		for _, f := range s.Findings {
			fmt.Fprintf(w, "| %s | %s | %s |\n", s.Name, esc(f.Claim), f.Holds)
		}
	}
	for _, s := range secs {
		fmt.Fprintf(w, "\n## %s\n\n", s.Name)
		for _, l := range s.Setup {
			fmt.Fprintf(w, "- %s\n", l)
		}
		if s.Err != "" {
			fmt.Fprintf(w, "\n**Not completed:** %s\n", esc(s.Err))
		}
		if len(s.Table) > 0 {
			fmt.Fprintln(w)
			for i, row := range s.Table {
				fmt.Fprintf(w, "| %s |\n", strings.Join(escAll(row), " | "))
				if i == 0 {
					fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(row)))
				}
			}
		}
		if len(s.Findings) > 0 {
			fmt.Fprintf(w, "\nFindings:\n\n")
			for _, f := range s.Findings {
				fmt.Fprintf(w, "- **%s** — holds here: **%s**. %s\n", f.Claim, f.Holds, f.Detail)
			}
		}
	}
}

func esc(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

func escAll(v []string) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = esc(s)
	}
	return out
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

// measured is one client run's outcome, both sides over the client's measured
// window (matrix.Bench).
type measured struct {
	Report    report.Report
	ClientCPU float64 // seconds over the window: the client's own (ab: the runner's)
	ServerCPU float64 // seconds over the window; 0 when the server has no /stats
	ServerN   int64   // calls the server served over the window
	Wall      float64 // the window's length
}

// serverCPUPerCall in µs.
func (m measured) serverCPUPerCall() float64 {
	if m.ServerN <= 0 {
		return 0
	}
	return m.ServerCPU * 1e6 / float64(m.ServerN)
}

// serverUtil is the share of one core the server used while the client ran.
func (m measured) serverUtil() float64 {
	if m.Wall <= 0 {
		return 0
	}
	return m.ServerCPU / m.Wall
}

// clientCPUPerCall is the client's CPU per call over the window, in µs.
func (m measured) clientCPUPerCall() float64 {
	calls := float64(m.Report.Complete)
	if calls == 0 {
		return 0
	}
	return m.ClientCPU * 1e6 / calls
}

// versus explains, from the figures, how the measured winner w beat the expected
// winner e: which core was busier and what each costs per call on either side.
func versus(w, e string, mw, me measured) string {
	s := fmt.Sprintf("Measured: %s's client core was %.0f %% busy and its server core %.0f %%; %s's %.0f %% and %.0f %%. "+
		"Per call %s costs %.1f µs of client CPU and %.1f µs of server CPU, %s %.1f µs and %.1f µs.",
		e, me.clientUtil()*100, me.serverUtil()*100, w, mw.clientUtil()*100, mw.serverUtil()*100,
		e, me.clientCPUPerCall(), me.serverCPUPerCall(), w, mw.clientCPUPerCall(), mw.serverCPUPerCall())
	switch {
	case me.clientUtil() >= 0.85 && me.clientCPUPerCall() > mw.clientCPUPerCall():
		s += fmt.Sprintf(" The client core is the limit and %s's client is the costlier per call.", e)
	case me.serverUtil() >= 0.85 && me.serverCPUPerCall() > mw.serverCPUPerCall():
		s += fmt.Sprintf(" The server core is the limit and %s's server is the costlier per call.", e)
	case me.clientUtil() < 0.85 && me.serverUtil() < 0.85:
		s += fmt.Sprintf(" Neither core is saturated with %s: its calls wait (latency p50 %d µs against %d µs), not compute.",
			e, p50(me), p50(mw))
	}
	return s
}

func p50(m measured) int64 {
	if m.Report.Rpcbed == nil {
		return 0
	}
	return m.Report.Rpcbed.P50Us
}

func (m measured) clientUtil() float64 {
	if m.Wall <= 0 {
		return 0
	}
	return m.ClientCPU / m.Wall
}

// runClient runs one rpcbed client (or ab) to its report, keeping its raw output
// as raw/NAME.txt, and measures both sides over the client's measured window:
// the matrix's one run path (matrix.Bench), so a reproduction's figures mean
// what the matrix's do.
func runClient(ctx context.Context, o Options, r runner.Runner, srv *matrix.Server, proto, call, name string, prog matrix.Program, cpuset string, timeout time.Duration) (measured, error) {
	b := &matrix.Bench{Runner: o.Runner, Programs: o.Programs, Dir: o.Dir,
		Client: matrix.Resources{CPUSet: cpuset}, Server: matrix.Resources{CPUSet: o.ServerCPUSet}}
	ab := len(prog.Args) > 0 && filepath.Base(prog.Args[0]) == "ab"
	rep, err := b.Once(ctx, srv, matrix.Job{
		Name: name, Raw: filepath.Join("raw", name+".txt"), Prog: &prog, Runner: r,
		Proto: proto, Call: call, Timeout: timeout, AB: ab,
	})
	if err != nil {
		return measured{}, err
	}
	if rep.Report == nil {
		return measured{}, fmt.Errorf("%s: %s", name, rep.Error)
	}
	w := rep.Window
	m := measured{Report: *rep.Report, ClientCPU: w.ClientCPUS, Wall: w.Seconds}
	if w.ServerKnown {
		m.ServerCPU, m.ServerN = w.ServerCPUS, w.ServerCalls
	}
	return m, nil
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func pct(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.0f%%", (a/b-1)*100)
}

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

func f0(v float64) string { return fmt.Sprintf("%.0f", v) }
func f1(v float64) string { return fmt.Sprintf("%.1f", v) }

func medianOf(v []float64) float64 {
	return matrix.StatOf(v).Median
}
