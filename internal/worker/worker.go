// Package worker is the driver's side of the client worker protocol
// (docs/report-format.md, "Worker mode"): a long-lived client process that runs
// one client run per line it is sent, and the pool of them a server group keeps.
package worker

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rpcbed/rpcbed/internal/runner"
)

// The worker protocol's lines (docs/report-format.md, "Worker mode").
const (
	workerReady = "#rpcbed-worker ready "
	workerDone  = "#rpcbed-worker done "
	workerBegin = "#rpcbed-worker begin "
	workerEnd   = "#rpcbed-worker end "
)

// workerStartTimeout bounds a worker's start-up until its ready line (a JVM on a
// busy 2-core machine).
const workerStartTimeout = 90 * time.Second

// Proc is one running client worker and the driver's side of its protocol.
type Proc struct {
	key   string
	id    string // key#N: the pool's Nth worker started, fresh ones after a death included
	w     runner.Worker
	lines chan string // stdout, line by line; closed at EOF
	runs  int
	dead  error // set once the worker is no use any more
}

// Start starts spec as a worker and waits for its ready line.
func Start(ctx context.Context, ws runner.WorkerStarter, key string, spec runner.Task) (*Proc, error) {
	w, err := ws.StartWorker(ctx, spec)
	if err != nil {
		return nil, err
	}
	return Attach(ctx, key, w)
}

// Attach reads a started worker's stdout line by line and waits for its
// ready line (a cluster run's task connections are workers too).
func Attach(ctx context.Context, key string, w runner.Worker) (*Proc, error) {
	p := &Proc{key: key, w: w, lines: make(chan string, 256)}
	go func() {
		defer close(p.lines)
		br := bufio.NewReaderSize(w.Stdout(), 64<<10)
		for {
			l, err := br.ReadString('\n')
			if l != "" {
				p.lines <- l
			}
			if err != nil {
				return
			}
		}
	}()
	t := time.NewTimer(workerStartTimeout)
	defer t.Stop()
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				r, _ := w.Stop(context.Background())
				return nil, fmt.Errorf("worker %s exited before it was ready (exit code %d): %s", key, r.ExitCode, runner.OneLine(runner.Tail(r.Stderr, 600)))
			}
			if strings.HasPrefix(l, workerReady) {
				return p, nil
			}
			// Anything before the greeting is noise (a JVM warning): keep waiting.
		case <-t.C:
			r, _ := w.Stop(context.Background())
			return nil, fmt.Errorf("worker %s: no ready line within %v: %s", key, workerStartTimeout, runner.OneLine(runner.Tail(r.Stderr, 600)))
		case <-ctx.Done():
			w.Stop(context.Background())
			return nil, ctx.Err()
		}
	}
}

// ErrDied marks a run the worker did not finish: it died or did not answer.
var ErrDied = errors.New("worker")

// Run sends one run and reads its report up to the done line. The result is what
// the one-shot client would have left: stdout (the report), the run's stderr
// lines, the exit code and the wall time; not the process's CPU over the run,
// which the report's window figure replaces (reading it costs the Docker engine a
// second or two per call, twice a run). When the
// worker dies or does not answer within timeout the error wraps ErrDied, the
// result holds what it printed, and the worker is marked dead.
func (p *Proc) Run(ctx context.Context, id string, args []string, timeout time.Duration) (runner.Result, error) {
	p.runs++
	errStart := len(p.w.Stderr())
	start := time.Now()
	var res runner.Result
	line := "run\t" + id + "\t" + strings.Join(args, "\t") + "\n"
	if _, err := io.WriteString(p.w.Stdin(), line); err != nil {
		p.dead = fmt.Errorf("%w %s: write: %v", ErrDied, p.key, err)
		res.Stderr = p.stderrSince(errStart, "")
		return res, p.dead
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	var out bytes.Buffer
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				res.Stdout, res.Wall = out.Bytes(), time.Since(start)
				<-p.w.Done()
				r, _ := p.w.Stop(context.Background())
				res.Stderr = p.stderrSince(errStart, "")
				p.dead = fmt.Errorf("%w %s died during run %s (exit code %d): %s", ErrDied, p.key, id, r.ExitCode, runner.OneLine(runner.Tail(res.Stderr, 600)))
				res.ExitCode = -1
				return res, p.dead
			}
			if rest, ok := strings.CutPrefix(l, workerDone); ok {
				f := strings.Fields(rest)
				if len(f) == 2 && f[0] == id && strings.HasPrefix(f[1], "exit=") {
					code, err := strconv.Atoi(strings.TrimPrefix(f[1], "exit="))
					if err != nil {
						code = -1
					}
					res.Stdout, res.ExitCode, res.Wall = out.Bytes(), code, time.Since(start)
					res.Stderr = p.stderrSince(errStart, id)
					return res, nil
				}
				// A done line for another id (a command it could not read): keep it.
			}
			out.WriteString(l)
		case <-t.C:
			res.Stdout, res.Wall, res.ExitCode = out.Bytes(), time.Since(start), -1
			res.Stderr = p.stderrSince(errStart, "")
			p.dead = fmt.Errorf("%w %s: no done line for run %s within %v: %s", ErrDied, p.key, id, timeout, runner.OneLine(runner.Tail(res.Stderr, 600)))
			p.Stop()
			return res, fmt.Errorf("%w: %w", p.dead, runner.ErrTimeout)
		case <-ctx.Done():
			p.dead = ctx.Err()
			p.Stop()
			return res, ctx.Err()
		}
	}
}

