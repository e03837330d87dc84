package analysis

import (
	"fmt"
	"testing"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/results"
)

// forkedRun is a run of one JVM-served group whose second server start ran
// every cell shift times faster than the first, with a 1 % wobble per round.
func forkedRun(forks int, shift float64) *results.Run {
	r := &results.Run{Spec: plan.Spec{Repeats: 3, Forks: forks}}
	for i := range 6 {
		c := results.CellResult{Name: fmt.Sprintf("php-ice-datalist-%d-c1", i), Status: results.StatusOK,
			Cell: plan.Cell{Client: "php", Protocol: "ice", ServerLang: "java", Items: i + 1, Concurrency: 1}}
		for round := 1; round <= 4; round++ {
			fork, k := 0, 1.0
			if forks > 1 {
				fork = (round-1)/2 + 1
			}
			if round > 2 {
				k = shift
			}
			w := 1 + 0.01*float64(round%2)
			c.Repeats = append(c.Repeats, results.Repeat{Index: round, Fork: fork, Report: &report.Report{},
				Metrics: results.Metrics{RPS: 1000 * float64(i+1) * k * w}})
		}
		r.Cells = append(r.Cells, c)
	}
	return r
}

// A group that forked and whose starts lie 30 % apart gets that spread between
// forks, and wider intervals than the same rounds taken as one start's; a group
// with no spread between its starts gets none added.
func TestUncertaintyForks(t *testing.T) {
	rps := FigRPS.Figure()
	forked := UncertaintyOf(forkedRun(2, 1.3))
	sp := forked.ForkSpreads()
	if len(sp) == 0 || sp[0].Figure.Key != "rps" || sp[0].Forks != 2 || sp[0].DF != 6 {
		t.Fatalf("ForkSpreads %+v; want req/s first, 2 forks, 6 df (one per cell)", sp)
	}
	if sp[0].SD < 0.15 || sp[0].SD > 0.25 {
		t.Errorf("req/s spread between forks sd %.3f; want about 0.19 (log 1.3 / sqrt 2)", sp[0].SD)
	}
	blind := UncertaintyOf(forkedRun(0, 1.3))
	if len(blind.ForkSpreads()) != 0 {
		t.Errorf("a run without forks has spreads %+v", blind.ForkSpreads())
	}
	c := forked.run.Cells[0]
	if fw, bw := forked.Interval(c, rps).HalfWidth(), blind.Interval(blind.run.Cells[0], rps).HalfWidth(); fw <= bw {
		t.Errorf("forked half-width %.3f <= fork-blind %.3f; want the spread between starts added", fw, bw)
	}
	flat := UncertaintyOf(forkedRun(2, 1))
	if sp := flat.ForkSpreads(); len(sp) == 0 || sp[0].SD > 0.01 {
		t.Errorf("starts alike: spreads %+v; want about 0", sp)
	}
}
