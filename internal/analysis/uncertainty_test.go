package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// forkedRun is a run of one JVM-served group whose second server start ran
// every cell shift times faster than the first, with a 1 % wobble per round.
func forkedRun(forks int, shift float64) *results.Run {
	r := &results.Run{Spec: plan.Spec{Rounds: 3, Forks: forks}}
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
// forks, on one degree of freedom (every cell moved alike), and wider intervals than the same rounds taken as one start's; a group
// with no spread between its starts gets none added.
func TestUncertaintyForks(t *testing.T) {
	rps := FigRPS.Figure()
	forked := UncertaintyOf(forkedRun(2, 1.3))
	sp := forked.ForkSpreads()
	// The second start moved every cell alike: one shift, read once (1 df),
	// not once per cell (stats.BetweenForks).
	if len(sp) == 0 || sp[0].Figure.Key != "rps" || sp[0].Forks != 2 || sp[0].DF != 1 {
		t.Fatalf("ForkSpreads %+v; want req/s first, 2 forks, 1 df (the start's shift, common to the 6 cells)", sp)
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

// RunShift: the probe times of a run's repeats, put in the order they ran
// whatever cell they belong to, give stats.Drift's shift (client's core and
// server's); a run without probe times takes the fallback, and says so.
func TestRunShift(t *testing.T) {
	r := &results.Run{}
	const n = 120
	rnd := rand.New(rand.NewPCG(5, 5))
	level := 0.0
	series := make([][]float64, 2)
	cells := make([]results.CellResult, 3)
	for i := range n {
		level += 0.12 / math.Sqrt(n) * rnd.NormFloat64()
		cp, sp := 5000*math.Exp(level+0.01*rnd.NormFloat64()), 4000*math.Exp(level+0.01*rnd.NormFloat64())
		series[0], series[1] = append(series[0], math.Log(cp)), append(series[1], math.Log(sp))
		// Repeats go to cells round robin, the cells listed last to first.
		c := &cells[2-i%3]
		c.Repeats = append(c.Repeats, results.Repeat{Index: i + 1, Window: &results.Window{StartUnix: float64(1000 + i)},
			Probe: &results.Probe{ClientUs: [2]float64{cp, 1}, ServerUs: [2]float64{sp, 1}}})
	}
	r.Cells = cells
	want, wantDF, _ := stats.Drift(series, stats.DriftSegments)
	sd, df, ok := RunShift(r)
	if !ok || df != wantDF || math.Abs(sd-want) > 1e-12 || sd == 0 {
		t.Errorf("shift %v on %d df, measured %v; want %v on %d df (stats.Drift of the probes in time order), measured", sd, df, ok, want, wantDF)
	}
	if sd, df, ok := RunShift(&results.Run{}); ok || df != 0 || sd != FallbackRunShift {
		t.Errorf("no probes: %v on %d df, measured %v; want the fallback %v, not measured", sd, df, ok, FallbackRunShift)
	}
	if u := UncertaintyOf(r); !u.ShiftMeasured || u.Shift != sd {
		t.Errorf("UncertaintyOf: shift %v measured %v; want RunShift's", u.Shift, u.ShiftMeasured)
	}
}

// A cell over a link is compared with the same cell on loopback: req/s, p50
// and p99, each with its interval and verdict (a slower link is slower).
func TestVsLoopback(t *testing.T) {
	spec, err := plan.ParseSpec([]byte("clients: {go: [grpc]}\nitems: [200]\nconcurrency: [1]\n"))
	if err != nil {
		t.Fatal(err)
	}
	run := &results.Run{Spec: spec}
	for _, l := range []struct {
		link string
		f    float64
	}{{plan.LinkLoopback, 1}, {"lan", 3}} {
		c := plan.Cell{Client: "go", Protocol: "grpc", Call: "datalist", Items: 200, Concurrency: 1, ServerLang: "go", Link: l.link}
		res := results.CellResult{Cell: c, Name: c.Name(), Status: results.StatusOK}
		for r := range 4 {
			w := 1 + 0.01*float64(r%2)
			res.Repeats = append(res.Repeats, results.Repeat{Index: r + 1, Report: &report.Report{},
				Metrics: results.Metrics{RPS: 3000 / l.f * w, P50Us: 300 * l.f * w, P99Us: 900 * l.f * w}})
		}
		run.Cells = append(run.Cells, res)
	}
	var got []string
	for _, c := range UncertaintyOf(run).Comparisons() {
		if c.Kind == VsLoopback {
			got = append(got, fmt.Sprintf("%s %s/%s %.2f %s", c.Figure.Key, c.A, c.B, c.Ratio.Center, c.Verdict))
		}
	}
	want := []string{
		"rps go-grpc-datalist-200-c1@lan/go-grpc-datalist-200-c1@loopback 0.33 slower",
		"p50_us go-grpc-datalist-200-c1@lan/go-grpc-datalist-200-c1@loopback 3.00 slower",
		"p99_us go-grpc-datalist-200-c1@lan/go-grpc-datalist-200-c1@loopback 3.00 slower",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
