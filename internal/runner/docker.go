package runner

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"
)

// Labels put on every container, so leftovers can be found and swept.
const (
	LabelRunner = "org.rpcbed.runner" // "docker"
	LabelName   = "org.rpcbed.name"   // Task.Name
	LabelPID    = "org.rpcbed.pid"    // the pid of the process that started it
)

// cleanupTimeout bounds removing a container after its run, even when the run's
// ctx is already cancelled (an interrupted matrix must still leave nothing behind).
const cleanupTimeout = 30 * time.Second

// Docker runs every program in its own container of the given image, with host
// networking (all traffic on 127.0.0.1), the Task's CPU and memory limits, and
// removes the container once its output and CPU usage are collected.
type Docker struct {
	pool *dockertest.Pool

	mu   sync.Mutex
	live map[string]string // container id -> name, not yet removed
	// endpoint is the engine's address (NewDockerAt); "" = DOCKER_HOST or the default.
	endpoint string
}

// NewDocker connects to the engine DOCKER_HOST names, or the default socket, and
// fails when it does not answer (docker/engine.sh starts one).
func NewDocker() (*Docker, error) {
	pool, err := dockertest.NewPool("")
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	if err := pool.Client.Ping(); err != nil {
		return nil, fmt.Errorf("docker: no engine answers (run docker/engine.sh): %w", err)
	}
	return &Docker{pool: pool, live: map[string]string{}}, nil
}

// Run runs s to completion in a new container.
func (d *Docker) Run(ctx context.Context, s Task) (Result, error) {
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.Timeout)
		defer cancel()
	}
	start := time.Now()
	c, err := d.create(ctx, s)
	if err != nil {
		return Result{}, err
	}
	defer d.remove(c.ID)

	_, werr := d.pool.Client.WaitContainerWithContext(c.ID, ctx)
	if werr != nil {
		// Timed out or cancelled: kill it, let the engine record its exit, then
		// still collect what it printed.
		d.kill(c.ID, syscall.SIGKILL)
		wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		d.pool.Client.WaitContainerWithContext(c.ID, wctx)
		cancel()
	}
	r, cerr := d.collect(c.ID, start)
	switch {
	case werr != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && s.Timeout > 0:
		return r, fmt.Errorf("%s: %w after %v", s.Name, ErrTimeout, s.Timeout)
	case werr != nil && ctx.Err() != nil:
		return r, fmt.Errorf("%s: %w", s.Name, ctx.Err())
	case werr != nil:
		return r, fmt.Errorf("%s: wait: %w", s.Name, werr)
	}
	return r, cerr
}

// Start starts s in a new container and waits for s.Ready.
func (d *Docker) Start(ctx context.Context, s Task) (Service, error) {
	start := time.Now()
	c, err := d.create(ctx, s)
	if err != nil {
		return nil, err
	}
	svc := &dockerService{d: d, id: c.ID, name: s.Name, start: start}
	return startedOrStopped(ctx, s, svc, func(rctx context.Context) error {
		ci, err := d.pool.Client.InspectContainerWithContext(c.ID, rctx)
		if err != nil {
			return err
		}
		if !ci.State.Running {
			return fmt.Errorf("container exited with code %d", ci.State.ExitCode)
		}
		return nil
	})
}

// Close removes every container this runner started that is still there.
func (d *Docker) Close() error {
	d.mu.Lock()
	ids := make([]string, 0, len(d.live))
	for id := range d.live {
		ids = append(ids, id)
	}
	d.mu.Unlock()
	var errs []error
	for _, id := range ids {
		errs = append(errs, d.remove(id))
	}
	return errors.Join(errs...)
}

// Sweep removes the rpcbed containers whose driver is gone (its pid, with its
// start time): leftovers of a run that was killed before it could clean up.
// Containers of live drivers (another matrix, another test) are left alone; with
// EnvScope set, so are those of another scope.
func (d *Docker) Sweep(ctx context.Context) (removed int, err error) {
	cs, err := d.removeWhere(ctx, func(l map[string]string) bool {
		return orphaned(firstOf(l[LabelDriver], l[LabelPID]), l[LabelScope])
	})
	return len(cs), err
}

