package measure

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/runner"
	"github.com/rpcbed/rpcbed/internal/worker"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/probe"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/sample"
)

// RunPath is the one run path `rpcbed matrix` and `rpcbed reproduce` share: it runs
// one client run against a running server (as a worker or a one-shot process),
// samples the server's /stats and the machine's /proc/stat every 100 ms while it
// runs, keeps the raw output, and measures both sides over the client's measured
// window (docs/method.md, sections 2, 3, 6 and 9).
type RunPath struct {
	Runner   runner.Runner
	Programs Programs
	// Dir is the run directory; Job.Raw is relative to it.
	Dir string
	// ClientResources and ServerResources are what each side runs with (the
	// invariant's cores).
	ClientResources, ServerResources plan.Resources
	// Workers keeps the client workers; nil runs every job as one process.
	Workers *worker.Pool
	// noWorker lists the clients whose build has no worker mode (learnt at the
	// first try): they run one process per run from then on.
	mu       sync.Mutex
	noWorker map[string]string
	// Note receives one-line notes (a worker fallback); nil drops them.
	Note func(string)
	// NoProbe leaves out the CPU probe around each run (internal/probe).
	NoProbe bool
	// Mounts are host directories the clients read (the run's certificates).
	Mounts []string
	// Over a link with delay: the least round trip it adds (the physics a
	// repeat is held to) and its delayers' CPU so far (nil: no delayer).
	LinkFloorUs float64
	LinkCPU     func() (time.Duration, bool)
}

// Job is one client run.
type Job struct {
	// Name names the run (runner logs, container names), e.g. go-grpc-datalist-2-c1-r1.
	Name string
	// Raw is where the raw output goes, relative to RunPath.Dir.
	Raw string
	// Client is go|php|php-pure|java, run with Args (its flags); Prog, when set,
	// is run instead as one process (ab, a front's load).
	Client string
	Args   []string
	Prog   *Program
	// Runner overrides RunPath.Runner for this job (ab runs under Local).
	Runner runner.Runner
	// Proto and Call select the server's counters; empty = the server is not sampled.
	Proto, Call string
	Timeout     time.Duration
	// Worker: run through the client's worker (when RunPath has a pool and the client one).
	Worker bool
	// AB: the report is ab's (parsed by report.Parse, no rpcbed block required).
	AB bool
}

// Measure runs j against srv (nil: no server is sampled) and returns its repeat,
// Index left to the caller, in steps: run the client with the samplers and
// probes around it (Run), keep its raw output, read and check its report (ReadReport),
// measure both sides over its window (window), derive the figures (Metrics),
// then apply the flag rules (flagRules, flags.go). Only ctx's cancellation is an
// error; everything else is recorded in the Repeat.
func (b *RunPath) Measure(ctx context.Context, srv *ServerProc, j Job) (results.Repeat, error) {
	rep := results.Repeat{Raw: j.Raw}
	smp := sample.Start(ctx, srv.Reader(j.Proto, j.Call), b.LinkCPU)
	var pr results.Probe
	if !b.NoProbe {
		b.probeSides(&pr, 0)
	}
	runStart := time.Now()
	res, runErr := b.Run(ctx, &rep, j)
	runEnd := time.Now()
	samples, machine := smp.Stop(ctx)
	if !b.NoProbe {
		b.probeSides(&pr, 1)
		rep.Probe = &pr
	}
	if ctx.Err() != nil {
		return rep, ctx.Err()
	}
	var fail []string
	if j.Raw != "" {
		if err := WriteRaw(filepath.Join(b.Dir, j.Raw), res.Stdout, res.Stderr); err != nil {
			fail = append(fail, "raw file: "+runner.OneLine(err.Error()))
		}
	}
	rep.ExitCode, rep.WallS = res.ExitCode, res.Wall.Seconds()
	rep.ClientCPUS = (res.CPUUser + res.CPUSystem).Seconds()
	r, why := ReadReport(res, runErr, j.AB)
	fail = append(fail, why...)
	if r != nil && len(why) == 0 && len(fail) == 0 {
		rep.Report = r
	}
	if len(fail) > 0 {
		rep.Error = strings.Join(fail, "; ")
		return rep, nil
	}
	w, notes := b.window(srv, j, r, rep.ClientCPUS, runStart, runEnd, samples, machine)
	w.LinkFloorUs = b.LinkFloorUs
	rep.Notes = append(rep.Notes, notes...)
	rep.Window = w
	rep.ServerCPUS, rep.ServerCalls = w.ServerCPUS, w.ServerCalls
	rep.Metrics = Metrics(r, rep.ClientCPUS, w)
	applyFlags(&rep, flagRules, flagInput{report: r, window: w, client: !j.AB && j.Prog == nil})
	rep.DropFlagged()
	if r.Failed > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d of %d calls failed (%s)", r.Failed, r.Complete, ErrorKinds(r)))
	}
	return rep, nil
}

