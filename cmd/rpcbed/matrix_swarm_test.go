package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/cluster"
	"github.com/rpcbed/rpcbed/internal/netbed"
	"github.com/rpcbed/rpcbed/internal/swarm"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// swarmBed makes a three-host netbed (server + 2 client hosts) and points spec's
// cluster at it: its engines, addresses, the driver's address and an address pool
// of its own. It is removed on every exit path, and nothing of it may be left:
// no namespace, veth or daemon, and no swarm state on any engine.
func swarmBed(t *testing.T, ctx context.Context, root, name string, net int, purge bool, spec *plan.Spec) *netbed.Bed {
	t.Helper()
	b := &netbed.Bed{Root: root, Name: name, Net: net, Clients: 2, Purge: purge}
	var engines []string
	t.Cleanup(func() {
		// A formed swarm left on every engine that still answers (a killed node's
		// does not).
		for _, e := range engines {
			cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if st, err := swarm.LocalState(cctx, e); err == nil && st != "inactive" {
				t.Errorf("engine %s: swarm state %s after the run; want inactive", e, st)
			}
			cancel()
		}
		if err := b.Down(); err != nil {
			t.Error(err)
		}
		if left, err := b.Leftovers(); err != nil || left != "" {
			t.Errorf("left behind: %q (%v)", left, err)
		}
	})
	if err := b.Up(ctx); err != nil {
		t.Fatal(err)
	}
	form := []cluster.Member{{Engine: b.Env["NETBED_SERVER_ENGINE"], Address: b.Env["NETBED_SERVER_ADDR"], Pool: plan.PoolServer}}
	for _, h := range b.ClientHosts() {
		form = append(form, cluster.Member{Engine: h.Engine, Address: h.Addr, Pool: plan.PoolClients})
	}
	for _, m := range form {
		engines = append(engines, m.Engine)
	}
	spec.Cluster.Form = form
	spec.Cluster.Driver = b.Env["NETBED_DRIVER_ADDR"]
	spec.Cluster.AddrPool = fmt.Sprintf("198.19.%d.128/25", net)
	return b
}

