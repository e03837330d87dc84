package matrix

import (
	"context"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/measure"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/rpcbed/rpcbed/internal/progress"
	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/runner"
	"github.com/rpcbed/rpcbed/internal/worker"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// Options is one matrix run.
type Options struct {
	Spec plan.Spec
	// Dir is the run directory (results/<run>). With Resume, a run started there
	// before is finished: its saved spec is used and only missing cells run.
	Dir    string
	Resume bool
	Runner runner.Runner
	// RunnerName is recorded in matrix.json: docker or local.
	RunnerName string
	Programs   measure.Programs
	// Progress receives the progress line (cell i/N, name, ETA); nil is quiet.
	Progress io.Writer
	// Meta is recorded in a new run (machine, versions, commit); Execute fills ID,
	// Started, Runner and Spec.
	Meta results.Run
	// placed, when set, replaces the placement the spec asks for (tests).
	placed func(e *executor) placement
}

// Execute runs every cell of the plan that has no finished result yet, one server
// configuration at a time, and returns the run as saved. Within a server group
// the repeats are interleaved: repeat 1 of every cell, then repeat 2, and so on
// (docs/method.md, section 5). A cell's file is written after each of its
// repeats (status partial until the last), so an interruption loses at most the
// running repeat and Resume runs the rest. A cell that fails is recorded with its
// error and the run goes on.
func Execute(ctx context.Context, o Options) (*results.Run, error) {
	run, err := openRun(o)
	if err != nil {
		return nil, err
	}
	cells, err := results.LoadCells(o.Dir)
	if err != nil {
		return nil, err
	}
	have := map[string]results.CellResult{}
	for _, c := range cells {
		have[c.Name] = c
	}
	var todo []plan.Cell
	partial := map[string]results.CellResult{}
	for _, c := range run.Spec.Plan() {
		r, ok := have[c.Name()]
		switch {
		case !ok:
			todo = append(todo, c)
		case r.Status == results.StatusPartial:
			todo = append(todo, c)
			partial[c.Name()] = r
		}
	}
	verified := map[string]results.Verify{}
	for _, v := range run.Verify {
		verified[v.Pair] = v
	}
	e := &executor{o: o, run: run, verified: verified, partial: partial,
		prog: progress.New(o.Progress, todo, run.Spec.RoundsFor, kept(partial))}
	e.pl = engines{e}
	defer o.Runner.Close()
	if o.placed != nil {
		e.pl = o.placed(e)
	} else if len(todo) > 0 {
		stop, err := e.setUpPlacement(ctx, todo)
		if err != nil {
			return nil, err
		}
		defer stop()
	}
	if err := e.makeCertificates(todo); err != nil {
		return nil, err
	}
	for len(todo) > 0 {
		key, gk := todo[0].ServerProcKey(), todo[0].GroupKey()
		var group []plan.Cell
		for len(todo) > 0 && todo[0].GroupKey() == gk {
			group = append(group, todo[0])
			todo = todo[1:]
		}
		e.later, e.laterFixed = len(todo), e.fixedCost(todo)
		e.laterRuns = 0
		for _, c := range todo {
			e.laterRuns += e.run.Spec.RoundsFor(c)
		}
		why, err := e.enterLink(ctx, group[0].Link)
		if err != nil {
			return nil, err
		}
		if why != "" {
			for _, c := range group {
				if err := e.record(e.failed(c, why)); err != nil {
					return nil, err
				}
			}
			continue
		}
		if err := e.serverGroup(ctx, key, group); err != nil {
			return nil, err
		}
	}
	e.prog.Finish()
	run.Finished = time.Now().UTC()
	if err := results.WriteJSON(filepath.Join(o.Dir, results.RunFile), run); err != nil {
		return nil, err
	}
	return results.LoadRun(o.Dir)
}

// kept is how many repeats each resumed cell kept.
func kept(partial map[string]results.CellResult) map[string]int {
	n := map[string]int{}
	for name, c := range partial {
		n[name] = len(c.Repeats)
	}
	return n
}

// openRun creates the run directory and its run.json, or reads them back on Resume.
func openRun(o Options) (*results.Run, error) {
	if err := os.MkdirAll(filepath.Join(o.Dir, results.CellsDir), 0o755); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, results.RawDir), 0o755); err != nil {
		return nil, err
	}
	if o.Resume {
		run, err := results.LoadRun(o.Dir)
		if err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
		run.Cells = nil
		run.Finished = time.Time{}
		if run.Seed == 0 {
			run.Seed = newSeed(run.Spec.Seed) // a run from before the rounds were shuffled
		}
		return run, nil
	}
	if _, err := os.Stat(filepath.Join(o.Dir, results.RunFile)); err == nil {
		return nil, fmt.Errorf("%s already holds a run: use -resume to finish it, or another -out", o.Dir)
	}
	run := o.Meta
	run.ID = filepath.Base(o.Dir)
	run.Started = time.Now().UTC()
	run.Runner = o.RunnerName
	run.Spec = o.Spec
	run.Seed = newSeed(o.Spec.Seed)
	if run.Versions == nil {
		run.Versions = map[string]string{}
	}
	b, err := plan.MarshalSpec(o.Spec)
	if err != nil {
		return nil, err
	}
	if err := results.WriteFileAtomic(filepath.Join(o.Dir, results.SpecFile), b); err != nil {
		return nil, err
	}
	return &run, results.WriteJSON(filepath.Join(o.Dir, results.RunFile), run)
}

