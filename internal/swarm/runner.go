package swarm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rpcbed/rpcbed/internal/cluster"
	"github.com/rpcbed/rpcbed/internal/runner"
)

// Runner runs rpcbed's programs as swarm services on one node of a pool: Start a
// server as a replicated service of one task, Run a program as a replicated job
// of one task. It is the runner.Runner the matrix starts a cluster run's server
// with; the client tasks of a split cell go through Job and the Barrier instead.
type Runner struct {
	C Engine
	// Node is the node the tasks are placed on (node.id==), Pool its pool.
	Node, Pool string
}

var _ runner.Runner = (*Runner)(nil)

// Engine is what a Runner needs of a cluster engine: a Docker Swarm (Cluster)
// or a Kubernetes cluster (internal/kube), whose tasks are pods.
type Engine interface {
	Create(ctx context.Context, s Service) (string, error)
	Tasks(ctx context.Context, service string) ([]Task, error)
	WaitTasks(ctx context.Context, service string, n int) ([]Task, error)
	Logs(ctx context.Context, service string) (stdout, stderr []byte, err error)
	Stop(ctx context.Context, service string) (stdout, stderr []byte, err error)
	Remove(service string) error
}

// Run runs s once as a service of one task (restart none: it runs once) and returns its output (from the task's
// log), exit code and wall time; CPU is not known to the driver (0).
func (r *Runner) Run(ctx context.Context, s runner.Task) (runner.Result, error) {
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.Timeout)
		defer cancel()
	}
	start := time.Now()
	id, err := r.C.Create(ctx, r.service(s, false))
	if err != nil {
		return runner.Result{}, err
	}
	defer r.C.Remove(id)
	ts, werr := r.C.WaitTasks(ctx, id, 1)
	lctx, cancel := bounded()
	defer cancel()
	out, errb, lerr := r.C.Logs(lctx, id)
	res := runner.Result{Stdout: out, Stderr: errb, Wall: time.Since(start), ExitCode: -1}
	if len(ts) > 0 {
		res.ExitCode = ts[len(ts)-1].ExitCode
	}
	switch {
	case werr != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && s.Timeout > 0:
		return res, fmt.Errorf("%s: %w after %v", s.Name, runner.ErrTimeout, s.Timeout)
	case werr != nil:
		return res, werr
	}
	return res, lerr
}

func (r *Runner) service(s runner.Task, job bool) Service {
	var entry string
	args := s.Args
	if len(args) > 0 {
		entry, args = args[0], args[1:]
	}
	return Service{Name: s.Name, Image: s.Image, Entrypoint: entry, Args: args, Env: s.Env,
		Pool: r.Pool, Node: r.Node, Replicas: 1, Job: job, CPUs: s.CPUs, MemoryMB: s.MemoryMB}
}

// Start starts s as a service of one task and waits until s.Ready passes (probed
// from the driver) or the task ends.
func (r *Runner) Start(ctx context.Context, s runner.Task) (runner.Service, error) {
	id, err := r.C.Create(ctx, r.service(s, false))
	if err != nil {
		return nil, err
	}
	svc := &service{r: r, id: id, name: s.Name, start: time.Now()}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = runner.DefaultStartTimeout
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		ts, terr := r.C.Tasks(rctx, id)
		if terr == nil && len(ts) > 0 {
			t := ts[len(ts)-1]
			if t.Ended() {
				res, _ := svc.Stop(context.Background())
				return nil, fmt.Errorf("start %s: task %s %s (%s %s); stderr: %s", s.Name, cluster.ShortID(t.ID), t.State, t.Err, t.Message, runner.Tail(res.Stderr, 1500))
			}
			if t.State == "running" {
				if s.Ready == nil {
					return svc, nil
				}
				pctx, pcancel := context.WithTimeout(rctx, time.Second)
				last = s.Ready(pctx)
				pcancel()
				if last == nil {
					return svc, nil
				}
			}
		}
		select {
		case <-rctx.Done():
			res, _ := svc.Stop(context.Background())
			return nil, fmt.Errorf("start %s: not ready within %v (last probe: %v); stderr: %s", s.Name, timeout, last, runner.Tail(res.Stderr, 1500))
		case <-tick.C:
		}
	}
}

// Close removes every service the cluster created (the cluster itself stays).
func (r *Runner) Close() error { return nil }

type service struct {
	r     *Runner
	id    string
	name  string
	start time.Time

	mu      sync.Mutex
	stopped bool
	res     runner.Result
	err     error
}

func (s *service) Name() string { return s.name }

// Usage: the driver has no CPU figure for a swarm task (a server's /stats has it).
func (s *service) Usage(ctx context.Context) (time.Duration, time.Duration, error) {
	return 0, 0, errors.New("a swarm service's CPU is read from its /stats only")
}

// Stop scales the service to 0 (SIGTERM, the grace period), keeps its logs and
// removes it.
func (s *service) Stop(ctx context.Context) (runner.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return s.res, s.err
	}
	s.stopped = true
	lctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	out, errb, err := s.r.C.Stop(lctx, s.id)
	s.res = runner.Result{Stdout: out, Stderr: errb, Wall: time.Since(s.start)}
	if rerr := s.r.C.Remove(s.id); err == nil {
		err = rerr
	}
	s.err = err
	return s.res, s.err
}
