package measure

import (
	"fmt"
	"math"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/runner"
	"github.com/rpcbed/rpcbed/internal/sample"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// MergeTasks makes rep of a cluster repeat's task reports (recs[i] the record
// of the task that wrote reports[i]; perNode the cores a task may use,
// serverCores the server's): what sums is summed
// (calls, failures, req/s, client CPU), the window is the union of the tasks'
// windows on the driver's clock (the server's CPU and calls are read over it),
// and the percentiles come from the tasks' merged latency histograms — never an
// average of the tasks' percentiles.
func MergeTasks(rep *results.Repeat, c plan.Cell, recs []results.TaskRecord, reports []*report.Report, samples []sample.Server, machine sample.Machines, perNode, serverCores float64) {
	m := *reports[0]
	x := *reports[0].Rpcbed
	m.Rpcbed = &x
	m.Complete, m.Failed, m.RequestsPerSecond = 0, 0, 0
	m.FailedBy = report.Failures{}
	x.Connections, x.WarmupCalls, x.CPUUserSeconds, x.CPUSystemSeconds, x.MaxUs = 0, 0, 0, 0, 0
	x.Errors = nil
	var meanSum float64
	start, end := math.Inf(1), math.Inf(-1)
	var starts, ends, lens []float64
	for i, r := range reports {
		t := recs[i]
		m.Complete += r.Complete
		m.Failed += r.Failed
		m.FailedBy.Connect += r.FailedBy.Connect
		m.FailedBy.Receive += r.FailedBy.Receive
		m.FailedBy.Length += r.FailedBy.Length
		m.FailedBy.Exceptions += r.FailedBy.Exceptions
		m.RequestsPerSecond += r.RequestsPerSecond
		x.Connections += r.Rpcbed.Connections
		x.WarmupCalls += r.Rpcbed.WarmupCalls
		x.CPUUserSeconds += r.Rpcbed.CPUUserSeconds
		x.CPUSystemSeconds += r.Rpcbed.CPUSystemSeconds
		x.MaxUs = max(x.MaxUs, r.Rpcbed.MaxUs)
		meanSum += r.Rpcbed.MeanUs * float64(r.Complete)
		for k, v := range r.Rpcbed.Errors {
			if x.Errors == nil {
				x.Errors = map[string]int64{}
			}
			x.Errors[k] += v
		}
		start, end = math.Min(start, t.WindowStartUnix), math.Max(end, t.WindowEndUnix)
		starts, ends = append(starts, t.WindowStartUnix), append(ends, t.WindowEndUnix)
		lens = append(lens, t.WindowEndUnix-t.WindowStartUnix)
	}
	m.Concurrency = c.Concurrency
	if m.Complete > 0 {
		x.MeanUs = meanSum / float64(m.Complete) // the sum of latencies over the calls: exact
	}
	x.WindowStart, x.WindowEnd = start, end
	m.TimeTakenSeconds = end - start
	lat, latErr := mergeLatency(reports)
	x.P50Us, x.P90Us, x.P99Us, x.P999Us = lat.P50, lat.P90, lat.P99, lat.P999
	x.LatencyHistogram = lat.Record // the merged record: it merges on, with other repeats or runs
	if latErr != nil {
		rep.Notes = append(rep.Notes, "merged percentiles unknown: "+runner.OneLine(latErr.Error()))
	} else if lat.Count != m.Complete-m.Failed && lat.Count != m.Complete {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the merged latency record holds %d calls; the tasks completed %d", lat.Count, m.Complete))
	}

	w := &results.Window{Source: "report", StartUnix: start, EndUnix: end, Seconds: end - start,
		ClientCPUS: x.CPUUserSeconds + x.CPUSystemSeconds}
	if err := OverWindow(w, samples, machine); err != nil {
		rep.Notes = append(rep.Notes, "server not sampled over the window: "+runner.OneLine(err.Error()))
	}
	w.ClientCores = perNode * float64(len(reports))
	w.ServerCores = serverCores
	w.SkewS = math.Max(spreadAbs(starts), spreadAbs(ends))
	rep.Window = w
	rep.Report = &m
	rep.ServerCPUS, rep.ServerCalls = w.ServerCPUS, w.ServerCalls
	rep.Metrics = Metrics(&m, 0, w)

	tasks := make([]ClusterTask, len(reports))
	for i, r := range reports {
		tasks[i] = ClusterTask{Rec: recs[i], Report: r}
	}
	FlagCluster(rep, &m, w, lens, tasks, perNode)
	if m.Failed > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d of %d calls failed (%s)", m.Failed, m.Complete, ErrorKinds(&m)))
	}
}

func spreadAbs(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return hi - lo
}

// mergedLatency is a merge's percentiles in µs, and the merged record.
type mergedLatency struct {
	P50, P90, P99, P999 int64
	Record              string
	Count               int64
}

// mergeLatency merges the tasks' latency records (HdrHistogram, the reports'
// "Latency histogram:") exactly and reads the percentiles from the merge: never
// an average of the tasks' percentiles. A task report without a record (a client
// built before the records) leaves the percentiles unknown (0), with the reason.
func mergeLatency(reports []*report.Report) (mergedLatency, error) {
	var recs []string
	for i, r := range reports {
		if r.Rpcbed.LatencyHistogram == "" {
			if len(reports) == 1 {
				x := r.Rpcbed
				return mergedLatency{P50: x.P50Us, P90: x.P90Us, P99: x.P99Us, P999: x.P999Us, Count: r.Complete}, nil
			}
			return mergedLatency{}, fmt.Errorf("task %d's report has no latency record (a client built before them): the percentiles of a split run are never averaged", i+1)
		}
		recs = append(recs, r.Rpcbed.LatencyHistogram)
	}
	l, err := stats.LatencyOf(recs...)
	if err != nil {
		return mergedLatency{}, fmt.Errorf("merging the tasks' latency records: %w", err)
	}
	return mergedLatency{P50: l.P50Us, P90: l.P90Us, P99: l.P99Us, P999: l.P999Us, Record: l.Record, Count: l.Count}, nil
}