// labels are a new container's: the runner, the task's name, its driver (and
// scope); the watcher is told of the engine, so that it removes the driver's
// containers if the driver dies.
func (d *Docker) labels(name string) map[string]string {
	tell("docker", d.endpoint)
	l := driverLabels()
	l[LabelRunner], l[LabelName] = "docker", name
	return l
}

// alive: signal 0 reaches the process, or it exists but belongs to another user.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Containers lists every rpcbed container, running or not.
func (d *Docker) Containers(ctx context.Context) ([]dc.APIContainers, error) {
	return d.pool.Client.ListContainers(dc.ListContainersOptions{
		All:     true,
		Filters: map[string][]string{"label": {LabelRunner}},
		Context: ctx,
	})
}

// HasImage reports whether the engine has image (e.g. rpcbed/go or rpcbed/go:latest).
func (d *Docker) HasImage(image string) bool {
	repo, tag := splitImage(image)
	_, err := d.pool.Client.InspectImage(repo + ":" + tag)
	return err == nil
}

// checkSpec refuses a spec without a command or a built image: the engine would
// try to pull a missing image, and there is no registry here, so say what to do.
func (d *Docker) checkSpec(s Task) (repo, tag string, err error) {
	if len(s.Args) == 0 {
		return "", "", fmt.Errorf("%s: no command", s.Name)
	}
	if s.Image == "" {
		return "", "", fmt.Errorf("%s: no image", s.Name)
	}
	for _, m := range s.Mounts {
		if !filepath.IsAbs(m) {
			return "", "", fmt.Errorf("%s: mount %q: a bind mount needs an absolute path", s.Name, m)
		}
	}
	repo, tag = splitImage(s.Image)
	if _, err := d.pool.Client.InspectImage(repo + ":" + tag); err != nil {
		return "", "", fmt.Errorf("%s: image %s:%s is not built (make images): %w", s.Name, repo, tag, err)
	}
	return repo, tag, nil
}

// limit puts the Task's host networking, CPU and memory limits on hc.
func limit(hc *dc.HostConfig, s Task) {
	hc.NetworkMode = "host"
	if s.CPUs > 0 {
		hc.CPUPeriod = 100000
		hc.CPUQuota = int64(s.CPUs * 100000)
	}
	hc.CPUSetCPUs = s.CPUSet
	for _, m := range s.Mounts {
		hc.Binds = append(hc.Binds, m+":"+m+":ro")
	}
	if s.MemoryMB > 0 {
		hc.Memory = int64(s.MemoryMB) << 20
		hc.MemorySwap = hc.Memory
	}
}

func (d *Docker) create(ctx context.Context, s Task) (*dc.Container, error) {
	repo, tag, err := d.checkSpec(s)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name := containerName(s.Name)
	opts := &dockertest.RunOptions{
		Name:       name,
		Repository: repo,
		Tag:        tag,
		Env:        s.Env,
		Entrypoint: []string{"/bin/bash", "-c", wrapper, "rpcbed-runner"},
		Cmd:        s.Args,
		Labels:     d.labels(s.Name),
	}
	// Registered before it exists: if RunWithOptions fails between create and
	// start, the container is still removed by name.
	d.track(name, name)
	res, err := d.pool.RunWithOptions(opts, func(hc *dc.HostConfig) {
		limit(hc, s)
		hc.PublishAllPorts = false
		hc.AutoRemove = false // removed by us once logs and usage are collected
	})
	if err != nil {
		d.remove(name)
		return nil, fmt.Errorf("%s: run %s: %w", s.Name, s.Image, err)
	}
	d.untrack(name)
	d.track(res.Container.ID, name)
	return res.Container, nil
}

