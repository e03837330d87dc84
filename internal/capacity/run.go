package capacity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/measure"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/runner"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// Files a capacity run writes in its directory.
const (
	RunFile  = "capacity.json"
	CSVFile  = "capacity.csv"
	MDFile   = "capacity.md"
	PlotsDir = "plots"
)

// Run is a capacity run as capacity.json holds it.
type Run struct {
	ID       string       `json:"id"`
	Started  time.Time    `json:"started"`
	Finished time.Time    `json:"finished,omitzero"`
	Runner   string       `json:"runner"`
	Spec     Spec         `json:"spec"`
	Cells    []CellResult `json:"cells"`
	// Versions are the libraries the clients and servers named.
	Versions map[string]string `json:"versions,omitempty"`
	// Commit is the checkout the run was made from (-dirty when files had
	// changed), Machine what it ran on: the matrix's run.json has the same.
	Commit  string           `json:"commit,omitempty"`
	Machine *results.Machine `json:"machine,omitempty"`
	// VisitNoise is, per SLO, how far the knees moved between visits, pooled
	// over the cells (PoolVisits): none with one visit.
	VisitNoise []VisitNoise `json:"visit_noise,omitempty"`
}

// Options is one capacity run.
type Options struct {
	Spec       Spec
	Dir        string
	Runner     runner.Runner
	RunnerName string
	Programs   measure.Programs
	// Commit and Machine go on the record as they are (see Run).
	Commit  string
	Machine *results.Machine
	// Log receives progress lines; nil is quiet.
	Log io.Writer
}

// Execute searches every cell of the spec, one server process at a time
// (go-server's cells, then each Java baseline's), and writes capacity.json
// after each cell, then the tables and plots. A cell that cannot be searched
// is recorded with its error and the run goes on.
func Execute(ctx context.Context, o Options) (*Run, error) {
	m := o.Spec.Matrix
	if len(m.Hosts) > 0 || m.Cluster != nil || m.Link != nil || len(m.Links) > 0 {
		return nil, errors.New("capacity: hosts, links and clusters are the matrix's: a capacity spec runs on one machine over loopback")
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, results.RawDir), 0o755); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(o.Dir, RunFile)); err == nil {
		return nil, fmt.Errorf("%s already holds a capacity run: choose another -out", o.Dir)
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	run := &Run{ID: filepath.Base(o.Dir), Started: time.Now().UTC(), Runner: o.RunnerName, Spec: o.Spec, Versions: map[string]string{},
		Commit: o.Commit, Machine: o.Machine}
	cells := m.Plan()
	certs := measure.NewCerts(o.Dir)
	if err := certs.Make(cells); err != nil {
		return nil, err
	}
	for len(cells) > 0 {
		key := cells[0].ServerProcKey()
		var group []plan.Cell
		for len(cells) > 0 && cells[0].ServerProcKey() == key {
			group = append(group, cells[0])
			cells = cells[1:]
		}
		if err := serverGroup(ctx, o, run, key, group, certs); err != nil {
			return run, err
		}
	}
	PoolVisits(run)
	run.Finished = time.Now().UTC()
	if err := Write(o.Dir, run); err != nil {
		return run, err
	}
	return run, nil
}

