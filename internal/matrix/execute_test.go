package matrix

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/runner"
)

// fakeRunner stands in for Docker/Local: servers are in-process listeners that
// answer /healthz and /stats, clients print a synthetic report. Its runs and
// outcomes are scripted by cell (or verify) name.
type fakeRunner struct {
	mu    sync.Mutex
	runs  []string
	calls map[string]int64 // "proto/call" -> calls served
	// outcome maps a run name prefix to what the client does: "exit3", "exit1",
	// "garbage" (stdout without a report).
	outcome map[string]string
	// cancelAfter cancels cancel once this many timed runs (not verify) finished.
	cancelAfter int
	cancel      context.CancelFunc
	timed       int
}

func newFakeRunner() *fakeRunner {
	return &fakeRunner{calls: map[string]int64{}, outcome: map[string]string{}}
}

func flagValue(args []string, name string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == name {
			return args[i+1]
		}
	}
	return ""
}

func (f *fakeRunner) Run(ctx context.Context, s runner.Spec) (runner.Result, error) {
	if err := ctx.Err(); err != nil {
		return runner.Result{}, err
	}
	f.mu.Lock()
	f.runs = append(f.runs, s.Name)
	outcome := ""
	for prefix, o := range f.outcome {
		if strings.HasPrefix(s.Name, prefix) {
			outcome = o
		}
	}
	f.mu.Unlock()
	res := runner.Result{CPUUser: 40 * time.Millisecond, CPUSystem: 10 * time.Millisecond, Wall: time.Second}
	switch outcome {
	case "exit3":
		res.ExitCode, res.Stderr = 3, []byte("go-client: verify: got 3 items; want 2\n")
		return res, nil
	case "exit1":
		res.ExitCode, res.Stderr = 1, []byte("boom\n")
		return res, nil
	case "garbage":
		res.Stdout = []byte("this is not a report\n")
		return res, nil
	}
	proto, call := flagValue(s.Args, "-proto"), flagValue(s.Args, "-call")
	n, _ := strconv.ParseInt(flagValue(s.Args, "-n"), 10, 64)
	if n == 0 {
		n = 1000
	}
	items, _ := strconv.Atoi(flagValue(s.Args, "-items"))
	c, _ := strconv.Atoi(flagValue(s.Args, "-c"))
	r := report.Report{
		ServerHostname: "127.0.0.1", DocumentPath: "/x", DocumentLength: int64(28 * items),
		Concurrency: c, TimeTakenSeconds: 0.5, Complete: n, RequestsPerSecond: float64(n) / 0.5,
		Rpcbed: &report.Extra{Client: "go", Protocol: proto, Call: call, Items: items, Connections: 1, Loop: "closed",
			P50Us: 100, P90Us: 150, P99Us: 300, P999Us: 400, MeanUs: 110, MaxUs: 500,
			WarmupCalls: 9, CPUUserSeconds: 0.02, CPUSystemSeconds: 0.01,
			Versions: map[string]string{"go": "go1.26.8"}},
	}
	var out bytes.Buffer
	if err := report.Write(&out, r); err != nil {
		return res, err
	}
	res.Stdout = out.Bytes()
	f.mu.Lock()
	f.calls[proto+"/"+call] += n + 10
	if !strings.HasPrefix(s.Name, "verify-") {
		f.timed++
		if f.cancelAfter > 0 && f.timed == f.cancelAfter {
			f.cancel()
		}
	}
	f.mu.Unlock()
	return res, nil
}

