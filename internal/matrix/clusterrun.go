package matrix

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rpcbed/rpcbed/internal/cluster"
	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/runner"
	"github.com/rpcbed/rpcbed/internal/stats"
	"github.com/rpcbed/rpcbed/internal/swarm"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// clusterRun is a cluster run in progress: the swarm, the barrier, and the
// client nodes lost so far (node id -> why), kept off every later repeat.
type clusterRun struct {
	e    *executor
	cl   *swarm.Cluster
	bar  *swarm.Barrier
	lost map[string]string
}

// clockPings is how many pings the ready handshake measures each task's clock with.
const clockPings = 8

// runCluster runs todo on the spec's swarm: form it (or attach to it), copy the
// images to a formed swarm's engines, open the barrier, then each server group
// as serverGroup does, with every client run split over client tasks. Whatever
// it formed or created is removed on every exit path.
func (e *executor) runCluster(ctx context.Context, todo []plan.Cell) (err error) {
	cs := e.run.Spec.Cluster
	var cl *swarm.Cluster
	if len(cs.Form) > 0 {
		if err := e.copyClusterImages(ctx, todo); err != nil {
			return err
		}
		e.prog.note(fmt.Sprintf("forming a swarm of %d engines", len(cs.Form)))
		cl, err = swarm.Form(ctx, cs.Form, cs.AddrPool)
	} else {
		cl, err = swarm.Attach(ctx, cs.Manager)
	}
	if err != nil {
		return err
	}
	defer func() {
		if cerr := cl.Close(); cerr != nil {
			e.prog.note("swarm clean-up: " + runner.OneLine(cerr.Error()))
			if err == nil {
				err = cerr
			}
		}
	}()
	bar, err := swarm.Listen(net.JoinHostPort(cs.Driver, "0"))
	if err != nil {
		return err
	}
	defer bar.Close()
	nodes, err := cl.Nodes(ctx)
	if err != nil {
		return err
	}
	e.run.Cluster = &results.ClusterRecord{Engine: cs.Engine, Manager: cl.Manager, Formed: len(cs.Form) > 0, Barrier: bar.Addr(), Nodes: nodes}
	if err := results.WriteJSON(filepath.Join(e.o.Dir, results.RunFile), e.run); err != nil {
		return err
	}
	if s := e.run.Spec; s.ClientResources.CPUSet != "" || s.ServerResources.CPUSet != "" {
		e.prog.note("cluster: swarm tasks cannot be pinned (no --cpuset-cpus): the spec's cpuset does not apply; cpus (--limit-cpu) does")
	}
	cr := &clusterRun{e: e, cl: cl, bar: bar, lost: map[string]string{}}
	for len(todo) > 0 {
		key := todo[0].ServerProcKey()
		var group []plan.Cell
		for len(todo) > 0 && todo[0].ServerProcKey() == key {
			group = append(group, todo[0])
			todo = todo[1:]
		}
		if err := cr.serverGroup(ctx, key, group); err != nil {
			return err
		}
	}
	return nil
}

// copyClusterImages copies the runtime images the cells need to every engine of
// a swarm rpcbed forms (skipped where the image id matches).
func (e *executor) copyClusterImages(ctx context.Context, cells []plan.Cell) error {
	src, ok := e.o.Runner.(*runner.Docker)
	if !ok {
		return fmt.Errorf("cluster: forming a swarm needs the Docker runner (-runner docker): its images are copied to every node")
	}
	want := map[string]bool{}
	for _, c := range cells {
		srv, _ := plan.ServerOf(c.ServerLang)
		want[srv.Language] = true
		want[plan.LanguageOf(c.Client)] = true
	}
	for _, m := range e.run.Spec.Cluster.Form {
		d, err := runner.NewDockerAt(m.Engine)
		if err != nil {
			return fmt.Errorf("cluster.form %s: %w", m.Address, err)
		}
		for _, rt := range plan.Languages {
			if !want[rt] {
				continue
			}
			t0 := time.Now()
			copied, err := runner.CopyImage(ctx, src, d, e.o.Programs.image(rt))
			if err != nil {
				d.Close()
				return fmt.Errorf("cluster.form %s: %w", m.Address, err)
			}
			if copied {
				e.prog.note(fmt.Sprintf("copied %s to %s in %.1f s", e.o.Programs.image(rt), m.Address, time.Since(t0).Seconds()))
			}
		}
		d.Close()
	}
	return nil
}

