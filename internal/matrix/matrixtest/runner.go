// Package matrixtest is the matrix tests' stand-in for a runner: servers are
// in-process listeners that answer /healthz and /stats, clients print a
// synthetic report, every run and outcome scripted by name.
package matrixtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/runner"
)

// Runner stands in for Docker/Local: servers are in-process listeners that
// answer /healthz and /stats, clients print a synthetic report. Its runs and
// outcomes are scripted by cell (or verify) name.
type Runner struct {
	Mu    sync.Mutex
	Runs  []string
	Calls map[string]int64 // "proto/call" -> calls served
	// outcome maps a run name prefix to what the client does: "exit3", "exit1",
	// "garbage" (stdout without a report).
	Outcome map[string]string
	// cancelAfter cancels cancel once this many timed runs (not verify) finished.
	CancelAfter int
	Cancel      context.CancelFunc
	Timed       int
	// afterRun is called after each run; clientCPU overrides the CPU a run's
	// report claims over its window, by run name.
	AfterRun  func(name string)
	Args      map[string][]string // each run's arguments, by task name
	ClientCPU map[string]float64
	// jit puts "JIT compile: N [ms]" in the report of runs whose name starts with
	// a key (the longest matching key wins).
	JIT      map[string]int64
	Services []*service
	// rps, when set, gives each timed run's req/s by run name.
	RPS func(name string) float64
}

// StopServers closes every fake server's listeners: the server died.
func (f *Runner) StopServers() {
	f.Mu.Lock()
	svcs := f.Services
	f.Mu.Unlock()
	for _, s := range svcs {
		for _, l := range s.listeners {
			l.Close()
		}
	}
}

func New() *Runner {
	return &Runner{Calls: map[string]int64{}, Outcome: map[string]string{}}
}

// FlagValue is the value after flag name in args ("" when absent).
func FlagValue(args []string, name string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == name {
			return args[i+1]
		}
	}
	return ""
}

func (f *Runner) Run(ctx context.Context, s runner.Task) (runner.Result, error) {
	if err := ctx.Err(); err != nil {
		return runner.Result{}, err
	}
	f.Mu.Lock()
	f.Runs = append(f.Runs, s.Name)
	if f.Args == nil {
		f.Args = map[string][]string{}
	}
	f.Args[s.Name] = s.Args
	outcome := ""
	for prefix, o := range f.Outcome {
		if strings.HasPrefix(s.Name, prefix) {
			outcome = o
		}
	}
	f.Mu.Unlock()
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
	proto, call := FlagValue(s.Args, "-proto"), FlagValue(s.Args, "-call")
	n, _ := strconv.ParseInt(FlagValue(s.Args, "-n"), 10, 64)
	if n == 0 {
		n = 1000
	}
	items, _ := strconv.Atoi(FlagValue(s.Args, "-items"))
	c, _ := strconv.Atoi(FlagValue(s.Args, "-c"))
	// The measured window lies inside the run, as a real client's does, and the
	// server counts the run's calls in the middle of it: a /stats sample taken
	// between the window's end and the count would otherwise leave the window
	// with no calls.
	t0 := time.Now()
	time.Sleep(15 * time.Millisecond)
	f.Mu.Lock()
	f.Calls[proto+"/"+call] += n + 10
	f.Mu.Unlock()
	time.Sleep(15 * time.Millisecond)
	ws := float64(t0.Add(5*time.Millisecond).UnixMicro()) / 1e6
	r := report.Report{
		ServerHostname: "127.0.0.1", DocumentPath: "/x", DocumentLength: int64(28 * items),
		Concurrency: c, TimeTakenSeconds: 0.5, Complete: n, RequestsPerSecond: float64(n) / 0.5,
		Rpcbed: &report.Extra{Client: "go", Protocol: proto, Call: call, Items: items, Connections: 1, Loop: "closed",
			P50Us: 100, P90Us: 150, P99Us: 300, P999Us: 400, MeanUs: 110, MaxUs: 500,
			WarmupCalls: 9, CPUUserSeconds: 0.002, CPUSystemSeconds: 0.001,
			Versions: map[string]string{"go": "go1.26.8"},
			Check:    report.CheckFull, Runtime: "go", CPUScope: report.ScopeWindow,
			WindowStart: ws, WindowEnd: ws + 0.02, WarmupSettled: report.SettledFixed},
	}
	if f.RPS != nil && !strings.HasPrefix(s.Name, "verify-") {
		r.RequestsPerSecond = f.RPS(s.Name)
	}
	if v, ok := f.ClientCPU[s.Name]; ok {
		r.Rpcbed.CPUUserSeconds, r.Rpcbed.CPUSystemSeconds = v, 0
	}
	best := ""
	for prefix := range f.JIT {
		if strings.HasPrefix(s.Name, prefix) && len(prefix) > len(best) {
			best = prefix
		}
	}
	if best != "" {
		ms := f.JIT[best]
		r.Rpcbed.JITCompileMs = &ms
	}
	if f.AfterRun != nil {
		defer f.AfterRun(s.Name)
	}
	var out bytes.Buffer
	if err := report.Write(&out, r); err != nil {
		return res, err
	}
	res.Stdout = out.Bytes()
	f.Mu.Lock()
	if !strings.HasPrefix(s.Name, "verify-") {
		f.Timed++
		if f.CancelAfter > 0 && f.Timed == f.CancelAfter {
			f.Cancel()
		}
	}
	f.Mu.Unlock()
	return res, nil
}

