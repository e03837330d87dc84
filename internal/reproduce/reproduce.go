// Package reproduce re-runs the shape of the three published experiments
// (results/published/) on this machine and writes reproduction.json, .md and
// .html. It builds each experiment's runs (jobs.go: pure functions, printed by
// a golden test) and runs them on the matrix's run path (measure.RunPath, with
// client workers); internal/analysis/claims reads the published figures and
// judges every claim from the runs, and internal/render prints the sections.
//
// Each experiment is three steps: read the published data (claims), run
// (here), judge (claims).
package reproduce

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/measure"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/analysis/claims"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/render"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/runner"
)

// experiment is one published experiment in three steps: read its published
// figures (claims), run its shape here, judge every published claim from the
// run (claims).
type experiment interface {
	Read(published string) error
	run(ctx context.Context, o Options) error
	Judge(s claims.Setup) results.Section
	// stop ends what run kept for added rounds (servers, workers).
	stop()
}

// experiments in the order reproduction.md lists them.
var experiments = []struct {
	name string
	make func() experiment
}{
	{"go-grpc-thrift-aerospike", func() experiment { return &grpcThrift{} }},
	{"php-go-growth", func() experiment { return &growth{} }},
	{"java-rpc-2015", func() experiment { return newJava2015() }},
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
	Programs   measure.Programs
	// Server and Client CPU sets, as in the matrix spec.
	ServerCPUSet, ClientCPUSet string
	// AerospikeHosts, when set, is go-grpc-thrift-aerospike's store, as published;
	// otherwise RedisAddr is tried, then go-server's memory store.
	AerospikeHosts string
	// RedisAddr is tried for the store of go-grpc-thrift-aerospike; "" = memory only.
	RedisAddr string
	// Quick shrinks every run (for tests): the shape stays, the numbers mean little.
	Quick bool
	// Budget bounds the whole reproduction, base runs and the rounds the
	// precision loop adds (precision.go); 0 adds none.
	Budget time.Duration
	Log    io.Writer
}

// Run runs the named experiments (all when which is empty) and writes
// Dir/reproduction.json, .md and .html. An experiment that fails is
// reported with its error; the others still run. With a Budget, the precision
// loop (precision.go) then adds paired rounds where a claim is still
// inconclusive, every experiment's servers and workers kept until it ends.
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
	start := time.Now()
	var ran []ranExperiment
	defer func() {
		for _, r := range ran {
			r.e.stop()
		}
	}()
	put := func(s results.Section) error {
		secs = slices.DeleteFunc(secs, func(x results.Section) bool { return x.Name == s.Name })
		secs = append(secs, s)
		slices.SortStableFunc(secs, func(a, b results.Section) int {
			return slices.Index(Experiments, a.Name) - slices.Index(Experiments, b.Name)
		})
		return write(o.Dir, secs)
	}
	for _, w := range Experiments {
		if !slices.Contains(which, w) {
			continue
		}
		fmt.Fprintf(o.Log, "reproduce: %s\n", w)
		e, s, err := runOne(ctx, o, w)
		s.Name = w
		if e != nil {
			ran = append(ran, ranExperiment{w, e, err})
		}
		if err != nil {
			if ctx.Err() != nil {
				return secs, ctx.Err()
			}
			s.Err = err.Error()
			fmt.Fprintf(o.Log, "reproduce: %s: %v\n", w, err)
		}
		if err := put(s); err != nil {
			return secs, err
		}
	}
	if o.Budget <= 0 {
		return secs, nil
	}
	// The precision loop, over the experiments whose base runs completed.
	var rs []rounder
	var names []string
	for _, r := range ran {
		if x, ok := r.e.(rounder); ok && r.err == nil {
			rs = append(rs, x)
			names = append(names, r.name)
		}
	}
	recs, err := refine(ctx, o, clock{start: start, total: o.Budget, now: time.Now}, rs)
	for i, x := range rs {
		s := x.Judge(o.setup())
		s.Name = names[i]
		if i < len(recs) {
			s.Rounds = &recs[i]
			s.Findings = noteRounds(s.Findings, s.Rounds)
			s.Setup = append(s.Setup, roundsLine(s.Rounds))
		}
		if err := put(s); err != nil {
			return secs, err
		}
	}
	return secs, err
}

// ranExperiment is an experiment whose base runs were made: kept for the
// precision loop, stopped at the end.
type ranExperiment struct {
	name string
	e    experiment
	err  error
}

