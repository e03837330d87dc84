package main

import (
	"context"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// TestSwarmAndKubeSpecsAreOne: matrix-kube.yaml is matrix-swarm.yaml with only
// the cluster's engine changed (and that engine's own fields: where the
// cluster and the driver are): the same cells, loads, rounds, pools and nodes,
// so both run the same group steps through the one cluster placement.
func TestSwarmAndKubeSpecsAreOne(t *testing.T) {
	read := func(f string) plan.Spec {
		s, err := plan.ReadSpec(filepath.Join("../..", f))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	sw, ku := read("matrix-swarm.yaml"), read("matrix-kube.yaml")
	if sw.Cluster.Engine != plan.EngineSwarm || ku.Cluster.Engine != plan.EngineKubernetes {
		t.Fatalf("engines %s and %s; want swarm and kubernetes", sw.Cluster.Engine, ku.Cluster.Engine)
	}
	common := func(s plan.Spec) plan.Spec {
		c := *s.Cluster
		c.Engine, c.Kubeconfig, c.Namespace, c.ImagePrefix = "", "", "", ""
		c.Form, c.Manager, c.AddrPool, c.Driver = nil, "", "", ""
		s.Cluster = &c
		return s
	}
	if a, b := common(sw), common(ku); !reflect.DeepEqual(a, b) {
		t.Errorf("the two specs differ beyond the engine:\nswarm: %+v %+v\nkube:  %+v %+v", a, *a.Cluster, b, *b.Cluster)
	}
	var a, b []string
	for _, c := range sw.Plan() {
		a = append(a, c.Name())
	}
	for _, c := range ku.Plan() {
		b = append(b, c.Name())
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("cells: swarm %v, kubernetes %v; want the same", a, b)
	}
}

// kubeEnv is `scripts/kube.sh env` of the running cluster (make kube-up).
func kubeEnv(t *testing.T, root string) map[string]string {
	t.Helper()
	out, err := exec.Command(filepath.Join(root, "scripts", "kube.sh"), "env").Output()
	if err != nil {
		t.Fatalf("scripts/kube.sh env: %v", err)
	}
	env := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			env[k] = v
		}
	}
	if _, err := os.Stat(env["KUBE_KUBECONFIG"]); err != nil {
		t.Fatalf("no cluster runs (make kube-up): %v", err)
	}
	return env
}

