package costrun

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/cost"
	"github.com/rpcbed/rpcbed/internal/cost/costplan"
	"github.com/rpcbed/rpcbed/internal/report"
)

// ValgrindArgs are callgrind's options for every measured process (CodSpeed's
// instrumentation set, without --instr-atstart=no: rpcbed's marginal method
// needs no client request in the measured program).
func ValgrindArgs() []string {
	return []string{"--tool=callgrind", "--cache-sim=yes",
		"--I1=" + cost.Geometry.I1, "--D1=" + cost.Geometry.D1, "--LL=" + cost.Geometry.LL,
		"--collect-systime=nsec", "--trace-children=yes",
		// One file per thread, so the time-driven threads can be told apart (TimeDriven).
		"--separate-threads=yes"}
}

// valgrindCPU is the CPU the cell's process under callgrind runs on.
func (e *executor) valgrindCPU(c costplan.Cell) string {
	if c.Side == cost.SideServer {
		return e.o.ServerCPU
	}
	return e.o.ClientCPU
}

// segment sums a run's profiles and keeps what was summed in segment.json
// (each process's totals, the layers) beside the run's report.
// measured are the profiles a segment's figures count: neither the time-driven
// threads nor php-client's driver process.
func measured(profiles []*cost.Profile) []*cost.Profile {
	counted, _ := cost.SplitTimeDriven(profiles)
	counted, _ = cost.SplitDriver(counted)
	return counted
}

func (e *executor) segment(n int64, profiles []*cost.Profile, dir string) cost.Segment {
	counted, timed := cost.SplitTimeDriven(profiles)
	counted, driver := cost.SplitDriver(counted)
	seg := cost.Segment{Calls: n, Layers: e.layers.Split(counted)}
	type threadTotals struct {
		PID        int         `json:"pid"`
		Thread     int         `json:"thread"`
		Cmd        string      `json:"cmd"`
		Counts     cost.Counts `json:"counts"`
		Allocs     float64     `json:"allocs"`
		TimeDriven bool        `json:"time_driven,omitempty"`
		Driver     bool        `json:"driver,omitempty"`
	}
	var threads []threadTotals
	seg.Counts, seg.GC, seg.Bookkeeping = e.layers.Counted(counted)
	delete(seg.Layers, cost.LayerBookkeeping)
	for _, p := range counted {
		threads = append(threads, threadTotals{p.PID, p.Thread, p.Cmd, cost.CountsOf(p), cost.Allocations([]*cost.Profile{p}), false, false})
	}
	for _, p := range driver {
		// php-client's driver: bookkeeping, left out like Go's latency histogram.
		seg.Bookkeeping += float64(p.Event("Ir"))
		threads = append(threads, threadTotals{p.PID, p.Thread, p.Cmd, cost.CountsOf(p), cost.Allocations([]*cost.Profile{p}), false, true})
	}
	for _, p := range timed {
		seg.TimeDriven += float64(p.Event("Ir"))
		threads = append(threads, threadTotals{p.PID, p.Thread, p.Cmd, cost.CountsOf(p), cost.Allocations([]*cost.Profile{p}), true, false})
	}
	seg.Threads = threads
	seg.GCCycles = cost.GCCycles(counted)
	return seg
}

// savedSegment is segment.json: one run's sums, kept beside its report so a run
// can resume and a figure can be re-derived without the callgrind files.
type savedSegment struct {
	Version     int                `json:"version"`
	Calls       int64              `json:"calls"` // n and the warm-up calls
	WarmupCalls int64              `json:"warmup_calls"`
	Counts      cost.Counts        `json:"counts"`
	Layers      map[string]float64 `json:"layers"`
	TimeDriven  float64            `json:"time_driven_ir"`
	Bookkeeping float64            `json:"bookkeeping_ir"`
	GC          cost.Counts        `json:"gc"`
	BytesIn     float64            `json:"bytes_in"`
	BytesOut    float64            `json:"bytes_out"`
	Seconds     float64            `json:"seconds"`
	Allocs      float64            `json:"allocs"`
	GCCycles    float64            `json:"gc_cycles"`
	HeapBytes   float64            `json:"heap_bytes,omitempty"`
	HeapObjects float64            `json:"heap_objects,omitempty"`
	LiveHeap    float64            `json:"live_heap,omitempty"`
	Threads     any                `json:"threads"`
}

const segmentVersion = 5

