// Package runner runs rpcbed programs — load clients to completion, servers until
// stopped — either in containers (Docker) or as local processes (Local), under the
// same contract: the program's stdout and stderr as raw bytes, its exit code, its
// wall time and the CPU it used.
//
// A runner never parses what a program prints; the report on stdout is parsed later
// by internal/report, so a saved run can be re-read by a newer parser.
package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Task is one program to run.
type Task struct {
	// Name names the run in logs and container names; a cell name such as
	// php-grpc-datalist-200-c50 is the intended value.
	Name string
	// Image is the container image (rpcbed/go, rpcbed/php:3f2a..., ...); the Docker
	// runner needs it, the Local runner ignores it.
	Image string
	// Args is the command line; Args[0] is looked up on the image's PATH (Docker)
	// or on Local.Path then PATH (Local): go-client, go-server, php-client, java-client.
	Args []string
	// Env adds KEY=VALUE pairs to the program's environment.
	Env []string
	// CPUs caps CPU time, as docker run --cpus (1.5 = one and a half cores); 0 = no cap.
	// Local cannot cap CPU time and ignores it.
	CPUs float64
	// CPUSet pins the program to CPUs, as docker run --cpuset-cpus ("0", "1", "0-1");
	// Local uses taskset when it is installed.
	CPUSet string
	// MemoryMB caps memory (swap included); 0 = no cap. Local ignores it.
	MemoryMB int
	// Timeout bounds Run (the program is killed when it expires) and, for Start, the
	// time the server has to pass Ready. 0: Run is bounded by ctx only; Start waits
	// DefaultStartTimeout.
	Timeout time.Duration
	// Ready, for Start, is polled until it returns nil: the server is then up.
	// nil means ready as soon as the program is running.
	Ready Check
	// Mounts are host directories the program reads (a run's certificates):
	// Docker mounts each read-only at the same path; Local needs nothing.
	Mounts []string
}

// DefaultStartTimeout is how long Start waits for Ready when Task.Timeout is 0.
const DefaultStartTimeout = 30 * time.Second

// Result is what one finished program left behind.
type Result struct {
	Stdout, Stderr []byte
	// ExitCode is the program's exit status; 128+N when signal N ended it.
	ExitCode int
	// CPUUser and CPUSystem cover the program and every child it waited for.
	CPUUser, CPUSystem time.Duration
	// Wall is the time from the program's start to its exit.
	Wall time.Duration
}

// Runner runs programs. Run returns a nil error whenever the program ran to its end,
// whatever its exit code: check Result.ExitCode. On a timeout Run returns what it
// collected and an error wrapping ErrTimeout; on a cancelled ctx, ctx's error.
type Runner interface {
	Run(ctx context.Context, s Task) (Result, error)
	// Start starts a long-running program and returns once Ready passes; if the
	// program exits or Ready does not pass in time, everything is cleaned up and the
	// error carries the program's output.
	Start(ctx context.Context, s Task) (Service, error)
	// Close stops and removes everything this runner started that is still alive.
	Close() error
}

// Service is a running server.
type Service interface {
	Name() string
	// Usage is the CPU the server has used so far; diff two calls around a cell.
	Usage(ctx context.Context) (user, system time.Duration, err error)
	// Stop sends SIGTERM, waits a little, kills, and returns the whole output and the
	// CPU used over the server's lifetime. Stop is safe to call twice.
	Stop(ctx context.Context) (Result, error)
}

// ErrTimeout is wrapped by the error Run returns when Task.Timeout expired.
var ErrTimeout = errors.New("runner: timeout")

// Check reports whether a server is ready: nil when it is.
type Check func(ctx context.Context) error

// TCPCheck is ready when every address accepts a TCP connection.
func TCPCheck(addrs ...string) Check {
	return func(ctx context.Context) error {
		var d net.Dialer
		for _, a := range addrs {
			c, err := d.DialContext(ctx, "tcp", a)
			if err != nil {
				return err
			}
			c.Close()
		}
		return nil
	}
}

// HTTPCheck is ready when GET url answers 2xx.
func HTTPCheck(url string) Check {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return nil
	}
}

// startedOrStopped waits until s.Ready passes on the started svc (alive tells
// whether it still runs), within s.Timeout (DefaultStartTimeout when 0); when it
// does not, svc is stopped and the error quotes its stderr's tail.
func startedOrStopped(ctx context.Context, s Task, svc Service, alive func(context.Context) error) (Service, error) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := waitReady(rctx, s.Ready, func() error { return alive(rctx) }); err != nil {
		r, _ := svc.Stop(context.Background())
		return nil, fmt.Errorf("start %s: %w; stderr: %s", s.Name, err, Tail(r.Stderr, 2000))
	}
	return svc, nil
}