// kubeLeft lists what of rpcbed's is left in the namespace (pods and the
// runs' ConfigMaps), through the cluster's admin kubeconfig.
func kubeLeft(env map[string]string) (string, error) {
	out, err := exec.Command(env["KUBECTL"], "--kubeconfig", env["KUBE_ADMIN_KUBECONFIG"], "-n", env["KUBE_NAMESPACE"],
		"get", "pods,configmaps", "-l", "app.kubernetes.io/managed-by=rpcbed", "-o", "name").CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// kubeSpec is matrix-kube.yaml pointed at the running cluster.
func kubeSpec(t *testing.T, root string, env map[string]string) plan.Spec {
	t.Helper()
	spec, err := plan.ReadSpec(filepath.Join(root, "matrix-kube.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	spec.Cluster.Kubeconfig, spec.Cluster.Namespace, spec.Cluster.Driver = env["KUBE_KUBECONFIG"], env["KUBE_NAMESPACE"], env["KUBE_DRIVER_ADDR"]
	t.Cleanup(func() {
		if left, err := kubeLeft(env); err != nil || left != "" {
			t.Errorf("left in the cluster: %q (%v)", left, err)
		}
	})
	return spec
}

// TestMatrixKube is `make matrix-kube`: matrix-kube.yaml on the 3-node
// Kubernetes of `make kube-up`, as the runner's ServiceAccount (RBAC on):
// go-server in a pod on the server node, go, php and java cells at c=50 each
// split 25 + 25 over the two client nodes. It asserts what TestMatrixSwarm
// does of every good repeat (two nodes, 25 + 25, the merge's sums, the
// clocks, the raw files), and that no pod or run ConfigMap is left. It prints
// each cell's merged req/s and its windows' skew; it never fails on a timing.
//
// It runs only when RPCBED_MATRIX_KUBE=1 (make matrix-kube sets it);
// RPCBED_KUBE_OUT keeps the run directory.
func TestMatrixKube(t *testing.T) {
	if os.Getenv("RPCBED_MATRIX_KUBE") != "1" {
		t.Skip("make matrix-kube runs this (RPCBED_MATRIX_KUBE=1)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	env := kubeEnv(t, root)
	spec := kubeSpec(t, root, env)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 7*time.Minute)
	defer cancel()
	dir := os.Getenv("RPCBED_KUBE_OUT")
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "run")
	}
	t0 := time.Now()
	r := runSpec(t, ctx, root, spec, dir, os.Stderr)
	t.Logf("the run took %.0f s", time.Since(t0).Seconds())
	if r.Cluster == nil || r.Cluster.Engine != plan.EngineKubernetes || len(r.Cluster.Nodes) != 3 {
		t.Fatalf("matrix.json cluster: %+v; want kubernetes with 3 nodes", r.Cluster)
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
			t.Errorf("no %s cell completed on kubernetes", c)
		}
	}
}

// TestMatrixKubeFault is `make matrix-kube-fault`: the go cell on 1 and 2
// client nodes, 3 rounds; once the 2-node cell's second repeat runs, client
// node rbkube-c2 dies (its kubelet, containerd and every process in its
// namespace). That repeat fails naming the node, the 2-node cell's next
// repeat fails for the short pool, and the 1-node cell's runs on the node
// left. It kills a node: run it last, before make kube-down.
func TestMatrixKubeFault(t *testing.T) {
	if os.Getenv("RPCBED_MATRIX_KUBE_FAULT") != "1" {
		t.Skip("make matrix-kube-fault runs this (RPCBED_MATRIX_KUBE_FAULT=1)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	env := kubeEnv(t, root)
	spec := kubeSpec(t, root, env)
	spec.Clients = map[string][]string{"go": {"grpc"}}
	spec.Rounds = 3
	spec.Load.Duration = plan.Duration(4 * time.Second)
	spec.Prime = nil
	spec.Cluster.Nodes = []int{1, 2}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	const victim = "198.18.3.3" // rbkube-c2
	dir := filepath.Join(t.TempDir(), "run")
	killed := make(chan string, 1)
	started := make(chan struct{})
	go func() {
		select {
		case <-started:
		case <-ctx.Done():
			killed <- "not killed: " + ctx.Err().Error()
			return
		}
		time.Sleep(2 * time.Second)
		out, err := exec.Command(filepath.Join(root, "scripts", "kube.sh"), "kill-node", "c2").CombinedOutput()
		killed <- strings.TrimSpace(string(out)) + errText(err)
	}()
	r := runSpec(t, ctx, root, spec, dir, &watch{w: os.Stderr, line: "-2nodes r2/", seen: started})
	t.Logf("fault: %s", <-killed)
	cells := map[int]results.CellResult{}
	for _, c := range r.Cells {
		cells[c.Nodes] = c
		for _, rep := range c.Repeats {
			t.Logf("%s r%d: %d tasks, error %q, notes %q", c.Name, rep.Index, len(rep.Tasks), rep.Error, rep.Notes)
		}
	}
	two, one := cells[2], cells[1]
	if len(two.Repeats) < 3 || len(one.Repeats) != 3 {
		t.Fatalf("%d and %d repeats; want 3 each", len(two.Repeats), len(one.Repeats))
	}
	if rep := two.Repeats[0]; rep.Error != "" {
		t.Errorf("%s r1: %s; want it to run on both nodes", two.Name, rep.Error)
	}
	// The kill lands in the 2-node cell's second repeat or, on a busy machine,
	// its third (the rounds' order is seeded): that repeat fails naming the
	// lost node, and any 2-node repeat after it fails for the short pool.
	lost := -1
	for i, rep := range two.Repeats[1:] {
		if rep.Report == nil && strings.Contains(rep.Error, victim) && strings.Contains(rep.Error, "lost") {
			lost = i + 1
			break
		}
	}
	if lost < 0 {
		t.Fatalf("%s: no repeat failed naming the lost node %s", two.Name, victim)
	}
	for _, rep := range two.Repeats[lost+1:] {
		if rep.Report != nil || !strings.Contains(rep.Error, "pool clients has 1 usable node(s), needs 2") || !strings.Contains(rep.Error, victim) {
			t.Errorf("%s r%d: error %q; want the short pool as its reason, naming the lost node", two.Name, rep.Index, rep.Error)
		}
	}
	if rep := one.Repeats[2]; rep.Report == nil || len(rep.Tasks) != 1 || rep.Tasks[0].NodeAddr == victim {
		t.Errorf("%s r3: error %q, tasks %+v; want it run on the node left", one.Name, rep.Error, rep.Tasks)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return " (" + err.Error() + ")"
}
