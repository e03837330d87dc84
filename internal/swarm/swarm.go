// Package swarm runs rpcbed's programs on a Docker Swarm (docs/scale.md): it forms
// a swarm over a set of engines (init on the first, join from the others, a
// rpcbed.pool label on each node) or uses an existing one by its manager's
// engine, checks the pools' node counts before anything is created (a gang
// start), creates services and replicated jobs with host networking and
// --no-resolve-image (no registry: the images are on every node already), reads
// their tasks and logs, and removes on Close exactly what it made.
//
// It drives the docker CLI (`docker -H ENGINE ...`), the client every user of
// swarm mode has, rather than a second API client: Debian's engine is API 1.41,
// which replicated jobs need.
package swarm

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rpcbed/rpcbed/internal/cluster"
	"github.com/rpcbed/rpcbed/internal/runner"
)

// PoolLabel is the node label a pool is placed by (the nodes of netbed's
// namespaces share one hostname: placement by hostname cannot work).
const PoolLabel = "rpcbed.pool"

// Labels on every service this package creates, so they can be found again.
const (
	LabelRun = "org.rpcbed.swarm" // the Cluster's id
)

// Cluster is a swarm rpcbed works on.
type Cluster struct {
	// Manager is the manager's engine endpoint.
	Manager string
	// ID labels every service created here (org.rpcbed.swarm=ID).
	ID string

	formed []formed // engines this Cluster joined (formed it): left on Close

	mu       sync.Mutex
	services map[string]string // id -> name, created and not yet removed
}

type formed struct {
	cluster.Member
	NodeID string
}

// docker runs the docker CLI against engine; the error carries its stderr.
func docker(ctx context.Context, engine string, args ...string) ([]byte, error) {
	full := append([]string{"-H", engine}, args...)
	cmd := exec.CommandContext(ctx, "docker", full...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		return out.Bytes(), fmt.Errorf("docker -H %s %s: %v: %s", engine, strings.Join(args[:min(len(args), 3)], " "), err, msg)
	}
	return out.Bytes(), nil
}

// bounded is a context for clean-up steps: they run on every exit path, after
// the run's ctx may be done.
func bounded() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

func newID() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// localState is an engine's swarm state: inactive, active, pending, error, locked.
func localState(ctx context.Context, engine string) (state, nodeID string, manager bool, err error) {
	out, err := docker(ctx, engine, "info", "--format", "{{json .Swarm}}")
	if err != nil {
		return "", "", false, err
	}
	var sw struct {
		NodeID           string
		LocalNodeState   string
		ControlAvailable bool
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &sw); err != nil {
		return "", "", false, fmt.Errorf("docker info: %v (%q)", err, out)
	}
	return sw.LocalNodeState, sw.NodeID, sw.ControlAvailable, nil
}

// LocalState is an engine's swarm state ("inactive" when it is in none): the
// check that nothing of a formed swarm is left.
func LocalState(ctx context.Context, engine string) (string, error) {
	s, _, _, err := localState(ctx, engine)
	return s, err
}