// serverGroup starts the group's servers (one per security variant its cells
// ask, as the matrix does: measure.StartServers) and searches its cells, each
// with the group's long-lived client workers.
func serverGroup(ctx context.Context, o Options, run *Run, key string, cells []plan.Cell, certs *measure.Certs) error {
	m := o.Spec.Matrix
	fmt.Fprintf(o.Log, "capacity: starting %s\n", key)
	save := func(key string, r runner.Result) {
		results.WriteFileAtomic(filepath.Join(o.Dir, results.RawDir, "server-"+key+".txt"), results.RawBytes(r.Stdout, r.Stderr))
	}
	srv, err := measure.StartServers(ctx, o.Runner, key, measure.ServerProcConfig{
		Programs: o.Programs, Resources: m.ServerResources, Store: m.Store, RedisAddr: m.RedisAddr,
		AerospikeHosts: m.AerospikeHosts, Auth: *m.Auth}, cells, certs, func(s *measure.ServerProc) { s.StopAll(save) })
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for _, c := range cells {
			run.Cells = append(run.Cells, CellResult{Name: c.Name(), Cell: c, Error: "server " + key + " did not start: " + runner.OneLine(err.Error())})
		}
		return writeJSON(o.Dir, run)
	}
	defer srv.StopAll(save)
	rp := &measure.RunPath{Runner: o.Runner, Programs: o.Programs, Dir: o.Dir, Mounts: certs.Mounts(),
		ClientResources: m.ClientResources, ServerResources: m.ServerResources, NoProbe: true,
		Note: func(s string) { fmt.Fprintf(o.Log, "  note: %s\n", s) }}
	stop := rp.KeepWorkers()
	defer stop()
	var searched []searchedCell
	for i, c := range cells {
		t0 := time.Now()
		cr, x, err := searchOne(ctx, o, rp, srv, c, i == 0)
		cr.Seconds = time.Since(t0).Seconds()
		if err != nil {
			return err
		}
		logKnees(o.Log, cr, "")
		run.Cells = append(run.Cells, cr)
		if x != nil {
			searched = append(searched, searchedCell{len(run.Cells) - 1, x})
		}
		if err := writeJSON(o.Dir, run); err != nil {
			return err
		}
	}
	return revisit(ctx, o, run, searched)
}

// searchedCell is a cell of run.Cells whose searcher a later visit goes on with.
type searchedCell struct {
	i int
	x *Searcher
}

// revisit runs the spec's later visits of a server group's cells, in the
// order they were searched, once all of them have been (Searcher.Revisit).
func revisit(ctx context.Context, o Options, run *Run, cells []searchedCell) error {
	for v := 2; v <= o.Spec.Search.Visits; v++ {
		for _, sc := range cells {
			cr := &run.Cells[sc.i]
			t0 := time.Now()
			if err := sc.x.Revisit(ctx, cr.Knees, v); err != nil {
				return err
			}
			cr.Runs = sc.x.Runs
			cr.Seconds += time.Since(t0).Seconds()
			logKnees(o.Log, *cr, fmt.Sprintf(" (visit %d)", v))
			if err := writeJSON(o.Dir, run); err != nil {
				return err
			}
		}
	}
	return nil
}

// logKnees logs a cell's knees, or why it has none.
func logKnees(w io.Writer, cr CellResult, visit string) {
	for _, k := range cr.Knees {
		s := KneeText(k)
		if k.VisitShift != nil {
			s += fmt.Sprintf(", %+.1f %% since the first visit", 100*(math.Exp(*k.VisitShift)-1))
		}
		fmt.Fprintf(w, "capacity: %s at %s%s: %s\n", cr.Name, k.SLO.Name(), visit, s)
	}
	if cr.Error != "" {
		fmt.Fprintf(w, "capacity: %s: %s\n", cr.Name, cr.Error)
	}
}

// searchOne primes c's worker when the spec says so, measures its closed-loop
// throughput when the spec gives no start, primes the worker again in the open
// loop, and searches it at every SLO.
func searchOne(ctx context.Context, o Options, rp *measure.RunPath, srv *measure.ServerProc, c plan.Cell, first bool) (CellResult, *Searcher, error) {
	cr := CellResult{Name: c.Name(), Cell: c}
	s := o.Spec.Search
	p := &prober{o: o, rp: rp, srv: srv, c: c}
	prime := primeFor(s, c, first)
	if prime > 0 {
		if err := p.prime(ctx, prime, 0); err != nil {
			return cr, nil, err
		}
	}
	cr.Start = s.Start
	if cr.Start == 0 {
		closed, err := p.closed(ctx)
		if err != nil {
			return cr, nil, err
		}
		if closed <= 0 {
			cr.Error = "the closed-loop run that sets the first rate gave no figures (raw/" + p.last + ")"
			return cr, nil, nil
		}
		cr.Closed, cr.Start = closed, StartFrom(closed)
	}
	if prime > 0 {
		// The open loop's schedule runs other code than the closed loop's:
		// java-dubbo's worker, at rest in the closed loop, compiled for
		// 0.6-1.5 s in seven of its first nine open-loop runs, its core full
		// at 1,600 calls/s (docs/method.md, "Capacity at a latency budget").
		if err := p.prime(ctx, prime, int(roundRate(OpenPrime*cr.Start))); err != nil {
			return cr, nil, err
		}
	}
	fmt.Fprintf(o.Log, "capacity: %s from %.0f/s\n", cr.Name, cr.Start)
	x := NewSearcher(p, s, nil)
	knees, err := SearchCell(ctx, x, o.Spec.SLOs, cr.Start)
	cr.Knees, cr.Runs = knees, x.Runs
	return cr, x, err
}

