package costrun

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/cost"
	"github.com/rpcbed/rpcbed/internal/cost/costplan"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/report"
)

// clientSide runs the client under callgrind twice against a native server.
func (e *executor) clientSide(ctx context.Context, c costplan.Cell) (short, long cost.Segment, allocs [2]float64, err error) {
	srv, err := e.nativeServer(ctx, serverKind(c))
	if err != nil {
		return short, long, allocs, err
	}
	addr, done, err := e.delayed(srv.addrs[c.Protocol], false)
	if err != nil {
		return short, long, allocs, err
	}
	defer done()
	for i, n := range []int64{c.Calls.Short, c.Calls.Long} {
		dir := filepath.Join(e.o.Dir, "raw", cost.RawName(c.ID()), strconv.FormatInt(n, 10))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return short, long, allocs, err
		}
		removeProfiles(dir, "callgrind.") // an interrupted earlier attempt's files
		before, err := readIO(srv.svc.PID())
		if err != nil {
			return short, long, allocs, err
		}
		argv, env, err := e.clientCommand(ctx, c, addr, n)
		if err != nil {
			return short, long, allocs, err
		}
		vg := append([]string{"valgrind"}, ValgrindArgs()...)
		vg = append(vg, "--callgrind-out-file="+filepath.Join(dir, "callgrind.%p.out"))
		full := e.wrap(e.o.ClientCPU, true, append(vg, argv...))
		rep, err := runClient(ctx, full, env, dir, n, clientTimeout(c, n))
		if err != nil {
			return short, long, allocs, err
		}
		after, err := readIO(srv.svc.PID())
		if err != nil {
			return short, long, allocs, err
		}
		seg, profiles, err := e.runSegment(dir, n, rep)
		if err != nil {
			return short, long, allocs, err
		}
		// The native server read what the client wrote, and wrote what it read.
		seg.BytesIn = after.wchar - before.wchar
		seg.BytesOut = after.rchar - before.rchar
		allocs[i] = cost.Allocations(measured(profiles))
		saveSegment(dir, n, seg, allocs[i])
		if i == 0 {
			short = seg
		} else {
			long = seg
		}
	}
	return short, long, allocs, nil
}

// firstCall makes one call of c from its native client, outside every
// measured window (its report and log in raw/CELL_SIDE/first).
func (e *executor) firstCall(ctx context.Context, c costplan.Cell, addr string) error {
	dir := filepath.Join(e.o.Dir, "raw", cost.RawName(c.ID()), "first")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	argv, env, err := e.clientCommand(ctx, c, addr, 1)
	if err != nil {
		return err
	}
	if _, err := runClient(ctx, e.wrap(e.o.ClientCPU, false, argv), env, dir, 1, clientTimeout(c, 1)); err != nil {
		return fmt.Errorf("the unmeasured first call: %w", err)
	}
	return nil
}

// warmupCalls are the calls a client made before its measured window with no
// warm-up asked for: php-client's caller calls until its parent's start command
// arrives, 0 to 3 of them in the runs measured (the report's "Warm-up: ..., N
// calls excluded"), as many as its timing allows. They are calls the measured
// side made or served like any other, so a run's calls are n plus these: counted
// as n alone, php-grpc-datalist-200-c1's server side served 62 DataList calls in
// one 60-call run and 61 in another, 2 % apart per call.
func warmupCalls(rep report.Report) int64 {
	if rep.Rpcbed == nil || rep.Rpcbed.WarmupCalls < 0 {
		return 0
	}
	return rep.Rpcbed.WarmupCalls
}

// delayed gives the address the native peer should use: addr itself, or a
// delayProxy's in front of it when the spec sets a read delay (toServer: the
// server side is measured, so the client's bytes are delayed).
func (e *executor) delayed(addr string, toServer bool) (string, func(), error) {
	d := e.o.Spec.ReadDelayDuration()
	if d <= 0 {
		return addr, func() {}, nil
	}
	p, err := startDelayProxy(addr, d, toServer)
	if err != nil {
		return "", nil, err
	}
	return p.addr(), p.close, nil
}

