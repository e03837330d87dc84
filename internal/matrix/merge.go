package matrix

import (
	"github.com/rpcbed/rpcbed/internal/measure"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/runner"
	"github.com/rpcbed/rpcbed/internal/sample"
)

// merge makes rep of a cluster repeat's task reports (measure.MergeTasks), each
// task on the cores its node lets it use.
func (sp *swarmPlace) merge(rep *results.Repeat, c plan.Cell, runs []*taskRun, reports []*report.Report, samples []sample.Server, machine sample.Machines) {
	recs := make([]results.TaskRecord, len(runs))
	for i, t := range runs {
		recs[i] = t.rec
	}
	s := sp.e.run.Spec
	measure.MergeTasks(rep, c, recs[:len(reports)], reports, samples, machine, clusterCores(s.ClientResources), clusterCores(s.ServerResources))
}

// clusterCores is how many cores a swarm task may keep busy: its CPU limit
// (--limit-cpu), else every online core. Swarm services cannot be pinned
// (there is no --cpuset-cpus), so a spec's cpuset does not apply to them.
func clusterCores(r plan.Resources) float64 {
	n := float64(runner.OnlineCores())
	if r.CPUs > 0 && r.CPUs < n {
		return r.CPUs
	}
	return n
}