// primeFor is how long c's prime goes on (0: none): its client's, and for
// the first cell on a JVM server also the server's language's, the longer of
// the two, so that a freshly started baseline's JIT rests before the first
// search as a primed client's does.
func primeFor(s Search, c plan.Cell, first bool) time.Duration {
	d := s.Prime[c.Client].D()
	if srv, ok := plan.ServerOf(c.ServerLang); ok && srv.JVM && first {
		d = max(d, s.Prime[c.ServerLang].D())
	}
	return d
}

// prober runs a cell's client at a rate on the matrix's run path.
type prober struct {
	o    Options
	rp   *measure.RunPath
	srv  *measure.ServerProc
	c    plan.Cell
	n    int
	last string // the last run's raw file
}

// args are the client's flags for one run: the matrix's (plan.Cell.ClientArgs),
// run for period after warmup, with -rate for the open loop (0: closed loop).
func (p *prober) args(rate int, period, warmup time.Duration) []string {
	c := p.c
	r := p.srv.ClientRun(c, plan.Load{Duration: plan.Duration(period), Warmup: plan.Duration(warmup), Conns: c.Load.Conns})
	r.Rate = rate
	return c.ClientArgs(r)
}

// once runs the client once and returns its repeat (figures as the matrix
// measures them).
func (p *prober) once(ctx context.Context, kind string, rate int, period, warmup time.Duration) (results.Repeat, error) {
	p.n++
	name := fmt.Sprintf("%s-%s%d", p.c.Name(), kind, p.n)
	p.last = name + ".txt"
	j := measure.Job{Name: name, Raw: filepath.Join(results.RawDir, p.last), Client: p.c.Client,
		Args: p.args(rate, period, warmup), Proto: p.c.Protocol, Call: p.c.Call,
		Timeout: warmup + period + 60*time.Second, Worker: true}
	return p.rp.Measure(ctx, p.srv, j)
}

// MinCalls is the fewest calls a step's run measures: at a low rate its
// measuring period grows to hold them (at most 4 periods), so one call is at
// most 0.5 % of the count the accuracy judges.
const MinCalls = 200

// Probe is one open-loop run at rate.
func (p *prober) Probe(ctx context.Context, rate float64) (Obs, error) {
	s := p.o.Spec.Search
	period := min(max(s.Measure.D(), time.Duration(MinCalls/rate*float64(time.Second))), 4*s.Measure.D())
	rep, err := p.once(ctx, "rate"+strconv.Itoa(int(rate))+"-", int(rate), period, s.Warmup.D())
	if err != nil {
		return Obs{}, err
	}
	o := Obs{Offered: rate, Raw: rep.Raw}
	if rep.Report == nil {
		o.Error = rep.Error
		if o.Error == "" {
			o.Error = fmt.Sprintf("exit code %d, no report", rep.ExitCode)
		}
		return o, nil
	}
	// Conditions are measured, not assumed: a run that did not negotiate the
	// cell's security, or did not keep its connections, gives no figures.
	if why := append(results.TLSMismatch(p.c, rep.Report), results.ConnectMismatch(p.c, rep.Report)...); len(why) > 0 {
		o.Error = "the run's conditions are not the cell's: " + strings.Join(why, "; ")
		return o, nil
	}
	if t := rep.Report.Rpcbed; t != nil && t.TLS != nil {
		o.TLS = t.TLS.Version
	}
	mt := rep.Metrics
	o.Achieved, o.Calls, o.Failed = mt.RPS, rep.Report.Complete, rep.Report.Failed
	o.P50Us, o.P99Us = mt.P50Us, mt.P99Us
	if t := rep.Report.Rpcbed; t != nil && t.LatencyHistogram != "" {
		// The calls over each budget are counted from the record (Obs.Over);
		// a record that does not decode leaves the p99 to judge the run.
		if h, err := stats.DecodeLatency(t.LatencyHistogram); err == nil {
			o.hist = h
		} else {
			fmt.Fprintf(p.o.Log, "capacity: %s: latency record: %v: the run is judged on its p99\n", rep.Raw, err)
		}
	}
	o.WindowS = rep.Report.TimeTakenSeconds
	o.ClientCPUUs, o.ServerCPUUs = mt.ClientCPUUs, mt.ServerCPUUs
	if w := rep.Window; w != nil {
		o.ClientBusy, o.ClientCores = w.ClientBusy, w.ClientCores
		if w.ServerKnown {
			o.ServerBusy, o.ServerCores = w.ServerBusy, w.ServerCores
		}
		if w.MachineKnown {
			o.StealCores = w.StealCores
		}
		o.ClientJITMs, o.ServerJITMs = w.ClientJITMs, w.ServerJITMs
	}
	return o, nil
}

