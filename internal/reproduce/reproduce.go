// Package reproduce re-runs the shape of the three published experiments
// (results/published/) on this machine and writes reproduction.md. Every
// published claim is one named rule (rule.go; the bands sit beside each
// experiment's code): the claim's words, the published figure, the measured
// figure over the repeats (median [range]), the tolerance for yes / partly / no,
// and a verdict that says "inconclusive" when the 95 % interval
// holds the difference. A reason is printed only from this run's figures, naming
// the measurement behind it.
//
// Each experiment is three steps (read the published data, run, judge) and
// runs on the matrix's run path (matrix.RunPath, with client workers).
package reproduce

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/render"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/matrix"
	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/runner"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// experiment is one published experiment in three steps: read its published
// figures, run its shape here, judge every published claim from the run.
type experiment interface {
	read(published string) error
	run(ctx context.Context, o Options) error
	judge(o Options) results.Section
}

// experiments in the order reproduction.md lists them.
var experiments = []struct {
	name string
	make func() experiment
}{
	{"go-grpc-thrift-aerospike", func() experiment { return &grpcThrift{} }},
	{"php-go-growth", func() experiment { return &growth{} }},
	{"java-rpc-2015", func() experiment { return &java2015{} }},
}

// Experiments are the experiments' names, in reproduction.md's order.
var Experiments = func() []string {
	var n []string
	for _, e := range experiments {
		n = append(n, e.name)
	}
	return n
}()

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

// Run runs the named experiments (all when which is empty) and writes
// Dir/reproduction.json, .md and .html. An experiment that fails is
// reported with its error; the others still run.
func Run(ctx context.Context, o Options, which []string) ([]results.Section, error) {
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
	var secs []results.Section
	if b, err := os.ReadFile(filepath.Join(o.Dir, "reproduction.json")); err == nil {
		var old []results.Section
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
		s, err := runOne(ctx, o, w)
		s.Name = w
		if err != nil {
			if ctx.Err() != nil {
				return secs, ctx.Err()
			}
			s.Err = err.Error()
			fmt.Fprintf(o.Log, "reproduce: %s: %v\n", w, err)
		}
		secs = append(secs, s)
		slices.SortStableFunc(secs, func(a, b results.Section) int {
			return slices.Index(Experiments, a.Name) - slices.Index(Experiments, b.Name)
		})
		if err := write(o.Dir, secs); err != nil {
			return secs, err
		}
	}
	return secs, nil
}

// runOne is one experiment's three steps; a failed run is still judged, so every
// claim gets a verdict (NotMeasured where its figures are missing).
func runOne(ctx context.Context, o Options, name string) (results.Section, error) {
	i := slices.IndexFunc(experiments, func(e struct {
		name string
		make func() experiment
	}) bool {
		return e.name == name
	})
	e := experiments[i].make()
	if err := e.read(o.Published); err != nil {
		return results.Section{}, err
	}
	runErr := e.run(ctx, o)
	s := e.judge(o)
	return s, runErr
}

func write(dir string, secs []results.Section) error {
	if err := render.WriteReproduction(dir, secs); err != nil {
		return err
	}
	j, err := json.MarshalIndent(secs, "", "  ")
	if err != nil {
		return err
	}
	return results.WriteFileAtomic(filepath.Join(dir, "reproduction.json"), append(j, '\n'))
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
// window (matrix.RunPath).
type measured struct {
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
}

// figs collects one figure per run (NaN, so unknown, where f cannot say).
func figs(runs []measured, f func(measured) float64) Figure {
	var v []float64
	for _, m := range runs {
		v = append(v, f(m))
	}
	return Fig(v)
}

func rps(m measured) float64 { return m.Report.RequestsPerSecond }

// srvBusy is the server's busy fraction of one core over the window.
func srvBusy(m measured) float64 {
	if !m.ServerKnown || m.Wall <= 0 {
		return math.NaN()
	}
	return m.ServerCPU / m.Wall
}

// srvPerCall is the server's CPU per call over the window, µs.
func srvPerCall(m measured) float64 {
	if !m.ServerKnown || m.ServerN <= 0 {
		return math.NaN()
	}
	return m.ServerCPU * 1e6 / float64(m.ServerN)
}

// cliBusy is the client's busy fraction of one core over the window.
func cliBusy(m measured) float64 {
	if m.Wall <= 0 || m.Report.Rpcbed == nil {
		return math.NaN()
	}
	return m.ClientCPU / m.Wall
}

// cliPerCall is the client's CPU per call over the window, µs.
func cliPerCall(m measured) float64 {
	if m.Report.Complete <= 0 || m.Report.Rpcbed == nil {
		return math.NaN()
	}
	return m.ClientCPU * 1e6 / float64(m.Report.Complete)
}

// newRunPath is an experiment's run path: the matrix's (matrix.RunPath), so a
// reproduction's figures mean what the matrix's do, with long-lived client
// workers (warm-up paid once per client and protocol); stop ends the workers.
func newRunPath(o Options) (*matrix.RunPath, func()) {
	b := &matrix.RunPath{Runner: o.Runner, Programs: o.Programs, Dir: o.Dir,
		ClientResources: plan.Resources{CPUSet: o.ClientCPUSet}, ServerResources: plan.Resources{CPUSet: o.ServerCPUSet},
		Note: func(s string) { fmt.Fprintf(o.Log, "  note: %s\n", s) }}
	return b, b.KeepWorkers()
}

// once runs one job on b against srv (nil: not sampled), keeping its raw output
// as raw/NAME.txt, and measures both sides over the client's measured window.
func once(ctx context.Context, b *matrix.RunPath, srv *matrix.ServerProc, j matrix.Job) (measured, error) {
	j.Raw = filepath.Join("raw", j.Name+".txt")
	rep, err := b.Once(ctx, srv, j)
	if err != nil {
		return measured{}, err
	}
	if rep.Report == nil {
		return measured{}, fmt.Errorf("%s: %s (raw/%s.txt)", j.Name, rep.Error, j.Name)
	}
	m := measured{Report: *rep.Report, Worker: rep.Worker, Flags: rep.Flags}
	if w := rep.Window; w != nil {
		m.ClientCPU, m.Wall = w.ClientCPUS, w.Seconds
		m.ClientJITMs, m.ServerJITMs = w.ClientJITMs, w.ServerJITMs
		if w.ServerKnown {
			m.ServerCPU, m.ServerN, m.ServerKnown = w.ServerCPUS, w.ServerCalls, true
		}
	}
	return m, nil
}

// abJob is one ab run (local: no image carries ab).
func abJob(o Options, name string, args ...string) matrix.Job {
	prog := matrix.Program{Args: append([]string{"ab"}, args...)}
	return matrix.Job{Name: name, Prog: &prog, Runner: o.Local, AB: true, Timeout: 5 * time.Minute}
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

// failures are the runs that failed (not cancelled): each is left out of every
// figure and named in the section's set-up; the other runs still count.
type failures []string

// keep records err; it returns an error only when ctx was cancelled.
func (f *failures) keep(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	*f = append(*f, runner.OneLine(err.Error()))
	return nil
}

// setup is the set-up line naming the failed runs ("" when none failed).
func (f failures) setup() []string {
	if len(f) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("Failed runs, left out of every figure (%d): %s.", len(f), strings.Join(f, "; "))}
}