// newSeed is the spec's seed, or one drawn from the clock when it gives none.
func newSeed(spec int64) int64 {
	if spec != 0 {
		return spec
	}
	return time.Now().UnixNano()&(1<<62-1) | 1
}

// setUpPlacement sets up the spec's placement for the cells to run: a swarm
// (Spec.Cluster), one engine per host (Spec.Hosts), or the run's one engine.
// stop undoes what it set up.
func (e *executor) setUpPlacement(ctx context.Context, todo []plan.Cell) (stop func(), err error) {
	switch {
	case e.run.Spec.Cluster != nil:
		sw, err := e.joinSwarm(ctx, todo)
		if err != nil {
			return nil, err
		}
		e.pl = sw
		return sw.close, nil
	case len(e.run.Spec.Hosts) > 0:
		return e.setUpHosts(ctx)
	}
	return func() {}, nil
}

type executor struct {
	o Options
	// certs are the run's certificates by key type (security.go).
	certs *measure.Certs
	// pl is where servers and clients run (placement.go).
	pl placement
	// trace, when set, hears each group step's name (tests).
	trace    func(string)
	run      *results.Run
	verified map[string]results.Verify
	partial  map[string]results.CellResult
	prog     *progress.Progress
	// LinkBed is a multi-host run's hosts and the link its cells run over
	// (linkbed.go; empty on one engine).
	LinkBed
	// timed and timedRuns: the wall time of the timed runs so far, and their
	// count; later is the cells of the groups still to run (Spec.Budget).
	timed     time.Duration
	timedRuns int
	later     int
	laterRuns int // the later cells' rounds (Spec.RoundsFor)
	// laterFixed is what the later groups spend besides their cells' runs:
	// server starts and primes (fixedCost).
	laterFixed time.Duration
}

func (e *executor) serverConfig(key string) measure.ServerProcConfig {
	s := e.run.Spec
	cfg := measure.ServerProcConfig{Programs: e.o.Programs, Resources: s.ServerResources, Store: s.Store, RedisAddr: s.RedisAddr, AerospikeHosts: s.AerospikeHosts, Auth: *s.Auth}
	if e.hosts != nil {
		e.hostServerConfig(&cfg, key)
	}
	return cfg
}

// serverRunner is the engine a server runs on: its host's, or the run's one.
func (e *executor) serverRunner(key string) runner.Runner {
	if e.hosts != nil {
		return e.hosts.runnerFor(serverRole(key), "", e.link)
	}
	return e.o.Runner
}

// clientRunner is the engine a cell's client runs on (nil: measure.RunPath's).
func (e *executor) clientRunner(c plan.Cell) runner.Runner {
	if e.hosts != nil {
		return e.hosts.runnerFor(c.Client, c.ServerLang, e.link)
	}
	return nil
}

// clientAddr is the address c's client dials for protocol proto of srv.
func (e *executor) clientAddr(srv *measure.ServerProc, c plan.Cell) string {
	return addrFor(srv.For(c).Addrs[c.Protocol], e.link)
}

// clientRun is srv's ClientRun for c, dialled over the run's link.
func (e *executor) clientRun(srv *measure.ServerProc, c plan.Cell, l plan.Load) plan.ClientRun {
	r := srv.ClientRun(c, l)
	r.Addr = e.clientAddr(srv, c)
	return r
}

