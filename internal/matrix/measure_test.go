package matrix

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/matrix/matrixtest"
	"github.com/rpcbed/rpcbed/internal/measure"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/runner"

	"github.com/rpcbed/rpcbed/internal/testbed"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/sample"
)

// fakeWorkers is the fake runner with a worker mode: each worker is a goroutine
// speaking the pipe protocol, answering each run as the fake one-shot client
// would. A run whose id starts with a prefix in die makes the worker exit
// mid-run; one in hang makes it stop answering.
type fakeWorkers struct {
	*matrixtest.Runner
	die, hang []string
	mu        sync.Mutex
	started   int
}

func (f *fakeWorkers) StartWorker(ctx context.Context, s runner.Task) (runner.Worker, error) {
	f.Mu.Lock()
	f.started++
	f.Mu.Unlock()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	w := &fakeWorker{stdin: inW, stdout: outR, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer outW.Close()
		fmt.Fprintf(outW, "#rpcbed-worker ready go 1\n")
		sc := bufio.NewScanner(inR)
		for sc.Scan() {
			f := strings.Split(sc.Text(), "\t")
			if f[0] != "run" || len(f) < 2 {
				fmt.Fprintf(outW, "#rpcbed-worker done - exit=2\n")
				continue
			}
			id := f[1]
			if hasPrefix(id, w.f().die) {
				w.errb.Write([]byte("#rpcbed-worker begin " + id + "\npanic: boom\n"))
				w.code = 9
				return
			}
			if hasPrefix(id, w.f().hang) {
				<-w.kill
				return
			}
			res, _ := w.f().Runner.Run(ctx, runner.Task{Name: id, Args: append([]string{"go-client"}, f[2:]...)})
			w.errb.Write([]byte("#rpcbed-worker begin " + id + "\n"))
			w.errb.Write(res.Stderr)
			outW.Write(res.Stdout)
			fmt.Fprintf(outW, "#rpcbed-worker done %s exit=%d\n", id, res.ExitCode)
			w.errb.Write([]byte("#rpcbed-worker end " + id + "\n"))
		}
	}()
	w.owner = f
	w.kill = make(chan struct{})
	return w, nil
}

