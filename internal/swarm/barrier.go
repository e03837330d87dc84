package swarm

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rpcbed/rpcbed/internal/cluster"
	"github.com/rpcbed/rpcbed/internal/runner"
)

// TaskScript is the command every client task runs (bash -c TaskScript
// rpcbed-task PROGRAM ARGS...): it dials the driver's barrier twice (one
// connection for the program's stdin and stdout, one for its stderr), names
// itself, answers the driver's clock pings with its own clock ($EPOCHREALTIME:
// no fork between the read and the answer), and on `start` runs the program with
// its stdin and stdout on the first connection and its stderr copied to the
// second and to the task's log. The program is a client worker
// (docs/report-format.md, "Worker mode"): the driver then holds every task's
// worker, which is ready once it greets, and releases all of them together by
// sending each its run. Exit codes 97-99: the barrier could not be reached or
// went away before start.
const TaskScript = `h=${RPCBED_BARRIER%:*} p=${RPCBED_BARRIER##*:}
exec 3<>"/dev/tcp/$h/$p" || { echo "rpcbed-task: cannot reach the driver at $RPCBED_BARRIER" >&2; exit 97; }
exec 4<>"/dev/tcp/$h/$p" || { echo "rpcbed-task: cannot reach the driver at $RPCBED_BARRIER" >&2; exit 97; }
echo "rpcbed-task $RPCBED_TOKEN $RPCBED_TASK $RPCBED_NODE out" >&3
echo "rpcbed-task $RPCBED_TOKEN $RPCBED_TASK $RPCBED_NODE err" >&4
cmd=
while read -r cmd rest <&3; do
  case $cmd in
  ping) echo "pong $EPOCHREALTIME" >&3 ;;
  start) break ;;
  *) echo "rpcbed-task: unexpected line from the driver: $cmd" >&2; exit 98 ;;
  esac
done
[ "$cmd" = start ] || { echo "rpcbed-task: the driver went away before start" >&2; exit 99; }
exec 5>&2
# A pipeline, not a process substitution: bash waits for tee, so nothing of the
# program's stderr is lost when the task's first process exits.
"$@" <&3 2>&1 >&3 3>&- | tee /dev/fd/5 >&4 3>&-
rc=${PIPESTATUS[0]}
exit $rc`

// TaskEnv is the environment a task needs besides its program's: the barrier's
// address and the job's token, and swarm's templates for the task and node ids.
func TaskEnv(barrier, token string) []string {
	return []string{"RPCBED_BARRIER=" + barrier, "RPCBED_TOKEN=" + token,
		"RPCBED_TASK={{.Task.ID}}", "RPCBED_NODE={{.Node.ID}}"}
}

// Barrier is the driver's side of the ready step: a listener the tasks dial.
type Barrier struct {
	ln net.Listener

	mu      sync.Mutex
	waiting map[string]chan *TaskConn // token -> its job's arrivals
	halves  map[string]*TaskConn      // token/task -> a task with one of its two connections
}

// Listen opens the barrier on addr (host:port; port 0 picks one).
func Listen(addr string) (*Barrier, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("barrier: %w", err)
	}
	b := &Barrier{ln: ln, waiting: map[string]chan *TaskConn{}, halves: map[string]*TaskConn{}}
	go b.serve()
	return b, nil
}

// Addr is the address the tasks dial.
func (b *Barrier) Addr() string { return b.ln.Addr().String() }

// Close stops listening; connections already handed out stay open.
func (b *Barrier) Close() error { return b.ln.Close() }

func (b *Barrier) serve() {
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		go b.hello(c)
	}
}

// helloMax bounds a task's first line: anything longer is not one of ours.
const helloMax = 512

// hello reads a connection's first line and pairs it with its task's other half.
func (b *Barrier) hello(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReaderSize(c, 4096)
	line, err := readLine(br, helloMax)
	c.SetReadDeadline(time.Time{})
	if err != nil {
		c.Close()
		return
	}
	f := strings.Fields(line)
	if len(f) != 5 || f[0] != "rpcbed-task" || (f[4] != "out" && f[4] != "err") {
		c.Close()
		return
	}
	token, task, node, half := f[1], f[2], f[3], f[4]
	b.mu.Lock()
	ch, ok := b.waiting[token]
	if !ok {
		b.mu.Unlock()
		c.Close() // not a job this barrier waits for (an old one's task)
		return
	}
	key := token + "/" + task
	t := b.halves[key]
	if t == nil {
		t = &TaskConn{Task: task, Node: node, done: make(chan struct{})}
		b.halves[key] = t
	}
	if half == "out" {
		t.out, t.outR = c, br
	} else {
		t.errc = c
		t.errDone = make(chan struct{})
		go t.copyStderr(br)
	}
	whole := t.out != nil && t.errc != nil
	if whole {
		delete(b.halves, key)
	}
	b.mu.Unlock()
	if whole {
		select {
		case ch <- t:
		default:
			t.Close() // more tasks than the job has: refuse the extra one
		}
	}
}

// readLine reads one line of at most max bytes, without its newline.
func readLine(br *bufio.Reader, max int) (string, error) {
	var b []byte
	for len(b) <= max {
		c, err := br.ReadByte()
		if err != nil {
			return "", err
		}
		if c == '\n' {
			return strings.TrimRight(string(b), "\r"), nil
		}
		b = append(b, c)
	}
	return "", errors.New("line too long")
}

// Expect registers a job's token before its tasks are created, so no early
// arrival is refused; Await then collects them. cancel forgets the token.
func (b *Barrier) Expect(token string, n int) (cancel func()) {
	b.mu.Lock()
	b.waiting[token] = make(chan *TaskConn, n)
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		ch := b.waiting[token]
		delete(b.waiting, token)
		for k, t := range b.halves {
			if strings.HasPrefix(k, token+"/") {
				t.Close()
				delete(b.halves, k)
			}
		}
		b.mu.Unlock()
		for {
			select {
			case t := <-ch:
				t.Close()
			default:
				return
			}
		}
	}
}

