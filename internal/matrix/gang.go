package matrix

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/cluster"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/runner"
	"github.com/rpcbed/rpcbed/internal/swarm"
	"github.com/rpcbed/rpcbed/internal/worker"
)

// clockPings is how many pings the ready step measures each task's clock with.
const clockPings = 8

// gang is one client worker key's tasks on a swarm for a server group: a service
// of one task per client node (at most one per node), each task connected to the
// driver's barrier, its clock measured, its worker greeting. It lives across the
// group's rounds as a worker does on one engine.
type gang struct {
	id, svc string
	raw     string // the service's task logs, kept when the gang ends
	tasks   []*gangTask
	// setup is how long after its run is sent a task is expected to be ready
	// to open its window, the warm-up aside (connections, the verify call):
	// firstSetup at first, grown by what a late task lacked (learn).
	setup time.Duration
}

// A common start for a cluster repeat (-start-at): the tasks' runs are sent
// together and each task opens its window at one time on the driver's clock,
// converted to its own clock by its measured offset. The time is the warm-up
// plus the gang's expected set-up away; a task that is not ready by then opens
// late, which its record shows (StartAtUnix against WindowStartUnix) and the
// gang's next repeats allow for.
const (
	firstSetup = time.Second
	// autoWarmGuess is an auto warm-up's share of the lead: its shortest
	// settling is 0.75 s (3 windows of 250 ms); a longer one makes a task late
	// once, and learn grows the set-up by it.
	autoWarmGuess = time.Second
	maxSetup      = 10 * time.Second
	// lateSlack: a task this late (a timer's wake-up, a clock's error) is on time.
	lateSlack = 20 * time.Millisecond
	// lateMargin: a late task's set-up varies from run to run (a JVM's 25
	// callers took 130 ms, then 223 ms more than the set-up allowed, in one
	// make matrix-swarm here), so the allowance grows by more than it lacked.
	lateMargin = 500 * time.Millisecond
)

// startAt is the common start of a repeat sent now with load l, on the
// driver's clock, and the lead it adds to the run's time bound.
func (gng *gang) startAt(l plan.Load) (time.Time, time.Duration) {
	if gng.setup == 0 {
		gng.setup = firstSetup
	}
	warm := l.Warmup.D()
	if l.Warmup.IsAuto() {
		warm = autoWarmGuess
	}
	lead := gng.setup + warm
	return time.Now().Add(lead), lead
}

// learn grows the gang's set-up allowance by the lateness of its latest task
// and lateMargin, up to maxSetup.
func (gng *gang) learn(runs []*taskRun) {
	var late float64
	for _, t := range runs {
		if t.rec.StartAtUnix > 0 && t.rec.WindowStartUnix > 0 {
			late = max(late, t.rec.WindowStartUnix-t.rec.StartAtUnix)
		}
	}
	if d := time.Duration(late * float64(time.Second)); d > lateSlack {
		gng.setup = min(gng.setup+d+lateMargin, maxSetup)
	}
}

// gangTask is one task of a gang: its connection, its worker, and where it runs.
type gangTask struct {
	tc  *swarm.TaskConn
	p   *worker.Proc
	rec results.TaskRecord // Task, Node, NodeAddr and Clock
}

// taskRun is one task's part of one client run: its share and what it returned.
type taskRun struct {
	p     *worker.Proc
	share plan.Share
	rec   results.TaskRecord
	res   runner.Result
	err   error
}

// cell is c with the task's share of the concurrency.
func (t *taskRun) cell(c plan.Cell) plan.Cell {
	c.Concurrency = t.share.Concurrency
	return c
}

// runs is one run's view of the gang's first len(shares) tasks.
func (gng *gang) runs(shares []plan.Share) []*taskRun {
	runs := make([]*taskRun, len(shares))
	for i, s := range shares {
		t := gng.tasks[i]
		rec := t.rec
		rec.Share = s
		runs[i] = &taskRun{p: t.p, share: s, rec: rec}
	}
	return runs
}

// alive says every task's worker still answers.
func (gng *gang) alive() bool {
	for _, t := range gng.tasks {
		if t.p == nil || t.p.Dead() != nil {
			return false
		}
		select {
		case <-t.p.Done():
			return false
		default:
		}
	}
	return true
}

// on says a task of the gang runs on one of nodes.
func (gng *gang) on(nodes map[string]string) bool {
	return slices.ContainsFunc(gng.tasks, func(t *gangTask) bool { _, ok := nodes[t.rec.Node]; return ok })
}