// cellState is one cell of a server group while its repeats run.
type cellState struct {
	c     plan.Cell
	res   results.CellResult
	final bool // no more repeats: the client refused, or the server is gone
	done  bool // its Spec.RoundsFor rounds are done
}

// serverGroup starts one server, verifies, primes, runs its cells' repeats
// interleaved (starting a fresh server and workers at each fork), adds rounds
// to cells wider than the spec's precision, and stops it: groupSteps, one
// named step after another, until a step ends the group.
func (e *executor) serverGroup(ctx context.Context, key string, cells []plan.Cell) error {
	g := &groupRun{key: key, group: cells[0].GroupKey(), cells: cells, fork: 1}
	defer e.endGroup(g)
	for _, step := range groupSteps {
		if e.trace != nil {
			e.trace(step.name + " " + g.key)
		}
		if err := step.run(e, ctx, g); err != nil || g.over {
			return err
		}
	}
	return nil
}

// groupStep is one named step of a server group.
type groupStep struct {
	name string
	run  func(e *executor, ctx context.Context, g *groupRun) error
}

// groupSteps are a server group's steps, in order.
var groupSteps = []groupStep{
	{"start", (*executor).startGroup},
	{"verify", (*executor).verifyGroup},
	{"prime", (*executor).primeGroup},
	{"admit", (*executor).admitCells},
	{"rounds", (*executor).rounds},
	{"add rounds", (*executor).addRounds},
}

// groupRun is one server group while its steps run: its cells, its server
// (restarted when it stops answering, started again at each fork), the run path
// whose workers its cells share, and the cells being timed.
type groupRun struct {
	key, group string
	cells      []plan.Cell
	srv        *measure.ServerProc
	runPath    *measure.RunPath
	fork       int // the current fork (Spec.Forks), 1 for a group that does not fork
	states     []*cellState
	// over: a step ended the group (its cells are recorded).
	over bool
}

// startGroup starts the group's server and its run path; a server that does not
// start fails every cell of the group and ends it.
func (e *executor) startGroup(ctx context.Context, g *groupRun) error {
	e.prog.Note("starting " + g.key)
	srv, err := e.pl.startServer(ctx, g.key, g.cells)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		g.over = true
		for _, c := range g.cells {
			e.prog.Skip(c)
			if err := e.record(e.failed(c, "server "+g.key+" did not start: "+runner.OneLine(err.Error()))); err != nil {
				return err
			}
		}
		return nil
	}
	g.srv = srv
	g.runPath = e.newRunPath()
	return nil
}

// endGroup ends the group's client workers, then its server.
func (e *executor) endGroup(g *groupRun) {
	if g.runPath != nil {
		e.pl.endClients(g)
	}
	e.stopServer(g.srv)
}

// verifyGroup is the verify pass (verify.go), when the spec asks for it.
func (e *executor) verifyGroup(ctx context.Context, g *groupRun) error {
	if !*e.run.Spec.Verify {
		return nil
	}
	return e.verify(ctx, g)
}

// newRunPath is a server group's run path, with a fresh pool of client workers
// when the spec keeps workers.
func (e *executor) newRunPath() *measure.RunPath {
	b := &measure.RunPath{Runner: e.o.Runner, Programs: e.o.Programs, Dir: e.o.Dir,
		ClientResources: e.run.Spec.ClientResources, ServerResources: e.run.Spec.ServerResources, Note: e.prog.Note}
	e.linkWatch(b)
	if *e.run.Spec.Worker {
		b.Workers = worker.NewPool()
	}
	if e.certs.Any() {
		b.Mounts = e.certs.Mounts()
	}
	return b
}

// primeGroup primes the group's java workers (Spec.Prime) against its server
// (prime.go).
func (e *executor) primeGroup(ctx context.Context, g *groupRun) error {
	if *e.run.Spec.Worker && len(e.run.Spec.Prime) > 0 && g.srv != nil {
		return e.prime(ctx, g)
	}
	return nil
}

// admitCells fails the cells whose pair did not verify and starts the others'
// records (a resumed cell goes on from its saved repeats).
func (e *executor) admitCells(_ context.Context, g *groupRun) error {
	for _, c := range g.cells {
		if v, ok := e.verified[c.Pair()]; ok && v.Status != results.StatusOK {
			e.prog.Skip(c)
			if err := e.record(e.failed(c, "verify failed, not timed: "+v.Error)); err != nil {
				return err
			}
			continue
		}
		st := &cellState{c: c, res: results.CellResult{Name: c.Name(), Cell: c, Load: c.Load, Started: time.Now().UTC()}}
		if p, ok := e.partial[c.Name()]; ok {
			st.res = p
		}
		g.states = append(g.states, st)
	}
	return nil
}