func saveSegment(dir string, n int64, seg cost.Segment, allocs float64) {
	b, _ := json.MarshalIndent(savedSegment{segmentVersion, seg.Calls, seg.Calls - n, seg.Counts, seg.Layers, seg.TimeDriven, seg.Bookkeeping, seg.GC,
		seg.BytesIn, seg.BytesOut, seg.Seconds, allocs, seg.GCCycles, seg.HeapBytes, seg.HeapObjects, seg.LiveHeap, seg.Threads}, "", "  ")
	_ = os.WriteFile(filepath.Join(dir, "segment.json"), append(b, '\n'), 0o644)
}

// loadSaved gives a cell's two segments from an earlier, interrupted run of the
// same directory, when both were saved.
func (e *executor) loadSaved(c costplan.Cell) (short, long cost.Segment, allocs [2]float64, ok bool) {
	for i, n := range []int64{c.Calls.Short, c.Calls.Long} {
		b, err := os.ReadFile(filepath.Join(e.o.Dir, "raw", cost.RawName(c.ID()), strconv.FormatInt(n, 10), "segment.json"))
		if err != nil {
			return short, long, allocs, false
		}
		var sv savedSegment
		if json.Unmarshal(b, &sv) != nil || sv.Version != segmentVersion || sv.Calls-sv.WarmupCalls != n {
			return short, long, allocs, false
		}
		seg := cost.Segment{Calls: sv.Calls, Counts: sv.Counts, Layers: sv.Layers, TimeDriven: sv.TimeDriven, Bookkeeping: sv.Bookkeeping, GC: sv.GC,
			BytesIn: sv.BytesIn, BytesOut: sv.BytesOut, Seconds: sv.Seconds, GCCycles: sv.GCCycles,
			HeapBytes: sv.HeapBytes, HeapObjects: sv.HeapObjects, LiveHeap: sv.LiveHeap}
		allocs[i] = sv.Allocs
		if i == 0 {
			short = seg
		} else {
			long = seg
		}
	}
	return short, long, allocs, true
}

func removeProfiles(dir, prefix string) {
	ents, _ := os.ReadDir(dir)
	for _, de := range ents {
		if strings.HasPrefix(de.Name(), prefix) {
			_ = os.Remove(filepath.Join(dir, de.Name()))
		}
	}
}

// wrap pins argv to cpu (taskset) and, for a process under callgrind, turns
// address-space randomisation off (setarch -R), as CodSpeed does.
func (e *executor) wrap(cpu string, noASLR bool, argv []string) []string {
	if noASLR {
		if p, err := exec.LookPath("setarch"); err == nil {
			argv = append([]string{p, "-R"}, argv...)
		}
	}
	if cpu != "" {
		if p, err := exec.LookPath("taskset"); err == nil {
			argv = append([]string{p, "-c", cpu}, argv...)
		}
	}
	return argv
}

// readProfiles parses every callgrind file in dir whose name starts with prefix.
func (e *executor) readProfiles(dir, prefix string) ([]*cost.Profile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []*cost.Profile
	for _, de := range ents {
		if !strings.HasPrefix(de.Name(), prefix) {
			continue
		}
		if info, err := de.Info(); err == nil && info.Size() == 0 {
			continue // with --separate-threads=yes the file without a thread suffix stays empty
		}
		p, err := cost.ParseFile(filepath.Join(dir, de.Name()))
		if err != nil {
			return nil, err
		}
		if err := cost.CheckGeometry(p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no callgrind file", dir)
	}
	return out, nil
}

func callgrindControl(ctx context.Context, flag string, pid int) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "callgrind_control", flag, strconv.Itoa(pid)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "OK") {
		return fmt.Errorf("callgrind_control %s %d: %v: %s", flag, pid, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// runSegment is one run's segment from its callgrind files in dir: its calls
// (n and the client's warm-up calls), layers and time taken; the files go
// unless the run keeps them. The profiles are returned for their allocations.
func (e *executor) runSegment(dir string, n int64, rep report.Report) (cost.Segment, []*cost.Profile, error) {
	profiles, err := e.readProfiles(dir, "callgrind.")
	if err != nil {
		return cost.Segment{}, nil, err
	}
	seg := e.segment(n+warmupCalls(rep), profiles, dir)
	seg.Seconds = rep.TimeTakenSeconds
	if !e.o.KeepRaw {
		removeProfiles(dir, "callgrind.")
	}
	return seg, profiles, nil
}
