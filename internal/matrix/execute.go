package matrix

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/runner"

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
	Programs   Programs
	// Progress receives the progress line (cell i/N, name, ETA); nil is quiet.
	Progress io.Writer
	// Meta is recorded in a new run (machine, versions, commit); Execute fills ID,
	// Started, Runner and Spec.
	Meta results.Run
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
		prog: newProgress(o.Progress, todo, run.Spec.Repeats, partial)}
	defer o.Runner.Close()
	if run.Spec.Cluster != nil && len(todo) > 0 {
		if err := e.runCluster(ctx, todo); err != nil {
			return nil, err
		}
		todo = nil
	}
	if len(run.Spec.Hosts) > 0 && len(todo) > 0 {
		stop, err := e.setUpHosts(ctx)
		if err != nil {
			return nil, err
		}
		defer stop()
	}
	for len(todo) > 0 {
		key, gk := todo[0].ServerProcKey(), todo[0].GroupKey()
		var group []plan.Cell
		for len(todo) > 0 && todo[0].GroupKey() == gk {
			group = append(group, todo[0])
			todo = todo[1:]
		}
		e.later = len(todo)
		if err := e.enterLink(ctx, group[0].Link); err != nil {
			return nil, err
		}
		if err := e.serverGroup(ctx, key, group); err != nil {
			return nil, err
		}
	}
	e.prog.finish()
	run.Finished = time.Now().UTC()
	if err := results.WriteJSON(filepath.Join(o.Dir, results.RunFile), run); err != nil {
		return nil, err
	}
	return results.LoadRun(o.Dir)
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

type executor struct {
	o        Options
	run      *results.Run
	verified map[string]results.Verify
	partial  map[string]results.CellResult
	prog     *progress
	// hosts is a multi-host run's placement (nil: one engine); link the link
	// the current cells run over.
	hosts *placement
	link  plan.Link
	// linkSet says a link has been set up (shaped and probed) in this process.
	linkSet bool
	// timed and timedRuns: the wall time of the timed runs so far, and their
	// count; later is the cells of the groups still to run (Spec.Budget).
	timed     time.Duration
	timedRuns int
	later     int
}

func (e *executor) serverConfig(key string) ServerProcConfig {
	s := e.run.Spec
	cfg := ServerProcConfig{Programs: e.o.Programs, Resources: s.ServerResources, Store: s.Store, RedisAddr: s.RedisAddr, AerospikeHosts: s.AerospikeHosts, Auth: *s.Auth}
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

// clientRunner is the engine a cell's client runs on (nil: Bench's).
func (e *executor) clientRunner(c plan.Cell) runner.Runner {
	if e.hosts != nil {
		return e.hosts.runnerFor(c.Client, c.ServerLang, e.link)
	}
	return nil
}

// clientAddr is the address c's client dials for protocol proto of srv.
func (e *executor) clientAddr(srv *ServerProc, c plan.Cell) string {
	return addrFor(srv.Addrs[c.Protocol], e.link)
}

// cellState is one cell of a server group while its repeats run.
type cellState struct {
	c     plan.Cell
	res   results.CellResult
	final bool // no more repeats: the client refused, or the server is gone
	done  bool // its Spec.Repeats rounds are done
}

// serverGroup starts one server, verifies, runs its cells' repeats interleaved
// and stops it.
func (e *executor) serverGroup(ctx context.Context, key string, cells []plan.Cell) error {
	e.prog.note("starting " + key)
	srv, err := StartServerProc(ctx, e.serverRunner(key), key, e.serverConfig(key))
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for _, c := range cells {
			e.prog.skip(c)
			if err := e.record(e.failed(c, "server "+key+" did not start: "+runner.OneLine(err.Error()))); err != nil {
				return err
			}
		}
		return nil
	}
	g := &groupRun{key: key, group: cells[0].GroupKey(), srv: srv}
	defer func() { e.stopServer(g.srv) }()
	bench := &Bench{Runner: e.o.Runner, Programs: e.o.Programs, Dir: e.o.Dir,
		ClientResources: e.run.Spec.ClientResources, ServerResources: e.run.Spec.ServerResources, Note: e.prog.note}
	g.bench = bench
	if *e.run.Spec.Worker {
		bench.Workers = newWorkerPool()
		defer bench.Workers.close()
	}
	if *e.run.Spec.Verify {
		if err := e.verify(ctx, bench, srv, cells); err != nil {
			return err
		}
	}
	if *e.run.Spec.Worker && len(e.run.Spec.Prime) > 0 {
		if err := e.prime(ctx, bench, srv, cells); err != nil {
			return err
		}
	}
	var states []*cellState
	for _, c := range cells {
		if v, ok := e.verified[c.Pair()]; ok && v.Status != results.StatusOK {
			e.prog.skip(c)
			if err := e.record(e.failed(c, "verify failed, not timed: "+v.Error)); err != nil {
				return err
			}
			continue
		}
		st := &cellState{c: c, res: results.CellResult{Name: c.Name(), Cell: c, Load: c.Load, Started: time.Now().UTC()}}
		if p, ok := e.partial[c.Name()]; ok {
			st.res = p
		}
		states = append(states, st)
	}
	for r := 1; r <= e.run.Spec.Repeats; r++ {
		var round []*cellState
		for _, st := range e.shuffle(g.group, r, states) {
			if !st.final && len(st.res.Repeats) < r {
				round = append(round, st)
			}
		}
		if err := e.round(ctx, g, r, false, round); err != nil {
			return err
		}
	}
	return e.addRounds(ctx, g, states)
}

