// Package results is what a matrix run recorded and how it is read back: the
// run (machine, versions, spec, verify pass, links, primes), every cell's
// repeats with their reports, windows, figures and flags, the cell summary and
// its rules (Summarize, Bottleneck), and the run directory's layout (LoadRun,
// WriteFileAtomic). Every report is computed from these files, never from a live
// run, so a saved run can be re-read by a newer rpcbed.
package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/cluster"
	"github.com/rpcbed/rpcbed/internal/report"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// Status of a cell or verify run.
const (
	StatusOK     = "ok"
	StatusFailed = "failed"
)

// Run is one matrix run: what matrix.json holds.
type Run struct {
	ID       string    `json:"id"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	Runner   string    `json:"runner"` // docker|local
	Machine  Machine   `json:"machine"`
	// Versions: rpcbed's Go toolchain, the engine, and every client's and server's
	// runtime and RPC library versions as their reports and /stats name them.
	Versions map[string]string `json:"versions"`
	Commit   string            `json:"commit"`
	Spec     plan.Spec         `json:"spec"`
	Verify   []Verify          `json:"verify"`
	// Links are the links of a multi-host run as probed before their cells.
	Links []LinkCheck `json:"links,omitempty"`
	// Primes are the workers' un-recorded priming (Spec.Prime), in run order.
	Primes []Prime `json:"primes,omitempty"`
	// Cluster is a cluster run's swarm as the driver found it.
	Cluster *ClusterRecord `json:"cluster,omitempty"`
	// Seed is the seed the rounds' order came from (Spec.Seed, or the one the run
	// picked); Rounds each server group's rounds in the order they ran.
	Seed   int64        `json:"seed,omitempty"`
	Rounds []Round      `json:"rounds,omitempty"`
	Cells  []CellResult `json:"cells"`
}

// Prime is how one worker's priming went: its rounds, their wall time, and each
// side's JIT compile time in its last round (nil: that side has no JIT).
type Prime struct {
	Worker  string  `json:"worker"` // java-grpc
	Rounds  int     `json:"rounds"`
	Seconds float64 `json:"seconds"`
	// AtRest: the last round's compile time was at most JITQuiet on both sides,
	// after every concurrency was primed; false when prime_max ended it first.
	AtRest bool `json:"at_rest"`
	// LastClientJITMs is over the last round's measured windows (LastWindowS),
	// LastServerJITMs over its wall time (LastRoundS).
	LastClientJITMs *float64 `json:"last_client_jit_ms,omitempty"`
	LastWindowS     float64  `json:"last_window_s,omitempty"`
	LastServerJITMs *float64 `json:"last_server_jit_ms,omitempty"`
	LastRoundS      float64  `json:"last_round_s,omitempty"`
}

// Round is one round of a server group: every cell of it once (or, for a round
// Spec.Precision added, the cells still too wide), in the order they ran.
type Round struct {
	Group string   `json:"group"` // go-server@ (server process @ link)
	Index int      `json:"index"` // 1-based: the repeats' Index
	Order []string `json:"order"`
	// Added: a round Spec.Precision added beyond Spec.Repeats.
	Added bool `json:"added,omitempty"`
}

// Machine is where a run ran.
type Machine struct {
	CPU    string `json:"cpu"`
	Cores  int    `json:"cores"`
	Kernel string `json:"kernel"`
	OS     string `json:"os"`
	MemMB  int    `json:"mem_mb"`
}

// Verify is one client x protocol x call checked with one call before timing.
type Verify struct {
	Pair     string `json:"pair"` // go-grpc-datalist
	Status   string `json:"status"`
	Error    string `json:"error,omitempty"`
	ExitCode int    `json:"exit_code"`
	Raw      string `json:"raw"`
}

// CellResult is one cell's outcome: its file is results/<run>/cells/<cell>.json.
type CellResult struct {
	Name string `json:"name"`
	plan.Cell
	Load   plan.Load `json:"load"`
	Status string    `json:"status"`
	// Error joins every reason a repeat failed or was noted, "rN: ..." each; none
	// overwrites another.
	Error    string    `json:"error,omitempty"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Repeats  []Repeat  `json:"repeats"`
	// Summary is computed from the repeats once the last one is done.
	Summary *Summary `json:"summary,omitempty"`
}

// StatusPartial is a cell whose repeats are not all done yet (an interrupted run:
// Resume runs the rest).
const StatusPartial = "partial"