// waitReady polls p until it passes, ctx ends or alive reports the program gone.
func waitReady(ctx context.Context, p Check, alive func() error) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if ctx.Err() != nil {
			return fmt.Errorf("not ready: %w (last check: %v)", ctx.Err(), last)
		}
		if err := alive(); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("not ready: %w (last check: %v)", ctx.Err(), last)
			}
			return err
		}
		if p == nil {
			return nil
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		last = p(pctx)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready: %w (last check: %v)", ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// The Docker runner starts every program under this bash wrapper (bash is in every
// Debian image). It forwards SIGTERM/SIGINT to the program and, once the program
// has exited, prints the CPU time of its waited-for children — the program and its
// descendants — with bash's `times`, after a marker, as the last lines of stderr.
// That is the only exact CPU figure for a container that has exited: its cgroup
// is gone by then. splitUsage takes those lines off stderr again.
const wrapper = `"$@" & pid=$!
trap 'kill -TERM $pid 2>/dev/null' TERM INT
wait $pid; rc=$?
while kill -0 $pid 2>/dev/null; do wait $pid; rc=$?; done
echo ` + usageMarker + ` >&2
times >&2
exit $rc`

const usageMarker = "rpcbed-runner-usage:"

// splitUsage removes the wrapper's trailer from stderr and returns the children's
// user and system time it reported. ok is false when the trailer is missing (the
// wrapper was killed).
func splitUsage(stderr []byte) (rest []byte, user, sys time.Duration, ok bool) {
	i := bytes.LastIndex(stderr, []byte(usageMarker+"\n"))
	if i < 0 || (i > 0 && stderr[i-1] != '\n') {
		return stderr, 0, 0, false
	}
	lines := strings.Split(strings.TrimSpace(string(stderr[i+len(usageMarker)+1:])), "\n")
	if len(lines) != 2 {
		return stderr, 0, 0, false
	}
	// `times` prints the shell's own user/system line, then its children's.
	f := strings.Fields(lines[1])
	if len(f) != 2 {
		return stderr, 0, 0, false
	}
	u, err1 := parseBashTime(f[0])
	s, err2 := parseBashTime(f[1])
	if err1 != nil || err2 != nil {
		return stderr, 0, 0, false
	}
	return stderr[:i], u, s, true
}

// parseBashTime reads bash's `times` format, e.g. 1m2.345s.
func parseBashTime(s string) (time.Duration, error) {
	m, sec, ok := strings.Cut(s, "m")
	if !ok || !strings.HasSuffix(sec, "s") {
		return 0, fmt.Errorf("bad time %q", s)
	}
	d, err := time.ParseDuration(m + "m" + sec)
	if err != nil {
		return 0, fmt.Errorf("bad time %q: %v", s, err)
	}
	return d, nil
}

// syncBuffer is a bytes.Buffer safe for one writer and concurrent snapshots.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.b.Bytes())
}

// Tail is the last n bytes of b, trimmed, for error messages.
func Tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}

// OneLine folds s's white space into single spaces and cuts it at 400 bytes, so
// an error quoting a program's output stays one line of a log or a table.
func OneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 400 {
		s = s[:400] + "..."
	}
	return s
}

// LastLine is the last line of b that is not blank (OneLine), "(no stderr)" when
// there is none: what a failed program last said.
func LastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return OneLine(l)
		}
	}
	return "(no stderr)"
}

// exitError describes a program that ended before it should have.
func exitError(name string, r Result) error {
	return fmt.Errorf("%s exited with code %d; stderr: %s", name, r.ExitCode, Tail(r.Stderr, 2000))
}

// CoresAllowed is how many cores a program started with s may keep busy under r:
// the size of s.CPUSet or s.CPUs, whichever is smaller, where r enforces them
// (Docker: both; Local: the CPU set, when taskset is installed); all online cores
// otherwise. The CPU invariant (docs/method.md, section 3) divides by it.
func CoresAllowed(r Runner, s Task) float64 {
	n := float64(OnlineCores())
	enforceSet, enforceQuota := false, false
	switch r.(type) {
	case *Docker:
		enforceSet, enforceQuota = true, true
	case *Local:
		_, err := exec.LookPath("taskset")
		enforceSet = err == nil
	}
	if enforceSet && s.CPUSet != "" {
		if k := CPUSetSize(s.CPUSet); k > 0 && float64(k) < n {
			n = float64(k)
		}
	}
	if enforceQuota && s.CPUs > 0 && s.CPUs < n {
		n = s.CPUs
	}
	return n
}

// CPUSetSize counts the CPUs of a list such as "0", "0-1" or "0,2-3"; 0 when it
// does not parse.
func CPUSetSize(set string) int {
	n := 0
	for _, part := range strings.Split(set, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}

// OnlineCores is the machine's online CPU count (/sys/devices/system/cpu/online),
// or Go's NumCPU where that file is missing.
func OnlineCores() int {
	if b, err := os.ReadFile("/sys/devices/system/cpu/online"); err == nil {
		if n := CPUSetSize(strings.TrimSpace(string(b))); n > 0 {
			return n
		}
	}
	return runtime.NumCPU()
}