// groupRun is one server group while its rounds run: its server (restarted when
// it stops answering) and the bench whose workers its cells share.
type groupRun struct {
	key, group string
	srv        *ServerProc
	bench      *Bench
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
	key, bench := g.key, g.bench
	restarted := ""
	if g.srv != nil {
		if err := g.srv.Alive(ctx); err != nil {
			restarted = fmt.Sprintf("%s stopped answering (%s) and was restarted before this repeat", key, runner.OneLine(err.Error()))
			e.prog.note(key + " stopped answering (" + runner.OneLine(err.Error()) + "): restarting it")
			e.stopServer(g.srv)
			if g.srv, err = StartServerProc(ctx, e.serverRunner(key), key, e.serverConfig(key)); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				g.srv = nil
				e.prog.note(key + " could not be restarted: " + runner.OneLine(err.Error()))
			}
		}
	}
	srv := g.srv
	var rep results.Repeat
	if srv == nil {
		rep = results.Repeat{Index: r, Error: "server " + key + " could not be restarted"}
		if !added {
			e.prog.skipRest(st.c, 1)
		}
	} else {
		if added {
			e.prog.add(st.c)
		}
		e.prog.start(st.c, r)
		t0 := time.Now()
		// A later repeat in the worker that timed the previous one starts warm.
		warm := false
		if n := len(st.res.Repeats); n > 0 {
			prev := st.res.Repeats[n-1]
			warm = prev.Error == "" && prev.WorkerID != "" && bench.Workers.current(st.c.Client+"-"+st.c.Protocol) == prev.WorkerID
		}
		rep, err := bench.Once(ctx, srv, e.job(srv, st.c, r, warm))
		if err != nil {
			return err
		}
		rep.Index = r
		e.prog.done(st.c, time.Since(t0))
		e.timed += time.Since(t0)
		e.timedRuns++
		if restarted != "" {
			rep.Flag(results.FlagServerRestarted, restarted)
		}
		e.versions(srv, st.c, rep)
		return e.keep(st, rep, r, added, srv == nil)
	}
	return e.keep(st, rep, r, added, true)
}

// keep adds a repeat to its cell and records the cell: final once its last
// round is done, or when another try would fail the same way.
func (e *executor) keep(st *cellState, rep results.Repeat, r int, added, noServer bool) error {
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
	case st.final || r == e.run.Spec.Repeats:
		st.done = true
		if !added {
			e.prog.skipRest(st.c, e.run.Spec.Repeats-len(st.res.Repeats))
		}
		st.res.Finish()
	default:
		st.res.Status = results.StatusPartial
	}
	return e.record(st.res)
}

// job is repeat r of c against srv; warm: the client worker that will run it
// timed c's previous repeat (Load.ForRepeat).
func (e *executor) job(srv *ServerProc, c plan.Cell, r int, warm bool) Job {
	l := c.Load.ForRepeat(r, warm)
	return Job{
		Name: fmt.Sprintf("%s-r%d", c.Name(), r), Raw: filepath.Join(results.RawDir, fmt.Sprintf("%s-r%d.txt", c.Name(), r)),
		Client: c.Client, Args: clientArgs(c, e.clientAddr(srv, c), l),
		Proto: c.Protocol, Call: c.Call, Timeout: runTimeout(l), Worker: true,
		Runner: e.clientRunner(c),
	}
}