// closed is the cell's closed-loop throughput at its concurrency over one
// measuring period (0: the run gave none).
func (p *prober) closed(ctx context.Context) (float64, error) {
	s := p.o.Spec.Search
	rep, err := p.once(ctx, "closed", 0, s.Measure.D(), s.Warmup.D())
	if err != nil || rep.Report == nil {
		return 0, err
	}
	return rep.Metrics.RPS, nil
}

// OpenPrime is the open-loop prime's rate over the search's start: half the
// closed-loop throughput, a load every cell carried in the runs measured.
const OpenPrime = 2

// prime runs 1 s runs through the cell's worker, un-counted, in the closed
// loop (rate 0) or the open loop at rate, until the client's and a JVM
// server's JIT compile for at most results.JITBusy of a run, or d is spent
// (at least one run).
func (p *prober) prime(ctx context.Context, d time.Duration, rate int) error {
	start := time.Now()
	kind, loop := "prime", "closed"
	if rate > 0 {
		kind, loop = "prime"+strconv.Itoa(rate)+"-", fmt.Sprintf("open at %d/s", rate)
	}
	for {
		rep, err := p.once(ctx, kind, rate, time.Second, 0)
		if err != nil {
			return err
		}
		w := rep.Window
		quiet := w != nil && w.Seconds > 0 &&
			(w.ClientJITMs == nil || !results.JITBusy(*w.ClientJITMs, w.Seconds)) &&
			(w.ServerJITMs == nil || !results.JITBusy(*w.ServerJITMs, w.Seconds))
		if quiet || time.Since(start) >= d || rep.Report == nil {
			fmt.Fprintf(p.o.Log, "capacity: primed %s (%s) for %.1f s (JIT at rest: %v)\n", p.c.Name(), loop, time.Since(start).Seconds(), quiet)
			return nil
		}
	}
}

// KneeText is a knee in one phrase: "12,400/s [11,900, 12,800] (server)".
func KneeText(k Knee) string {
	switch k.Status {
	case StatusFound:
		s := fmt.Sprintf("%s/s [%s, %s]", thousands(k.Rate), thousands(k.Low), thousands(k.High))
		if k.Limit != "" {
			s += " (" + k.Limit + ")"
		}
		return s
	case StatusAbove:
		return "at least " + thousands(k.Rate) + "/s"
	case StatusUnconverged:
		if k.Hi == 0 || k.Low == 0 {
			return fmt.Sprintf("at least %s/s, not converged", thousands(k.Lo))
		}
		return fmt.Sprintf("%s/s [%s, %s], bracket %s-%s not converged", thousands(k.Rate), thousands(k.Low), thousands(k.High), thousands(k.Lo), thousands(k.Hi))
	case StatusBelow:
		return "below the lowest rate tried"
	case StatusInaccurate:
		return "client did not hold its rate"
	}
	return k.Status
}

// thousands prints a rate rounded to 3 significant figures with thousands
// separators.
func thousands(r float64) string {
	if r <= 0 || math.IsNaN(r) || math.IsInf(r, 0) {
		return "—"
	}
	p := math.Pow(10, math.Max(0, math.Floor(math.Log10(r))-2))
	n := int64(math.Round(r/p) * p)
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func writeJSON(dir string, run *Run) error {
	return results.WriteJSON(filepath.Join(dir, RunFile), run)
}

// Load reads a capacity run's capacity.json.
func Load(dir string) (*Run, error) {
	b, err := os.ReadFile(filepath.Join(dir, RunFile))
	if err != nil {
		return nil, err
	}
	var run Run
	if err := json.Unmarshal(b, &run); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, RunFile), err)
	}
	return &run, nil
}