// window is the step of Measure that measures both sides over the client's
// measured window: the client's own (its report's), else the run's as the
// driver saw it; processCPU is the runner's CPU for the client's whole run (ab
// reports none of its own). The notes say what could not be measured.
func (b *RunPath) window(srv *ServerProc, j Job, r *report.Report, processCPU float64, runStart, runEnd time.Time, samples []sample.Server, machine sample.Machines) (*results.Window, []string) {
	var notes []string
	w := &results.Window{Source: "report"}
	x := r.Rpcbed
	if x != nil && x.WindowEnd > x.WindowStart && x.WindowStart > 0 {
		w.StartUnix, w.EndUnix = x.WindowStart, x.WindowEnd
	} else {
		w.Source = "run"
		w.StartUnix, w.EndUnix = unixSeconds(runStart), unixSeconds(runEnd)
	}
	w.Seconds = w.EndUnix - w.StartUnix
	w.ClientCPUS = processCPU // ab reports none: the runner's, over its whole run
	if x != nil {
		w.ClientCPUS = x.CPUUserSeconds + x.CPUSystemSeconds
		if x.JITCompileMs != nil {
			ms := float64(*x.JITCompileMs)
			w.ClientJITMs = &ms
		}
	}
	if err := OverWindow(w, samples, machine); err != nil && srv != nil && j.Proto != "" {
		notes = append(notes, "server not sampled over the window: "+runner.OneLine(err.Error()))
	}
	runr := b.Runner
	if j.Runner != nil {
		runr = j.Runner
	}
	w.ClientCores = runner.CoresAllowed(runr, runner.Task{CPUSet: b.ClientResources.CPUSet, CPUs: b.ClientResources.CPUs})
	if srv != nil && b.Runner != nil {
		w.ServerCores = runner.CoresAllowed(b.Runner, runner.Task{CPUSet: b.ServerResources.CPUSet, CPUs: b.ServerResources.CPUs})
	}
	return w, notes
}

// OverWindow fills in w's server and machine figures over [w.StartUnix,
// w.EndUnix] from the samples taken while the client ran, and each side's busy
// cores; the error says why the server's CPU and calls are unknown.
func OverWindow(w *results.Window, samples []sample.Server, machine sample.Machines) error {
	cpu, calls, serr := sample.Interpolate(samples, w.StartUnix, w.EndUnix)
	if serr == nil {
		w.ServerCPUS, w.ServerCalls, w.ServerKnown = cpu, int64(math.Round(calls)), true
		w.ServerCallsInterpolated = calls
	}
	if ms, ok := sample.JITOver(samples, w.StartUnix, w.EndUnix); ok {
		w.ServerJITMs = &ms
	}
	w.Samples = len(samples)
	if st, err := machine.Over(w.StartUnix, w.EndUnix); err == nil && w.Seconds > 0 {
		w.MachineKnown = true
		w.MachineBusy, w.StealCores = st.Busy/w.Seconds, st.Steal/w.Seconds
		w.OutsideCores = math.Max(0, (st.Busy-w.ClientCPUS-w.ServerCPUS)/w.Seconds)
		if st.LinkOK {
			w.LinkKnown, w.LinkCPUS, w.LinkBusy = true, st.Link, st.Link/w.Seconds
		}
	}
	if w.Seconds > 0 {
		w.ClientBusy = w.ClientCPUS / w.Seconds
		w.ServerBusy = w.ServerCPUS / w.Seconds
	}
	return serr
}