// Form makes a swarm of members: init on the first (the manager), join from the
// others, and label each node with its pool. addrPool, when set, is the swarm's
// default address pool (kept inside the benchmarking range on netbed; no overlay
// network is used: every task runs with host networking). The ingress network is
// removed: no port is published, and this kernel has no IPVS for it anyway. On an
// error every engine it joined leaves again.
func Form(ctx context.Context, members []cluster.Member, addrPool string) (c *Cluster, err error) {
	if len(members) == 0 {
		return nil, errors.New("swarm: no member to form a swarm of")
	}
	for _, m := range members {
		st, _, _, err := localState(ctx, m.Engine)
		if err != nil {
			return nil, fmt.Errorf("swarm: member %s: %w", m.Address, err)
		}
		if st != "inactive" {
			return nil, fmt.Errorf("swarm: engine %s is already in a swarm (state %s): leave it first, or give cluster.manager to use that swarm as it is", m.Engine, st)
		}
	}
	c = &Cluster{Manager: members[0].Engine, ID: newID(), services: map[string]string{}}
	defer func() {
		if err != nil {
			c.Close()
			c = nil
		}
	}()
	mgr := members[0]
	args := []string{"swarm", "init", "--advertise-addr", mgr.Address, "--listen-addr", mgr.Address + ":2377"}
	if addrPool != "" {
		// One subnet, the pool itself: nothing here creates an overlay network.
		_, bits, _ := strings.Cut(addrPool, "/")
		args = append(args, "--default-addr-pool", addrPool, "--default-addr-pool-mask-length", bits)
	}
	if _, err := docker(ctx, mgr.Engine, args...); err != nil {
		return c, fmt.Errorf("swarm init: %w", err)
	}
	_, id, _, err := localState(ctx, mgr.Engine)
	if err != nil {
		return c, err
	}
	c.formed = append(c.formed, formed{mgr, id})
	tok, err := docker(ctx, mgr.Engine, "swarm", "join-token", "-q", "worker")
	if err != nil {
		return c, err
	}
	token := strings.TrimSpace(string(tok))
	for _, m := range members[1:] {
		if _, err := docker(ctx, m.Engine, "swarm", "join", "--token", token, "--advertise-addr", m.Address,
			"--listen-addr", m.Address+":2377", mgr.Address+":2377"); err != nil {
			return c, fmt.Errorf("swarm join from %s: %w", m.Address, err)
		}
		_, id, _, err := localState(ctx, m.Engine)
		if err != nil {
			return c, err
		}
		c.formed = append(c.formed, formed{m, id})
	}
	for _, f := range c.formed {
		if _, err := docker(ctx, mgr.Engine, "node", "update", "--label-add", PoolLabel+"="+f.Pool, f.NodeID); err != nil {
			return c, fmt.Errorf("label %s: %w", f.Address, err)
		}
	}
	// The ingress network: no task publishes a port (host networking).
	docker(ctx, mgr.Engine, "network", "rm", "ingress")
	// Every member must be seen ready by the manager before anything is placed.
	deadline := time.Now().Add(30 * time.Second)
	for {
		nodes, err := c.Nodes(ctx)
		if err != nil {
			return c, err
		}
		ready := 0
		for _, n := range nodes {
			if n.Usable() {
				ready++
			}
		}
		if ready >= len(members) {
			return c, nil
		}
		if time.Now().After(deadline) {
			return c, fmt.Errorf("swarm: %d of %d nodes ready after 30 s", ready, len(members))
		}
		select {
		case <-ctx.Done():
			return c, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Attach uses the existing swarm whose manager's engine is manager: it forms
// nothing, and Close removes only the services made through it.
func Attach(ctx context.Context, manager string) (*Cluster, error) {
	st, _, isMgr, err := localState(ctx, manager)
	if err != nil {
		return nil, fmt.Errorf("swarm: manager %s: %w", manager, err)
	}
	if st != "active" || !isMgr {
		return nil, fmt.Errorf("swarm: engine %s is not a swarm manager (state %s, manager %v)", manager, st, isMgr)
	}
	return &Cluster{Manager: manager, ID: newID(), services: map[string]string{}}, nil
}

// Formed lists the engines this Cluster joined (empty for an attached swarm).
func (c *Cluster) Formed() []cluster.Member {
	var m []cluster.Member
	for _, f := range c.formed {
		m = append(m, f.Member)
	}
	return m
}

// NodeEngine is the engine of a node this Cluster formed ("" otherwise).
func (c *Cluster) NodeEngine(nodeID string) string {
	for _, f := range c.formed {
		if f.NodeID == nodeID {
			return f.Engine
		}
	}
	return ""
}

// Nodes lists the swarm's nodes with their pool labels and addresses.
func (c *Cluster) Nodes(ctx context.Context) ([]cluster.Node, error) {
	out, err := docker(ctx, c.Manager, "node", "ls", "-q")
	if err != nil {
		return nil, err
	}
	ids := strings.Fields(string(out))
	if len(ids) == 0 {
		return nil, nil
	}
	out, err = docker(ctx, c.Manager, append([]string{"node", "inspect"}, ids...)...)
	if err != nil {
		return nil, err
	}
	var raw []struct {
		ID   string
		Spec struct {
			Labels       map[string]string
			Availability string
		}
		Description   struct{ Hostname string }
		Status        struct{ State, Addr string }
		ManagerStatus *struct {
			Addr string
		}
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		return nil, fmt.Errorf("node inspect: %w", err)
	}
	var nodes []cluster.Node
	for _, r := range raw {
		n := cluster.Node{ID: r.ID, Hostname: r.Description.Hostname, Addr: r.Status.Addr, Pool: r.Spec.Labels[PoolLabel],
			State: r.Status.State, Availability: r.Spec.Availability, Manager: r.ManagerStatus != nil}
		if n.Manager && (n.Addr == "" || n.Addr == "0.0.0.0") {
			// A manager's Status.Addr may read 0.0.0.0: its ManagerStatus has the address.
			if h, _, ok := strings.Cut(r.ManagerStatus.Addr, ":"); ok {
				n.Addr = h
			}
		}
		nodes = append(nodes, n)
	}
	sort.Slice(nodes, func(i, j int) bool {
		if nodes[i].Pool != nodes[j].Pool {
			return nodes[i].Pool < nodes[j].Pool
		}
		return nodes[i].Addr < nodes[j].Addr
	})
	return nodes, nil
}

// ErrShortPool is wrapped by Gang's error when a pool has too few usable nodes.
var ErrShortPool = errors.New("pool short")

// Gang checks, before anything is created, that every pool has at least want
// usable nodes (ready, active, and not in exclude) and returns them by pool. The
// error names every short pool with what it has.
func (c *Cluster) Gang(ctx context.Context, want map[string]int, exclude map[string]string) (map[string][]cluster.Node, error) {
	nodes, err := c.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	return GangOf(nodes, want, exclude)
}

// GangOf is Gang over a node list.
func GangOf(nodes []cluster.Node, want map[string]int, exclude map[string]string) (map[string][]cluster.Node, error) {
	by := map[string][]cluster.Node{}
	notUsable := map[string][]string{}
	for _, n := range nodes {
		if why, ok := exclude[n.ID]; ok {
			notUsable[n.Pool] = append(notUsable[n.Pool], fmt.Sprintf("%s lost: %s", n, why))
			continue
		}
		if !n.Usable() {
			notUsable[n.Pool] = append(notUsable[n.Pool], fmt.Sprintf("%s %s/%s", n, n.State, n.Availability))
			continue
		}
		by[n.Pool] = append(by[n.Pool], n)
	}
	var short []string
	pools := make([]string, 0, len(want))
	for p := range want {
		pools = append(pools, p)
	}
	sort.Strings(pools)
	for _, p := range pools {
		if len(by[p]) < want[p] {
			msg := fmt.Sprintf("pool %s has %d usable node(s), needs %d", p, len(by[p]), want[p])
			if len(notUsable[p]) > 0 {
				msg += " (" + strings.Join(notUsable[p], "; ") + ")"
			}
			short = append(short, msg)
		}
	}
	if len(short) > 0 {
		return by, fmt.Errorf("%w: %s", ErrShortPool, strings.Join(short, "; "))
	}
	return by, nil
}

// Service is what to create: a replicated service whose tasks run once each
// (--restart-condition none: a task that ends, finished or failed, is never
// replaced), or a replicated job (Job). rpcbed uses the former for everything:
// on Debian's 20.10.24 a replicated job replaced a failed task even with
// --restart-condition none (moby/moby#42741; TestSwarm shows it).
type Service struct {
	Name  string
	Image string
	// Entrypoint and Args: the task's command (Entrypoint may be empty).
	Entrypoint string
	Args       []string
	Env        []string
	// Pool places the tasks by the rpcbed.pool label; Node, when set, on exactly
	// that node (node.id==); Exclude keeps them off these nodes (node.id!=).
	Pool    string
	Node    string
	Exclude []string
	// Replicas: tasks to run, at most one per node (--replicas-max-per-node 1).
	Replicas int
	Job      bool
	// CPUs and MemoryMB limit each task (--limit-cpu, --limit-memory).
	CPUs     float64
	MemoryMB int
}

// Create creates s with host networking and no image resolution, and returns
// its id. It does not wait for the tasks (--detach).
func (c *Cluster) Create(ctx context.Context, s Service) (string, error) {
	if s.Replicas < 1 {
		s.Replicas = 1
	}
	name := "rpcbed-" + s.Name + "-" + newID()
	args := []string{"service", "create", "--detach", "--quiet", "--name", name,
		"--label", LabelRun + "=" + c.ID,
		"--network", "host", "--no-resolve-image",
		"--restart-condition", "none",
		"--replicas", strconv.Itoa(s.Replicas), "--replicas-max-per-node", "1",
		"--stop-grace-period", "10s"}
	if s.Job {
		args = append(args, "--mode", "replicated-job", "--max-concurrent", strconv.Itoa(s.Replicas))
	}
	if s.Pool != "" {
		args = append(args, "--constraint", "node.labels."+PoolLabel+"=="+s.Pool)
	}
	if s.Node != "" {
		args = append(args, "--constraint", "node.id=="+s.Node)
	}
	for _, x := range s.Exclude {
		args = append(args, "--constraint", "node.id!="+x)
	}
	for _, e := range s.Env {
		args = append(args, "--env", e)
	}
	if s.CPUs > 0 {
		args = append(args, "--limit-cpu", strconv.FormatFloat(s.CPUs, 'f', -1, 64))
	}
	if s.MemoryMB > 0 {
		args = append(args, "--limit-memory", strconv.Itoa(s.MemoryMB)+"M")
	}
	if s.Entrypoint != "" {
		args = append(args, "--entrypoint", s.Entrypoint)
	}
	args = append(args, s.Image)
	args = append(args, s.Args...)
	// Tracked before it exists: a create that fails half-way is still removed.
	c.track(name)
	out, err := docker(ctx, c.Manager, args...)
	if err != nil {
		c.remove(name)
		return "", fmt.Errorf("service create %s: %w", s.Name, err)
	}
	id := strings.TrimSpace(string(out))
	c.mu.Lock()
	delete(c.services, name)
	c.services[id] = name
	c.mu.Unlock()
	return id, nil
}

func (c *Cluster) track(name string) {
	c.mu.Lock()
	c.services[name] = name
	c.mu.Unlock()
}

// Task is one task of a service.
type Task struct {
	ID           string
	NodeID       string
	State        string // new, pending, assigned, running, complete, failed, shutdown, rejected, orphaned
	DesiredState string
	Err          string
	ExitCode     int
	Message      string
}

// Tasks lists a service's tasks, oldest first.
func (c *Cluster) Tasks(ctx context.Context, service string) ([]Task, error) {
	out, err := docker(ctx, c.Manager, "service", "ps", "-q", "--no-trunc", service)
	if err != nil {
		return nil, err
	}
	ids := strings.Fields(string(out))
	if len(ids) == 0 {
		return nil, nil
	}
	out, err = docker(ctx, c.Manager, append([]string{"inspect", "--type", "task"}, ids...)...)
	if err != nil {
		return nil, err
	}
	var raw []struct {
		ID           string
		NodeID       string
		DesiredState string
		CreatedAt    time.Time
		Status       struct {
			State, Err, Message string
			ContainerStatus     *struct{ ExitCode int }
		}
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		return nil, fmt.Errorf("task inspect: %w", err)
	}
	sort.SliceStable(raw, func(i, j int) bool { return raw[i].CreatedAt.Before(raw[j].CreatedAt) })
	var ts []Task
	for _, r := range raw {
		t := Task{ID: r.ID, NodeID: r.NodeID, State: r.Status.State, DesiredState: r.DesiredState, Err: r.Status.Err, Message: r.Status.Message}
		if r.Status.ContainerStatus != nil {
			t.ExitCode = r.Status.ContainerStatus.ExitCode
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// Ended: the task will not run again (complete, failed, shutdown, rejected,
// orphaned, remove).
func (t Task) Ended() bool {
	switch t.State {
	case "complete", "failed", "shutdown", "rejected", "orphaned", "remove":
		return true
	}
	return false
}

// WaitTasks waits until the service has n tasks that ended, or ctx ends, and
// returns the tasks as last seen.
func (c *Cluster) WaitTasks(ctx context.Context, service string, n int) ([]Task, error) {
	return WaitEnded(ctx, c, service, n)
}

// WaitEnded waits until e lists n tasks of service that ended, or ctx ends,
// and returns the tasks as last seen.
func WaitEnded(ctx context.Context, e interface {
	Tasks(context.Context, string) ([]Task, error)
}, service string, n int) ([]Task, error) {
	for {
		ts, err := e.Tasks(ctx, service)
		if err == nil {
			ended := 0
			for _, t := range ts {
				if t.Ended() {
					ended++
				}
			}
			if ended >= n && len(ts) >= n {
				return ts, nil
			}
		}
		select {
		case <-ctx.Done():
			return ts, fmt.Errorf("tasks of %s: %w", service, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Logs is every task's output so far, stdout then stderr, each line prefixed with
// its task and node as `docker service logs` does, with timestamps.
func (c *Cluster) Logs(ctx context.Context, service string) (stdout, stderr []byte, err error) {
	cmd := exec.CommandContext(ctx, "docker", "-H", c.Manager, "service", "logs", "--no-trunc", "--timestamps", service)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 10 * time.Second
	err = cmd.Run()
	if err != nil {
		err = fmt.Errorf("service logs %s: %v: %s", service, err, runner.LastLine(errb.Bytes()))
	}
	return out.Bytes(), errb.Bytes(), err
}

// Stop scales a replicated service to 0 (its tasks get SIGTERM and
// stop-grace-period), waits for that, and returns its logs; Remove then removes it.
func (c *Cluster) Stop(ctx context.Context, service string) (stdout, stderr []byte, err error) {
	if _, err := docker(ctx, c.Manager, "service", "scale", "--detach", service+"=0"); err != nil {
		return nil, nil, err
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		ts, err := c.Tasks(ctx, service)
		if err != nil {
			break
		}
		if !slices.ContainsFunc(ts, func(t Task) bool { return !t.Ended() }) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	return c.Logs(ctx, service)
}

// Remove removes a service this Cluster created.
func (c *Cluster) Remove(service string) error {
	return c.remove(service)
}

func (c *Cluster) remove(service string) error {
	ctx, cancel := bounded()
	defer cancel()
	_, err := docker(ctx, c.Manager, "service", "rm", service)
	if err != nil && strings.Contains(err.Error(), "not found") {
		err = nil
	}
	if err == nil {
		c.mu.Lock()
		delete(c.services, service)
		c.mu.Unlock()
	}
	return err
}

// Services lists the services this Cluster created that still exist, by the
// label it put on them.
func (c *Cluster) Services(ctx context.Context) ([]string, error) {
	out, err := docker(ctx, c.Manager, "service", "ls", "-q", "--filter", "label="+LabelRun+"="+c.ID)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// Close removes every service it created and, for a swarm it formed, makes every
// member leave (workers first, the manager last with --force). It runs on every
// exit path: each step is bounded and an engine that no longer answers (a lost
// node) is passed over; the errors are joined.
func (c *Cluster) Close() error {
	if c == nil {
		return nil
	}
	var errs []error
	c.mu.Lock()
	ids := make([]string, 0, len(c.services))
	for id := range c.services {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	for _, id := range ids {
		if err := c.remove(id); err != nil {
			errs = append(errs, err)
		}
	}
	if len(c.formed) == 0 {
		ctx, cancel := bounded()
		left, err := c.Services(ctx)
		cancel()
		for _, id := range left {
			errs = append(errs, c.remove(id))
		}
		if err != nil {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	}
	for i := len(c.formed) - 1; i >= 0; i-- {
		f := c.formed[i]
		ctx, cancel := bounded()
		args := []string{"swarm", "leave"}
		if i == 0 {
			args = append(args, "--force")
		}
		_, err := docker(ctx, f.Engine, args...)
		cancel()
		if err != nil && !strings.Contains(err.Error(), "not part of a swarm") {
			ctx, cancel := bounded()
			if _, perr := docker(ctx, f.Engine, "version"); perr != nil {
				err = nil // the engine is gone (a lost node): nothing of it to leave
			}
			cancel()
		}
		if err != nil && !strings.Contains(err.Error(), "not part of a swarm") {
			errs = append(errs, err)
		}
	}
	c.formed = nil
	return errors.Join(errs...)
}