// serverGroup starts one server as a service on a server-pool node, runs its
// cells' repeats interleaved (repeat 1 of every cell, then repeat 2 ...), each a
// gang of client tasks, and stops it.
func (cr *clusterRun) serverGroup(ctx context.Context, key string, cells []plan.Cell) error {
	e := cr.e
	fail := func(why string) error {
		for _, c := range cells {
			e.prog.skip(c)
			if err := e.record(e.failed(c, why)); err != nil {
				return err
			}
		}
		return nil
	}
	need := 0
	for _, c := range cells {
		need = max(need, cr.minNodes(c))
	}
	// The gang check, before anything is created.
	by, err := cr.cl.Gang(ctx, map[string]int{plan.PoolServer: 1, plan.PoolClients: need}, cr.lost)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fail(runner.OneLine(err.Error()))
	}
	node := by[plan.PoolServer][0]
	e.prog.note(fmt.Sprintf("starting %s on %s", key, node))
	cfg := e.serverConfig(key)
	cfg.Address = node.Addr
	srv, err := StartServerProc(ctx, &swarm.Runner{C: cr.cl, Node: node.ID, Pool: plan.PoolServer}, key, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fail("server " + key + " did not start: " + runner.OneLine(err.Error()))
	}
	defer e.stopServer(srv)
	var states []*cellState
	for _, c := range cells {
		st := &cellState{c: c, res: results.CellResult{Name: c.Name(), Cell: c, Load: c.Load, Started: time.Now().UTC()}}
		if p, ok := e.partial[c.Name()]; ok {
			st.res = p
		}
		states = append(states, st)
	}
	group := cells[0].GroupKey()
	for r := 1; r <= e.run.Spec.Rounds; r++ {
		// Rounds in the run's seeded random order, as serverGroup's.
		var order []*cellState
		for _, st := range e.shuffle(group, r, states) {
			if !st.final && len(st.res.Repeats) < r {
				order = append(order, st)
			}
		}
		if len(order) > 0 {
			rec := results.Round{Group: group, Index: r}
			for _, st := range order {
				rec.Order = append(rec.Order, st.c.Name())
			}
			e.run.Rounds = slices.DeleteFunc(e.run.Rounds, func(x results.Round) bool { return x.Group == group && x.Index == r })
			e.run.Rounds = append(e.run.Rounds, rec)
		}
		for _, st := range order {
			e.prog.start(st.c, r)
			t0 := time.Now()
			rep, short, err := cr.repeat(ctx, srv, st.c, r)
			if err != nil {
				return err
			}
			e.prog.done(st.c, time.Since(t0))
			if rep.Error != "" {
				e.prog.note(fmt.Sprintf("%s r%d failed: %s", st.c.Name(), r, rep.Error))
			}
			st.res.Repeats = append(st.res.Repeats, rep)
			if short {
				st.final = true // the pool stays short: every later repeat would say the same
			}
			if st.final || r == e.run.Spec.Rounds {
				st.final = true
				e.prog.skipRest(st.c, e.run.Spec.Rounds-len(st.res.Repeats))
				st.res.Finish()
			} else {
				st.res.Status = results.StatusPartial
			}
			if err := e.record(st.res); err != nil {
				return err
			}
		}
	}
	return nil
}