// rounds runs the spec's rounds: in each, every cell still to time once, in
// the round's shuffled order, a fresh fork first where the round starts one.
func (e *executor) rounds(ctx context.Context, g *groupRun) error {
	for r := 1; r <= e.run.Spec.RoundsFor(g.cells[0]); r++ {
		var round []*cellState
		for _, st := range e.shuffle(g.group, r, g.states) {
			if !st.final && len(st.res.Repeats) < r {
				round = append(round, st)
			}
		}
		if f := e.run.Spec.ForkOf(g.cells[0], r); f > g.fork && len(round) > 0 {
			if err := e.fork(ctx, g, f); err != nil {
				return err
			}
		}
		if err := e.round(ctx, g, r, false, round); err != nil {
			return err
		}
	}
	return nil
}

// fork starts fork f of a group (Spec.Forks): a fresh server and fresh client
// workers in place of the last fork's (the same pool), primed as the first were, so the next
// rounds see another JVM start's steady state.
func (e *executor) fork(ctx context.Context, g *groupRun, f int) error {
	e.prog.Note(fmt.Sprintf("fork %d of %s: a fresh server and fresh workers", f, g.key))
	e.stopServer(g.srv)
	// The pool's workers stop; the next ones count on from them (their ids
	// stay unique, so no repeat of the new fork is taken for a warm one).
	e.pl.endClients(g)
	g.fork = f
	srv, err := e.pl.startServer(ctx, g.key, g.cells)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// timeOne records the repeats that cannot run, with the reason.
		e.prog.Note(fmt.Sprintf("fork %d of %s: the server did not start: %s", f, g.key, runner.OneLine(err.Error())))
		g.srv = nil
		return nil
	}
	g.srv = srv
	return e.primeGroup(ctx, g)
}

// shuffle is round r's order of a group's cells: a permutation drawn from the
// run's seed, the group and the round alone, so a resumed run and a second run
// with the same seed draw the same order.
func (e *executor) shuffle(group string, r int, states []*cellState) []*cellState {
	h := fnv.New64a()
	h.Write([]byte(group))
	rng := rand.New(rand.NewPCG(uint64(e.run.Seed), h.Sum64()^uint64(r)))
	out := slices.Clone(states)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// round times each cell of order once, as round r of the group, and records the
// round's order in run.json (replacing a resumed run's record of the same round).
func (e *executor) round(ctx context.Context, g *groupRun, r int, added bool, order []*cellState) error {
	if len(order) == 0 {
		return nil
	}
	rec := results.Round{Group: g.group, Index: r, Order: make([]string, len(order)), Added: added}
	for i, st := range order {
		rec.Order[i] = st.c.Name()
	}
	e.run.Rounds = slices.DeleteFunc(e.run.Rounds, func(x results.Round) bool { return x.Group == g.group && x.Index == r })
	e.run.Rounds = append(e.run.Rounds, rec)
	for _, st := range order {
		if err := e.timeOne(ctx, g, st, r, added); err != nil {
			return err
		}
	}
	return nil
}

// timeOne runs repeat r of one cell (restarting the group's server first if it
// stopped answering) and records the cell.
func (e *executor) timeOne(ctx context.Context, g *groupRun, st *cellState, r int, added bool) error {
	key := g.key
	restarted := ""
	if g.srv != nil {
		if err := g.srv.Alive(ctx); err != nil {
			restarted = fmt.Sprintf("%s stopped answering (%s) and was restarted before this repeat", key, runner.OneLine(err.Error()))
			e.prog.Note(key + " stopped answering (" + runner.OneLine(err.Error()) + "): restarting it")
			e.stopServer(g.srv)
			if g.srv, err = e.pl.startServer(ctx, key, g.cells); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				g.srv = nil
				e.prog.Note(key + " could not be restarted: " + runner.OneLine(err.Error()))
			}
		}
	}
	srv := g.srv
	var rep results.Repeat
	if srv == nil {
		rep = results.Repeat{Index: r, Fork: e.run.Spec.ForkOf(st.c, r), Error: "server " + key + " could not be restarted"}
		if !added {
			e.prog.SkipRest(st.c, 1)
		}
	} else {
		if added {
			e.prog.Add(st.c)
		}
		e.prog.Start(st.c, r)
		t0 := time.Now()
		// A later repeat in the worker that timed the previous one starts warm.
		warm := false
		if n := len(st.res.Repeats); n > 0 {
			prev := st.res.Repeats[n-1]
			warm = prev.Error == "" && prev.WorkerID != "" && e.pl.workerID(g, st.c) == prev.WorkerID
		}
		rep, final, err := e.pl.timed(ctx, g, st, r, warm)
		if err != nil {
			return err
		}
		if final {
			st.final = true
		}
		rep.Index = r
		rep.Fork = e.run.Spec.ForkOf(st.c, r)
		e.prog.Done(st.c, time.Since(t0))
		e.timed += time.Since(t0)
		e.timedRuns++
		if restarted != "" {
			rep.Flag(results.FlagServerRestarted, restarted)
		}
		e.versions(srv, st.c, rep)
		return e.addRepeat(st, rep, r, added, srv == nil)
	}
	return e.addRepeat(st, rep, r, added, true)
}

