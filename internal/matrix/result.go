package matrix

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

	"github.com/rpcbed/rpcbed/internal/report"
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
	Spec     Spec              `json:"spec"`
	Verify   []Verify          `json:"verify"`
	Cells    []CellResult      `json:"cells"`
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
	Cell
	Load     Load      `json:"load"`
	Status   string    `json:"status"`
	Error    string    `json:"error,omitempty"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Repeats  []Repeat  `json:"repeats"`
}

// Repeat is one timed run of a cell.
type Repeat struct {
	Index    int     `json:"index"` // 1-based
	Raw      string  `json:"raw"`   // raw/<cell>-rN.txt, relative to the run
	ExitCode int     `json:"exit_code"`
	Error    string  `json:"error,omitempty"`
	WallS    float64 `json:"wall_s"`
	// ClientCPUS is the client process's CPU (user+system, every child included)
	// as the runner measured it: start-up, verify call and warm-up included.
	ClientCPUS float64 `json:"client_cpu_s"`
	// ServerCPUS and ServerCalls are the server's CPU and the calls it served over
	// the run (go-server: its /stats diffed; Java baselines: the runner's usage
	// diffed and the client's calls).
	ServerCPUS  float64        `json:"server_cpu_s"`
	ServerCalls int64          `json:"server_calls"`
	Report      *report.Report `json:"report,omitempty"`
	Metrics     Metrics        `json:"metrics"`
}

// Metrics are a repeat's figures, derived from its report and usages.
type Metrics struct {
	RPS   float64 `json:"rps"`
	P50Us float64 `json:"p50_us"`
	P99Us float64 `json:"p99_us"`
	// ClientCPUUs is the whole client process's CPU per call it made (warm-up and
	// start-up included); ClientCPUMeasuredUs the client's own figure per measured
	// call (Go and Java measure the timed part only, PHP its whole run).
	ClientCPUUs         float64 `json:"client_cpu_us_per_call"`
	ClientCPUMeasuredUs float64 `json:"client_cpu_measured_us_per_call"`
	ServerCPUUs         float64 `json:"server_cpu_us_per_call"`
	BytesPerResponse    int64   `json:"bytes_per_response"`
	Complete            int64   `json:"complete"`
	Failed              int64   `json:"failed"`
}

// metrics derives a repeat's figures.
func metrics(r *report.Report, clientCPU, serverCPU float64, serverCalls int64) Metrics {
	m := Metrics{
		RPS: r.RequestsPerSecond, BytesPerResponse: r.DocumentLength,
		Complete: r.Complete, Failed: r.Failed,
	}
	calls := r.Complete + r.Failed
	made := calls + 1 // the client's own verify call
	if x := r.Rpcbed; x != nil {
		m.P50Us, m.P99Us = float64(x.P50Us), float64(x.P99Us)
		made += x.WarmupCalls
		if calls > 0 {
			m.ClientCPUMeasuredUs = (x.CPUUserSeconds + x.CPUSystemSeconds) * 1e6 / float64(calls)
		}
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
	m.ClientCPUUs = clientCPU * 1e6 / float64(made)
	if serverCalls > 0 {
		m.ServerCPUUs = serverCPU * 1e6 / float64(serverCalls)
	}
	return m
}

// Stat is a figure over a cell's successful repeats.
type Stat struct {
	Median, Min, Max float64
	N                int
}

// Stat summarises one metric over the repeats that produced a report.
func (c CellResult) Stat(f func(Metrics) float64) Stat {
	return StatOf(c.Values(f))
}

// Values lists one metric over the repeats that produced a report.
func (c CellResult) Values(f func(Metrics) float64) []float64 {
	var v []float64
	for _, r := range c.Repeats {
		if r.Report != nil {
			v = append(v, f(r.Metrics))
		}
	}
	return v
}

// StatOf is the median, min and max of v (NaN for an empty v).
func StatOf(v []float64) Stat {
	if len(v) == 0 {
		return Stat{Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Stat{Median: med, Min: s[0], Max: s[len(s)-1], N: len(s)}
}

// Metric accessors, shared by the renderers and compare.
var (
	RPS               = func(m Metrics) float64 { return m.RPS }
	P50               = func(m Metrics) float64 { return m.P50Us }
	P99               = func(m Metrics) float64 { return m.P99Us }
	ClientCPU         = func(m Metrics) float64 { return m.ClientCPUUs }
	ClientCPUMeasured = func(m Metrics) float64 { return m.ClientCPUMeasuredUs }
	ServerCPU         = func(m Metrics) float64 { return m.ServerCPUUs }
	BytesPerResponse  = func(m Metrics) float64 { return float64(m.BytesPerResponse) }
	FailedCalls       = func(m Metrics) float64 { return float64(m.Failed) }
)

// Layout of a run directory.
const (
	SpecFile   = "spec.yaml"
	RunFile    = "run.json" // the Run without cells, rewritten as the run goes
	MatrixJSON = "matrix.json"
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
	_, err = f.Write(b)
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

func writeJSON(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(name, append(b, '\n'))
}

// Load reads a run directory back: run.json, verify.json and every cell file, in
// the spec's plan order (cells the plan no longer has come last, by name).
func LoadRun(dir string) (*Run, error) {
	var run Run
	b, err := os.ReadFile(filepath.Join(dir, RunFile))
	if errors.Is(err, fs.ErrNotExist) {
		// A run rendered into matrix.json only (e.g. a committed reference).
		b, err = os.ReadFile(filepath.Join(dir, MatrixJSON))
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &run); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, MatrixJSON), err)
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
	cells, err := loadCells(dir)
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

func loadCells(dir string) ([]CellResult, error) {
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

// ReadRaw reads a raw file back and splits it into the client's stdout and stderr.
func ReadRaw(name string) (stdout, stderr []byte, err error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, nil, err
	}
	out, errb, _ := strings.Cut(string(b), rawStderrMarker)
	return []byte(out), []byte(errb), nil
}

// rawStderrMarker separates stdout from stderr in a raw file; the report parser
// never reads past it.
const rawStderrMarker = "\n==> rpcbed: stderr <==\n"

func rawBytes(stdout, stderr []byte) []byte {
	b := make([]byte, 0, len(stdout)+len(stderr)+len(rawStderrMarker))
	b = append(b, stdout...)
	b = append(b, rawStderrMarker...)
	return append(b, stderr...)
}