// minNodes is the fewest client nodes c's repeat may run on.
func (cr *clusterRun) minNodes(c plan.Cell) int {
	m := cr.e.run.Spec.Cluster.MinNodes
	if m <= 0 || m > c.Nodes {
		return c.Nodes
	}
	return m
}

func newToken() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// taskRun is one client task of a repeat while it runs.
type taskRun struct {
	tc    *swarm.TaskConn
	p     *workerProc
	share plan.Share
	rec   results.TaskRecord
	res   runner.Result
	err   error
}

// repeat runs repeat r of c as a gang: a service of one task per client node
// (at most one per node), each task's worker connected to the barrier, its clock
// measured, verified, primed and then released with the others at once for the
// timed run. short says the client pool was too small to run it at all. Only
// ctx's cancellation is an error.
func (cr *clusterRun) repeat(ctx context.Context, srv *ServerProc, c plan.Cell, r int) (rep results.Repeat, short bool, err error) {
	e := cr.e
	name := fmt.Sprintf("%s-r%d", c.Name(), r)
	rep = results.Repeat{Index: r, Raw: filepath.Join(results.RawDir, name+"-tasks.txt"), Worker: true}
	by, gerr := cr.cl.Gang(ctx, map[string]int{plan.PoolClients: cr.minNodes(c)}, cr.lost)
	if gerr != nil {
		if ctx.Err() != nil {
			return rep, false, ctx.Err()
		}
		rep.Error = runner.OneLine(gerr.Error())
		return rep, errors.Is(gerr, swarm.ErrShortPool), nil
	}
	nodes := by[plan.PoolClients]
	n := min(c.Nodes, len(nodes))
	if n < c.Nodes {
		rep.Notes = append(rep.Notes, fmt.Sprintf("ran on %d of the cell's %d client nodes (lost: %s)", n, c.Nodes, cr.lostText()))
	}
	l := c.Load.ForRepeat(r, false)
	shares := plan.SplitLoad(c.Concurrency, l.ConnsFor(c.Concurrency), n)

	token := newToken()
	forget := cr.bar.Expect(token, n)
	defer forget()
	prog := e.o.Programs.Worker(c.Client)
	var exclude []string
	for id := range cr.lost {
		exclude = append(exclude, id)
	}
	sort.Strings(exclude)
	res := e.run.Spec.ClientResources
	svc, cerr := cr.cl.Create(ctx, swarm.Service{Name: name, Image: prog.Image, Entrypoint: "/bin/bash",
		Args: append([]string{"-c", swarm.TaskScript, "rpcbed-task"}, prog.Args...),
		Env:  append(append([]string{}, prog.Env...), swarm.TaskEnv(cr.bar.Addr(), token)...),
		Pool: plan.PoolClients, Exclude: exclude, Replicas: n, CPUs: res.CPUs, MemoryMB: res.MemoryMB})
	if cerr != nil {
		if ctx.Err() != nil {
			return rep, false, ctx.Err()
		}
		rep.Error = runner.OneLine(cerr.Error())
		return rep, false, nil
	}
	var runs []*taskRun
	defer func() {
		for _, t := range runs {
			if t.p != nil {
				t.p.stop()
			} else {
				t.tc.Close()
			}
		}
		cr.finishTasks(svc, n, runs, &rep)
	}()

	// The ready step: every task connected, its clock measured.
	timeout := 120 * time.Second
	if d := e.run.Spec.Cluster.ReadyTimeout.D(); d > 0 {
		timeout = d
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	tcs, aerr := cr.bar.Await(actx, token, n)
	cancel()
	for i, tc := range tcs {
		runs = append(runs, &taskRun{tc: tc, share: shares[i], rec: results.TaskRecord{Task: tc.Task, Node: tc.Node, NodeAddr: nodeAddr(nodes, tc.Node), Share: shares[i]}})
	}
	if aerr != nil {
		if ctx.Err() != nil {
			return rep, false, ctx.Err()
		}
		rep.Error = fmt.Sprintf("ready step: %d of %d tasks reached the barrier within %v: %s", len(tcs), n, timeout, cr.taskStates(svc))
		return rep, false, nil
	}
	var errs []string
	for _, t := range runs {
		clk, err := t.tc.Sync(clockPings)
		t.rec.Clock = clk
		if err == nil {
			err = t.tc.Start()
		}
		if err == nil {
			t.p, err = attachWorker(ctx, c.Client+"-"+c.Protocol+"@"+t.rec.NodeAddr, t.tc)
		}
		if err != nil {
			if ctx.Err() != nil {
				return rep, false, ctx.Err()
			}
			errs = append(errs, fmt.Sprintf("%s: ready step: %s", nodeName(nodes, t.rec.Node), runner.OneLine(err.Error())))
		}
	}
	if len(errs) > 0 {
		rep.Error = joinErrs(errs)
		return rep, false, nil
	}

	addr := e.clientAddr(srv, c)
	all := func(stage string, args func(t *taskRun) []string, timeout time.Duration) error {
		var wg sync.WaitGroup
		for i, t := range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := fmt.Sprintf("%s-%s-t%d", name, stage, i+1)
				t.res, t.err = t.p.run(ctx, id, e.o.Programs.ClientFlags(c.Client, args(t)...), timeout)
			}()
		}
		wg.Wait()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return nil
	}
	shareCell := func(t *taskRun) plan.Cell {
		sc := c
		sc.Concurrency = t.share.Concurrency
		return sc
	}
	// Verify: one call from every task before anything is timed, with a longer
	// call deadline than the clients' 10 s: a fresh JVM's first channel on a busy
	// machine can take longer to connect.
	verify := func(t *taskRun) []string {
		return append(replaceFlag(clientArgs(shareCell(t), addr, plan.Load{N: 1, Conns: 1}), "-c", "1"), "-timeout", "60s")
	}
	if err := all("verify", verify, 120*time.Second); err != nil {
		return rep, false, err
	}
	for _, t := range runs {
		verr := t.err
		if verr == nil {
			verr = checkVerify(t.res)
		}
		if verr != nil && t.err == nil && t.res.ExitCode == report.ExitUnreachable {
			// Once more: grpc-java's first channel in a fresh JVM gave up connecting
			// after 20-30 s on this busy machine while the server answered the
			// other task. A verify is not timed.
			e.prog.note(fmt.Sprintf("%s: verify on %s: %s; once more", name, t.rec.NodeAddr, runner.OneLine(verr.Error())))
			t.res, t.err = t.p.run(ctx, name+"-verify2", e.o.Programs.ClientFlags(c.Client, verify(t)...), 120*time.Second)
			if ctx.Err() != nil {
				return rep, false, ctx.Err()
			}
			if verr = t.err; verr == nil {
				verr = checkVerify(t.res)
			}
		}
		if verr != nil {
			errs = append(errs, fmt.Sprintf("%s: verify: %s", cr.lostIfDead(nodes, t, r, verr), runner.OneLine(verr.Error())))
		}
	}
	if len(errs) > 0 {
		rep.Error = joinErrs(errs)
		return rep, false, nil
	}
	// Prime (Spec.Prime): every task its share, not recorded; its fresh process
	// warms its JIT here.
	if d := e.run.Spec.Prime[c.Client]; d > 0 {
		pl := plan.Load{Duration: d}
		if err := all("prime", func(t *taskRun) []string {
			pl.Conns = t.share.Conns
			return clientArgs(shareCell(t), addr, pl)
		}, runTimeout(pl)); err != nil {
			return rep, false, err
		}
		for _, t := range runs {
			if t.err != nil || t.res.ExitCode != 0 {
				e.prog.note(fmt.Sprintf("%s: prime on %s failed (the timed run goes on): %v exit %d", name, t.rec.NodeAddr, t.err, t.res.ExitCode))
			}
		}
	}
	// The common start: every task's timed run sent at once; the server sampled
	// around all of them.
	smp := startSampler(ctx, srv, c.Protocol, c.Call)
	if err := all("timed", func(t *taskRun) []string {
		tl := l
		tl.Conns = t.share.Conns
		return clientArgs(shareCell(t), addr, tl)
	}, runTimeout(l)); err != nil {
		smp.stop(ctx)
		return rep, false, err
	}
	samples, machine := smp.stop(ctx)

	var reports []*report.Report
	for i, t := range runs {
		raw := filepath.Join(results.RawDir, fmt.Sprintf("%s-t%d.txt", name, i+1))
		t.rec.Raw = raw
		if werr := writeRaw(filepath.Join(e.o.Dir, raw), t.res.Stdout, t.res.Stderr); werr != nil {
			errs = append(errs, "raw file: "+runner.OneLine(werr.Error()))
		}
		rp, why := judge(t.res, t.err, false)
		if len(why) > 0 {
			t.rec.Error = strings.Join(why, "; ")
			if errors.Is(t.err, errWorker) {
				t.rec.Error = runner.OneLine(t.err.Error()) // the task died: its exit line says no more
			}
			errs = append(errs, fmt.Sprintf("%s: %s", cr.lostIfDead(nodes, t, r, t.err), t.rec.Error))
			continue
		}
		x := rp.Rpcbed
		t.rec.Complete, t.rec.Failed, t.rec.RPS = rp.Complete, rp.Failed, rp.RequestsPerSecond
		t.rec.ClientCPUS = x.CPUUserSeconds + x.CPUSystemSeconds
		if rp.Complete > 0 {
			t.rec.ClientCPUUs = t.rec.ClientCPUS * 1e6 / float64(rp.Complete)
		}
		t.rec.WindowStartUnix, t.rec.WindowEndUnix = x.WindowStart-t.rec.Clock.OffsetS, x.WindowEnd-t.rec.Clock.OffsetS
		reports = append(reports, rp)
	}
	if len(errs) > 0 {
		rep.Error = joinErrs(errs)
		return rep, false, nil
	}
	cr.merge(&rep, c, runs, reports, srv, samples, machine)
	return rep, false, nil
}

