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
	"runtime"
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
	// Net, when set, gives go-grpc-thrift-aerospike its network back: its server
	// on one host, its client (and the store, where the caller started it) on
	// another, across the link labelled Link (the spec's hosts and links, made
	// and checked as a matrix run's are). Only that experiment has the variant.
	Net  Net
	Link string
}

// Net is a reproduction's hosts and the link between them (matrix.LinkBed).
type Net interface {
	// Enter sets up the link labelled label and checks it; a non-empty
	// refused says why runs over it may not be presented.
	Enter(ctx context.Context, label string) (refused string, err error)
	// Leave checks the link again and takes its shaping off.
	Leave(ctx context.Context)
	// Runner is the engine of the host that runs role.
	Runner(role string) runner.Runner
	// PlaceServer points a server of role at its host, ready once the hosts
	// of clients reach it.
	PlaceServer(cfg *measure.ServerProcConfig, role string, clients ...string)
	// Checks are the link's checks so far.
	Checks() []results.LinkCheck
	// Watch gives a run path the link's physics and its delayers' CPU.
	Watch(rp *measure.RunPath)
	// Where is the host that runs role and its address.
	Where(role string) (host, address string)
}

// netExperiments are the experiments with a network variant.
var netExperiments = []string{"go-grpc-thrift-aerospike"}

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
		if o.Net != nil && !slices.Contains(netExperiments, w) {
			return nil, fmt.Errorf("experiment %s has no network variant (only %s has): run it without a link", w, strings.Join(netExperiments, ", "))
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
		return secs, leaveNet(ctx, o, secs, put)
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
		s := o.judge(x)
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
	if err != nil {
		return secs, err
	}
	return secs, leaveNet(ctx, o, secs, put)
}

// leaveNet checks a reproduction's link once more after its runs and takes the
// shaping off, and puts each section run over it again with the link's checks.
func leaveNet(ctx context.Context, o Options, secs []results.Section, put func(results.Section) error) error {
	if o.Net == nil {
		return nil
	}
	o.Net.Leave(ctx)
	for _, s := range slices.Clone(secs) {
		if s.Links != nil {
			s.Links = o.Net.Checks()
			s.Setup = withLinkLine(s.Setup, s.Links)
			if err := put(s); err != nil {
				return err
			}
		}
	}
	return nil
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
	t := fmt.Sprintf("Precision rounds: where a claim was still inconclusive after the base repeats (or, in go-grpc-thrift-aerospike, \"partly\" with its interval across the yes band's edge), paired rounds (every alternative once at the level, in a fresh random order) were added, at most %d per level, within a budget of %v for the whole reproduction; the loop ended at %v (%s).",
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
	return e, o.judge(e), runErr
}

// judge is e's section, with the link it ran across.
func (o Options) judge(e experiment) results.Section {
	s := e.Judge(o.setup())
	if o.Net != nil {
		s.Links = o.Net.Checks()
		s.Setup = withLinkLine(s.Setup, s.Links)
	}
	return s
}

// linkLinePrefix opens the set-up line on how the link held under the runs.
const linkLinePrefix = "The link under the runs' load:"

// withLinkLine is setup with its line on how the link held under the runs'
// load in place of any earlier one (none before the link was checked after).
func withLinkLine(setup []string, checks []results.LinkCheck) []string {
	setup = slices.DeleteFunc(slices.Clone(setup), func(l string) bool { return strings.HasPrefix(l, linkLinePrefix) })
	for _, p := range checks {
		var parts []string
		if d := p.Delayer; d != nil && d.Packets > 0 {
			parts = append(parts, fmt.Sprintf("its delayers held %d packets, releasing them a median %.0f µs and a p99 %.0f µs later than due (each packet's delay was the asked plus that), on %.1f s of CPU", d.Packets, d.LateP50Us, d.LateP99Us, d.CPUSeconds))
		}
		if p.AfterRTTUs > 0 {
			parts = append(parts, fmt.Sprintf("checked again after the runs it added %.0f µs to the round trip against %.0f asked (%.0f before them)", p.AfterAddedRTTUs, p.AskedRTTUs, p.AddedRTTUs))
		}
		if p.Drift != "" {
			parts = append(parts, "so the link drifted from what was asked: the verdicts are of a link slower than "+p.Link+" under this load")
		}
		if len(parts) > 0 {
			setup = append(setup, linkLinePrefix+" "+strings.Join(parts, "; ")+".")
		}
	}
	return setup
}

// setup is what the verdicts' set-up lines say about where o ran.
func (o Options) setup() claims.Setup {
	s := claims.Setup{ServerCPUSet: o.ServerCPUSet, ClientCPUSet: o.ClientCPUSet,
		AerospikeHosts: o.AerospikeHosts, RedisAddr: o.RedisAddr, MachineCores: runtime.NumCPU()}
	if o.Net != nil {
		sh, sa := o.Net.Where("go-server")
		ch, ca := o.Net.Where("go")
		s.Across = fmt.Sprintf("the %s link (below) from host %s (%s) to host %s (%s), two network namespaces of this machine joined by a veth", o.Link, ch, ca, sh, sa)
	}
	return s
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
	r := o.Runner
	if o.Net != nil {
		r = o.Net.Runner("go")
	}
	b := &measure.RunPath{Runner: r, Programs: o.Programs, Dir: o.Dir,
		ClientResources: plan.Resources{CPUSet: o.ClientCPUSet}, ServerResources: plan.Resources{CPUSet: o.ServerCPUSet},
		Note: func(s string) { fmt.Fprintf(o.Log, "  note: %s\n", s) }}
	if o.Net != nil {
		o.Net.Watch(b)
	}
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
		m.LinkCPU, m.LinkKnown = w.LinkCPUS, w.LinkKnown
		m.MachineBusy, m.MachineKnown = w.MachineBusy, w.MachineKnown
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
