package matrix

import (
	"context"
	"errors"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/measure"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rpcbed/rpcbed/internal/cluster"
	"github.com/rpcbed/rpcbed/internal/kube"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/runner"
	"github.com/rpcbed/rpcbed/internal/sample"
	"github.com/rpcbed/rpcbed/internal/swarm"
	"github.com/rpcbed/rpcbed/internal/worker"
)

// swarmPlace is the placement on a cluster engine (Spec.Cluster): Docker Swarm
// or Kubernetes, both behind clusterEngine. A group's server runs as a service
// (a pod) on a server-pool node; each client worker key (client x protocol)
// gets a gang of tasks on client-pool nodes, kept for the group as a worker is
// (gang.go), and every client run is split over the gang's tasks and merged
// (merge.go). A task whose connection ends takes its node off every later run;
// its gang is formed again without it.
type swarmPlace struct {
	e    *executor
	cl   clusterEngine
	bar  *swarm.Barrier
	lost map[string]string // node id -> why it is kept off
	// gangs are the current group's, by worker key; formed counts the gangs
	// formed per key in this group (a gang formed again is verified and primed
	// again before it times anything).
	gangs  map[string]*gang
	formed map[string]int
	close  func()
}

// clusterEngine is what the cluster placement needs of an engine: its nodes
// by pool, services of tasks (swarm's services; Kubernetes pods, internal/kube)
// and their logs, and a Close that removes everything the run created.
type clusterEngine interface {
	swarm.Engine
	Nodes(ctx context.Context) ([]cluster.Node, error)
	Gang(ctx context.Context, want map[string]int, exclude map[string]string) (map[string][]cluster.Node, error)
	Close() error
}

// joinCluster reaches the spec's cluster engine: it forms the spec's swarm
// (copying the images its engines need) or attaches to one, or attaches to a
// Kubernetes cluster through the kubeconfig. manager names the engine's
// endpoint in the record; formed says rpcbed formed it.
func (e *executor) joinCluster(ctx context.Context, todo []plan.Cell) (cl clusterEngine, manager string, formed bool, err error) {
	cs := e.run.Spec.Cluster
	if cs.Engine == plan.EngineKubernetes {
		kc, err := kube.Attach(ctx, kube.Config{Kubeconfig: cs.Kubeconfig, Namespace: cs.Namespace, ImagePrefix: cs.ImagePrefix})
		if err != nil {
			return nil, "", false, err
		}
		if cs.ImagePrefix != "" {
			e.prog.Note(fmt.Sprintf("kubernetes %s, namespace %s: images pulled from %s (IfNotPresent)", kc.Server, kc.Namespace(), cs.ImagePrefix))
		} else {
			e.prog.Note(fmt.Sprintf("kubernetes %s, namespace %s: images already on every node (imagePullPolicy Never)", kc.Server, kc.Namespace()))
		}
		return kc, kc.Server, false, nil
	}
	if len(cs.Form) > 0 {
		if err := e.copyClusterImages(ctx, todo); err != nil {
			return nil, "", false, err
		}
		e.prog.Note(fmt.Sprintf("forming a swarm of %d engines", len(cs.Form)))
		sc, err := swarm.Form(ctx, cs.Form, cs.AddrPool)
		if err != nil {
			return nil, "", false, err
		}
		return sc, sc.Manager, true, nil
	}
	sc, err := swarm.Attach(ctx, cs.Manager)
	if err != nil {
		return nil, "", false, err
	}
	return sc, sc.Manager, false, nil
}

// joinSwarm joins the spec's cluster, opens the barrier and records the
// cluster in run.json. close removes whatever it formed or created.
func (e *executor) joinSwarm(ctx context.Context, todo []plan.Cell) (*swarmPlace, error) {
	cs := e.run.Spec.Cluster
	cl, manager, formed, err := e.joinCluster(ctx, todo)
	if err != nil {
		return nil, err
	}
	leave := func() {
		if cerr := cl.Close(); cerr != nil {
			e.prog.Note(cs.Engine + " clean-up: " + runner.OneLine(cerr.Error()))
		}
	}
	bar, err := swarm.Listen(net.JoinHostPort(cs.Driver, "0"))
	if err != nil {
		leave()
		return nil, err
	}
	sp := &swarmPlace{e: e, cl: cl, bar: bar, lost: map[string]string{}, gangs: map[string]*gang{}, formed: map[string]int{}}
	sp.close = func() { bar.Close(); leave() }
	nodes, err := cl.Nodes(ctx)
	if err == nil {
		e.run.Cluster = &results.ClusterRecord{Engine: cs.Engine, Manager: manager, Formed: formed, Barrier: bar.Addr(), Nodes: nodes}
		err = results.WriteJSON(filepath.Join(e.o.Dir, results.RunFile), e.run)
	}
	if err != nil {
		sp.close()
		return nil, err
	}
	if s := e.run.Spec; s.ClientResources.CPUSet != "" || s.ServerResources.CPUSet != "" {
		e.prog.Note("cluster: " + cs.Engine + " tasks cannot be pinned: the spec's cpuset does not apply; cpus (a CPU limit) does")
	}
	return sp, nil
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
			copied, err := runner.CopyImage(ctx, src, d, e.o.Programs.Image(rt))
			if err != nil {
				d.Close()
				return fmt.Errorf("cluster.form %s: %w", m.Address, err)
			}
			if copied {
				e.prog.Note(fmt.Sprintf("copied %s to %s in %.1f s", e.o.Programs.Image(rt), m.Address, time.Since(t0).Seconds()))
			}
		}
		d.Close()
	}
	return nil
}