// lostIfDead names the node of a task whose run failed; when the task itself
// died (its connection ended: the node's daemon killed, the node drained), the
// node is taken off every later repeat.
func (cr *clusterRun) lostIfDead(nodes []cluster.Node, t *taskRun, r int, err error) string {
	who := nodeName(nodes, t.rec.Node)
	if err != nil && errors.Is(err, errWorker) {
		cr.lost[t.rec.Node] = fmt.Sprintf("its task's connection ended during r%d", r)
		return who + " lost (its task's connection ended mid-run)"
	}
	return who
}

func (cr *clusterRun) lostText() string {
	var s []string
	for id, why := range cr.lost {
		s = append(s, nodeName(cr.e.run.Cluster.Nodes, id)+": "+why)
	}
	sort.Strings(s)
	return strings.Join(s, "; ")
}

func nodeAddr(nodes []cluster.Node, id string) string {
	for _, n := range nodes {
		if n.ID == id {
			return n.Addr
		}
	}
	return ""
}

// taskStates says where each of a service's tasks is (for a ready step that
// timed out).
func (cr *clusterRun) taskStates(svc string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	ts, err := cr.cl.Tasks(ctx, svc)
	if err != nil {
		return "tasks unknown: " + runner.OneLine(err.Error())
	}
	nodes, _ := cr.cl.Nodes(ctx)
	var s []string
	for _, t := range ts {
		msg := fmt.Sprintf("task %.12s %s", t.ID, t.State)
		if t.NodeID != "" {
			msg += " on " + nodeName(nodes, t.NodeID)
		}
		if t.Err != "" {
			msg += ": " + t.Err
		}
		s = append(s, msg)
	}
	if len(s) == 0 {
		return "no task was created"
	}
	return strings.Join(s, "; ")
}