func (f *fakeRunner) Start(ctx context.Context, s runner.Spec) (runner.Service, error) {
	svc := &fakeService{name: s.Name}
	listen := func(addr string) error {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return err
		}
		svc.listeners = append(svc.listeners, l)
		return nil
	}
	if addr := flagValue(s.Args, "-http"); addr != "" {
		if err := listen(addr); err != nil {
			return nil, err
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {})
		mux.HandleFunc("/stats", func(w http.ResponseWriter, _ *http.Request) {
			f.mu.Lock()
			calls := map[string]map[string]map[string]int64{}
			var total int64
			for k, v := range f.calls {
				p, c, _ := strings.Cut(k, "/")
				if calls[p] == nil {
					calls[p] = map[string]map[string]int64{}
				}
				calls[p][c] = map[string]int64{"requests": v}
				total += v
			}
			f.mu.Unlock()
			json.NewEncoder(w).Encode(map[string]any{
				"cpu_user_s": float64(total) * 20e-6, "cpu_system_s": float64(total) * 5e-6,
				"calls": calls, "versions": map[string]string{"go": "go1.26.8"},
			})
		})
		go http.Serve(svc.listeners[0], mux)
		for _, fl := range []string{"-grpc", "-thrift"} {
			if err := listen(flagValue(s.Args, fl)); err != nil {
				svc.Stop(ctx)
				return nil, err
			}
		}
	} else if port := flagValue(s.Args, "-port"); port != "" {
		if err := listen("127.0.0.1:" + port); err != nil {
			return nil, err
		}
		go func() {
			for {
				c, err := svc.listeners[0].Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	if s.Ready != nil {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		for s.Ready(rctx) != nil {
			if rctx.Err() != nil {
				svc.Stop(ctx)
				return nil, fmt.Errorf("fake %s not ready", s.Name)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return svc, nil
}

func (f *fakeRunner) Close() error { return nil }

func (f *fakeRunner) timedRuns() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var v []string
	for _, r := range f.runs {
		if !strings.HasPrefix(r, "verify-") {
			v = append(v, r)
		}
	}
	return v
}

type fakeService struct {
	name      string
	listeners []net.Listener
	cpu       time.Duration
}

func (s *fakeService) Name() string { return s.name }
func (s *fakeService) Usage(context.Context) (time.Duration, time.Duration, error) {
	s.cpu += 100 * time.Millisecond
	return s.cpu, 0, nil
}
func (s *fakeService) Logs(context.Context) ([]byte, []byte, error) { return nil, []byte("log\n"), nil }
func (s *fakeService) Stop(context.Context) (runner.Result, error) {
	for _, l := range s.listeners {
		l.Close()
	}
	return runner.Result{Stderr: []byte("stopped\n")}, nil
}

const fakeSpec = `
clients: {go: [grpc, thrift, http], java: [dubbo]}
items: [2, 200]
concurrency: [1, 4]
load: {n: 100}
repeats: 2
`

func TestExecuteRecordsFailedCells(t *testing.T) {
	spec, err := ParseSpec([]byte(fakeSpec))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fr := newFakeRunner()
	fr.outcome["go-thrift-datalist-2-c1-"] = "exit1"
	fr.outcome["go-thrift-datalist-200-c4-r2"] = "garbage"
	fr.outcome["verify-go-http-datalist"] = "exit3"
	run, err := Execute(context.Background(), Options{Spec: spec, Dir: dir, Runner: fr, RunnerName: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(run.Cells), len(spec.Plan()); got != want {
		t.Fatalf("got %d cells; want %d", got, want)
	}
	byName := map[string]CellResult{}
	for _, c := range run.Cells {
		byName[c.Name] = c
	}
	for _, tc := range []struct {
		cell, status, errPart string
		repeatsWithReport     int
	}{
		{"go-grpc-datalist-2-c1", StatusOK, "", 2},
		{"go-thrift-datalist-2-c1", StatusFailed, "r1: exit code 1: boom", 0},
		{"go-thrift-datalist-200-c4", StatusOK, "r2: report:", 1},
		{"go-http-datalist-2-c1", StatusFailed, "verify failed, not timed: exit code 3 (wrong response)", 0},
		{"go-http-datalist-200-c4", StatusFailed, "verify failed", 0},
		{"java-dubbo-datalist-200-c4", StatusOK, "", 2},
	} {
		c, ok := byName[tc.cell]
		if !ok {
			t.Errorf("%s: no result", tc.cell)
			continue
		}
		with := 0
		for _, r := range c.Repeats {
			if r.Report != nil {
				with++
			}
		}
		if c.Status != tc.status || !strings.Contains(c.Error, tc.errPart) || with != tc.repeatsWithReport {
			t.Errorf("%s: got status %s, error %q, %d reports; want %s, error containing %q, %d reports",
				tc.cell, c.Status, c.Error, with, tc.status, tc.errPart, tc.repeatsWithReport)
		}
	}
	for _, r := range fr.timedRuns() {
		if strings.HasPrefix(r, "go-http-") {
			t.Errorf("cell run %s was timed although its verify failed", r)
		}
	}
	// Figures: the fake server's /stats says 25 µs of CPU per call; the fake
	// client's whole process used 50 ms for 100 + 9 warm-up + 1 verify calls.
	ok := byName["go-grpc-datalist-200-c4"]
	m := ok.Repeats[0].Metrics
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"rps", m.RPS, 200},
		{"server cpu us/call", round(m.ServerCPUUs), 25},
		{"client cpu us/call", round(m.ClientCPUUs), round(50e3 / 110)},
		{"client measured us/call", round(m.ClientCPUMeasuredUs), 300},
		{"bytes", float64(m.BytesPerResponse), 5600},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v; want %v", tc.name, tc.got, tc.want)
		}
	}
	// Raw output is kept for every repeat, failed ones included.
	for _, name := range []string{"go-thrift-datalist-2-c1-r1.txt", "go-grpc-datalist-2-c1-r2.txt", "verify-go-http-datalist.txt", "server-go-server.txt"} {
		if _, err := os.Stat(filepath.Join(dir, RawDir, name)); err != nil {
			t.Errorf("raw file: %v", err)
		}
	}
	stdout, stderr, err := ReadRaw(filepath.Join(dir, RawDir, "go-thrift-datalist-2-c1-r1.txt"))
	if err != nil || len(stdout) != 0 || string(stderr) != "boom\n" {
		t.Errorf("raw file: got stdout %q stderr %q err %v; want empty, %q", stdout, stderr, err, "boom\n")
	}
}

func round(f float64) float64 { return float64(int64(f + 0.5)) }

func TestExecuteResume(t *testing.T) {
	spec, err := ParseSpec([]byte(fakeSpec))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	fr := newFakeRunner()
	fr.cancel, fr.cancelAfter = cancel, 5 // the 3rd cell's 1st repeat is the last that runs
	_, err = Execute(ctx, Options{Spec: spec, Dir: dir, Runner: fr, RunnerName: "fake"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: got %v; want context.Canceled", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, CellsDir, "*.json"))
	if len(files) != 2 {
		t.Fatalf("after the interruption: got %d cell files; want 2 (the running cell is not recorded)", len(files))
	}
	if _, err := Execute(context.Background(), Options{Spec: spec, Dir: dir, Runner: newFakeRunner()}); err == nil {
		t.Fatal("a second run into the same directory without Resume: got no error")
	}

	fr2 := newFakeRunner()
	run, err := Execute(context.Background(), Options{Dir: dir, Resume: true, Runner: fr2, RunnerName: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(run.Cells), len(spec.Plan()); got != want {
		t.Fatalf("after resume: got %d cells; want %d", got, want)
	}
	for _, r := range fr2.timedRuns() {
		if strings.HasPrefix(r, "go-grpc-datalist-2-c1-") || strings.HasPrefix(r, "go-grpc-datalist-2-c4-") {
			t.Errorf("resume re-ran finished cell run %s", r)
		}
	}
	if got, want := len(fr2.timedRuns()), 2*(len(spec.Plan())-2); got != want {
		t.Errorf("resume: got %d timed runs; want %d", got, want)
	}
	for i, c := range run.Cells {
		if want := spec.Plan()[i].Name(); c.Name != want {
			t.Errorf("cell %d: got %s; want %s (plan order)", i, c.Name, want)
		}
		if c.Status != StatusOK {
			t.Errorf("%s: got status %s (%s); want ok", c.Name, c.Status, c.Error)
		}
	}
	if run.Finished.IsZero() {
		t.Error("resumed run has no finish time")
	}
}

func TestWriteFileAtomicLeavesNoTemporaries(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "sub", "x.json")
	for i := range 3 {
		if err := WriteFileAtomic(name, []byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(name)
	entries, _ := os.ReadDir(filepath.Dir(name))
	if string(b) != "2" || len(entries) != 1 {
		t.Errorf("got %q and %d files; want \"2\" and 1 file", b, len(entries))
	}
}
