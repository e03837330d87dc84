package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Local runs programs as child processes of this one: the fallback when no engine
// answers. Same contract as Docker, with two differences: CPUs and MemoryMB cannot
// be enforced without a container and are ignored; CPUSet uses taskset when it is
// installed. CPU figures come from the child's rusage.
type Local struct {
	// Path lists directories searched for Args[0] before PATH (e.g. bin/).
	Path []string
	// Dir is the working directory; "" = this process's.
	Dir string

	mu      sync.Mutex
	live    map[*localService]struct{}
	workers map[*localWorker]struct{}
}

// Run runs s to completion.
func (l *Local) Run(ctx context.Context, s Task) (Result, error) {
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.Timeout)
		defer cancel()
	}
	cmd, err := l.command(s)
	if err != nil {
		return Result{}, err
	}
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := startChild(cmd); err != nil {
		return Result{}, fmt.Errorf("%s: %w", s.Name, err)
	}
	defer forgetChild(cmd)
	done := make(chan struct{})
	go func() {
		// The whole process group goes: a client's forked workers too.
		select {
		case <-ctx.Done():
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		case <-done:
		}
	}()
	werr := cmd.Wait()
	close(done)
	r := result(cmd, start, out.Bytes(), errb.Bytes())
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && s.Timeout > 0:
		return r, fmt.Errorf("%s: %w after %v", s.Name, ErrTimeout, s.Timeout)
	case ctx.Err() != nil:
		return r, fmt.Errorf("%s: %w", s.Name, ctx.Err())
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		return r, fmt.Errorf("%s: %w", s.Name, werr)
	}
	return r, nil
}

// Start starts s and waits for s.Ready.
func (l *Local) Start(ctx context.Context, s Task) (Service, error) {
	cmd, err := l.command(s)
	if err != nil {
		return nil, err
	}
	svc := &localService{l: l, name: s.Name, cmd: cmd, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &svc.out, &svc.err
	svc.start = time.Now()
	if err := startChild(cmd); err != nil {
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	go func() { svc.waitErr = cmd.Wait(); close(svc.exited) }()
	l.mu.Lock()
	if l.live == nil {
		l.live = map[*localService]struct{}{}
	}
	l.live[svc] = struct{}{}
	l.mu.Unlock()

	return startedOrStopped(ctx, s, svc, func(context.Context) error {
		select {
		case <-svc.exited:
			return fmt.Errorf("exited with code %d", exitCode(cmd))
		default:
			return nil
		}
	})
}

// Close stops every service and worker still running.
func (l *Local) Close() error {
	l.mu.Lock()
	svcs := make([]*localService, 0, len(l.live))
	for s := range l.live {
		svcs = append(svcs, s)
	}
	ws := make([]*localWorker, 0, len(l.workers))
	for w := range l.workers {
		ws = append(ws, w)
	}
	l.mu.Unlock()
	for _, s := range svcs {
		s.Stop(context.Background())
	}
	for _, w := range ws {
		w.Stop(context.Background())
	}
	return nil
}

func (l *Local) command(s Task) (*exec.Cmd, error) {
	if len(s.Args) == 0 {
		return nil, fmt.Errorf("%s: no command", s.Name)
	}
	prog, err := l.lookPath(s.Args[0])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	argv := append([]string{prog}, s.Args[1:]...)
	if s.CPUSet != "" {
		// taskset execs the program: the rusage is still the program's own.
		if ts, err := exec.LookPath("taskset"); err == nil {
			argv = append([]string{ts, "-c", s.CPUSet}, argv...)
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), s.Env...)
	cmd.Dir = l.Dir
	// Its own process group, so a kill reaches every child it forked; startChild
	// makes it die with this process.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	return cmd, nil
}

func (l *Local) lookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range l.Path {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return exec.LookPath(name)
}

func result(cmd *exec.Cmd, start time.Time, stdout, stderr []byte) Result {
	r := Result{Stdout: stdout, Stderr: stderr, Wall: time.Since(start), ExitCode: exitCode(cmd)}
	if ps := cmd.ProcessState; ps != nil {
		r.CPUUser, r.CPUSystem = ps.UserTime(), ps.SystemTime()
	}
	return r
}

// exitCode is the shell's convention: the status, or 128+N for signal N.
func exitCode(cmd *exec.Cmd) int {
	ps := cmd.ProcessState
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

type localService struct {
	l      *Local
	name   string
	cmd    *exec.Cmd
	start  time.Time
	out    syncBuffer
	err    syncBuffer
	exited chan struct{}

	waitErr error

	mu      sync.Mutex
	stopped bool
	result  Result
}

func (s *localService) Name() string { return s.name }

// LocalProcess is what a Local service is beyond a Service: its process, for
// a tool that attaches to it (callgrind_control, /proc/PID/io), and whether it
// has exited.
type LocalProcess interface {
	Service
	PID() int
	// Exited is closed once the process has exited.
	Exited() <-chan struct{}
}

func (s *localService) PID() int                { return s.cmd.Process.Pid }
func (s *localService) Exited() <-chan struct{} { return s.exited }

// Usage reads the process's CPU counters from /proc (its own and its reaped
// children's, in clock ticks).
func (s *localService) Usage(ctx context.Context) (user, system time.Duration, err error) {
	select {
	case <-s.exited:
		return s.cmd.ProcessState.UserTime(), s.cmd.ProcessState.SystemTime(), nil
	default:
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0, 0, fmt.Errorf("usage %s: %w", s.name, err)
	}
	return procStatCPU(string(b))
}

// procStatCPU reads utime+cutime and stime+cstime from a /proc/PID/stat line.
func procStatCPU(stat string) (user, system time.Duration, err error) {
	// The command name (field 2) may hold spaces; fields count from after its ')'.
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("bad /proc stat line")
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state); utime, stime, cutime, cstime are fields 14-17.
	if len(f) < 15 {
		return 0, 0, fmt.Errorf("short /proc stat line")
	}
	var t [4]int64
	for k := range t {
		t[k], err = strconv.ParseInt(f[11+k], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("bad /proc stat field: %v", err)
		}
	}
	const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	return time.Duration(t[0]+t[2]) * tick, time.Duration(t[1]+t[3]) * tick, nil
}

// Stop: SIGTERM to the process group, up to 10 s to exit, then SIGKILL.
func (s *localService) Stop(ctx context.Context) (Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return s.result, nil
	}
	s.stopped = true
	pgid := s.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-s.exited
	case <-ctx.Done():
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-s.exited
	}
	s.result = result(s.cmd, s.start, s.out.Bytes(), s.err.Bytes())
	forgetChild(s.cmd)
	s.l.mu.Lock()
	delete(s.l.live, s)
	s.l.mu.Unlock()
	return s.result, nil
}