// startServer checks the gang first (a server-pool node and the client nodes
// the cells need, before anything is created), then starts the server as a
// service on the server node.
func (sp *swarmPlace) startServer(ctx context.Context, key string, cells []plan.Cell) (*measure.ServerProc, error) {
	need := 0
	for _, c := range cells {
		need = max(need, sp.minNodes(c))
	}
	by, err := sp.cl.Gang(ctx, map[string]int{plan.PoolServer: 1, plan.PoolClients: need}, sp.lost)
	if err != nil {
		return nil, err
	}
	node := by[plan.PoolServer][0]
	sp.e.prog.Note(fmt.Sprintf("%s on %s", key, node))
	cfg := sp.e.serverConfig(key)
	cfg.Address = node.Addr
	return measure.StartServerProc(ctx, &swarm.Runner{C: sp.cl, Node: node.ID, Pool: plan.PoolServer}, key, cfg)
}

// minNodes is the fewest client nodes c's repeat may run on.
func (sp *swarmPlace) minNodes(c plan.Cell) int {
	m := sp.e.run.Spec.Cluster.MinNodes
	if m <= 0 || m > c.Nodes {
		return c.Nodes
	}
	return m
}

// untimed runs u on every task of c's gang: the verify call on all of them
// (once more on a task that could not connect: a fresh JVM's first channel on
// a busy machine can take longer than a call's deadline), a prime run split
// over the tasks c's repeats use.
func (sp *swarmPlace) untimed(ctx context.Context, g *groupRun, u untimedRun) ([]taskOutcome, error) {
	gng, _, err := sp.gangFor(ctx, g, u.c)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return []taskOutcome{{err: err}}, nil
	}
	return sp.untimedOn(ctx, g, gng, u)
}

func (sp *swarmPlace) untimedOn(ctx context.Context, g *groupRun, gng *gang, u untimedRun) ([]taskOutcome, error) {
	n := len(gng.tasks)
	if !u.verify {
		n = min(u.c.Nodes, n)
	}
	runs := gng.runs(plan.SplitLoad(u.c.Concurrency, u.l.ConnsFor(u.c.Concurrency), n))
	args := func(t *taskRun) []string {
		l := u.l
		l.Conns = t.share.Conns
		cr := sp.e.clientRun(g.srv, u.c, l)
		if u.verify {
			cr.Callers, cr.Timeout = 1, 60*time.Second
		}
		return t.cell(u.c).ClientArgs(cr)
	}
	if err := sp.all(ctx, runs, u.name, u.c.Client, args, u.timeout); err != nil {
		return nil, err
	}
	outs := make([]taskOutcome, len(runs))
	for i, t := range runs {
		if u.verify && t.err == nil && t.res.ExitCode == report.ExitUnreachable {
			sp.e.prog.Note(fmt.Sprintf("%s on %s: server unreachable; once more", u.name, t.rec.NodeAddr))
			if err := sp.all(ctx, []*taskRun{t}, u.name+"-again", u.c.Client, args, u.timeout); err != nil {
				return nil, err
			}
		}
		raw := filepath.Join(results.RawDir, fmt.Sprintf("%s-t%d.txt", u.name, i+1))
		err := t.err
		if werr := measure.WriteRaw(filepath.Join(sp.e.o.Dir, raw), t.res.Stdout, t.res.Stderr); werr != nil && err == nil {
			err = fmt.Errorf("raw file: %w", werr)
		}
		outs[i] = taskOutcome{where: sp.lostIfDead(t, u.name, t.err), raw: raw, res: t.res, err: err}
	}
	return outs, nil
}