// Flags a repeat or cell can carry; each is explained by a figure beside it.
const (
	// FlagCPUInvariant: a side's CPU over the window / window length exceeds the
	// cores it may use by more than 5 % (docs/method.md, section 3). The repeat's
	// CPU figures are not used.
	FlagCPUInvariant = "cpu-invariant"
	// FlagCPUScope: the client could not measure its CPU over the window (CPU
	// scope: process); its CPU figures are not used.
	FlagCPUScope = "cpu-scope"
	// FlagWarmup: an auto warm-up reached warmup_max without settling. A cell
	// carries it only where it mattered (flagMatters): an unsettled round's
	// req/s outside its settled rounds' range.
	FlagWarmup = "warmup-unsettled"
	// FlagServerRestarted: the server had stopped answering and was restarted
	// before this repeat.
	FlagServerRestarted = "server-restarted"
	// FlagJIT: a JVM side's JIT compilers were busy for more than JITQuiet of the
	// window (the report's "JIT compile:", a Java server's /stats): the repeat
	// measured code still being compiled, not the steady state.
	FlagJIT = "jit-compiling"
	// FlagNoisy: a repeat's steal over 2 % of a core. (A wide spread is no flag:
	// the cell's 95 % interval gives its width.)
	FlagNoisy = "noisy"
	// FlagWindowSkew: a cluster repeat's client tasks' windows (each on the
	// driver's clock, through its offset from the ready handshake) started or
	// ended further apart than SkewShare of the window.
	FlagWindowSkew = "window-skew"
	// FlagFewCalls: the window completed fewer than FewCalls calls, so one call more
	// or less moves its req/s by more than 1/FewCalls (5 %): the figure is counted
	// too coarsely to compare within the noise threshold.
	FlagFewCalls = "few-calls"
	// FlagLinkInvariant: a cell over a link with delay measured a median call
	// faster than the round trip the link adds, or more calls a second than c
	// calls in flight allow over it: a figure that breaks physics. The repeat is
	// not used.
	FlagLinkInvariant = "link-invariant"
)

// Invariant allowance and noise thresholds (docs/method.md, sections 3 and 6).
const (
	CPUAllowance    = 0.05
	NoisySpread     = 0.10
	NoisyStealCores = 0.02
	BoundBusy       = 0.9
	// JITQuiet: a JVM side whose JIT compiled for more than this share of a window
	// (or of a prime round) was still compiling.
	JITQuiet = 0.05
	// FewCalls: a window with fewer completed calls is flagged few-calls.
	FewCalls = 20
	// SkewShare: a cluster repeat whose tasks' windows lie further apart than
	// this share of the window is flagged window-skew.
	SkewShare = 0.01
)

// JITBusy tells whether ms of JIT compile time over seconds of run is more than
// JITQuiet of it: the JIT was still compiling.
func JITBusy(ms, seconds float64) bool { return ms > JITQuiet*seconds*1000 }

// Repeat is one timed run of a cell.
type Repeat struct {
	Index int `json:"index"` // 1-based: the round it ran in (Run.Rounds)
	// Fork is the server start (1-based) the repeat ran against, in a group that
	// forks (Spec.Forks); 0: the group does not fork.
	Fork     int     `json:"fork,omitempty"`
	Raw      string  `json:"raw"` // raw/<cell>-rN.txt, relative to the run
	ExitCode int     `json:"exit_code"`
	Error    string  `json:"error,omitempty"` // every reason the repeat failed, joined
	WallS    float64 `json:"wall_s"`
	// Worker: the run went through a long-lived client worker.
	Worker bool `json:"worker,omitempty"`
	// WorkerID names the worker process that ran it (client-protocol#N, N counting
	// the group's worker starts): repeats with one WorkerID ran in one warm process.
	WorkerID string `json:"worker_id,omitempty"`
	// Probe: the CPU probe's times before and after the run (internal/probe).
	Probe *Probe `json:"probe,omitempty"`
	// ClientCPUS is the client process's CPU over the whole run as the runner
	// measured it (start-up, verify and warm-up included): a cross-check, for
	// one-shot runs only (0 for a worker's run).
	ClientCPUS float64 `json:"client_cpu_s"`
	// ServerCPUS and ServerCalls are the server's CPU and calls over the window.
	ServerCPUS  float64 `json:"server_cpu_s"`
	ServerCalls int64   `json:"server_calls"`
	// Window is both sides' figures over the client's measured window.
	Window *Window `json:"window,omitempty"`
	// Flags name what makes a figure of this repeat unusable or doubtful, Notes say
	// why in words.
	Flags   []string       `json:"flags,omitempty"`
	Notes   []string       `json:"notes,omitempty"`
	Report  *report.Report `json:"report,omitempty"`
	Metrics Metrics        `json:"metrics"`
	// Tasks are a cluster repeat's client tasks, one per node: Report and
	// Metrics are then their merge (sums; percentiles from merged histograms).
	Tasks []TaskRecord `json:"tasks,omitempty"`
}