// clientCommand is the client's command line for n calls, no warm-up (the
// short run's calls are the warm-up the marginal cost cancels), c=1.
func (e *executor) clientCommand(ctx context.Context, c costplan.Cell, addr string, n int64) (argv, env []string, err error) {
	r := plan.ClientRun{Load: plan.Load{N: n}, Addr: addr, Timeout: 120 * time.Second}
	if c.Security != "" {
		r.CA = e.o.certs.CA
	}
	args := c.Matrix().ClientArgs(r)
	cl, _ := plan.ClientOf(c.Client)
	switch cl.Language {
	case "go":
		bin := filepath.Join(e.o.Root, "bin", "go-client")
		if _, err := os.Stat(bin); err != nil {
			return nil, nil, &notMeasured{"bin/go-client not built (make build)"}
		}
		return append([]string{bin}, args...), e.o.goEnv(), nil
	case "php":
		script := filepath.Join(e.o.Root, "php-client", "bin", "client.php")
		if _, err := os.Stat(script); err != nil {
			return nil, nil, &notMeasured{"php-client/bin/client.php not found"}
		}
		args = append(slices.Clone(cl.Flags), args...)
		// client.php restarts PHP with the protocol's extensions: that restart's
		// command line, asked of client.php's own code natively, is what runs
		// under callgrind (one PHP start-up under valgrind instead of two).
		host, err := e.phpHost(ctx, script, args)
		if err != nil {
			return nil, nil, err
		}
		return append(append(host, script), args...), []string{"RPCBED_PHP_CLIENT_HOST=1"}, nil
	}
	return nil, nil, &notMeasured{c.Client + "-" + c.Protocol + "'s client: rpcbed cost starts go and php callers only"}
}

// phpHost is the PHP command line client.php restarts itself with for args
// (Extensions::phpArgs).
func (e *executor) phpHost(ctx context.Context, script string, args []string) ([]string, error) {
	code := `require getenv('RPCBED_AUTOLOAD'); $cfg = Rpcbed\Client\Config::parse(array_slice($argv, 1)); echo json_encode([PHP_BINARY, ...Rpcbed\Client\Extensions::phpArgs($cfg)]);`
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "php", append([]string{"-n", "-r", code, "--"}, args...)...)
	cmd.Env = append(os.Environ(), "RPCBED_AUTOLOAD="+filepath.Join(filepath.Dir(filepath.Dir(script)), "autoload.php"))
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("php-client's command line: %v", err)
	}
	var argv []string
	if err := json.Unmarshal(out, &argv); err != nil || len(argv) < 2 {
		return nil, fmt.Errorf("php-client's command line: %q", out)
	}
	return argv, nil
}

func clientTimeout(c costplan.Cell, n int64) time.Duration {
	// Under callgrind a 5000-item pure-PHP call takes tens of seconds.
	return 10*time.Minute + time.Duration(n)*time.Second
}

// runClient runs a client to its end, keeps its report and log in dir, and
// checks that it made exactly n calls, none failed.
func runClient(ctx context.Context, argv, env []string, dir string, n int64, timeout time.Duration) (report.Report, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	_ = os.WriteFile(filepath.Join(dir, "report.txt"), stdout.Bytes(), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "stderr.txt"), stderr.Bytes(), 0o644)
	if err != nil {
		return report.Report{}, fmt.Errorf("%s: %v: %s", filepath.Base(argv[0]), err, lastProgramLine(stderr.String()))
	}
	rep, err := report.Parse(bytes.NewReader(stdout.Bytes()))
	if err != nil {
		return rep, fmt.Errorf("client report: %v", err)
	}
	if rep.Complete != n || rep.Failed != 0 {
		return rep, fmt.Errorf("client made %d calls, %d failed: want %d, none failed", rep.Complete, rep.Failed, n)
	}
	return rep, nil
}

// lastProgramLine is the program's own last line of output under valgrind: the
// last non-empty line that is not valgrind's (==PID== and -- lines), cut at 300
// characters. runner.LastLine would return valgrind's summary instead.
func lastProgramLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l != "" && !strings.HasPrefix(l, "==") && !strings.HasPrefix(l, "--") {
			if len(l) > 300 {
				l = l[:300] + "..."
			}
			return l
		}
	}
	return "(no stderr)"
}