func hasPrefix(s string, ps []string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

type fakeWorker struct {
	owner  *fakeWorkers
	stdin  *io.PipeWriter
	stdout *io.PipeReader
	errb   testbed.SyncBuffer
	done   chan struct{}
	kill   chan struct{}
	once   sync.Once
	code   int
}

func (w *fakeWorker) f() *fakeWorkers       { return w.owner }
func (w *fakeWorker) Name() string          { return "fake-worker" }
func (w *fakeWorker) Stdin() io.WriteCloser { return w.stdin }
func (w *fakeWorker) Stdout() io.Reader     { return w.stdout }
func (w *fakeWorker) Stderr() []byte        { return w.errb.Bytes() }
func (w *fakeWorker) Done() <-chan struct{} { return w.done }
func (w *fakeWorker) Usage(context.Context) (time.Duration, time.Duration, error) {
	return 10 * time.Millisecond, 0, nil
}
func (w *fakeWorker) Stop(context.Context) (runner.Result, error) {
	w.once.Do(func() { w.stdin.Close(); close(w.kill) })
	<-w.done
	return runner.Result{ExitCode: w.code, Stderr: w.errb.Bytes()}, nil
}

// A worker serves every run of its client x protocol; one that dies or hangs
// gives a failed repeat with its stderr, a fresh worker takes the next run, and
// the matrix goes on.
func TestExecuteWorkers(t *testing.T) {
	spec, err := plan.ParseSpec([]byte("clients: {go: [grpc, http]}\nitems: [2]\nconcurrency: [1, 4]\nload: {n: 100, timeout: 2s}\nrepeats: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	fw := &fakeWorkers{Runner: matrixtest.New(),
		die: []string{"go-grpc-datalist-2-c4-r1"}, hang: []string{"go-http-datalist-2-c1-r2"}}
	dir := t.TempDir()
	run, err := Execute(context.Background(), Options{Spec: spec, Dir: dir, Runner: fw, RunnerName: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]results.CellResult{}
	for _, c := range run.Cells {
		byName[c.Name] = c
	}
	for _, tc := range []struct {
		cell    string
		repeat  int
		ok      bool
		errPart string
	}{
		{"go-grpc-datalist-2-c1", 1, true, ""},
		{"go-grpc-datalist-2-c4", 1, false, "died during run go-grpc-datalist-2-c4-r1 (exit code 9): panic: boom"},
		{"go-grpc-datalist-2-c4", 2, true, ""},
		{"go-http-datalist-2-c1", 2, false, "no done line for run go-http-datalist-2-c1-r2 within 2s"},
		{"go-http-datalist-2-c4", 2, true, ""},
	} {
		c := byName[tc.cell]
		if len(c.Repeats) < tc.repeat {
			t.Errorf("%s: got %d repeats; want %d", tc.cell, len(c.Repeats), tc.repeat)
			continue
		}
		r := c.Repeats[tc.repeat-1]
		if (r.Report != nil) != tc.ok || !strings.Contains(r.Error, tc.errPart) || !r.Worker {
			t.Errorf("%s r%d: got report %v, error %q, worker %v; want report %v, error containing %q, worker",
				tc.cell, tc.repeat, r.Report != nil, r.Error, r.Worker, tc.ok, tc.errPart)
		}
	}
	// go-grpc and go-http, plus one fresh worker after each failure that a later
	// run of the same worker needs: the rounds' order is drawn from the run's seed,
	// so a failure may fall on its worker's last run, and then nothing replaces it.
	if want := 2 + laterRuns(run.Rounds, "go-grpc-datalist-2-c4", 1, "go-grpc-") +
		laterRuns(run.Rounds, "go-http-datalist-2-c1", 2, "go-http-"); fw.started != want {
		t.Errorf("got %d workers started; want %d (rounds %+v)", fw.started, want, run.Rounds)
	}
	// The raw file of a worker run holds the report and the run's own stderr only.
	out, errb, err := readRaw(filepath.Join(dir, results.RawDir, "go-grpc-datalist-2-c1-r2.txt"))
	if err != nil || !bytes.Contains(out, []byte("Requests per second:")) || bytes.Contains(out, []byte("#rpcbed-worker")) || bytes.Contains(errb, []byte("#rpcbed-worker")) {
		t.Errorf("raw file: got stdout %q stderr %q (%v); want the report without protocol lines", out, errb, err)
	}
}

// readReport: a repeat counts only when the client exited 0 with a report whose check
// is full and at least 99 % of whose calls succeeded; every reason is kept.
func TestJudge(t *testing.T) {
	rep := func(complete, failed int64, check string) []byte {
		r := report.Report{ServerHostname: "127.0.0.1", DocumentPath: "/x", Concurrency: 1, TimeTakenSeconds: 1,
			Complete: complete, Failed: failed, FailedBy: report.Failures{Connect: failed}, RequestsPerSecond: float64(complete),
			Rpcbed: &report.Extra{Client: "go", Protocol: "grpc", Call: "datalist", Loop: "closed", Check: check,
				Runtime: "go", CPUScope: report.ScopeWindow, WindowStart: 1, WindowEnd: 2, WarmupSettled: report.SettledFixed}}
		if check == "" { // report v1.0: none of the v1.1 keys
			x := r.Rpcbed
			x.Runtime, x.CPUScope, x.WindowStart, x.WindowEnd, x.WarmupSettled = "", "", 0, 0, ""
		}
		var b bytes.Buffer
		if err := report.Write(&b, r); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	for _, tc := range []struct {
		name   string
		res    runner.Result
		runErr error
		ok     bool
		want   []string
	}{
		{"good", runner.Result{Stdout: rep(1000, 0, "full")}, nil, true, nil},
		{"few failures are a note", runner.Result{Stdout: rep(1000, 5, "full")}, nil, true, nil},
		{"ab counts failed calls in Complete", runner.Result{Stdout: rep(98, 98, "full")}, nil, false, []string{"no call succeeded", "98 complete, 98 failed"}},
		{"under 99 %", runner.Result{Stdout: rep(1000, 20, "full")}, nil, false, []string{"20 of 1000 calls failed", "under 99 %"}},
		{"check length", runner.Result{Stdout: rep(1000, 0, "length")}, nil, false, []string{"Check: length"}},
		{"no check (report v1.0)", runner.Result{Stdout: rep(1000, 0, "")}, nil, false, []string{"missing the v1.1 keys"}},
		{"every reason kept", runner.Result{Stdout: rep(98, 98, "length")}, nil, false, []string{"Check: length", "no call succeeded"}},
		{"exit code", runner.Result{ExitCode: 1, Stderr: []byte("boom\n")}, nil, false, []string{"exit code 1: boom"}},
		{"timeout and exit code", runner.Result{ExitCode: 137}, runner.ErrTimeout, false, []string{"runner: timeout", "exit code 137"}},
		{"garbage", runner.Result{Stdout: []byte("nope\n")}, nil, false, []string{"report:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, why := measure.ReadReport(tc.res, tc.runErr, false)
			got := strings.Join(why, "; ")
			if (len(why) == 0) != tc.ok || (tc.ok && r == nil) {
				t.Fatalf("got reasons %q; want ok=%v", got, tc.ok)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("got reasons %q; want one containing %q", got, w)
				}
			}
		})
	}
}

// The server is checked before every repeat: one that died is restarted, the
// repeat says so, and the cell's figures come from good repeats only.
func TestExecuteRestartsADeadServer(t *testing.T) {
	spec, err := plan.ParseSpec([]byte("clients: {go: [grpc]}\nitems: [2]\nload: {n: 100}\nrepeats: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	fr := matrixtest.New()
	fr.AfterRun = func(name string) {
		if name == "go-grpc-datalist-2-c1-r1" {
			fr.StopServers()
		}
	}
	run, err := Execute(context.Background(), Options{Spec: spec, Dir: t.TempDir(), Runner: fr, RunnerName: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	c := run.Cells[0]
	if c.Status != results.StatusOK || len(c.Repeats) != 3 {
		t.Fatalf("got %s with %d repeats (%s); want ok with 3", c.Status, len(c.Repeats), c.Error)
	}
	r2 := c.Repeats[1]
	if !r2.Has(results.FlagServerRestarted) || r2.Report == nil || c.Repeats[2].Has(results.FlagServerRestarted) {
		t.Errorf("got flags r2 %v r3 %v; want server-restarted on r2 only, r2 measured", r2.Flags, c.Repeats[2].Flags)
	}
	if !c.Flagged(results.FlagServerRestarted) {
		t.Errorf("cell flags %v; want server-restarted", c.Summary.Flags)
	}
}

// A raw file that cannot be written fails the repeat: no figure without its raw report.
func TestRawWriteErrorFailsTheRepeat(t *testing.T) {
	spec, err := plan.ParseSpec([]byte("clients: {go: [grpc]}\nitems: [2]\nload: {n: 100}\nrepeats: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// A directory where the raw file of r1 goes: the rename onto it fails.
	if err := os.MkdirAll(filepath.Join(dir, results.RawDir, "go-grpc-datalist-2-c1-r1.txt", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	run, err := Execute(context.Background(), Options{Spec: spec, Dir: dir, Runner: matrixtest.New(), RunnerName: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	c := run.Cells[0]
	if c.Repeats[0].Report != nil || !strings.Contains(c.Repeats[0].Error, "raw file:") || c.Repeats[1].Report == nil {
		t.Errorf("got r1 %q (report %v), r2 report %v; want r1 failed on its raw file, r2 measured", c.Repeats[0].Error, c.Repeats[0].Report != nil, c.Repeats[1].Report != nil)
	}
}

// The invariant: a side busier than its cores + 5 % over the window is flagged
// with the figure and its CPU figures are left out of the medians.
func TestInvariantFlagsABusySide(t *testing.T) {
	spec, err := plan.ParseSpec([]byte("clients: {go: [grpc]}\nitems: [2]\nload: {n: 100}\nrepeats: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	fr := matrixtest.New()
	// r1's client claims 0.2 s of CPU over its 20 ms window: 10 cores.
	fr.ClientCPU = map[string]float64{"go-grpc-datalist-2-c1-r1": 0.2}
	run, err := Execute(context.Background(), Options{Spec: spec, Dir: t.TempDir(), Runner: fr, RunnerName: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	c := run.Cells[0]
	r1, r2 := c.Repeats[0], c.Repeats[1]
	if !r1.Has(results.FlagCPUInvariant) || !r1.Metrics.CPUNotUsed || r2.Has(results.FlagCPUInvariant) {
		t.Fatalf("got flags r1 %v r2 %v; want cpu-invariant on r1 only", r1.Flags, r2.Flags)
	}
	if !strings.Contains(strings.Join(r1.Notes, " "), "client busy 10.00 cores") {
		t.Errorf("notes %q; want the figure", r1.Notes)
	}
	if got := c.Stat(results.ClientCPU); got.N != 1 || got.Median != r2.Metrics.ClientCPUUs {
		t.Errorf("client CPU median over %d repeats = %v; want r2's only (%v)", got.N, got.Median, r2.Metrics.ClientCPUUs)
	}
	if !c.Flagged(results.FlagCPUInvariant) {
		t.Errorf("cell flags %v; want cpu-invariant", c.Summary.Flags)
	}
}

// The server's CPU per call is the interpolated CPU over the interpolated
// calls: a window holding 12.4 of a sampling period's 110 calls, on a server
// spending 25 µs a call, reads 25 µs, not 25 x 12.4/12 = 25.8 (the rounded count).
// TestExecuteRecordsFailedCells read 26 this way once under load, when a slow
// machine stretched the fake client's run between two /stats samples.
func TestServerCPUPerCallOverAFractionOfASample(t *testing.T) {
	s := []sample.Server{{T: 10, CPU: 0, Calls: 0}, {T: 11, CPU: 110 * 25e-6, Calls: 110}}
	for _, held := range []float64{0.6, 12.4, 25.4, 110} {
		w := &results.Window{Source: "report", StartUnix: 10, EndUnix: 10 + held/110, Seconds: held / 110}
		if err := measure.OverWindow(w, s, nil); err != nil {
			t.Fatal(err)
		}
		m := measure.Metrics(&report.Report{Complete: 100}, 0, w)
		if w.ServerCalls != int64(math.Round(held)) || math.Abs(m.ServerCPUUs-25) > 1e-6 || math.Abs(m.ServerCallsPerCPUS-1e6/25) > 1e-3 {
			t.Errorf("%v calls in the window: got %d calls, %v µs/call, %v calls per CPU-s; want %v, 25, 40000",
				held, w.ServerCalls, m.ServerCPUUs, m.ServerCallsPerCPUS, math.Round(held))
		}
	}
}

// laterRuns is 1 when a run of a cell named with prefix follows cell's run in
// round r, in the order the rounds ran; 0 when that run was its worker's last.
func laterRuns(rounds []results.Round, cell string, r int, prefix string) int {
	seen := false
	for _, rd := range rounds {
		for _, name := range rd.Order {
			switch {
			case rd.Index == r && name == cell:
				seen = true
			case seen && strings.HasPrefix(name, prefix):
				return 1
			}
		}
	}
	return 0
}