// noteRounds adds to each finding's detail the rounds the precision loop
// gave its claim.
func noteRounds(fs []results.Finding, r *results.Rounds) []results.Finding {
	for i, f := range fs {
		cr := r.Of(f.Rule)
		if cr.Rounds == 0 {
			continue
		}
		fs[i].Detail = strings.TrimSpace(f.Detail + fmt.Sprintf(" Precision: %d paired %s added at c=%s.", cr.Rounds, plural(cr.Rounds, "round"), joinInts(cr.Levels)))
	}
	return fs
}

// roundsLine is the set-up line saying how the precision loop went.
func roundsLine(r *results.Rounds) string {
	t := fmt.Sprintf("Precision rounds: where a claim was still inconclusive after the base repeats, paired rounds (every alternative once at the level, in a fresh random order) were added, at most %d per level, within a budget of %v for the whole reproduction; the loop ended at %v (%s).",
		r.MaxPerLevel, time.Duration(r.BudgetS*float64(time.Second)).Round(time.Second), time.Duration(r.ElapsedS*float64(time.Second)).Round(time.Second), r.Stop)
	if len(r.Claims) == 0 {
		return t + " This experiment took none."
	}
	var parts []string
	for _, c := range r.Claims {
		parts = append(parts, fmt.Sprintf("%s %d at c=%s", c.Rule, c.Rounds, joinInts(c.Levels)))
	}
	return t + fmt.Sprintf(" Here they took %.0f s: %s. Once rounds are added, every interval of the experiment is at %.2f %% (Bonferroni over the %d added looks: a claim with no difference is declared one at most 5 %% of the time over them).",
		r.SpentS, strings.Join(parts, "; "), r.Confidence*100, r.MaxPerLevel)
}

func joinInts(v []int) string {
	var s []string
	for _, x := range v {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ", ")
}

// runOne is one experiment's three steps; a failed run is still judged, so every
// claim gets a verdict (NotMeasured where its figures are missing). The
// experiment is returned for the precision loop (nil when its published
// figures could not be read).
func runOne(ctx context.Context, o Options, name string) (experiment, results.Section, error) {
	i := slices.IndexFunc(experiments, func(e struct {
		name string
		make func() experiment
	}) bool {
		return e.name == name
	})
	e := experiments[i].make()
	if err := e.Read(o.Published); err != nil {
		return nil, results.Section{}, err
	}
	runErr := e.run(ctx, o)
	s := e.Judge(o.setup())
	return e, s, runErr
}

// setup is what the verdicts' set-up lines say about where o ran.
func (o Options) setup() claims.Setup {
	return claims.Setup{ServerCPUSet: o.ServerCPUSet, ClientCPUSet: o.ClientCPUSet,
		AerospikeHosts: o.AerospikeHosts, RedisAddr: o.RedisAddr}
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

// newRunPath is an experiment's run path: the matrix's (measure.RunPath), so a
// reproduction's figures mean what the matrix's do, with long-lived client
// workers (warm-up paid once per client and protocol); stop ends the workers.
func newRunPath(o Options) (*measure.RunPath, func()) {
	b := &measure.RunPath{Runner: o.Runner, Programs: o.Programs, Dir: o.Dir,
		ClientResources: plan.Resources{CPUSet: o.ClientCPUSet}, ServerResources: plan.Resources{CPUSet: o.ServerCPUSet},
		Note: func(s string) { fmt.Fprintf(o.Log, "  note: %s\n", s) }}
	return b, b.KeepWorkers()
}

// runJob runs one job on b against srv (nil: not sampled), keeping its raw output
// as raw/NAME.txt, and measures both sides over the client's measured window.
func runJob(ctx context.Context, b *measure.RunPath, srv *measure.ServerProc, j measure.Job) (claims.Run, error) {
	j.Raw = filepath.Join("raw", j.Name+".txt")
	rep, err := b.Measure(ctx, srv, j)
	if err != nil {
		return claims.Run{}, err
	}
	if rep.Report == nil {
		return claims.Run{}, fmt.Errorf("%s: %s (raw/%s.txt)", j.Name, rep.Error, j.Name)
	}
	m := claims.Run{Report: *rep.Report, Worker: rep.Worker, Flags: rep.Flags}
	if w := rep.Window; w != nil {
		m.ClientCPU, m.Wall = w.ClientCPUS, w.Seconds
		m.ClientJITMs, m.ServerJITMs = w.ClientJITMs, w.ServerJITMs
		if w.ServerKnown {
			m.ServerCPU, m.ServerN, m.ServerKnown = w.ServerCPUS, w.ServerCalls, true
		}
	}
	return m, nil
}

// recordFailure records a failed run in f (left out of every figure, named in the
// set-up); it returns an error only when ctx was cancelled.
func recordFailure(ctx context.Context, f *claims.Failures, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	*f = append(*f, runner.OneLine(err.Error()))
	return nil
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