// Run runs j as a worker run or a one-shot process.
func (b *RunPath) Run(ctx context.Context, rep *results.Repeat, j Job) (runner.Result, error) {
	rr := b.Runner
	if j.Runner != nil {
		rr = j.Runner
	}
	prog := b.Programs.Client(j.Client, j.Args...)
	if j.Prog != nil {
		prog = *j.Prog
	}
	spec := runner.Task{
		Name: j.Name, Image: prog.Image, Args: prog.Args, Env: prog.Env,
		CPUs: b.ClientResources.CPUs, CPUSet: b.ClientResources.CPUSet, MemoryMB: b.ClientResources.MemoryMB, Timeout: j.Timeout,
		Mounts: b.Mounts,
	}
	if ws, ok := rr.(runner.WorkerStarter); ok && j.Worker && j.Prog == nil && b.Workers != nil && !b.lacksWorker(j.Client) {
		wp := b.Programs.Worker(j.Client)
		wspec := runner.Task{
			Name: "worker-" + j.Client + "-" + j.Proto, Image: wp.Image, Args: wp.Args, Env: wp.Env,
			CPUs: b.ClientResources.CPUs, CPUSet: b.ClientResources.CPUSet, MemoryMB: b.ClientResources.MemoryMB,
			Mounts: b.Mounts,
		}
		p, err := b.Workers.Get(ctx, ws, j.Client, j.Client+"-"+j.Proto, wspec)
		switch {
		case ctx.Err() != nil:
			return runner.Result{}, ctx.Err()
		case err != nil && b.Workers.StartedOnce(j.Client):
			// It worked before: this is a failure, not a missing feature.
			return runner.Result{ExitCode: -1, Stderr: []byte(err.Error())}, err
		case err != nil:
			b.fallBack(j.Client, err)
		default:
			rep.Worker = true
			rep.WorkerID = p.ID()
			id := strings.Map(func(r rune) rune {
				if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
					return r
				}
				return '-'
			}, j.Name)
			return p.Run(ctx, id, b.Programs.ClientFlags(j.Client, j.Args...), j.Timeout)
		}
	}
	return rr.Run(ctx, spec)
}

func (b *RunPath) lacksWorker(client string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, no := b.noWorker[client]
	return no
}

func (b *RunPath) fallBack(client string, err error) {
	b.mu.Lock()
	if b.noWorker == nil {
		b.noWorker = map[string]string{}
	}
	b.noWorker[client] = runner.OneLine(err.Error())
	b.mu.Unlock()
	if b.Note != nil {
		b.Note(fmt.Sprintf("%s-client has no worker mode here (%s): one process per run", client, runner.OneLine(runner.Tail([]byte(err.Error()), 200))))
	}
}

// ReadReport parses a run's report and says every reason it does not count
// (docs/method.md, section 9): the run did not finish, the client exited non-zero,
// the report does not parse, its check is not full, or fewer than 99 % of its
// calls succeeded (ab's Complete counts failed calls).
func ReadReport(res runner.Result, runErr error, ab bool) (*report.Report, []string) {
	var why []string
	if runErr != nil {
		why = append(why, runner.OneLine(runErr.Error()))
	}
	if res.ExitCode != 0 {
		why = append(why, fmt.Sprintf("exit code %d%s: %s", res.ExitCode, ExitMeaning(res.ExitCode), runner.LastLine(res.Stderr)))
	}
	if len(why) > 0 {
		return nil, why
	}
	parse := report.ParseClient
	if ab {
		parse = report.Parse
	}
	r, err := parse(bytes.NewReader(res.Stdout))
	if err != nil {
		return nil, []string{"report: " + runner.OneLine(err.Error())}
	}
	// ParseClient already refuses a report without the v1.1 keys.
	switch x := r.Rpcbed; {
	case ab:
	case x.Check != report.CheckFull:
		why = append(why, fmt.Sprintf("Check: %s; the matrix takes full checking only", x.Check))
	}
	ok := r.Complete - r.Failed
	switch {
	case r.Complete == 0 || ok <= 0:
		why = append(why, fmt.Sprintf("no call succeeded in the measured %.3f s (%d complete, %d failed: %s)", r.TimeTakenSeconds, r.Complete, r.Failed, ErrorKinds(&r)))
	case float64(ok) < 0.99*float64(r.Complete):
		why = append(why, fmt.Sprintf("%d of %d calls failed (%s): under 99 %% succeeded", r.Failed, r.Complete, ErrorKinds(&r)))
	}
	return &r, why
}