// finishTasks waits (bounded) for a repeat's tasks to end, records swarm's view
// of each, checks that none was restarted, keeps every task's log under raw/ and
// removes the service.
func (cr *clusterRun) finishTasks(svc string, n int, runs []*taskRun, rep *results.Repeat) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ts, _ := cr.cl.WaitTasks(ctx, svc, n)
	out, errb, lerr := cr.cl.Logs(ctx, svc)
	if lerr != nil {
		errb = append(errb, []byte("\nrpcbed: "+lerr.Error()+"\n")...)
	}
	results.WriteFileAtomic(filepath.Join(cr.e.o.Dir, rep.Raw), results.RawBytes(out, errb))
	if len(ts) > n {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the service has %d tasks for %d replicas: swarm started a task again", len(ts), n))
	}
	for _, t := range ts {
		for _, r := range runs {
			if r.rec.Task == t.ID {
				r.rec.State, r.rec.ExitCode = t.State, t.ExitCode
			}
		}
	}
	for _, r := range runs {
		rep.Tasks = append(rep.Tasks, r.rec)
	}
	if err := cr.cl.Remove(svc); err != nil {
		rep.Notes = append(rep.Notes, "service rm: "+runner.OneLine(err.Error()))
	}
}

// merge makes a repeat of a cluster repeat's task reports: what sums is summed
// (calls, failures, req/s, client CPU), the window is the union of the tasks'
// windows on the driver's clock (the server's CPU and calls are read over it),
// and the percentiles come from the tasks' merged latency histograms — never an
// average of the tasks' percentiles.
func (cr *clusterRun) merge(rep *results.Repeat, c plan.Cell, runs []*taskRun, reports []*report.Report, srv *ServerProc, samples []serverSample, machine machineSeries) {
	e := cr.e
	m := *reports[0]
	x := *reports[0].Rpcbed
	m.Rpcbed = &x
	m.Complete, m.Failed, m.RequestsPerSecond = 0, 0, 0
	m.FailedBy = report.Failures{}
	x.Connections, x.WarmupCalls, x.CPUUserSeconds, x.CPUSystemSeconds, x.MaxUs = 0, 0, 0, 0, 0
	x.Errors = nil
	var meanSum float64
	start, end := math.Inf(1), math.Inf(-1)
	var starts, ends, lens []float64
	for i, r := range reports {
		t := runs[i].rec
		m.Complete += r.Complete
		m.Failed += r.Failed
		m.FailedBy.Connect += r.FailedBy.Connect
		m.FailedBy.Receive += r.FailedBy.Receive
		m.FailedBy.Length += r.FailedBy.Length
		m.FailedBy.Exceptions += r.FailedBy.Exceptions
		m.RequestsPerSecond += r.RequestsPerSecond
		x.Connections += r.Rpcbed.Connections
		x.WarmupCalls += r.Rpcbed.WarmupCalls
		x.CPUUserSeconds += r.Rpcbed.CPUUserSeconds
		x.CPUSystemSeconds += r.Rpcbed.CPUSystemSeconds
		x.MaxUs = max(x.MaxUs, r.Rpcbed.MaxUs)
		meanSum += r.Rpcbed.MeanUs * float64(r.Complete)
		for k, v := range r.Rpcbed.Errors {
			if x.Errors == nil {
				x.Errors = map[string]int64{}
			}
			x.Errors[k] += v
		}
		start, end = math.Min(start, t.WindowStartUnix), math.Max(end, t.WindowEndUnix)
		starts, ends = append(starts, t.WindowStartUnix), append(ends, t.WindowEndUnix)
		lens = append(lens, t.WindowEndUnix-t.WindowStartUnix)
	}
	m.Concurrency = c.Concurrency
	if m.Complete > 0 {
		x.MeanUs = meanSum / float64(m.Complete) // the sum of latencies over the calls: exact
	}
	x.WindowStart, x.WindowEnd = start, end
	m.TimeTakenSeconds = end - start
	lat, latErr := mergeLatency(reports)
	x.P50Us, x.P90Us, x.P99Us, x.P999Us = lat.P50, lat.P90, lat.P99, lat.P999
	x.LatencyHistogram = lat.Record // the merged record: it merges on, with other repeats or runs
	if latErr != nil {
		rep.Notes = append(rep.Notes, "merged percentiles unknown: "+runner.OneLine(latErr.Error()))
	} else if lat.Count != m.Complete-m.Failed && lat.Count != m.Complete {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the merged latency record holds %d calls; the tasks completed %d", lat.Count, m.Complete))
	}

	w := &results.Window{Source: "report", StartUnix: start, EndUnix: end, Seconds: end - start,
		ClientCPUS: x.CPUUserSeconds + x.CPUSystemSeconds}
	if err := overWindow(w, samples, machine); err != nil {
		rep.Notes = append(rep.Notes, "server not sampled over the window: "+runner.OneLine(err.Error()))
	}
	perNode := clusterCores(e.run.Spec.ClientResources)
	w.ClientCores = perNode * float64(len(reports))
	w.ServerCores = clusterCores(e.run.Spec.ServerResources)
	w.SkewS = math.Max(spreadAbs(starts), spreadAbs(ends))
	rep.Window = w
	rep.Report = &m
	rep.ServerCPUS, rep.ServerCalls = w.ServerCPUS, w.ServerCalls
	rep.Metrics = metrics(&m, 0, w)

	raise(rep, skewRules, clusterInput{window: w, taskSeconds: lens})
	for i, r := range reports {
		raise(rep, taskFlagRules, taskInput{rec: runs[i].rec, report: r, cores: perNode})
	}
	raise(rep, mergedFlagRules, flagInput{report: &m, window: w, client: true})
	dropCPU(rep)
	if m.Failed > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d of %d calls failed (%s)", m.Failed, m.Complete, errorKinds(&m)))
	}
}