// Window is one repeat's measured window, both sides and the machine over it.
type Window struct {
	StartUnix float64 `json:"start_unix_s"`
	EndUnix   float64 `json:"end_unix_s"`
	Seconds   float64 `json:"seconds"`
	// Source says where the window came from: "report" (the client's Window
	// start/end) or "run" (the runner's start and end of the run, when the report
	// has no window).
	Source string `json:"source"`
	// ClientCPUS is the client's own CPU over the window (the report's).
	ClientCPUS float64 `json:"client_cpu_s"`
	// ServerCPUS/ServerCalls: the server's /stats interpolated at the window's ends;
	// ServerKnown is false when the server could not be sampled.
	ServerCPUS  float64 `json:"server_cpu_s"`
	ServerCalls int64   `json:"server_calls"`
	// ServerCallsInterpolated is ServerCalls before rounding, the count the
	// per-call figures divide by (the CPU is interpolated the same way); kept
	// only while the repeat is measured.
	ServerCallsInterpolated float64 `json:"-"`
	ServerKnown             bool    `json:"server_known"`
	Samples                 int     `json:"samples"`
	// Cores each side may use, and the cores it kept busy (CPU / window length).
	ClientCores float64 `json:"client_cores"`
	ServerCores float64 `json:"server_cores"`
	ClientBusy  float64 `json:"client_busy_cores"`
	ServerBusy  float64 `json:"server_busy_cores"`
	// From /proc/stat over the window: the machine's busy cores, its steal, and
	// the CPU used outside the cell (all busy CPU minus client and server), in cores.
	MachineKnown bool    `json:"machine_known"`
	MachineBusy  float64 `json:"machine_busy_cores"`
	StealCores   float64 `json:"steal_cores"`
	OutsideCores float64 `json:"outside_cores"`
	// ClientJITMs and ServerJITMs are a JVM side's JIT compile time within the
	// window in milliseconds (java-client's report, a Java server's /stats); nil
	// for a side without a JIT.
	ClientJITMs *float64 `json:"client_jit_ms,omitempty"`
	ServerJITMs *float64 `json:"server_jit_ms,omitempty"`
	// SkewS: a cluster repeat's largest distance between its tasks' window starts
	// or ends, on the driver's clock.
	SkewS float64 `json:"skew_s,omitempty"`
	// Over a link with delay: the least round trip the link adds (its achieved
	// round trip less twice its jitter, both ways), and the delayers' CPU over
	// the window (seconds) and busy cores; the link is the bottleneck
	// ("link-bound") when the delayers are busier than LinkBusyCeiling.
	LinkFloorUs float64 `json:"link_floor_us,omitempty"`
	LinkCPUS    float64 `json:"link_cpu_s,omitempty"`
	LinkBusy    float64 `json:"link_busy_cores,omitempty"`
	LinkKnown   bool    `json:"link_known,omitempty"`
}

// LinkBusyCeiling is the delayers' busy cores beyond which a cell measures the
// link's own machinery: one delayer thread per side, each past 80 % of a core.
const LinkBusyCeiling = 0.8

// Metrics are a repeat's figures, derived from its report and window.
type Metrics struct {
	RPS   float64 `json:"rps"`
	P50Us float64 `json:"p50_us"`
	P99Us float64 `json:"p99_us"`
	// ClientCPUUs and ServerCPUUs are each side's CPU per call over the window.
	ClientCPUUs float64 `json:"client_cpu_us_per_call"`
	ServerCPUUs float64 `json:"server_cpu_us_per_call"`
	// ClientCPUProcessUs is the runner's whole-process figure per call the client
	// made (start-up and warm-up included; one-shot runs only): what the matrix
	// printed before the window.
	ClientCPUProcessUs float64 `json:"client_cpu_process_us_per_call"`
	// Calls per CPU-second on each side, and each side's busy fraction (busy cores
	// / cores it may use) over the window.
	ClientCallsPerCPUS float64 `json:"client_calls_per_cpu_s"`
	ServerCallsPerCPUS float64 `json:"server_calls_per_cpu_s"`
	ClientBusy         float64 `json:"client_busy"`
	ServerBusy         float64 `json:"server_busy"`
	// CPUNotUsed: the repeat's CPU figures are recorded but not used (a flag says why).
	CPUNotUsed       bool  `json:"cpu_not_used,omitempty"`
	BytesPerResponse int64 `json:"bytes_per_response"`
	Complete         int64 `json:"complete"`
	Failed           int64 `json:"failed"`
}