// runSpec writes spec to a file and runs `rpcbed matrix` on it into dir.
func runSpec(t *testing.T, ctx context.Context, root string, spec plan.Spec, dir string, progress io.Writer) *results.Run {
	t.Helper()
	b, err := plan.MarshalSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	code := run(ctx, []string{"matrix", "-spec", file, "-out", dir, "-runner", "docker", "-root", root}, stdio{nil, &out, progress})
	if code != 0 {
		t.Fatalf("rpcbed matrix: exit %d", code)
	}
	r, err := results.LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestMatrixSwarm is `make matrix-swarm`: matrix-swarm.yaml on a 3-node Docker
// Swarm that rpcbed forms over netbed's engines — go-server on the server pool's
// node, go, php and java cells at c=50 each split 25 + 25 over the two client
// nodes. It asserts that every cell completed (a failed repeat is logged) and
// that each good repeat ran on two nodes with 25 + 25, that the
// merge sums what sums (calls, req/s, client CPU over calls), that each task's
// clock was measured (one machine: the offsets lie within their round trips),
// that every repeat's task logs are under raw/, and that nothing is left: no
// service, no swarm state, no namespace, veth or daemon. It prints each cell's
// merged req/s and its tasks' windows' skew; it never fails on a timing.
//
// It runs only when RPCBED_MATRIX_SWARM=1 (make matrix-swarm sets it).
// RPCBED_SWARM_NETBED and RPCBED_SWARM_NET give the bed another name and subnet
// (default rbswarm, 1); RPCBED_SWARM_OUT keeps the run directory.
func TestMatrixSwarm(t *testing.T) {
	if os.Getenv("RPCBED_MATRIX_SWARM") != "1" {
		t.Skip("make matrix-swarm runs this (RPCBED_MATRIX_SWARM=1)")
	}
	if why := netbed.Available(); why != "" {
		t.Fatalf("no netbed here: %s", why)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := plan.ReadSpec(filepath.Join(root, "matrix-swarm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Within make matrix-swarm's -timeout, so the clean-ups below still run.
	ctx, cancel := context.WithTimeout(ctx, 7*time.Minute)
	defer cancel()
	name, netN := bedName("rbswarm", 1)
	want := spec.Cluster.Form
	swarmBed(t, ctx, root, name, netN, false, &spec)
	if name == "rbswarm" && netN == 1 {
		for i, m := range spec.Cluster.Form {
			if m != want[i] {
				t.Fatalf("matrix-swarm.yaml: cluster.form[%d] %+v; the netbed's is %+v", i, want[i], m)
			}
		}
	}
	dir := os.Getenv("RPCBED_SWARM_OUT")
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "run")
	}
	t0 := time.Now()
	r := runSpec(t, ctx, root, spec, dir, os.Stderr)
	t.Logf("the run took %.0f s", time.Since(t0).Seconds())
	if r.Cluster == nil || !r.Cluster.Formed || len(r.Cluster.Nodes) != 3 {
		t.Fatalf("matrix.json cluster: %+v; want a formed swarm of 3 nodes", r.Cluster)
	}
	clients := map[string]bool{}
	for _, c := range r.Cells {
		if c.Status != results.StatusOK {
			t.Errorf("%s: %s: %s", c.Name, c.Status, c.Error)
			continue
		}
		clients[c.Client] = true
		for _, rep := range c.Repeats {
			if rep.Report == nil {
				// A repeat may fail on a busy machine (a fresh JVM that cannot connect
				// in time): recorded with its reason, the cell goes on.
				t.Logf("%s r%d failed: %s", c.Name, rep.Index, rep.Error)
				continue
			}
			checkMerged(t, dir, c, rep, []int{25, 25})
		}
		t.Logf("%s: %.0f req/s merged (median of %d), client %.1f µs/call, server %.1f µs/call, skew %s",
			c.Name, c.Stat(results.RPS).Median, c.Stat(results.RPS).N, c.Stat(results.ClientCPU).Median, c.Stat(results.ServerCPU).Median, skews(c))
	}
	for _, c := range []string{"go", "php", "java"} {
		if !clients[c] {
			t.Errorf("no %s cell completed on the swarm", c)
		}
	}
}

func bedName(def string, net int) (string, int) {
	name := os.Getenv("RPCBED_SWARM_NETBED")
	if name == "" {
		return def, net
	}
	n, _ := strconv.Atoi(os.Getenv("RPCBED_SWARM_NET"))
	return name, n
}

func skews(c results.CellResult) string {
	var s []string
	for _, r := range c.Repeats {
		if r.Window != nil {
			late := 0.0
			for _, tk := range r.Tasks {
				late = max(late, tk.WindowStartUnix-tk.StartAtUnix)
			}
			s = append(s, fmt.Sprintf("%.1f ms (latest task %.0f ms after the common start)", r.Window.SkewS*1000, late*1000))
		}
	}
	return strings.Join(s, ", ")
}

// checkMerged checks one good cluster repeat: its tasks' shares, one node each,
// the sums, the clocks, and the raw files.
func checkMerged(t *testing.T, dir string, c results.CellResult, rep results.Repeat, shares []int) {
	t.Helper()
	name := fmt.Sprintf("%s r%d", c.Name, rep.Index)
	if rep.Report == nil || rep.Window == nil {
		t.Errorf("%s: no merged report: %s", name, rep.Error)
		return
	}
	if len(rep.Tasks) != len(shares) {
		t.Errorf("%s: %d tasks; want %d", name, len(rep.Tasks), len(shares))
		return
	}
	nodes := map[string]bool{}
	var calls, cpu, rps float64
	for i, tk := range rep.Tasks {
		nodes[tk.Node] = true
		if tk.Share.Concurrency != shares[i] {
			t.Errorf("%s: task %d share c=%d; want %d", name, i+1, tk.Share.Concurrency, shares[i])
		}
		if tk.State != "complete" || tk.ExitCode != 0 {
			t.Errorf("%s: task %d on %s: state %s exit %d; want complete 0", name, i+1, tk.NodeAddr, tk.State, tk.ExitCode)
		}
		if tk.Clock.Pings == 0 || math.Abs(tk.Clock.OffsetS) > tk.Clock.RTTS+0.005 {
			t.Errorf("%s: task %d clock %+v: one machine, so the offset lies within the round trip", name, i+1, tk.Clock)
		}
		if _, err := os.Stat(filepath.Join(dir, tk.Raw)); err != nil {
			t.Errorf("%s: task %d raw: %v", name, i+1, err)
		}
		// The common start: asked of every task, and no window opened before it
		// (on the driver's clock, within the clock's uncertainty: its round trip).
		if tk.StartAtUnix == 0 || tk.StartAtUnix != rep.Tasks[0].StartAtUnix {
			t.Errorf("%s: task %d start-at %.6f; want the repeat's one common start (task 1: %.6f)", name, i+1, tk.StartAtUnix, rep.Tasks[0].StartAtUnix)
		} else if early := tk.StartAtUnix - tk.WindowStartUnix; early > tk.Clock.RTTS+0.002 {
			t.Errorf("%s: task %d opened its window %.1f ms before the common start", name, i+1, early*1000)
		}
		calls += float64(tk.Complete)
		cpu += tk.ClientCPUS
		rps += tk.RPS
	}
	if len(nodes) != len(shares) {
		t.Errorf("%s: tasks on %d nodes; want %d (one per node)", name, len(nodes), len(shares))
	}
	if got := float64(rep.Report.Complete); got != calls {
		t.Errorf("%s: merged calls %v; want the tasks' sum %v", name, got, calls)
	}
	if got := rep.Metrics.RPS; math.Abs(got-rps) > 1e-6*rps {
		t.Errorf("%s: merged req/s %v; want the tasks' sum %v", name, got, rps)
	}
	if got, want := rep.Metrics.ClientCPUUs, cpu*1e6/calls; !rep.Metrics.CPUNotUsed && math.Abs(got-want) > 1e-6*want {
		t.Errorf("%s: client CPU per call %v; want summed CPU / summed calls %v", name, got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, rep.Raw)); err != nil {
		t.Errorf("%s: task logs: %v", name, err)
	}
}

// TestMatrixSwarmFault kills one client node mid-repeat — its dockerd and
// everything else in its namespace, as a node that crashes — while a cell split
// over both client nodes runs its second repeat (rounds run in a random order:
// the one-node cell's repeats fall before or after it). That repeat fails naming the
// node; the node is kept off every later repeat; the cell that runs on one node
// goes on there, and the two-node cell's next repeat fails with the short pool
// as its reason.
func TestMatrixSwarmFault(t *testing.T) {
	if os.Getenv("RPCBED_MATRIX_SWARM") != "1" {
		t.Skip("make matrix-swarm runs this (RPCBED_MATRIX_SWARM=1)")
	}
	if why := netbed.Available(); why != "" {
		t.Fatalf("no netbed here: %s", why)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := plan.ReadSpec(filepath.Join(root, "matrix-swarm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	spec.Clients = map[string][]string{"go": {"grpc"}}
	spec.Rounds = 3
	spec.Load.Duration = plan.Duration(4 * time.Second)
	spec.Prime = nil
	spec.Cluster.Nodes = []int{1, 2}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	name, netN := bedName("rbswfault", 2)
	if os.Getenv("RPCBED_SWARM_NETBED") != "" {
		name, netN = name+"f", netN+1
	}
	// Purged: the killed node's data-root keeps the swarm it was in.
	b := swarmBed(t, ctx, root, name, netN, true, &spec)
	victim := b.ClientHosts()[1]
	dir := filepath.Join(t.TempDir(), "run")
	killed := make(chan string, 1)
	started := make(chan struct{})
	go func() { killed <- killMidRepeat(ctx, started, victim.NetNS) }()
	r := runSpec(t, ctx, root, spec, dir, &watch{w: os.Stderr, line: "-2nodes r2/", seen: started})
	why := <-killed
	t.Logf("fault: %s", why)
	cells := map[int]results.CellResult{}
	for _, c := range r.Cells {
		cells[c.Nodes] = c
		for _, rep := range c.Repeats {
			t.Logf("%s r%d: %d tasks, error %q, notes %q", c.Name, rep.Index, len(rep.Tasks), rep.Error, rep.Notes)
		}
	}
	two, one := cells[2], cells[1]
	if len(two.Repeats) < 3 {
		t.Fatalf("%s: %d repeats; want 3", two.Name, len(two.Repeats))
	}
	if rep := two.Repeats[0]; rep.Error != "" {
		t.Errorf("%s r1: %s; want it to run on both nodes", two.Name, rep.Error)
	}
	if rep := two.Repeats[1]; rep.Report != nil || !strings.Contains(rep.Error, victim.Addr) || !strings.Contains(rep.Error, "lost") {
		t.Errorf("%s r2: error %q; want it failed, naming the lost node %s", two.Name, rep.Error, victim.Addr)
	}
	if rep := two.Repeats[2]; rep.Report != nil || !strings.Contains(rep.Error, "pool clients has 1 usable node(s), needs 2") || !strings.Contains(rep.Error, victim.Addr) {
		t.Errorf("%s r3: error %q; want the short pool as its reason, naming the lost node", two.Name, rep.Error)
	}
	if len(one.Repeats) != 3 {
		t.Fatalf("%s: %d repeats; want 3", one.Name, len(one.Repeats))
	}
	if rep := one.Repeats[2]; rep.Report == nil || len(rep.Tasks) != 1 || rep.Tasks[0].NodeAddr == victim.Addr {
		t.Errorf("%s r3: error %q, tasks %+v; want it run on the node left", one.Name, rep.Error, rep.Tasks)
	}
}

// watch copies the run's progress to w and closes seen at the first line
// holding line.
type watch struct {
	w    io.Writer
	line string
	seen chan struct{}
	buf  []byte
	done bool
}

func (x *watch) Write(p []byte) (int, error) {
	if !x.done {
		x.buf = append(x.buf, p...)
		if bytes.Contains(x.buf, []byte(x.line)) {
			x.done = true
			close(x.seen)
		}
		if i := bytes.LastIndexByte(x.buf, '\n'); i >= 0 && !x.done {
			x.buf = x.buf[i+1:]
		}
	}
	return x.w.Write(p)
}

// killMidRepeat waits until the two-node cell's second repeat starts (its
// progress line: the gang's tasks are running on both client nodes, the
// victim's among them), lets it run two seconds into its timed run, and kills
// every process in the victim's namespace: its dockerd, containerd, the task,
// as a node that crashes.
func killMidRepeat(ctx context.Context, started <-chan struct{}, netns string) string {
	select {
	case <-started:
	case <-ctx.Done():
		return "not killed: " + fmt.Sprint(ctx.Err())
	}
	time.Sleep(2 * time.Second)
	out, _ := exec.Command("ip", "netns", "pids", netns).Output()
	pids := strings.Fields(string(out))
	for _, p := range pids {
		if pid, err := strconv.Atoi(p); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return fmt.Sprintf("killed %d processes in %s (its dockerd among them)", len(pids), netns)
}
