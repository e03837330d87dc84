package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	dc "github.com/ory/dockertest/v3/docker"
)

// Worker is a long-lived program the driver talks to over pipes: commands on its
// stdin, answers on its stdout (docs/report-format.md, "Worker mode"). The runner
// only moves bytes; the protocol is the caller's.
type Worker interface {
	Name() string
	// Stdin is the program's standard input; Close is EOF for the program.
	Stdin() io.WriteCloser
	// Stdout streams what the program prints on stdout, as it prints it; it reads
	// EOF once the program has exited.
	Stdout() io.Reader
	// Stderr is everything the program printed on stderr so far.
	Stderr() []byte
	// Usage is the CPU the program (and its children) used so far.
	Usage(ctx context.Context) (user, system time.Duration, err error)
	// Done is closed when the program has exited.
	Done() <-chan struct{}
	// Stop closes stdin, gives the program a few seconds to exit, kills it, and
	// returns its stderr, exit code and lifetime CPU (Stdout stays empty: it was
	// streamed). Stop is safe to call twice.
	Stop(ctx context.Context) (Result, error)
}

// WorkerStarter is a runner that can start workers: Local and Docker both can.
type WorkerStarter interface {
	StartWorker(ctx context.Context, s Task) (Worker, error)
}

// workerGrace is how long a worker gets to exit after EOF on stdin.
const workerGrace = 5 * time.Second