// Summary is a cell's figures over its good repeats.
type Summary struct {
	// Spread is (max - min) / median of req/s over the good repeats.
	Spread float64 `json:"rps_spread"`
	// ClientCPUSpread and ServerCPUSpread: the same for each side's CPU per call
	// (0 when fewer than two repeats have the figure).
	ClientCPUSpread float64 `json:"client_cpu_spread,omitzero"`
	ServerCPUSpread float64 `json:"server_cpu_spread,omitzero"`
	// ProbeSpread: the CPU probe's (max-min)/median over the repeats, the larger
	// side; 0 when no repeat was probed.
	ProbeSpread float64 `json:"probe_spread,omitzero"`
	// MaxStealCores and MaxOutsideCores: the largest per repeat.
	MaxStealCores   float64 `json:"max_steal_cores"`
	MaxOutsideCores float64 `json:"max_outside_cores"`
	// Bottleneck: client-bound, server-bound or latency-bound (docs/method.md, section 7).
	Bottleneck string `json:"bottleneck,omitempty"`
	// Conns is the connection count every run used.
	Conns int `json:"conns"`
	// Flags are the cell's (noisy, warmup-unsettled, cpu-invariant ...), Reasons
	// the figures behind each.
	Flags   []string `json:"flags,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
}

// Stat summarises one metric over the repeats that produced a report.
func (c CellResult) Stat(f func(Metrics) float64) stats.Stat {
	return stats.Of(c.Values(f))
}

// MinSteady is the fewest repeats with the JIT at rest a cell keeps before its
// figures leave out the repeats flagged jit-compiling (CellResult.kept).
const MinSteady = 2

// kept is the repeats of c that count in its figures: those that produced a
// report, less, where at least MinSteady of them ran with the JIT at rest, those
// whose JIT compiled for over JITQuiet of the window (FlagJIT). Such a repeat
// times code still being compiled, with the compiler threads' CPU in the
// client's or server's CPU per call (docs/method.md, section 5); it stays in the
// record (matrix.json, bench.txt) and the cell's note names it.
func (c CellResult) kept() []Repeat {
	var ok, steady []Repeat
	for _, r := range c.Repeats {
		if r.Report == nil {
			continue
		}
		ok = append(ok, r)
		if !slices.Contains(r.Flags, FlagJIT) {
			steady = append(steady, r)
		}
	}
	if len(steady) < MinSteady {
		return ok
	}
	return steady
}

// Values lists one metric over the repeats that count (kept), leaving out
// the figures a repeat does not give (NaN: a CPU figure not used, a server that
// could not be sampled).
func (c CellResult) Values(f func(Metrics) float64) []float64 {
	var v []float64
	for _, r := range c.kept() {
		if x := f(r.Metrics); !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	return v
}

// ValuesByFork is Values split by the fork each repeat ran in (Repeat.Fork), in
// fork order; one group for a cell that did not fork.
func (c CellResult) ValuesByFork(f func(Metrics) float64) [][]float64 {
	by := map[int][]float64{}
	var forks []int
	for _, r := range c.kept() {
		if x := f(r.Metrics); !math.IsNaN(x) {
			if _, ok := by[r.Fork]; !ok {
				forks = append(forks, r.Fork)
			}
			by[r.Fork] = append(by[r.Fork], x)
		}
	}
	slices.Sort(forks)
	out := make([][]float64, 0, len(forks))
	for _, k := range forks {
		out = append(out, by[k])
	}
	return out
}

// cpuFigure is a CPU-derived figure: NaN when the repeat's CPU figures are not
// used or the figure is unknown (0).
func cpuFigure(m Metrics, v float64) float64 {
	if m.CPUNotUsed || v == 0 {
		return math.NaN()
	}
	return v
}

// Metric accessors, shared by the renderers and compare.
var (
	RPS                = func(m Metrics) float64 { return m.RPS }
	P50                = func(m Metrics) float64 { return m.P50Us }
	P99                = func(m Metrics) float64 { return m.P99Us }
	ClientCPU          = func(m Metrics) float64 { return cpuFigure(m, m.ClientCPUUs) }
	ClientCPUProcess   = func(m Metrics) float64 { return cpuFigure(Metrics{}, m.ClientCPUProcessUs) }
	ServerCPU          = func(m Metrics) float64 { return cpuFigure(m, m.ServerCPUUs) }
	ClientCallsPerCPUS = func(m Metrics) float64 { return cpuFigure(m, m.ClientCallsPerCPUS) }
	ServerCallsPerCPUS = func(m Metrics) float64 { return cpuFigure(m, m.ServerCallsPerCPUS) }
	ClientBusy         = func(m Metrics) float64 { return cpuFigure(m, m.ClientBusy) }
	ServerBusy         = func(m Metrics) float64 { return cpuFigure(m, m.ServerBusy) }
	BytesPerResponse   = func(m Metrics) float64 { return float64(m.BytesPerResponse) }
	FailedCalls        = func(m Metrics) float64 { return float64(m.Failed) }
)

// Layout of a run directory.
const (
	SpecFile   = "spec.yaml"
	RunFile    = "run.json" // the Run without cells, rewritten as the run goes
	JSONFile   = "matrix.json"
	CellsDir   = "cells"
	RawDir     = "raw"
	VerifyFile = "verify.json"
)

// WriteFileAtomic writes b to name through a temporary file in the same directory
// and a rename, so a reader (or a crash) sees the old file or the new, never half.
func WriteFileAtomic(name string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	// CreateTemp makes the file 0600; results are for every reader (0644).
	err = f.Chmod(0o644)
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

func WriteJSON(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(name, append(b, '\n'))
}

// LoadRun reads a run directory back: run.json, verify.json and every cell file, in
// the spec's plan order (cells the plan no longer has come last, by name).
func LoadRun(dir string) (*Run, error) {
	var run Run
	b, err := os.ReadFile(filepath.Join(dir, RunFile))
	if errors.Is(err, fs.ErrNotExist) {
		// A run rendered into matrix.json only (e.g. a committed reference).
		b, err = os.ReadFile(filepath.Join(dir, JSONFile))
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &run); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, JSONFile), err)
		}
		return &run, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &run); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, RunFile), err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, VerifyFile)); err == nil {
		if err := json.Unmarshal(b, &run.Verify); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, VerifyFile), err)
		}
	}
	cells, err := LoadCells(dir)
	if err != nil {
		return nil, err
	}
	order := map[string]int{}
	for i, c := range run.Spec.Plan() {
		order[c.Name()] = i
	}
	rank := func(name string) int {
		if i, ok := order[name]; ok {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(cells, func(a, b CellResult) int {
		if d := rank(a.Name) - rank(b.Name); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	run.Cells = cells
	return &run, nil
}

// LoadCells reads every cell file of a run directory, in no particular order.
func LoadCells(dir string) ([]CellResult, error) {
	files, err := filepath.Glob(filepath.Join(dir, CellsDir, "*.json"))
	if err != nil {
		return nil, err
	}
	var cells []CellResult
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var c CellResult
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		cells = append(cells, c)
	}
	return cells, nil
}

// RawStderrMarker separates stdout from stderr in a raw file; the report parser
// never reads past it.
const RawStderrMarker = "\n==> rpcbed: stderr <==\n"

func RawBytes(stdout, stderr []byte) []byte {
	b := make([]byte, 0, len(stdout)+len(stderr)+len(RawStderrMarker))
	b = append(b, stdout...)
	b = append(b, RawStderrMarker...)
	return append(b, stderr...)
}

// Summarize computes a cell's summary from its repeats: the req/s spread, the
// largest steal and outside CPU, the bottleneck, and every flag with its reason.
func (c CellResult) Summarize() *Summary {
	s := &Summary{Conns: c.Load.ConnsFor(c.Concurrency)}
	add := func(flag, reason string) {
		if !slices.Contains(s.Flags, flag) {
			s.Flags = append(s.Flags, flag)
		}
		if reason != "" {
			s.Reasons = append(s.Reasons, reason)
		}
	}
	rps := c.Stat(RPS)
	if rps.N > 0 && rps.Median > 0 {
		s.Spread = (rps.Max - rps.Min) / rps.Median
	}
	for _, r := range c.Repeats {
		for _, f := range r.Flags {
			if rule, _ := RuleOf(f); rule.Carry == CarryWhenItMatters && !c.flagMatters(f) {
				continue
			}
			for _, n := range r.Notes {
				if strings.HasPrefix(n, f+": ") {
					add(f, fmt.Sprintf("r%d %s", r.Index, n))
				}
			}
			add(f, "")
		}
		if r.Report == nil || r.Window == nil || !r.Window.MachineKnown {
			continue
		}
		s.MaxStealCores = math.Max(s.MaxStealCores, r.Window.StealCores)
		s.MaxOutsideCores = math.Max(s.MaxOutsideCores, r.Window.OutsideCores)
	}
	// A wide spread is not flagged: the cell's 95 % interval says how wide it is
	// (Uncertainty; matrix.md's note gives it past the precision).
	for _, side := range []struct {
		name string
		f    func(Metrics) float64
		dst  *float64
	}{{"client", ClientCPU, &s.ClientCPUSpread}, {"server", ServerCPU, &s.ServerCPUSpread}} {
		v := c.Values(side.f)
		sp := stats.Spread(v)
		if math.IsNaN(sp) {
			continue
		}
		*side.dst = sp
	}
	for _, m := range c.conditionReasons() {
		add(m[0], m[1])
	}
	if noisy, _ := RuleOf(FlagNoisy); s.MaxStealCores > noisy.Threshold {
		add(FlagNoisy, fmt.Sprintf("noisy: steal %.1f %% of a core in a repeat (> %.0f %%)", s.MaxStealCores*100, noisy.Threshold*100))
	}
	if ps := c.ProbeSpread(); !math.IsNaN(ps) {
		s.ProbeSpread = ps
	}
	s.Bottleneck = Bottleneck(c.Stat(ClientBusy).Median, c.Stat(ServerBusy).Median)
	return s
}

// flagMatters says whether a flag carried when it matters (a warm-up that did
// not settle) changed the cell's req/s: a flagged round outside the range of
// the cell's other rounds, or fewer than two others to tell by.
func (c CellResult) flagMatters(flag string) bool {
	var settled, unsettled []float64
	for _, r := range c.Repeats {
		if r.Report == nil {
			continue
		}
		if slices.Contains(r.Flags, flag) {
			unsettled = append(unsettled, r.Metrics.RPS)
		} else {
			settled = append(settled, r.Metrics.RPS)
		}
	}
	if len(unsettled) == 0 {
		return false
	}
	if len(settled) < 2 {
		return true
	}
	lo, hi := slices.Min(settled), slices.Max(settled)
	for _, v := range unsettled {
		if v < lo || v > hi {
			return true
		}
	}
	return false
}

// Bottleneck labels a cell from each side's busy fraction over the window
// (docs/method.md, section 7): the side at BoundBusy or more (the busier, when
// both are), else latency-bound; "" when neither fraction is known.
func Bottleneck(clientBusy, serverBusy float64) string {
	cb, sb := !math.IsNaN(clientBusy) && clientBusy >= BoundBusy, !math.IsNaN(serverBusy) && serverBusy >= BoundBusy
	switch {
	case cb && sb && serverBusy > clientBusy, sb && !cb:
		return "server-bound"
	case cb:
		return "client-bound"
	case math.IsNaN(clientBusy) || math.IsNaN(serverBusy):
		return "" // one side unknown: it may be the one that is bound
	}
	return "latency-bound"
}

// Flagged reports whether the cell's summary carries flag.
func (c CellResult) Flagged(flag string) bool {
	return c.Summary != nil && slices.Contains(c.Summary.Flags, flag)
}

// Missing lists the plan's cells that have no result in the run (an unfinished
// run: rpcbed matrix -resume runs them), in plan order.
func (r *Run) Missing() []plan.Cell {
	have := map[string]bool{}
	for _, c := range r.Cells {
		have[c.Name] = true
	}
	var m []plan.Cell
	for _, c := range r.Spec.Plan() {
		if !have[c.Name()] {
			m = append(m, c)
		}
	}
	return m
}

// Tally counts the run's cells by status.
func (r *Run) Tally() (ok, failed, partial int) {
	for _, c := range r.Cells {
		switch c.Status {
		case StatusOK:
			ok++
		case StatusPartial:
			partial++
		default:
			failed++
		}
	}
	return ok, failed, partial
}

// Probe is a repeat's CPU probe times in µs: [before, after] the run, on the
// first CPU of the client's and of the server's cpuset. ClientCacheUs and
// ServerCacheUs are the cache probe's (internal/probe), timed just after; runs
// recorded before it have none.
type Probe struct {
	ClientUs      [2]float64 `json:"client_us"`
	ServerUs      [2]float64 `json:"server_us"`
	ClientCacheUs [2]float64 `json:"client_cache_us,omitzero"`
	ServerCacheUs [2]float64 `json:"server_cache_us,omitzero"`
}

// ProbeSpread is (max-min)/median of the probe times over the repeats' probes,
// the larger of the two sides; NaN when no repeat was probed.
func (c CellResult) ProbeSpread() float64 {
	out := math.NaN()
	for _, side := range []func(*Probe) [2]float64{
		func(p *Probe) [2]float64 { return p.ClientUs },
		func(p *Probe) [2]float64 { return p.ServerUs },
	} {
		var v []float64
		for _, r := range c.Repeats {
			if r.Probe == nil {
				continue
			}
			for _, x := range side(r.Probe) {
				if x > 0 {
					v = append(v, x)
				}
			}
		}
		if s := stats.Spread(v); !math.IsNaN(s) && (math.IsNaN(out) || s > out) {
			out = s
		}
	}
	return out
}

// ProbeMedian is the median compute probe time (µs) over every repeat of the
// run, per side; NaN when none was probed.
func (r *Run) ProbeMedian() (client, server float64) {
	return r.probeMedian(func(p *Probe) (c, s [2]float64) { return p.ClientUs, p.ServerUs })
}

// CacheProbeMedian is ProbeMedian of the cache probe; NaN for a run recorded
// before the driver timed it.
func (r *Run) CacheProbeMedian() (client, server float64) {
	return r.probeMedian(func(p *Probe) (c, s [2]float64) { return p.ClientCacheUs, p.ServerCacheUs })
}

func (r *Run) probeMedian(times func(*Probe) (c, s [2]float64)) (client, server float64) {
	var cv, sv []float64
	for _, c := range r.Cells {
		for _, rep := range c.Repeats {
			if rep.Probe == nil {
				continue
			}
			ct, st := times(rep.Probe)
			for i := range 2 {
				if x := ct[i]; x > 0 {
					cv = append(cv, x)
				}
				if x := st[i]; x > 0 {
					sv = append(sv, x)
				}
			}
		}
	}
	return stats.Of(cv).Median, stats.Of(sv).Median
}

// LinkCheck is a link as the driver measured it before its cells ran: matrix.json's
// links, matrix.md's "Link" section.
type LinkCheck struct {
	Link string `json:"link"`
	// Rate is the shaping asked for ("" unshaped); Loopback: no link at all.
	Rate     string `json:"rate,omitempty"`
	Loopback bool   `json:"loopback,omitempty"`
	// From and To are the client host and the server host the probe crossed.
	From string `json:"from"`
	To   string `json:"to"`
	// RTTUs is the median of one-at-a-time HTTP datatype calls (one small request,
	// one small answer: the link's round trip plus the server's few µs).
	RTTUs float64 `json:"rtt_us"`
	// ThroughputBps is the bytes per second carried by HTTP datalist-5000 answers
	// at c=4, times 8: the link's rate where the link, not a CPU, is the limit.
	ThroughputBps float64 `json:"throughput_bps"`
	// Method says what was run; Error why a figure is missing.
	Method string    `json:"probe"`
	Error  string    `json:"error,omitempty"`
	At     time.Time `json:"at"`

	// Delay, jitter and loss: asked against achieved (linkshape, the delayer).
	// Mechanism is how the link was made on each host (netem, nfqueue, tbf).
	Mechanism []string `json:"mechanism,omitempty"`
	// AskedRTTUs is the round trip the link is asked to add (its one-way delay,
	// both ways); BaseRTTUs the path's own, measured unshaped the same way as
	// RTTUs; AddedRTTUs = RTTUs - BaseRTTUs, what the link achieved.
	AskedRTTUs float64 `json:"asked_rtt_us,omitempty"`
	BaseRTTUs  float64 `json:"base_rtt_us,omitempty"`
	AddedRTTUs float64 `json:"added_rtt_us,omitempty"`
	RTTP99Us   float64 `json:"rtt_p99_us,omitempty"`
	// AppliedDelayUs is the one-way delay given to the mechanism after
	// Calibrations corrections by the measured excess (the delayer's and the
	// hops' own time), so that the achieved round trip is the asked one.
	AppliedDelayUs float64 `json:"applied_delay_us,omitempty"`
	Calibrations   int     `json:"calibrations,omitempty"`
	// Floor: no smaller delay could be applied (the mechanism alone adds more).
	Floor bool `json:"floor,omitempty"`
	// AskedLossPct is the loss asked each way; LossPct the share the kernel's
	// counters dropped of what arrived over the loss probe, LossPackets the
	// packets it is a share of (summed over both sides).
	AskedLossPct float64 `json:"asked_loss_pct,omitempty"`
	LossPct      float64 `json:"loss_pct,omitempty"`
	LossPackets  uint64  `json:"loss_packets,omitempty"`
	// After the link's cells: the round trip again and the loss over the cells.
	AfterRTTUs      float64 `json:"after_rtt_us,omitempty"`
	AfterAddedRTTUs float64 `json:"after_added_rtt_us,omitempty"`
	AfterLossPct    float64 `json:"after_loss_pct,omitempty"`
	AfterPackets    uint64  `json:"after_packets,omitempty"`
	// Delayer is what the delayers did over the link (nfqueue only): packets,
	// how late they were released, their CPU seconds.
	Delayer *LinkDelayer `json:"delayer,omitempty"`
	// Refused says why the link's cells were not run: what was achieved is not
	// what was asked (a round trip off by more than 10 % or 100 µs, a loss off by
	// more than a third). Drift says the check after the cells found the same.
	Refused string `json:"refused,omitempty"`
	Drift   string `json:"drift,omitempty"`
}

// LinkDelayer is the delayers' figures over one link, summed over the hosts.
type LinkDelayer struct {
	Packets    uint64  `json:"packets"`
	LateP50Us  float64 `json:"late_p50_us"` // the worst host's
	LateP99Us  float64 `json:"late_p99_us"`
	CPUSeconds float64 `json:"cpu_seconds"`
	Dropped    uint64  `json:"kernel_dropped"` // queue full or not handed over: should be 0
	// Stamped is how many packets carried the kernel's arrival stamp (their
	// delay counted from it); ReadLateP50Us how long after arriving the worst
	// host's delayer read them, at p50; SpinUs its last early wake-up.
	Stamped       uint64  `json:"stamped,omitempty"`
	ReadLateP50Us float64 `json:"read_late_p50_us,omitempty"`
	SpinUs        float64 `json:"spin_us,omitempty"`
	// ArrivedBehind is the TCP data segments that reached a delayer behind a
	// later one of their flow: reordered (or retransmitted) on the way in. The
	// delayer keeps the order it is given.
	ArrivedBehind uint64 `json:"arrived_behind,omitempty"`
}

// Summary is the check in one line, for progress notes.
func (p LinkCheck) Summary() string {
	s := fmt.Sprintf("RTT %.0f µs, throughput %.1f Mbit/s", p.RTTUs, p.ThroughputBps/1e6)
	if p.AskedRTTUs > 0 {
		s += fmt.Sprintf("; round trip added %.0f µs against %.0f asked (base %.0f µs, one-way delay applied %.0f µs)", p.AddedRTTUs, p.AskedRTTUs, p.BaseRTTUs, p.AppliedDelayUs)
	}
	if p.AskedLossPct > 0 {
		s += fmt.Sprintf("; loss %.2f %% of %d packets against %.2g %% asked", p.LossPct, p.LossPackets, p.AskedLossPct)
	}
	if len(p.Mechanism) > 0 {
		s += " (" + strings.Join(p.Mechanism, ", ") + ")"
	}
	if p.Refused != "" {
		s += "; REFUSED: " + p.Refused
	}
	return s
}

// Finish sets a cell's status, joined error and summary once its repeats are done.
func (c *CellResult) Finish() {
	c.Finished = time.Now().UTC()
	c.Status = StatusFailed
	var errs []string
	for _, r := range c.Repeats {
		if r.Report != nil {
			c.Status = StatusOK
		}
		if r.Error != "" {
			errs = append(errs, fmt.Sprintf("r%d: %s", r.Index, r.Error))
		}
	}
	c.Error = strings.Join(errs, "; ")
	c.Summary = c.Summarize()
}

// Flag marks the repeat with f (once) and notes why.
func (r *Repeat) Flag(f, why string) {
	if !slices.Contains(r.Flags, f) {
		r.Flags = append(r.Flags, f)
	}
	r.Notes = append(r.Notes, f+": "+why)
}

// Has reports whether the repeat carries flag f.
func (r *Repeat) Has(f string) bool { return slices.Contains(r.Flags, f) }

// ByRound is one figure of a cell's good repeats by round (Repeat.Index).
func (c CellResult) ByRound(f func(Metrics) float64) map[int]float64 {
	m := map[int]float64{}
	for _, r := range c.kept() {
		if x := f(r.Metrics); !math.IsNaN(x) && x > 0 {
			m[r.Index] = x
		}
	}
	return m
}

// ClusterRecord is a cluster run's set-up as the driver found it: matrix.json's
// cluster.
type ClusterRecord struct {
	Engine  string         `json:"engine"`
	Manager string         `json:"manager"`
	Formed  bool           `json:"formed"`
	Barrier string         `json:"barrier"`
	Nodes   []cluster.Node `json:"nodes"`
}

// TaskRecord is one client task of a cluster repeat: where it ran, its share of
// the load, its clock against the driver's, its own window on the driver's clock
// and its figures. The merged repeat sums what sums over these.
type TaskRecord struct {
	Task     string        `json:"task"`
	Node     string        `json:"node"`
	NodeAddr string        `json:"node_addr"`
	Share    plan.Share    `json:"share"`
	Clock    cluster.Clock `json:"clock"`
	// StartAtUnix is the common start the driver asked of every task of the
	// repeat (-start-at, on the driver's clock); a task's window opens then or,
	// when its set-up and warm-up took longer, late (WindowStartUnix - StartAtUnix).
	StartAtUnix float64 `json:"start_at_unix_s,omitempty"`
	// WindowStartUnix and WindowEndUnix: the task's window (its report's) minus its
	// clock offset.
	WindowStartUnix float64 `json:"window_start_unix_s,omitempty"`
	WindowEndUnix   float64 `json:"window_end_unix_s,omitempty"`
	Complete        int64   `json:"complete"`
	Failed          int64   `json:"failed"`
	RPS             float64 `json:"rps"`
	ClientCPUS      float64 `json:"client_cpu_s"`
	// ClientCPUUs is this node's client CPU per call over its window (its CPU /
	// its calls); the repeat's is the summed CPU over the summed calls.
	ClientCPUUs float64 `json:"client_cpu_us_per_call,omitempty"`
	// State and ExitCode are swarm's view of the task once it ended.
	State    string `json:"state,omitempty"`
	ExitCode int    `json:"exit_code"`
	Error    string `json:"error,omitempty"`
	// Raw is the task's report and stderr, relative to the run.
	Raw string `json:"raw"`
}

// Spread is (max - min) / median of req/s over the good repeats: the cell's
// summary's when the run has one, else from the repeats; NaN with fewer than
// two repeats.
func (c CellResult) Spread() float64 {
	s := c.Stat(RPS)
	if s.N < 2 || !(s.Median > 0) {
		return math.NaN()
	}
	if c.Summary != nil {
		return c.Summary.Spread
	}
	return (s.Max - s.Min) / s.Median
}

// Noisy is the cell's noisy flag under today's rules (Summarized); a run saved
// with figures only is noisy when its spread is over NoisySpread.
func (c CellResult) Noisy() bool {
	if len(c.Repeats) == 0 && c.Summary == nil {
		return c.Spread()*100 > NoisySpread*100
	}
	return slices.Contains(c.Summarized().Flags, FlagNoisy)
}

// Summarized is the cell's summary under today's rules: computed from its
// repeats (a saved one may predate a rule), the saved one for a cell without
// repeats.
func (c CellResult) Summarized() *Summary {
	if len(c.Repeats) == 0 && c.Summary != nil {
		return c.Summary
	}
	return c.Summarize()
}