// Metrics derives a repeat's figures from its report and window.
func Metrics(r *report.Report, processCPU float64, w *results.Window) results.Metrics {
	m := results.Metrics{
		RPS: r.RequestsPerSecond, BytesPerResponse: r.DocumentLength,
		Complete: r.Complete, Failed: r.Failed,
	}
	calls := float64(r.Complete)
	made := calls + 1 // the client's own verify call
	if x := r.Rpcbed; x != nil {
		m.P50Us, m.P99Us = float64(x.P50Us), float64(x.P99Us)
		made += float64(x.WarmupCalls)
	} else {
		for _, p := range r.Percentiles {
			switch p.Percent {
			case 50:
				m.P50Us = float64(p.Ms * 1000)
			case 99:
				m.P99Us = float64(p.Ms * 1000)
			}
		}
	}
	m.ClientCPUProcessUs = processCPU * 1e6 / made // 0 for a worker's run: not measured
	if calls > 0 && w.ClientCPUS > 0 {
		m.ClientCPUUs = w.ClientCPUS * 1e6 / calls
		m.ClientCallsPerCPUS = calls / w.ClientCPUS
	}
	if w.ServerKnown && w.ServerCalls > 0 && w.ServerCPUS > 0 {
		// CPU and calls are interpolated alike (interpolate): divide by the
		// interpolated calls, not the rounded count, or a window holding a
		// fraction of a sampling period's calls misstates the CPU per call by
		// up to half a call in its calls (25 µs read as 26 with 12.4 calls).
		calls := w.ServerCallsInterpolated
		if calls <= 0 { // a window made before the interpolated count was kept
			calls = float64(w.ServerCalls)
		}
		m.ServerCPUUs = w.ServerCPUS * 1e6 / calls
		m.ServerCallsPerCPUS = calls / w.ServerCPUS
	}
	if w.ClientCores > 0 {
		m.ClientBusy = w.ClientBusy / w.ClientCores
	}
	if w.ServerKnown && w.ServerCores > 0 {
		m.ServerBusy = w.ServerBusy / w.ServerCores
	}
	return m
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixMicro()) / 1e6 }

// WriteRaw writes a run's raw file; an error (a full disk) fails the repeat, and
// no partial file is left claiming to be the run.
func WriteRaw(name string, stdout, stderr []byte) error {
	if err := results.WriteFileAtomic(name, results.RawBytes(stdout, stderr)); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}

// StatsDoc is the part of /stats (go-server's, the Java baselines') the driver reads.
type StatsDoc struct {
	TimeUnixS  float64                                        `json:"time_unix_s"`
	CPUUserS   float64                                        `json:"cpu_user_s"`
	CPUSystemS float64                                        `json:"cpu_system_s"`
	Calls      map[string]map[string]struct{ Requests int64 } `json:"calls"`
	Versions   map[string]string                              `json:"versions"`
	// JITCompileMs: a JVM server's accumulated JIT compile time (the Java
	// baselines'); go-server has none.
	JITCompileMs *int64 `json:"jit_compile_ms"`
}

var statsClient = &http.Client{Timeout: 2 * time.Second}