func (f *Runner) Start(ctx context.Context, s runner.Task) (runner.Service, error) {
	svc := &service{name: s.Name}
	f.Mu.Lock()
	f.Services = append(f.Services, svc)
	f.Mu.Unlock()
	listen := func(addr string) error {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return err
		}
		svc.listeners = append(svc.listeners, l)
		return nil
	}
	if addr := FlagValue(s.Args, "-http"); addr != "" {
		if err := listen(addr); err != nil {
			return nil, err
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {})
		mux.HandleFunc("/stats", func(w http.ResponseWriter, _ *http.Request) { f.serveStats(w) })
		go http.Serve(svc.listeners[0], mux)
		for _, fl := range []string{"-grpc", "-thrift"} {
			if err := listen(FlagValue(s.Args, fl)); err != nil {
				svc.Stop(ctx)
				return nil, err
			}
		}
	} else if port := FlagValue(s.Args, "-port"); port != "" {
		if err := listen("127.0.0.1:" + port); err != nil {
			return nil, err
		}
		if sp := FlagValue(s.Args, "-stats-port"); sp != "" {
			// A Java baseline's stats listener: the same JSON as go-server's /stats.
			if err := listen("127.0.0.1:" + sp); err != nil {
				return nil, err
			}
			mux := http.NewServeMux()
			mux.HandleFunc("/stats", func(w http.ResponseWriter, _ *http.Request) { f.serveStats(w) })
			go http.Serve(svc.listeners[1], mux)
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

func (f *Runner) Close() error { return nil }

// serveStats answers /stats as go-server does (without time_unix_s: the driver
// then uses its own clock).
func (f *Runner) serveStats(w http.ResponseWriter) {
	f.Mu.Lock()
	calls := map[string]map[string]map[string]int64{}
	var total int64
	for k, v := range f.Calls {
		p, c, _ := strings.Cut(k, "/")
		if calls[p] == nil {
			calls[p] = map[string]map[string]int64{}
		}
		calls[p][c] = map[string]int64{"requests": v}
		total += v
	}
	f.Mu.Unlock()
	json.NewEncoder(w).Encode(map[string]any{
		"cpu_user_s": float64(total) * 20e-6, "cpu_system_s": float64(total) * 5e-6,
		"calls": calls, "versions": map[string]string{"go": "go1.26.8"},
	})
}

func (f *Runner) TimedRuns() []string {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	var v []string
	for _, r := range f.Runs {
		if !strings.HasPrefix(r, "verify-") {
			v = append(v, r)
		}
	}
	return v
}

type service struct {
	name      string
	listeners []net.Listener
	cpu       time.Duration
}

func (s *service) Name() string { return s.name }

func (s *service) Usage(context.Context) (time.Duration, time.Duration, error) {
	s.cpu += 100 * time.Millisecond
	return s.cpu, 0, nil
}

func (s *service) Stop(context.Context) (runner.Result, error) {
	for _, l := range s.listeners {
		l.Close()
	}
	return runner.Result{Stderr: []byte("stopped\n")}, nil
}