// StartWorker starts s as a child process with its stdin and stdout on pipes.
// Nothing is waited for: the caller reads the worker's greeting.
func (l *Local) StartWorker(ctx context.Context, s Task) (Worker, error) {
	cmd, err := l.command(s)
	if err != nil {
		return nil, err
	}
	w := &localWorker{name: s.Name, cmd: cmd, done: make(chan struct{})}
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = pw, &w.errb
	w.stdout = pr
	w.start = time.Now()
	if err := startChild(cmd); err != nil {
		pr.Close()
		pw.Close()
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	pw.Close() // the child holds the write end; EOF once it exits
	go func() { cmd.Wait(); close(w.done) }()
	l.mu.Lock()
	if l.workers == nil {
		l.workers = map[*localWorker]struct{}{}
	}
	l.workers[w] = struct{}{}
	l.mu.Unlock()
	w.forget = func() {
		l.mu.Lock()
		delete(l.workers, w)
		l.mu.Unlock()
	}
	return w, nil
}

type localWorker struct {
	name   string
	cmd    *exec.Cmd
	start  time.Time
	stdin  io.WriteCloser
	stdout *os.File
	errb   syncBuffer
	done   chan struct{}
	forget func()

	mu      sync.Mutex
	stopped bool
	result  Result
}

func (w *localWorker) Name() string          { return w.name }
func (w *localWorker) Stdin() io.WriteCloser { return w.stdin }
func (w *localWorker) Stdout() io.Reader     { return w.stdout }
func (w *localWorker) Stderr() []byte        { return w.errb.Bytes() }
func (w *localWorker) Done() <-chan struct{} { return w.done }

func (w *localWorker) Usage(ctx context.Context) (user, system time.Duration, err error) {
	select {
	case <-w.done:
		return w.cmd.ProcessState.UserTime(), w.cmd.ProcessState.SystemTime(), nil
	default:
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", w.cmd.Process.Pid))
	if err != nil {
		return 0, 0, fmt.Errorf("usage %s: %w", w.name, err)
	}
	return procStatCPU(string(b))
}

// Stop: EOF on stdin (the protocol's quit), workerGrace to exit, then SIGKILL to
// the whole process group.
func (w *localWorker) Stop(ctx context.Context) (Result, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return w.result, nil
	}
	w.stopped = true
	w.stdin.Close()
	select {
	case <-w.done:
	case <-time.After(workerGrace):
	case <-ctx.Done():
	}
	syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
	<-w.done
	w.stdout.Close()
	forgetChild(w.cmd)
	w.result = result(w.cmd, w.start, nil, w.errb.Bytes())
	w.forget()
	return w.result, nil
}

// The Docker runner's wrapper, for workers: the same, except that the program
// keeps the container's stdin (bash gives a background job /dev/null otherwise).
var workerWrapper = strings.Replace(wrapper, `"$@" &`, `"$@" <&0 &`, 1)

// StartWorker starts s in a new container with an open stdin and attaches to its
// stdin, stdout and stderr before it starts, so no byte is missed.
func (d *Docker) StartWorker(ctx context.Context, s Task) (Worker, error) {
	repo, tag, err := d.checkSpec(s)
	if err != nil {
		return nil, err
	}
	name := containerName(s.Name)
	hc := &dc.HostConfig{}
	limit(hc, s)
	d.track(name, name)
	c, err := d.pool.Client.CreateContainer(dc.CreateContainerOptions{
		Name: name,
		Config: &dc.Config{
			Image: repo + ":" + tag, Env: s.Env,
			Entrypoint: []string{"/bin/bash", "-c", workerWrapper, "rpcbed-runner"},
			Cmd:        s.Args,
			OpenStdin:  true, StdinOnce: true, // EOF on our side is EOF for the program
			AttachStdin: true, AttachStdout: true, AttachStderr: true,
			Labels: d.labels(s.Name),
		},
		HostConfig: hc,
		Context:    ctx,
	})
	if err != nil {
		d.remove(name)
		return nil, fmt.Errorf("%s: create %s: %w", s.Name, s.Image, err)
	}
	d.untrack(name)
	d.track(c.ID, name)
	w := &dockerWorker{d: d, id: c.ID, name: s.Name, done: make(chan struct{})}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	w.stdin, w.stdout = inW, outR
	success := make(chan struct{})
	cw, err := d.pool.Client.AttachToContainerNonBlocking(dc.AttachToContainerOptions{
		Container: c.ID, InputStream: inR, OutputStream: outW, ErrorStream: &w.errb,
		Stdin: true, Stdout: true, Stderr: true, Stream: true, Success: success,
	})
	if err != nil {
		d.remove(c.ID)
		return nil, fmt.Errorf("%s: attach: %w", s.Name, err)
	}
	select {
	case <-success:
		success <- struct{}{}
	case <-time.After(30 * time.Second):
		cw.Close()
		d.remove(c.ID)
		return nil, fmt.Errorf("%s: attach: no answer from the engine", s.Name)
	}
	w.start = time.Now()
	if err := d.pool.Client.StartContainerWithContext(c.ID, nil, ctx); err != nil {
		cw.Close()
		d.remove(c.ID)
		return nil, fmt.Errorf("%s: start: %w", s.Name, err)
	}
	go func() {
		cw.Wait()
		outW.Close()
		// The attach stream ends with the container; the engine records the exit
		// a moment later.
		wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		d.pool.Client.WaitContainerWithContext(c.ID, wctx)
		cancel()
		close(w.done)
	}()
	w.closeAttach = func() { cw.Close(); inR.Close() }
	return w, nil
}

type dockerWorker struct {
	d           *Docker
	id, name    string
	start       time.Time
	stdin       *io.PipeWriter
	stdout      *io.PipeReader
	errb        syncBuffer
	done        chan struct{}
	closeAttach func()

	mu      sync.Mutex
	stopped bool
	result  Result
	err     error
}

func (w *dockerWorker) Name() string          { return w.name }
func (w *dockerWorker) Stdin() io.WriteCloser { return w.stdin }
func (w *dockerWorker) Stdout() io.Reader     { return w.stdout }
func (w *dockerWorker) Stderr() []byte        { return w.errb.Bytes() }
func (w *dockerWorker) Done() <-chan struct{} { return w.done }

func (w *dockerWorker) Usage(ctx context.Context) (user, system time.Duration, err error) {
	return (&dockerService{d: w.d, id: w.id, name: w.name}).Usage(ctx)
}

// Stop: EOF on stdin, workerGrace to exit, SIGKILL; the lifetime CPU comes from
// the wrapper's trailer on stderr; the container is removed.
func (w *dockerWorker) Stop(ctx context.Context) (Result, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return w.result, w.err
	}
	w.stopped = true
	defer w.d.remove(w.id)
	w.stdin.Close()
	select {
	case <-w.done:
	case <-time.After(workerGrace):
		w.d.kill(w.id, syscall.SIGKILL)
	case <-ctx.Done():
		w.d.kill(w.id, syscall.SIGKILL)
	}
	select {
	case <-w.done:
	case <-time.After(15 * time.Second):
		w.closeAttach()
		w.err = errors.New("attach stream did not end")
	}
	r := Result{Wall: time.Since(w.start)}
	r.Stderr, r.CPUUser, r.CPUSystem, _ = splitUsage(w.errb.Bytes())
	ictx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if ci, err := w.d.pool.Client.InspectContainerWithContext(w.id, ictx); err == nil {
		r.ExitCode = ci.State.ExitCode
		if ci.State.OOMKilled && w.err == nil {
			w.err = fmt.Errorf("killed: out of memory (limit %d MB)", ci.HostConfig.Memory>>20)
		}
	} else if w.err == nil {
		w.err = fmt.Errorf("inspect: %w", err)
	}
	w.result = r
	return w.result, w.err
}