// ReadStats GETs the server's /stats.
func (s *ServerProc) ReadStats(ctx context.Context) (StatsDoc, float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.StatsURL, nil)
	if err != nil {
		return StatsDoc{}, 0, err
	}
	t0 := time.Now()
	hc := statsClient
	if s.httpc != nil {
		hc = s.httpc
	}
	resp, err := hc.Do(req)
	if err != nil {
		return StatsDoc{}, 0, fmt.Errorf("GET /stats: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return StatsDoc{}, 0, fmt.Errorf("GET /stats: %s", resp.Status)
	}
	var st StatsDoc
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 1<<20)).Decode(&st); err != nil {
		return StatsDoc{}, 0, fmt.Errorf("GET /stats: %w", err)
	}
	mid := unixSeconds(t0.Add(time.Since(t0) / 2))
	return st, mid, nil
}

// Reader reads s's counters for proto x call as one sample; nil for no server
// or one without /stats.
func (s *ServerProc) Reader(proto, call string) func(context.Context) (sample.Server, error) {
	if s == nil || s.StatsURL == "" || proto == "" {
		return nil
	}
	return func(ctx context.Context) (sample.Server, error) { return s.sample(ctx, proto, call) }
}

func (s *ServerProc) sample(ctx context.Context, proto, call string) (sample.Server, error) {
	st, mid, err := s.ReadStats(ctx)
	if err != nil {
		return sample.Server{}, err
	}
	t := st.TimeUnixS
	if t == 0 {
		t = mid // a server without time_unix_s: the driver's clock halfway through the GET
	}
	jit := -1.0
	if st.JITCompileMs != nil {
		jit = float64(*st.JITCompileMs)
	}
	return sample.Server{T: t, CPU: st.CPUUserS + st.CPUSystemS, Calls: st.Calls[proto][call].Requests, JITMs: jit}, nil
}

// KeepWorkers makes b run worker jobs (Job.Worker) through long-lived client
// workers, one per client and protocol, as `rpcbed matrix` does; stop ends them.
func (b *RunPath) KeepWorkers() (stop func()) {
	b.Workers = worker.NewPool()
	return b.Workers.Close
}

// probeSides times the compute probe, then the cache probe, on the client's and
// the server's core into p's times at i (0: before the run, 1: after); 0 where
// one failed.
func (b *RunPath) probeSides(p *results.Probe, i int) {
	for _, side := range []struct {
		cpuset          string
		compute, cached *[2]float64
	}{
		{b.ClientResources.CPUSet, &p.ClientUs, &p.ClientCacheUs},
		{b.ServerResources.CPUSet, &p.ServerUs, &p.ServerCacheUs},
	} {
		cpu := probe.FirstCPU(side.cpuset)
		if d, err := probe.CPU(cpu); err == nil {
			side.compute[i] = float64(d.Microseconds())
		}
		if d, err := probe.Cache(cpu); err == nil {
			side.cached[i] = float64(d.Microseconds())
		}
	}
}

// ErrorKinds is a report's failed calls by kind, "kind=N" each.
func ErrorKinds(r *report.Report) string {
	if r.Rpcbed == nil || len(r.Rpcbed.Errors) == 0 {
		return fmt.Sprintf("connect=%d receive=%d length=%d exceptions=%d",
			r.FailedBy.Connect, r.FailedBy.Receive, r.FailedBy.Length, r.FailedBy.Exceptions)
	}
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(r.Rpcbed.Errors)) {
		kv = append(kv, k+"="+strconv.FormatInt(r.Rpcbed.Errors[k], 10))
	}
	return strings.Join(kv, " ")
}

// ExitMeaning is what a client's exit code says, " (...)", or "" for one
// with no meaning of its own (docs/report-format.md, "Exit codes").
func ExitMeaning(code int) string {
	switch code {
	case report.ExitUsage:
		return " (bad arguments)"
	case report.ExitVerify:
		return " (wrong response)"
	case report.ExitUnreachable:
		return " (server unreachable)"
	}
	return ""
}
