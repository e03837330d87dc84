package matrix

import (
	"fmt"
	"github.com/rpcbed/rpcbed/internal/stats"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/cluster"
	"github.com/rpcbed/rpcbed/internal/report"
)

import (
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

func taskReport(complete int64, rps, cpu, mean float64, p50 int64, start, end float64) *report.Report {
	return &report.Report{Complete: complete, RequestsPerSecond: rps, DocumentLength: 5504,
		Rpcbed: &report.Extra{Connections: 25, CPUUserSeconds: cpu, MeanUs: mean, MaxUs: p50 * 3, P50Us: p50, P99Us: 4 * p50,
			Check: report.CheckFull, CPUScope: report.ScopeWindow, WindowStart: start, WindowEnd: end}}
}

// TestMerge: a split repeat sums what sums — calls, req/s, client CPU, over
// calls for CPU per call — takes the union of the windows on the driver's clock
// (each task's minus its clock offset), flags a skew over 1 % of the window, and
// never averages the tasks' percentiles.
func TestMerge(t *testing.T) {
	e := &executor{run: &results.Run{Spec: plan.Spec{}}, o: Options{}}
	sp := &swarmPlace{e: e}
	reps := []*report.Report{
		taskReport(1000, 500, 0.2, 100, 90, 1000.00, 1002.00),
		taskReport(3000, 1500, 0.4, 60, 50, 1000.53, 1002.53),
	}
	runs := []*taskRun{{rec: results.TaskRecord{NodeAddr: "198.18.1.2", WindowStartUnix: 1000.00, WindowEndUnix: 1002.00, ClientCPUS: 0.2, Clock: cluster.Clock{}}},
		{rec: results.TaskRecord{NodeAddr: "198.18.1.3", WindowStartUnix: 1000.03, WindowEndUnix: 1002.03, ClientCPUS: 0.4, Clock: cluster.Clock{OffsetS: 0.5}}}}
	var rep results.Repeat
	sp.merge(&rep, plan.Cell{Client: "go", Protocol: "grpc", Call: "datalist", Items: 200, Concurrency: 50, Nodes: 2}, runs, reps, nil, nil)
	m, w := rep.Metrics, rep.Window
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"calls", float64(m.Complete), 4000},
		{"req/s", m.RPS, 2000},
		{"client CPU µs/call", m.ClientCPUUs, 0.6e6 / 4000},
		{"mean µs", rep.Report.Rpcbed.MeanUs, (1000*100 + 3000*60) / 4000.0},
		{"max µs", float64(rep.Report.Rpcbed.MaxUs), 270},
		{"window start", w.StartUnix, 1000.00},
		{"window s", w.Seconds, 2.03},
		{"skew s", w.SkewS, 0.03},
		{"p50: not averaged", m.P50Us, 0},
	} {
		if math.Abs(tc.got-tc.want) > 1e-9*math.Max(1, math.Abs(tc.want)) {
			t.Errorf("%s: got %v; want %v", tc.name, tc.got, tc.want)
		}
	}
	if !rep.Has(results.FlagWindowSkew) {
		t.Errorf("a 30 ms skew over a 2 s window (over 1 %%): flags %v; want %s", rep.Flags, results.FlagWindowSkew)
	}
	if !strings.Contains(strings.Join(rep.Notes, " "), "never averaged") {
		t.Errorf("notes %q: want the missing merged percentiles said", rep.Notes)
	}
	// One task: its own percentiles are the merge's.
	var one results.Repeat
	sp.merge(&one, plan.Cell{Concurrency: 25, Nodes: 1}, runs[:1], reps[:1], nil, nil)
	if one.Metrics.P50Us != 90 || one.Has(results.FlagWindowSkew) {
		t.Errorf("one task: p50 %v, flags %v; want 90 and no skew", one.Metrics.P50Us, one.Flags)
	}
}