// addRepeat adds a repeat to its cell and records the cell: final once its last
// round is done, or when another try would fail the same way.
func (e *executor) addRepeat(st *cellState, rep results.Repeat, r int, added, noServer bool) error {
	st.res.Repeats = append(st.res.Repeats, rep)
	if rep.Report == nil && (rep.ExitCode == report.ExitUsage || rep.ExitCode == report.ExitVerify || rep.ExitCode == report.ExitUnreachable) {
		// The client refused before timing: another try would refuse the same way.
		st.final = true
	}
	if noServer {
		st.final = true
	}
	switch {
	case added:
		st.res.Finish()
	case st.final || r == e.run.Spec.RoundsFor(st.c):
		st.done = true
		if !added {
			e.prog.SkipRest(st.c, e.run.Spec.RoundsFor(st.c)-len(st.res.Repeats))
		}
		st.res.Finish()
	default:
		st.res.Status = results.StatusPartial
	}
	return e.record(st.res)
}

// job is repeat r of c against srv; warm: the client worker that will run it
// timed c's previous repeat (Load.ForRepeat).
func (e *executor) job(srv *measure.ServerProc, c plan.Cell, r int, warm bool) measure.Job {
	l := c.Load.ForRepeat(r, warm)
	return measure.Job{
		Name: fmt.Sprintf("%s-r%d", c.Name(), r), Raw: filepath.Join(results.RawDir, fmt.Sprintf("%s-r%d.txt", c.Name(), r)),
		Client: c.Client, Args: c.ClientArgs(e.clientRun(srv, c, l)),
		Proto: c.Protocol, Call: c.Call, Timeout: l.RunTimeout(), Worker: true,
		Runner: e.clientRunner(c),
	}
}

// versions records the client's and server's library versions a repeat names.
func (e *executor) versions(srv *measure.ServerProc, c plan.Cell, rep results.Repeat) {
	if rep.Report != nil && rep.Report.Rpcbed != nil {
		for k, v := range rep.Report.Rpcbed.Versions {
			e.run.Versions[c.Client+"-client "+k] = v
		}
	}
	if _, ok := e.run.Versions[srv.Key+" go"]; !ok && srv.StatsURL != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if st, _, err := srv.ReadStats(ctx); err == nil {
			for k, v := range st.Versions {
				e.run.Versions[srv.Key+" "+k] = v
			}
		}
	}
}

func (e *executor) failed(c plan.Cell, why string) results.CellResult {
	now := time.Now().UTC()
	return results.CellResult{Name: c.Name(), Cell: c, Load: c.Load, Status: results.StatusFailed, Error: why, Started: now, Finished: now}
}

func (e *executor) stopServer(srv *measure.ServerProc) {
	srv.StopAll(func(key string, r runner.Result) {
		results.WriteFileAtomic(filepath.Join(e.o.Dir, results.RawDir, "server-"+key+".txt"), results.RawBytes(r.Stdout, r.Stderr))
	})
}

// record writes a cell's result file atomically and refreshes run.json.
func (e *executor) record(c results.CellResult) error {
	if err := results.WriteJSON(filepath.Join(e.o.Dir, results.CellsDir, c.Name+".json"), c); err != nil {
		return err
	}
	if c.Status == results.StatusFailed {
		e.prog.Note(c.Name + " failed: " + c.Error)
	}
	return results.WriteJSON(filepath.Join(e.o.Dir, results.RunFile), e.run)
}