// gangFor is the gang that runs c's client: the group's for c's worker key
// while it is whole, else one formed now on the client nodes left (at most as
// many as the group's cells of that key ask for). A gang formed again in a
// group is verified and primed, as the first was, before it is used. short:
// the pool has fewer usable nodes than c needs.
func (sp *swarmPlace) gangFor(ctx context.Context, g *groupRun, c plan.Cell) (gng *gang, short bool, err error) {
	key := c.Client + "-" + c.Protocol
	by, err := sp.cl.Gang(ctx, map[string]int{plan.PoolClients: sp.minNodes(c)}, sp.lost)
	if err != nil {
		return nil, errors.Is(err, swarm.ErrShortPool), err
	}
	if gng := sp.gangs[key]; gng != nil {
		if gng.alive() && !gng.on(sp.lost) && len(gng.tasks) >= sp.minNodes(c) {
			return gng, false, nil
		}
		delete(sp.gangs, key)
		sp.endGang(g, gng)
	}
	want := 0
	for _, x := range g.cells {
		if x.Client+"-"+x.Protocol == key {
			want = max(want, x.Nodes)
		}
	}
	nodes := by[plan.PoolClients]
	gng, err = sp.form(ctx, g, key, c.Client, nodes[:min(want, len(nodes))])
	if err != nil {
		return nil, false, err
	}
	sp.gangs[key] = gng
	sp.formed[key]++
	if sp.formed[key] > 1 {
		if err := sp.ready(ctx, g, gng, c); err != nil {
			delete(sp.gangs, key)
			sp.endGang(g, gng)
			return nil, false, err
		}
	}
	return gng, false, nil
}

// ready verifies and primes a gang formed again in a group (the group's verify
// and prime steps saw its first).
func (sp *swarmPlace) ready(ctx context.Context, g *groupRun, gng *gang, c plan.Cell) error {
	e := sp.e
	e.prog.Note(fmt.Sprintf("%s: a gang formed again: verify and prime it", gng.id))
	outs, err := sp.untimedOn(ctx, g, gng, untimedRun{name: "verify-" + c.Pair() + "-" + gng.svc, c: c, l: plan.Load{N: 1, Conns: 1}, verify: true, timeout: 90 * time.Second})
	if err != nil {
		return err
	}
	if v := verdict(c.Pair(), outs); v.Status != results.StatusOK {
		return fmt.Errorf("verify: %s", v.Error)
	}
	if d := e.run.Spec.Prime[c.Client]; d > 0 {
		l := plan.Load{Duration: d, Conns: c.Load.Conns}
		name := "prime-" + primeKey(c) + "-" + gng.svc
		outs, err := sp.untimedOn(ctx, g, gng, untimedRun{name: name, c: c, l: l, timeout: l.RunTimeout()})
		if err != nil {
			return err
		}
		for _, o := range outs {
			e.primeOutcome(name, o)
		}
	}
	return ctx.Err()
}