// collect reads the output, exit code, wall time and CPU of a container that has
// exited. Wall is the engine's StartedAt..FinishedAt; for a program that ends
// within the engine's own bookkeeping those can come out equal or reversed, and
// then the time since start (the runner's own clock) is used.
func (d *Docker) collect(id string, start time.Time) (Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	var r Result
	var out, errb bytes.Buffer
	err := d.pool.Client.Logs(dc.LogsOptions{
		Context:      ctx,
		Container:    id,
		OutputStream: &out,
		ErrorStream:  &errb,
		Stdout:       true,
		Stderr:       true,
	})
	r.Stdout = out.Bytes()
	var ok bool
	r.Stderr, r.CPUUser, r.CPUSystem, ok = splitUsage(errb.Bytes())
	_ = ok // a killed program has no trailer; its CPU stays 0
	if err != nil {
		return r, fmt.Errorf("logs: %w", err)
	}
	ci, err := d.pool.Client.InspectContainerWithContext(id, ctx)
	if err != nil {
		return r, fmt.Errorf("inspect: %w", err)
	}
	r.ExitCode = ci.State.ExitCode
	if !ci.State.StartedAt.IsZero() && ci.State.FinishedAt.After(ci.State.StartedAt) {
		r.Wall = ci.State.FinishedAt.Sub(ci.State.StartedAt)
	} else {
		r.Wall = time.Since(start)
	}
	if ci.State.OOMKilled {
		return r, fmt.Errorf("killed: out of memory (limit %d MB)", ci.HostConfig.Memory>>20)
	}
	return r, nil
}

func (d *Docker) kill(id string, sig syscall.Signal) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	_ = d.pool.Client.KillContainer(dc.KillContainerOptions{ID: id, Signal: dc.Signal(sig), Context: ctx})
}

// remove force-removes a container (by id or name) and forgets it.
func (d *Docker) remove(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	err := d.pool.Client.RemoveContainer(dc.RemoveContainerOptions{ID: id, Force: true, RemoveVolumes: true, Context: ctx})
	var nsc *dc.NoSuchContainer
	if err != nil && !errors.As(err, &nsc) && !strings.Contains(err.Error(), "No such container") {
		return fmt.Errorf("remove %s: %w", id, err)
	}
	d.untrack(id)
	return nil
}

func (d *Docker) track(id, name string) {
	d.mu.Lock()
	d.live[id] = name
	d.mu.Unlock()
}

func (d *Docker) untrack(id string) {
	d.mu.Lock()
	delete(d.live, id)
	d.mu.Unlock()
}

type dockerService struct {
	d        *Docker
	id, name string

	start time.Time

	mu      sync.Mutex
	stopped bool
	result  Result
	err     error
}

func (s *dockerService) Name() string { return s.name }

// Usage reads the container's CPU counters from the engine's stats.
func (s *dockerService) Usage(ctx context.Context) (user, system time.Duration, err error) {
	ch := make(chan *dc.Stats, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- s.d.pool.Client.Stats(dc.StatsOptions{ID: s.id, Stats: ch, Stream: false, Context: ctx, Timeout: 10 * time.Second})
	}()
	var last *dc.Stats
	for st := range ch {
		last = st
	}
	if err := <-errc; err != nil {
		return 0, 0, fmt.Errorf("stats %s: %w", s.name, err)
	}
	if last == nil {
		return 0, 0, fmt.Errorf("stats %s: no sample", s.name)
	}
	cu := last.CPUStats.CPUUsage
	return time.Duration(cu.UsageInUsermode), time.Duration(cu.UsageInKernelmode), nil
}

// Stop: SIGTERM (the wrapper forwards it), up to 10 s to exit, then SIGKILL;
// collect output and lifetime CPU; remove the container.
func (s *dockerService) Stop(ctx context.Context) (Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return s.result, s.err
	}
	s.stopped = true
	defer s.d.remove(s.id)
	s.d.kill(s.id, syscall.SIGTERM)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_, werr := s.d.pool.Client.WaitContainerWithContext(s.id, wctx)
	cancel()
	if werr != nil {
		s.d.kill(s.id, syscall.SIGKILL)
		wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s.d.pool.Client.WaitContainerWithContext(s.id, wctx)
		cancel()
	}
	s.result, s.err = s.d.collect(s.id, s.start)
	return s.result, s.err
}

// splitImage splits "repo[:tag]" (tag defaults to latest).
func splitImage(image string) (repo, tag string) {
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i:], "/") {
		return image, "latest"
	}
	return image[:i], image[i+1:]
}

// containerName is "rpcbed-<name>-<random>": readable in `docker ps`, unique.
func containerName(name string) string {
	var b [4]byte
	rand.Read(b[:])
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '-'
	}, name)
	if clean == "" {
		clean = "run"
	}
	return "rpcbed-" + clean + "-" + hex.EncodeToString(b[:])
}