// Await waits until n tasks of token's job have connected, or ctx ends; it
// returns the ones that did.
func (b *Barrier) Await(ctx context.Context, token string, n int) ([]*TaskConn, error) {
	b.mu.Lock()
	ch := b.waiting[token]
	b.mu.Unlock()
	if ch == nil {
		return nil, fmt.Errorf("barrier: no job %s expected", token)
	}
	var ts []*TaskConn
	for len(ts) < n {
		select {
		case t := <-ch:
			ts = append(ts, t)
		case <-ctx.Done():
			return ts, ctx.Err()
		}
	}
	return ts, nil
}

// TaskConn is one connected task: its ids, its clock, and — after Start — its
// program's stdin/stdout (the first connection) and stderr (the second), as a
// runner.Worker.
type TaskConn struct {
	Task, Node string
	Clock      cluster.Clock

	out  net.Conn
	outR *bufio.Reader
	errc net.Conn
	errb struct {
		mu sync.Mutex
		b  bytes.Buffer
	}
	errDone  chan struct{} // closed when the stderr connection ends
	done     chan struct{}
	doneOnce sync.Once
	stopped  bool
}

func (t *TaskConn) copyStderr(br *bufio.Reader) {
	defer close(t.errDone)
	buf := make([]byte, 32<<10)
	for {
		n, err := br.Read(buf)
		if n > 0 {
			t.errb.mu.Lock()
			t.errb.b.Write(buf[:n])
			t.errb.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// Sync measures the task's clock: n pings, each answered with the task's
// $EPOCHREALTIME; the one with the shortest round trip gives the offset.
func (t *TaskConn) Sync(n int) (cluster.Clock, error) {
	best := cluster.Clock{RTTS: math.Inf(1)}
	t.out.SetDeadline(time.Now().Add(10 * time.Second))
	defer t.out.SetDeadline(time.Time{})
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if _, err := io.WriteString(t.out, "ping\n"); err != nil {
			return best, fmt.Errorf("clock ping: %w", err)
		}
		line, err := readLine(t.outR, 128)
		t1 := time.Now()
		if err != nil {
			return best, fmt.Errorf("clock ping: %w", err)
		}
		v, ok := strings.CutPrefix(line, "pong ")
		if !ok {
			return best, fmt.Errorf("clock ping: answer %q", line)
		}
		ts, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return best, fmt.Errorf("clock ping: answer %q: %v", line, err)
		}
		rtt := t1.Sub(t0).Seconds()
		mid := float64(t0.UnixNano())/1e9 + rtt/2
		if rtt < best.RTTS {
			best.RTTS, best.OffsetS = rtt, ts-mid
		}
		best.Pings++
	}
	t.Clock = best
	return best, nil
}

// Start tells the task to run its program: from now on the connection is the
// program's stdin and stdout.
func (t *TaskConn) Start() error {
	_, err := io.WriteString(t.out, "start\n")
	return err
}

// Close drops both connections.
func (t *TaskConn) Close() error {
	if t.out != nil {
		t.out.Close()
	}
	if t.errc != nil {
		t.errc.Close()
	}
	t.doneOnce.Do(func() { close(t.done) })
	return nil
}

// ---- runner.Worker ------------------------------------------------------------

func (t *TaskConn) Name() string {
	return "task " + cluster.ShortID(t.Task) + " on node " + cluster.ShortID(t.Node)
}

type halfCloser struct{ c net.Conn }

func (h halfCloser) Write(p []byte) (int, error) { return h.c.Write(p) }

// Close is EOF for the program (the worker protocol's quit).
func (h halfCloser) Close() error {
	if tc, ok := h.c.(*net.TCPConn); ok {
		return tc.CloseWrite()
	}
	return h.c.Close()
}

func (t *TaskConn) Stdin() io.WriteCloser { return halfCloser{t.out} }

type doneReader struct{ t *TaskConn }

func (d doneReader) Read(p []byte) (int, error) {
	n, err := d.t.outR.Read(p)
	if err != nil {
		d.t.doneOnce.Do(func() { close(d.t.done) })
	}
	return n, err
}

// Stdout streams the program's stdout; EOF once the task's connection ends.
func (t *TaskConn) Stdout() io.Reader { return doneReader{t} }

func (t *TaskConn) Stderr() []byte {
	t.errb.mu.Lock()
	defer t.errb.mu.Unlock()
	return bytes.Clone(t.errb.b.Bytes())
}

// Usage: a task's CPU is not readable from the driver; the client's report has
// its CPU over the window.
func (t *TaskConn) Usage(ctx context.Context) (time.Duration, time.Duration, error) {
	return 0, 0, errors.New("a swarm task's CPU is read from its report only")
}

func (t *TaskConn) Done() <-chan struct{} { return t.done }

// Stop is EOF on the program's stdin (quit), a few seconds for it to exit, then
// both connections are closed. The exit code is the task's (Cluster.Tasks):
// here -1 unless the program ended by itself.
func (t *TaskConn) Stop(ctx context.Context) (runner.Result, error) {
	if !t.stopped {
		t.stopped = true
		t.Stdin().Close()
		select {
		case <-t.done:
		case <-time.After(5 * time.Second):
		case <-ctx.Done():
		}
		// The stderr copy (tee) ends a moment after the program.
		select {
		case <-t.errDone:
		case <-time.After(2 * time.Second):
		}
		t.Close()
	}
	return runner.Result{Stderr: t.Stderr(), ExitCode: -1}, nil
}