// form creates key's service with one task on each of nodes and waits for the
// ready step: every task connected, its clock measured, its worker greeting.
func (sp *swarmPlace) form(ctx context.Context, g *groupRun, key, client string, nodes []cluster.Node) (*gang, error) {
	e := sp.e
	n := len(nodes)
	name := fmt.Sprintf("%s-%s-g%d", g.key, key, sp.formed[key]+1)
	token := newToken()
	forget := sp.bar.Expect(token, n)
	defer forget()
	prog := e.o.Programs.Worker(client)
	var exclude []string
	for id := range sp.lost {
		exclude = append(exclude, id)
	}
	sort.Strings(exclude)
	res := e.run.Spec.ClientResources
	svc, err := sp.cl.Create(ctx, swarm.Service{Name: name, Image: prog.Image, Entrypoint: "/bin/bash",
		Args: append([]string{"-c", swarm.TaskScript, "rpcbed-task"}, prog.Args...),
		Env:  append(append([]string{}, prog.Env...), swarm.TaskEnv(sp.bar.Addr(), token)...),
		Pool: plan.PoolClients, Exclude: exclude, Replicas: n, CPUs: res.CPUs, MemoryMB: res.MemoryMB})
	if err != nil {
		return nil, err
	}
	gng := &gang{id: fmt.Sprintf("%s#%d", key, sp.formed[key]+1), svc: svc, raw: filepath.Join(results.RawDir, name+"-tasks.txt")}
	e.prog.Note(fmt.Sprintf("%s: %d tasks of %s", gng.id, n, client))
	timeout := 120 * time.Second
	if d := e.run.Spec.Cluster.ReadyTimeout.D(); d > 0 {
		timeout = d
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	ended := make(chan string, 1)
	go sp.watchEnded(actx, svc, ended, cancel)
	tcs, aerr := sp.bar.Await(actx, token, n)
	cancel()
	for _, tc := range tcs {
		gng.tasks = append(gng.tasks, &gangTask{tc: tc, rec: results.TaskRecord{Task: tc.Task, Node: tc.Node, NodeAddr: nodeAddr(nodes, tc.Node)}})
	}
	if aerr != nil {
		err := aerr
		if ctx.Err() == nil {
			select {
			case why := <-ended:
				err = fmt.Errorf("ready step: a task ended before it reached the barrier (%d of %d did): %s", len(tcs), n, why)
			default:
				err = fmt.Errorf("ready step: %d of %d tasks reached the barrier within %v: %s", len(tcs), n, timeout, sp.taskStates(svc))
			}
		}
		sp.endGang(g, gng)
		return nil, err
	}
	var errs []string
	for _, t := range gng.tasks {
		clk, err := t.tc.Sync(clockPings)
		t.rec.Clock = clk
		if err == nil {
			err = t.tc.Start()
		}
		if err == nil {
			t.p, err = worker.Attach(ctx, key+"@"+t.rec.NodeAddr, t.tc)
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: ready step: %s", nodeName(nodes, t.rec.Node), runner.OneLine(err.Error())))
		}
	}
	if len(errs) > 0 || ctx.Err() != nil {
		sp.endGang(g, gng)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errors.New(joinErrs(errs))
	}
	return gng, nil
}

// endGang ends a gang: each task's worker quits, swarm's view of each task
// (its state and exit code, waited for within bounds) completes the group's
// repeats that ran on it, the tasks' logs are kept under raw/, and the
// service is removed.
func (sp *swarmPlace) endGang(g *groupRun, gng *gang) {
	for _, t := range gng.tasks {
		if t.p != nil {
			t.p.Stop()
		} else {
			t.tc.Close()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n := len(gng.tasks)
	ts, _ := sp.cl.WaitTasks(ctx, gng.svc, n)
	out, errb, lerr := sp.cl.Logs(ctx, gng.svc)
	if lerr != nil {
		errb = append(errb, []byte("\nrpcbed: "+lerr.Error()+"\n")...)
	}
	results.WriteFileAtomic(filepath.Join(sp.e.o.Dir, gng.raw), results.RawBytes(out, errb))
	var notes []string
	if len(ts) > n && n > 0 {
		notes = append(notes, fmt.Sprintf("the service of %s has %d tasks for %d replicas: swarm started a task again", gng.id, len(ts), n))
	}
	if err := sp.cl.Remove(gng.svc); err != nil {
		notes = append(notes, "service rm: "+runner.OneLine(err.Error()))
	}
	sp.completeTasks(g, gng, ts, notes)
}

// completeTasks writes swarm's view of a gang's tasks into the group's repeats
// that ran on them, and records those cells again.
func (sp *swarmPlace) completeTasks(g *groupRun, gng *gang, ts []swarm.Task, notes []string) {
	for _, st := range g.states {
		changed := false
		for i := range st.res.Repeats {
			rep := &st.res.Repeats[i]
			if rep.WorkerID != gng.id || rep.Raw != gng.raw {
				continue
			}
			for j := range rep.Tasks {
				for _, t := range ts {
					if rep.Tasks[j].Task == t.ID {
						rep.Tasks[j].State, rep.Tasks[j].ExitCode = t.State, t.ExitCode
					}
				}
			}
			rep.Notes = append(rep.Notes, notes...)
			changed = true
		}
		if changed {
			if err := sp.e.record(st.res); err != nil {
				sp.e.prog.Note("recording " + st.res.Name + ": " + runner.OneLine(err.Error()))
			}
		}
	}
}

func newToken() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// lostIfDead names the node of a task whose run failed; when the task itself
// died (its connection ended: the node's daemon killed, the node drained), the
// node is taken off every later run.
func (sp *swarmPlace) lostIfDead(t *taskRun, during string, err error) string {
	who := nodeName(sp.e.run.Cluster.Nodes, t.rec.Node)
	if err != nil && errors.Is(err, worker.ErrDied) {
		sp.lost[t.rec.Node] = fmt.Sprintf("its task's connection ended during %s", during)
		return who + " lost (its task's connection ended mid-run)"
	}
	return who
}

func (sp *swarmPlace) lostText() string {
	var s []string
	for id, why := range sp.lost {
		s = append(s, nodeName(sp.e.run.Cluster.Nodes, id)+": "+why)
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

// watchEnded watches a service's tasks while the ready step waits for them:
// a task that ended before it reached the barrier (an image missing on its
// node, a command that failed) ends the wait at once, its state on ended,
// rather than after the ready timeout.
func (sp *swarmPlace) watchEnded(ctx context.Context, svc string, ended chan<- string, cancel func()) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		ts, err := sp.cl.Tasks(ctx, svc)
		if err != nil || !slices.ContainsFunc(ts, func(t swarm.Task) bool { return t.Ended() }) {
			continue
		}
		ended <- sp.taskStates(svc)
		cancel()
		return
	}
}

// taskStates says where each of a service's tasks is (for a ready step that
// timed out).
func (sp *swarmPlace) taskStates(svc string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	ts, err := sp.cl.Tasks(ctx, svc)
	if err != nil {
		return "tasks unknown: " + runner.OneLine(err.Error())
	}
	nodes, _ := sp.cl.Nodes(ctx)
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