// clusterCores is how many cores a swarm task may keep busy: its CPU limit
// (--limit-cpu), else every online core. Swarm services cannot be pinned
// (there is no --cpuset-cpus), so a spec's cpuset does not apply to them.
func clusterCores(r plan.Resources) float64 {
	n := float64(runner.OnlineCores())
	if r.CPUs > 0 && r.CPUs < n {
		return r.CPUs
	}
	return n
}

func spreadAbs(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return hi - lo
}

// mergedLatency is a merge's percentiles in µs, and the merged record.
type mergedLatency struct {
	P50, P90, P99, P999 int64
	Record              string
	Count               int64
}

// mergeLatency merges the tasks' latency records (HdrHistogram, the reports'
// "Latency histogram:") exactly and reads the percentiles from the merge: never
// an average of the tasks' percentiles. A task report without a record (a client
// built before the records) leaves the percentiles unknown (0), with the reason.
func mergeLatency(reports []*report.Report) (mergedLatency, error) {
	var recs []string
	for i, r := range reports {
		if r.Rpcbed.LatencyHistogram == "" {
			if len(reports) == 1 {
				x := r.Rpcbed
				return mergedLatency{P50: x.P50Us, P90: x.P90Us, P99: x.P99Us, P999: x.P999Us, Count: r.Complete}, nil
			}
			return mergedLatency{}, fmt.Errorf("task %d's report has no latency record (a client built before them): the percentiles of a split run are never averaged", i+1)
		}
		recs = append(recs, r.Rpcbed.LatencyHistogram)
	}
	l, err := stats.LatencyOf(recs...)
	if err != nil {
		return mergedLatency{}, fmt.Errorf("merging the tasks' latency records: %w", err)
	}
	return mergedLatency{P50: l.P50Us, P90: l.P90Us, P99: l.P99Us, P999: l.P999Us, Record: l.Record, Count: l.Count}, nil
}