// stderrSince is the worker's stderr from offset: up to its end line for id (it
// may arrive a moment after the done line on the other pipe), without the
// protocol's own begin/end lines.
func (p *Proc) stderrSince(offset int, id string) []byte {
	var b []byte
	deadline := time.Now().Add(time.Second)
	for {
		all := p.w.Stderr()
		if offset > len(all) {
			offset = len(all)
		}
		b = all[offset:]
		if id == "" || bytes.Contains(b, []byte(workerEnd+id+"\n")) || time.Now().After(deadline) {
			break
		}
		select {
		case <-p.w.Done():
			deadline = time.Now()
		case <-time.After(10 * time.Millisecond):
		}
	}
	var keep bytes.Buffer
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if bytes.HasPrefix(l, []byte(workerBegin)) {
			continue
		}
		if bytes.HasPrefix(l, []byte(workerEnd)) {
			if id != "" && string(bytes.TrimSpace(l)) == strings.TrimSpace(workerEnd+id) {
				break
			}
			continue
		}
		keep.Write(l)
	}
	return keep.Bytes()
}

func (p *Proc) Stop() runner.Result {
	r, _ := p.w.Stop(context.Background())
	return r
}

// Pool keeps one worker per key (client x protocol) for one server group.
type Pool struct {
	mu      sync.Mutex
	workers map[string]*Proc
	started int             // workers started, fresh ones after a death included
	clients map[string]bool // clients a worker was started for at least once
}

func NewPool() *Pool {
	return &Pool{workers: map[string]*Proc{}, clients: map[string]bool{}}
}

// StartedOnce reports whether a worker of client ever started in this pool.
func (wp *Pool) StartedOnce(client string) bool {
	wp.mu.Lock()
	defer wp.mu.Unlock()
	return wp.clients[client]
}

// Current is the id of key's worker when it is alive, "" when there is none.
func (wp *Pool) Current(key string) string {
	if wp == nil {
		return ""
	}
	wp.mu.Lock()
	p := wp.workers[key]
	wp.mu.Unlock()
	if p == nil || p.dead != nil {
		return ""
	}
	select {
	case <-p.w.Done():
		return ""
	default:
		return p.id
	}
}

// Get returns the live worker for key, starting one when there is none (or the
// last one died).
func (wp *Pool) Get(ctx context.Context, ws runner.WorkerStarter, client, key string, spec runner.Task) (*Proc, error) {
	wp.mu.Lock()
	p := wp.workers[key]
	wp.mu.Unlock()
	if p != nil && p.dead == nil {
		select {
		case <-p.w.Done():
			p.dead = fmt.Errorf("%w %s exited between runs", ErrDied, key)
		default:
			return p, nil
		}
	}
	if p != nil {
		p.Stop()
	}
	p, err := Start(ctx, ws, key, spec)
	if err != nil {
		return nil, err
	}
	wp.mu.Lock()
	wp.workers[key] = p
	wp.started++
	p.id = fmt.Sprintf("%s#%d", key, wp.started)
	wp.clients[client] = true
	wp.mu.Unlock()
	return p, nil
}

// Close sends every worker EOF (quit) and waits for them.
func (wp *Pool) Close() {
	if wp == nil {
		return
	}
	wp.mu.Lock()
	ps := make([]*Proc, 0, len(wp.workers))
	for _, p := range wp.workers {
		ps = append(ps, p)
	}
	wp.workers = map[string]*Proc{}
	wp.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Add(1)
		go func() { defer wg.Done(); p.Stop() }()
	}
	wg.Wait()
}

// ID is the worker's id: key#N, the pool's Nth worker started.
func (p *Proc) ID() string { return p.id }

// Dead is why the worker is no use any more; nil while it is.
func (p *Proc) Dead() error { return p.dead }

// Done is closed when the worker's process has ended.
func (p *Proc) Done() <-chan struct{} { return p.w.Done() }