// TestMergeLatencyRecords: with every task's latency record, the split repeat's
// percentiles are the merged histogram's (stats.LatencyOf of all records), and
// its report keeps the merged record, which holds every task's calls.
func TestMergeLatencyRecords(t *testing.T) {
	var reps []*report.Report
	var recs []string
	var runs []*taskRun
	for i, golden := range []string{"go-client-hist-grpc-datalist-200-c8", "php-hist-grpc-datalist-200-c4"} {
		f, err := os.Open("../report/testdata/" + golden + ".txt")
		if err != nil {
			t.Fatal(err)
		}
		r, err := report.ParseClient(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, &r)
		recs = append(recs, r.Rpcbed.LatencyHistogram)
		runs = append(runs, &taskRun{rec: results.TaskRecord{NodeAddr: fmt.Sprintf("198.18.1.%d", i+2), WindowStartUnix: r.Rpcbed.WindowStart, WindowEndUnix: r.Rpcbed.WindowEnd}})
	}
	want, err := stats.LatencyOf(recs...)
	if err != nil {
		t.Fatal(err)
	}
	sp := &swarmPlace{e: &executor{run: &results.Run{}}}
	var rep results.Repeat
	sp.merge(&rep, plan.Cell{Concurrency: 12, Nodes: 2}, runs, reps, nil, nil)
	x := rep.Report.Rpcbed
	for _, tc := range []struct {
		name      string
		got, want int64
	}{
		{"p50", x.P50Us, want.P50Us}, {"p90", x.P90Us, want.P90Us}, {"p99", x.P99Us, want.P99Us}, {"p999", x.P999Us, want.P999Us},
		{"metrics p50", int64(rep.Metrics.P50Us), want.P50Us}, {"metrics p99", int64(rep.Metrics.P99Us), want.P99Us},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %d; want the merged histogram's %d", tc.name, tc.got, tc.want)
		}
	}
	back, err := stats.LatencyOf(x.LatencyHistogram)
	if err != nil {
		t.Fatal(err)
	}
	if back.Count != reps[0].Complete+reps[1].Complete || back.P99Us != want.P99Us {
		t.Errorf("the merged record: %d calls, p99 %d; want %d calls, p99 %d", back.Count, back.P99Us, reps[0].Complete+reps[1].Complete, want.P99Us)
	}
	for _, n := range rep.Notes {
		if strings.Contains(n, "percentiles unknown") {
			t.Errorf("note %q with every record present", n)
		}
	}
}

// A cluster repeat's common start: the warm-up plus the gang's set-up ahead
// (1 s at first), and a task that opened late grows the set-up by its
// lateness and half a second, up to 10 s; a task on time (within
// 20 ms) changes nothing.
func TestGangStartAt(t *testing.T) {
	gng := &gang{}
	l := plan.Load{Warmup: plan.Duration(500 * time.Millisecond)}
	at, lead := gng.startAt(l)
	if lead != 1500*time.Millisecond || time.Until(at) > lead || time.Until(at) < lead-time.Second {
		t.Fatalf("first start: lead %v, %v ahead; want 1.5 s (1 s set-up, 0.5 s warm-up)", lead, time.Until(at))
	}
	if _, lead := gng.startAt(plan.Load{Warmup: plan.Auto}); lead != 2*time.Second {
		t.Errorf("auto warm-up: lead %v; want 2 s (1 s set-up, 1 s for the warm-up)", lead)
	}
	task := func(asked, opened float64) *taskRun {
		return &taskRun{rec: results.TaskRecord{StartAtUnix: asked, WindowStartUnix: opened}}
	}
	for _, tc := range []struct {
		name string
		runs []*taskRun
		want time.Duration
	}{
		{"on time", []*taskRun{task(100, 100.001), task(100, 100.015)}, time.Second},
		{"one task 0.5 s late", []*taskRun{task(100, 100.002), task(100, 100.5)}, 2 * time.Second},
		{"no window (a failed task)", []*taskRun{task(100, 0)}, time.Second},
		{"far too late: capped", []*taskRun{task(100, 160)}, 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &gang{setup: time.Second}
			g.learn(tc.runs)
			if g.setup != tc.want {
				t.Errorf("set-up %v; want %v", g.setup, tc.want)
			}
		})
	}
}