// all runs one client run on each task at once (a common start: each task's
// run is sent as the others') and waits for every one.
func (sp *swarmPlace) all(ctx context.Context, runs []*taskRun, name, client string, args func(t *taskRun) []string, timeout time.Duration) error {
	var wg sync.WaitGroup
	for i, t := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("%s-t%d", name, i+1)
			t.res, t.err = t.p.Run(ctx, id, sp.e.o.Programs.ClientFlags(client, args(t)...), timeout)
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// timed runs repeat r of st's cell on its gang's tasks, each its share of the
// load, sent at once with the server sampled around all of them, and merges
// their reports into the repeat. final: the client pool is too small for the
// cell, so every later repeat would say the same.
func (sp *swarmPlace) timed(ctx context.Context, g *groupRun, st *cellState, r int, warm bool) (rep results.Repeat, final bool, err error) {
	c, e := st.c, sp.e
	name := fmt.Sprintf("%s-r%d", c.Name(), r)
	rep = results.Repeat{Worker: true}
	defer func() {
		if err == nil && rep.Error != "" {
			e.prog.Note(fmt.Sprintf("%s failed: %s", name, rep.Error))
		}
	}()
	gng, short, gerr := sp.gangFor(ctx, g, c)
	if gerr != nil {
		if ctx.Err() != nil {
			return rep, false, ctx.Err()
		}
		rep.Error = runner.OneLine(gerr.Error())
		return rep, short, nil
	}
	rep.Raw, rep.WorkerID = gng.raw, gng.id
	n := min(c.Nodes, len(gng.tasks))
	if n < c.Nodes {
		rep.Notes = append(rep.Notes, fmt.Sprintf("ran on %d of the cell's %d client nodes (lost: %s)", n, c.Nodes, sp.lostText()))
	}
	l := c.Load.ForRepeat(r, warm)
	runs := gng.runs(plan.SplitLoad(c.Concurrency, l.ConnsFor(c.Concurrency), n))
	smp := sample.Start(ctx, g.srv.Reader(c.Protocol, c.Call), nil)
	at, lead := gng.startAt(l)
	if err := sp.all(ctx, runs, name, c.Client, func(t *taskRun) []string {
		tl := l
		tl.Conns = t.share.Conns
		cr := e.clientRun(g.srv, c, tl)
		// The common start on the task's own clock (offset: task minus driver).
		cr.StartAt = at.Add(time.Duration(t.rec.Clock.OffsetS * float64(time.Second)))
		t.rec.StartAtUnix = float64(at.UnixMicro()) / 1e6
		return t.cell(c).ClientArgs(cr)
	}, l.RunTimeout()+lead); err != nil {
		smp.Stop(ctx)
		return rep, false, err
	}
	samples, machine := smp.Stop(ctx)
	reports, errs := sp.collect(runs, name, r)
	gng.learn(runs)
	for _, t := range runs {
		rep.Tasks = append(rep.Tasks, t.rec)
	}
	if len(errs) > 0 {
		rep.Error = joinErrs(errs)
		return rep, false, nil
	}
	sp.merge(&rep, c, runs, reports, samples, machine)
	return rep, false, nil
}

// collect keeps each task's raw output and judges its report; the errors name
// the task's node (and a node lost with its task).
func (sp *swarmPlace) collect(runs []*taskRun, name string, r int) ([]*report.Report, []string) {
	var reports []*report.Report
	var errs []string
	for i, t := range runs {
		raw := filepath.Join(results.RawDir, fmt.Sprintf("%s-t%d.txt", name, i+1))
		t.rec.Raw = raw
		if werr := measure.WriteRaw(filepath.Join(sp.e.o.Dir, raw), t.res.Stdout, t.res.Stderr); werr != nil {
			errs = append(errs, "raw file: "+runner.OneLine(werr.Error()))
		}
		rp, why := measure.ReadReport(t.res, t.err, false)
		if len(why) > 0 {
			t.rec.Error = strings.Join(why, "; ")
			if errors.Is(t.err, worker.ErrDied) {
				t.rec.Error = runner.OneLine(t.err.Error()) // the task died: its exit line says no more
			}
			errs = append(errs, fmt.Sprintf("%s: %s", sp.lostIfDead(t, fmt.Sprintf("r%d", r), t.err), t.rec.Error))
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
	return reports, errs
}

func (sp *swarmPlace) workerID(g *groupRun, c plan.Cell) string {
	if gng := sp.gangs[c.Client+"-"+c.Protocol]; gng != nil && gng.alive() {
		return gng.id
	}
	return ""
}

// endClients ends the group's gangs: each task's worker quits, swarm's view of
// its tasks completes the repeats that ran on them, and the service goes.
func (sp *swarmPlace) endClients(g *groupRun) {
	for key, gng := range sp.gangs {
		sp.endGang(g, gng)
		delete(sp.gangs, key)
	}
	clear(sp.formed)
}