// versions records the client's and server's library versions a repeat names.
func (e *executor) versions(srv *ServerProc, c plan.Cell, rep results.Repeat) {
	if rep.Report != nil && rep.Report.Rpcbed != nil {
		for k, v := range rep.Report.Rpcbed.Versions {
			e.run.Versions[c.Client+"-client "+k] = v
		}
	}
	if _, ok := e.run.Versions[srv.Key+" go"]; !ok && srv.StatsURL != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if st, _, err := srv.readStats(ctx); err == nil {
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

func (e *executor) stopServer(srv *ServerProc) {
	if srv == nil || srv.Svc == nil {
		return
	}
	r, _ := srv.Svc.Stop(context.Background())
	results.WriteFileAtomic(filepath.Join(e.o.Dir, results.RawDir, "server-"+srv.Key+".txt"), results.RawBytes(r.Stdout, r.Stderr))
	srv.Svc = nil
}

// verify runs one call per client x protocol x call these cells need (through the
// client's worker, which then stays warm for the timed runs), unless a previous
// (resumed) pass already checked it.
func (e *executor) verify(ctx context.Context, bench *Bench, srv *ServerProc, cells []plan.Cell) error {
	seen := map[string]bool{}
	for _, c := range cells {
		pair := c.Pair()
		if seen[pair] {
			continue
		}
		seen[pair] = true
		if v, ok := e.verified[pair]; ok && v.Status == results.StatusOK {
			continue
		}
		e.prog.note("verify " + pair)
		args := clientArgs(c, e.clientAddr(srv, c), plan.Load{N: 1, Conns: 1})
		args = replaceFlag(args, "-c", "1")
		raw := filepath.Join(results.RawDir, "verify-"+pair+".txt")
		var rep results.Repeat
		res, err := bench.run(ctx, &rep, Job{Name: "verify-" + pair, Client: c.Client, Args: args, Proto: c.Protocol, Timeout: 90 * time.Second, Worker: true, Runner: e.clientRunner(c)})
		if ctx.Err() != nil {
			return ctx.Err()
		}
		werr := writeRaw(filepath.Join(e.o.Dir, raw), res.Stdout, res.Stderr)
		v := results.Verify{Pair: pair, Status: results.StatusOK, ExitCode: res.ExitCode, Raw: raw}
		if err == nil {
			err = checkVerify(res)
		}
		if err == nil && werr != nil {
			err = fmt.Errorf("raw file: %w", werr)
		}
		if err != nil {
			v.Status, v.Error = results.StatusFailed, runner.OneLine(err.Error())
		}
		e.verified[pair] = v
		e.run.Verify = e.verifyList()
		if err := results.WriteJSON(filepath.Join(e.o.Dir, results.VerifyFile), e.run.Verify); err != nil {
			return err
		}
	}
	return nil
}

// prime runs, for each client the spec primes, un-recorded runs through each of
// its workers these cells use (Spec.Prime): rounds of one run per call and item
// count of the worker's cells (a 5000-item answer runs other code than a 2-item
// one), with no warm-up, each round at the next of its cells' concurrencies
// (largest first). A JVM's JIT takes tens of seconds on the one core it shares with
// the load (docs/method.md, section 5), so with prime_max the rounds go on until
// one after every concurrency was primed shows the JIT at rest on both sides
// (client and server compile time each at most JITQuiet of the round), or
// prime_max is spent. Without prime_max, or without a JIT on either side, it is
// one round at the largest concurrency. A failed prime is noted and changes
// nothing else: the timed repeats judge themselves.
func (e *executor) prime(ctx context.Context, bench *Bench, srv *ServerProc, cells []plan.Cell) error {
	type shapes struct {
		shapes []plan.Cell // one per call and item count
		concs  []int       // its cells' concurrencies, largest first
	}
	plans := map[string]*shapes{}
	var workers []string
	seen := map[string]bool{}
	for _, c := range cells {
		if e.run.Spec.Prime[c.Client] <= 0 {
			continue
		}
		if v, ok := e.verified[c.Pair()]; ok && v.Status != results.StatusOK {
			continue
		}
		worker := c.Client + "-" + c.Protocol
		p := plans[worker]
		if p == nil {
			p = &shapes{}
			plans[worker] = p
			workers = append(workers, worker)
		}
		key := primeKey(c)
		if !seen[key] {
			seen[key] = true
			p.shapes = append(p.shapes, c)
		}
		if !slices.Contains(p.concs, c.Concurrency) {
			p.concs = append(p.concs, c.Concurrency)
		}
	}
	for _, worker := range workers {
		p := plans[worker]
		slices.SortFunc(p.concs, func(a, b int) int { return b - a })
		client := p.shapes[0].Client
		d := e.run.Spec.Prime[client]
		budget := e.run.Spec.PrimeBudget(client, p.shapes[0].Protocol)
		var spent time.Duration
		for round := 1; ; round++ {
			conc := p.concs[(round-1)%len(p.concs)]
			j0, sok0 := e.serverJIT(ctx, srv)
			t0 := time.Now()
			var clientJIT, windows float64
			clientKnown := false
			for _, c := range p.shapes {
				c.Concurrency = conc
				key := primeKey(c)
				name := "prime-" + key
				if round > 1 {
					name += "-r" + strconv.Itoa(round)
				}
				if round == 1 {
					e.prog.note(fmt.Sprintf("prime %s: %v at c=%d, not recorded", key, d.D(), c.Concurrency))
				}
				l := plan.Load{Duration: d, Conns: c.Load.Conns}
				var rep results.Repeat
				res, err := bench.run(ctx, &rep, Job{Name: name, Client: c.Client, Args: clientArgs(c, e.clientAddr(srv, c), l),
					Proto: c.Protocol, Call: c.Call, Timeout: runTimeout(l), Worker: true, Runner: e.clientRunner(c)})
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if werr := writeRaw(filepath.Join(e.o.Dir, results.RawDir, name+".txt"), res.Stdout, res.Stderr); werr != nil && err == nil {
					err = werr
				}
				if err == nil && res.ExitCode != 0 {
					err = fmt.Errorf("exit code %d%s", res.ExitCode, exitMeaning(res.ExitCode))
				}
				if err != nil {
					e.prog.note("prime " + name + " failed (the timed repeats go on): " + runner.OneLine(err.Error()))
					continue
				}
				if r, perr := report.ParseClient(bytes.NewReader(res.Stdout)); perr == nil && r.Rpcbed.JITCompileMs != nil {
					clientKnown = true
					clientJIT += float64(*r.Rpcbed.JITCompileMs)
					windows += math.Max(0, r.Rpcbed.WindowEnd-r.Rpcbed.WindowStart)
				}
			}
			wall := time.Since(t0)
			spent += wall
			j1, sok1 := e.serverJIT(ctx, srv)
			serverKnown := sok0 && sok1
			pr := results.Prime{Worker: worker, Rounds: round, Seconds: spent.Seconds(), LastRoundS: wall.Seconds()}
			if clientKnown {
				pr.LastClientJITMs, pr.LastWindowS = &clientJIT, windows
			}
			if serverKnown {
				ms := j1 - j0
				pr.LastServerJITMs = &ms
			}
			if budget <= 0 || (!clientKnown && !serverKnown) {
				e.run.Primes = append(e.run.Primes, pr)
				break // no JIT to wait for, or no budget to wait with: one round
			}
			quiet := true
			var parts []string
			if clientKnown {
				quiet = quiet && !results.JITBusy(clientJIT, windows)
				parts = append(parts, fmt.Sprintf("client JIT %.0f ms of %.1f s measured", clientJIT, windows))
			}
			if serverKnown {
				quiet = quiet && !results.JITBusy(j1-j0, wall.Seconds())
				parts = append(parts, fmt.Sprintf("server JIT %.0f ms of %.1f s", j1-j0, wall.Seconds()))
			}
			e.prog.note(fmt.Sprintf("prime %s round %d at c=%d: %s", worker, round, conc, strings.Join(parts, ", ")))
			if quiet && round >= len(p.concs) {
				pr.AtRest = true
				e.run.Primes = append(e.run.Primes, pr)
				e.prog.note(fmt.Sprintf("prime %s: JIT at rest after %d rounds, %.1f s", worker, round, spent.Seconds()))
				break
			}
			if spent+wall > budget {
				e.run.Primes = append(e.run.Primes, pr)
				e.prog.note(fmt.Sprintf("prime %s: JIT not at rest after %d rounds, %.1f s (prime_max %v): its first repeats may show %s", worker, round, spent.Seconds(), budget, results.FlagJIT))
				break
			}
		}
	}
	return results.WriteJSON(filepath.Join(e.o.Dir, results.RunFile), e.run)
}

// primeKey names a prime run: the cell's pair and, for datalist, its item count.
func primeKey(c plan.Cell) string {
	key := c.Pair()
	if c.Call == "datalist" {
		key += "-" + strconv.Itoa(c.Items)
	}
	return key
}

// serverJIT is a JVM server's accumulated JIT compile time (ms) from /stats; ok is
// false for a server without one (go-server) or one that did not answer.
func (e *executor) serverJIT(ctx context.Context, srv *ServerProc) (float64, bool) {
	if srv == nil || srv.StatsURL == "" {
		return 0, false
	}
	st, _, err := srv.readStats(ctx)
	if err != nil || st.JITCompileMs == nil {
		return 0, false
	}
	return float64(*st.JITCompileMs), true
}

func (e *executor) verifyList() []results.Verify {
	var vs []results.Verify
	for _, k := range slices.Sorted(maps.Keys(e.verified)) {
		vs = append(vs, e.verified[k])
	}
	return vs
}

// checkVerify accepts a verify run that exited 0 with a report of one complete,
// correct call.
func checkVerify(res runner.Result) error {
	if res.ExitCode != 0 {
		return fmt.Errorf("exit code %d%s: %s", res.ExitCode, exitMeaning(res.ExitCode), runner.LastLine(res.Stderr))
	}
	r, err := report.ParseClient(bytes.NewReader(res.Stdout))
	if err != nil {
		return fmt.Errorf("report: %v", err)
	}
	if r.Complete < 1 || r.Failed > 0 {
		return fmt.Errorf("%d complete, %d failed (%s)", r.Complete, r.Failed, errorKinds(&r))
	}
	return nil
}

func exitMeaning(code int) string {
	switch code {
	case report.ExitUsage:
		return " (bad arguments)"
	case report.ExitVerify:
		return " (wrong response)"
	case report.ExitUnreachable:
		return " (server unreachable)"
	}
	return ""
}

// record writes a cell's result file atomically and refreshes run.json.
func (e *executor) record(c results.CellResult) error {
	if err := results.WriteJSON(filepath.Join(e.o.Dir, results.CellsDir, c.Name+".json"), c); err != nil {
		return err
	}
	if c.Status == results.StatusFailed {
		e.prog.note(c.Name + " failed: " + c.Error)
	}
	return results.WriteJSON(filepath.Join(e.o.Dir, results.RunFile), e.run)
}

// clientArgs are the flags every rpcbed client takes (go-client's).
func clientArgs(c plan.Cell, addr string, l plan.Load) []string {
	args := []string{"-proto", c.Protocol, "-call", c.Call}
	if c.Call == "datalist" {
		args = append(args, "-items", strconv.Itoa(c.Items))
	}
	args = append(args, "-c", strconv.Itoa(c.Concurrency))
	if l.N > 0 {
		args = append(args, "-n", strconv.FormatInt(l.N, 10))
	}
	if l.Duration > 0 {
		args = append(args, "-t", Seconds(l.Duration.D()))
	}
	switch {
	case l.Warmup.IsAuto():
		args = append(args, "-warmup", "auto", "-warmup-max", Seconds(l.WarmupBound()))
	case l.Warmup > 0:
		args = append(args, "-warmup", Seconds(l.Warmup.D()))
	}
	args = append(args, "-conns", strconv.Itoa(l.ConnsFor(c.Concurrency)))
	if c.Protocol == "http" {
		args = append(args, "-k")
	}
	return append(args, "-addr", addr)
}

func replaceFlag(args []string, flag, v string) []string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			args[i+1] = v
		}
	}
	return args
}

// Seconds is d as a client's duration flag takes it: seconds with an "s" ("1.5s").
func Seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// runTimeout bounds one client run: its planned time plus room for start-up.
func runTimeout(l plan.Load) time.Duration {
	if l.Timeout > 0 {
		return l.Timeout.D()
	}
	if l.Duration > 0 {
		return l.WarmupBound() + l.Duration.D() + 60*time.Second
	}
	return l.WarmupBound() + 120*time.Second
}

func errorKinds(r *report.Report) string {
	if r.Rpcbed == nil || len(r.Rpcbed.Errors) == 0 {
		return fmt.Sprintf("connect=%d receive=%d length=%d exceptions=%d",
			r.FailedBy.Connect, r.FailedBy.Receive, r.FailedBy.Length, r.FailedBy.Exceptions)
	}
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(r.Rpcbed.Errors)) {
		kv = append(kv, k+"="+strconv.FormatInt(r.Rpcbed.Errors[k], 10))
	}
	return strings.Join(kv, " ")
}
