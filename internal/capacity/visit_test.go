package capacity

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/plan"
)

// drifting is a D/M/1 server whose service time moves from one visit to the
// next (the machine's stalls minute to minute, a JVM's steady state): each
// visit draws a factor exp(N(0, sd)) on its mean service time.
type drifting struct {
	dm1
	base time.Duration
	sd   float64
}

// visit draws the next visit's service time.
func (d *drifting) visit() {
	d.service = time.Duration(float64(d.base) * math.Exp(d.rng.NormFloat64()*d.sd))
}

// simulatedRun searches cells (their service times) at slo as `rpcbed
// capacity` does with visits: every cell's search and first rounds, then
// every cell's second visit, then the knees' intervals from the visits'
// shifts (PoolVisits).
func simulatedRun(t *testing.T, services []time.Duration, slo SLO, sd float64, visits int, seed uint64) *Run {
	t.Helper()
	s := testSearch()
	s.Rounds, s.Visits = 2, visits
	run := &Run{Spec: Spec{SLOs: []SLO{slo}, Search: s}}
	var xs []*Searcher
	var ms []*drifting
	for i, svc := range services {
		m := &drifting{dm1: dm1{period: time.Second, rng: rand.New(rand.NewPCG(seed, uint64(i)))}, base: svc, sd: sd}
		m.visit()
		x := NewSearcher(m, s, nil)
		k, err := x.Find(context.Background(), slo, StartFrom(1/svc.Seconds()))
		if err != nil {
			t.Fatal(err)
		}
		run.Cells = append(run.Cells, CellResult{Name: fmt.Sprintf("cell%d", i), Knees: []Knee{k}})
		xs, ms = append(xs, x), append(ms, m)
	}
	for v := 2; v <= visits; v++ {
		for i, x := range xs {
			ms[i].visit()
			if err := x.Revisit(context.Background(), run.Cells[i].Knees, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	PoolVisits(run)
	return run
}

// agreement is the share of cells whose knee in each run lies inside the
// other run's interval, as `rpcbed capacity agree` counts it.
func agreement(a, b *Run) (inside, cells int) {
	for i := range a.Cells {
		ka, kb := a.Cells[i].Knees[0], b.Cells[i].Knees[0]
		if !ka.Measured() || !kb.Measured() {
			continue
		}
		cells++
		if ka.Rate >= kb.Low && ka.Rate <= kb.High && kb.Rate >= ka.Low && kb.Rate <= ka.High {
			inside++
		}
	}
	return inside, cells
}

// TestVisitsCoverDrift: when a cell's knee drifts between runs by more than
// one search's runs show (here its service time by 15 % sd a visit), two
// runs' knees lie inside each other's intervals far less often than a rerun
// interval promises with one visit; with two visits the pooled shift widens
// the intervals to hold them (at least 85 % of the cells, both ways), and no
// wider than needed (at most 99 %, and the pooled spread near the drift's).
// Without drift, the visits add nothing a cell's own runs did not show: the
// pooled spread stays small.
func TestVisitsCoverDrift(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 160 searches")
	}
	slo := SLO{P99: plan.Duration(20 * time.Millisecond), Errors: 0.001}
	var services []time.Duration
	for i := range 10 {
		services = append(services, time.Duration(800+60*i)*time.Microsecond)
	}
	share := func(visits int, sd float64) (float64, float64) {
		inside, cells := 0, 0
		var sds []float64
		for pair := range 4 {
			a := simulatedRun(t, services, slo, sd, visits, uint64(100+2*pair))
			b := simulatedRun(t, services, slo, sd, visits, uint64(101+2*pair))
			in, n := agreement(a, b)
			inside, cells = inside+in, cells+n
			if testing.Verbose() {
				var hw, dd []float64
				for i := range a.Cells {
					ka, kb := a.Cells[i].Knees[0], b.Cells[i].Knees[0]
					hw = append(hw, math.Log(ka.High/ka.Low)/2)
					dd = append(dd, math.Abs(math.Log(ka.Rate/kb.Rate)))
				}
				slices.Sort(hw)
				slices.Sort(dd)
				t.Logf("visits %d sd %.2f: half-widths median %.3f, rerun |d| median %.3f p90 %.3f", visits, sd, hw[len(hw)/2], dd[len(dd)/2], dd[len(dd)*9/10])
			}
			for _, r := range []*Run{a, b} {
				for _, vn := range r.VisitNoise {
					sds = append(sds, vn.SD)
				}
			}
		}
		var mean float64
		for _, s := range sds {
			mean += s / float64(len(sds))
		}
		return float64(inside) / float64(cells), mean
	}
	one, _ := share(1, 0.15)
	two, sd := share(2, 0.15)
	t.Logf("drift 15 %%: inside each other's interval %.0f %% with one visit, %.0f %% with two (pooled sd %.3f)", 100*one, 100*two, sd)
	if one > 0.8 {
		t.Errorf("one visit: %.0f %% inside; want the drift to show (at most 80 %%)", 100*one)
	}
	if two < 0.85 || two > 0.99 {
		t.Errorf("two visits: %.0f %% inside; want 85-99 %%", 100*two)
	}
	// One visit's knee moves with the service time's drift (15 %) and its own
	// runs' noise.
	if sd < 0.08 || sd > 0.35 {
		t.Errorf("pooled sd %.3f; want near the drift's 0.15", sd)
	}
	calm, still := share(2, 0)
	t.Logf("no drift: inside %.0f %%, pooled sd %.3f", 100*calm, still)
	if calm < 0.85 {
		t.Errorf("no drift, two visits: %.0f %% inside; want at least 85 %%", 100*calm)
	}
	some, _ := share(2, 0.07)
	t.Logf("drift 7 %%: inside %.0f %% with two visits", 100*some)
	if some < 0.85 || some > 0.99 {
		t.Errorf("drift 7 %%, two visits: %.0f %% inside; want 85-99 %%", 100*some)
	}
	if still > sd/2 {
		t.Errorf("no drift: pooled sd %.3f; want well below the drifting runs' %.3f", still, sd)
	}
}

// TestPoolVisitsNeedsCells: fewer than MinVisitCells shifts make no pooled
// spread, and the knees keep their own intervals; with enough, every measured
// knee's interval is the pooled one (its own bootstrap's is not what a rerun
// does), and a knee not measured is left alone.
func TestPoolVisitsNeedsCells(t *testing.T) {
	slo := SLO{P99: plan.Duration(10 * time.Millisecond)}
	d := 0.2
	knee := func(status string, shift *float64) Knee {
		return Knee{SLO: slo, Status: status, Rate: 1000, Low: 900, High: 1100, Rounds: []Round{{}, {}}, VisitShift: shift}
	}
	run := &Run{Spec: Spec{SLOs: []SLO{slo}}, Cells: []CellResult{
		{Knees: []Knee{knee(StatusFound, &d)}}, {Knees: []Knee{knee(StatusFound, &d)}},
	}}
	PoolVisits(run)
	if len(run.VisitNoise) != 0 || run.Cells[0].Knees[0].Low != 900 {
		t.Fatalf("2 shifts: noise %+v, low %g; want none and 900", run.VisitNoise, run.Cells[0].Knees[0].Low)
	}
	run.Cells = append(run.Cells, CellResult{Knees: []Knee{knee(StatusFound, &d)}},
		CellResult{Knees: []Knee{{SLO: slo, Status: StatusBelow}}},
		CellResult{Knees: []Knee{{SLO: slo, Status: StatusFound, Rate: 1000, Low: 100, High: 9000, Rounds: []Round{{}, {}}}}})
	PoolVisits(run)
	if len(run.VisitNoise) != 1 || run.VisitNoise[0].Cells != 3 {
		t.Fatalf("noise %+v; want one, of 3 cells", run.VisitNoise)
	}
	vn := run.VisitNoise[0]
	if want := 0.2 / math.Sqrt2; math.Abs(vn.SD-want) > 1e-9 || math.Abs(vn.Shift-0.2) > 1e-9 {
		t.Errorf("sd %g shift %g; want %g and 0.2", vn.SD, vn.Shift, want)
	}
	k := run.Cells[0].Knees[0]
	if k.Low >= 900 || k.High <= 1100 || k.Low <= 0 {
		t.Errorf("interval [%g, %g]; want wider than [900, 1100]", k.Low, k.High)
	}
	if w := run.Cells[4].Knees[0]; w.Low != k.Low || w.High != k.High {
		t.Errorf("a knee's own interval [100, 9000] became [%g, %g]; want the pooled one, [%g, %g]", w.Low, w.High, k.Low, k.High)
	}
	if b := run.Cells[3].Knees[0]; b.Low != 0 || b.High != 0 {
		t.Errorf("a knee below every rate got [%g, %g]", b.Low, b.High)
	}
	// Pooling again changes nothing.
	before := run.Cells[0].Knees[0]
	PoolVisits(run)
	if after := run.Cells[0].Knees[0]; after.Low != before.Low || after.High != before.High {
		t.Errorf("pooling twice moved the interval: [%g, %g] then [%g, %g]", before.Low, before.High, after.Low, after.High)
	}
}

// TestGoldenVisits: a run with two visits (the fixture's cells, each
// service time 10 % slower or faster at the second) renders its pooled
// spread in capacity.md and its shifts in capacity.json.
func TestGoldenVisits(t *testing.T) {
	run, now := fixtureRun(t, "fixture-visits", "slo: {p99: 10ms, errors: 0.1%}\ncapacity: {cooldown: 0s, rounds: 2, visits: 2}\n")
	spec := run.Spec
	var xs []*Searcher
	var ms []*dm1
	for i, c := range spec.Matrix.Plan() {
		m := &dm1{service: fixtureServices[c.Client+"-"+c.Protocol], period: time.Second, rng: rand.New(rand.NewPCG(3, uint64(i)))}
		x := NewSearcher(m, spec.Search, now)
		start := StartFrom(1 / m.service.Seconds())
		knees, err := SearchCell(context.Background(), x, spec.SLOs, start)
		if err != nil {
			t.Fatal(err)
		}
		run.Cells = append(run.Cells, CellResult{Name: c.Name(), Cell: c, Start: start, Knees: knees})
		xs, ms = append(xs, x), append(ms, m)
	}
	for i, x := range xs {
		ms[i].service = time.Duration(float64(ms[i].service) * []float64{1.1, 0.9}[i%2])
		if err := x.Revisit(context.Background(), run.Cells[i].Knees, 2); err != nil {
			t.Fatal(err)
		}
		run.Cells[i].Runs = x.Runs
	}
	PoolVisits(run)
	run.Finished = now()
	if len(run.VisitNoise) != 1 {
		t.Fatalf("visit noise %+v; want one SLO's", run.VisitNoise)
	}
	for _, c := range run.Cells {
		if k := c.Knees[0]; k.VisitShift == nil || !(k.VisitShare > 0 && k.VisitShare < 1) {
			t.Errorf("%s: shift %v share %g; want a shift and a share between 0 and 1", c.Name, k.VisitShift, k.VisitShare)
		}
	}
	var md, js bytes.Buffer
	if err := Markdown(&md, run); err != nil {
		t.Fatal(err)
	}
	if err := JSON(&js, run); err != nil {
		t.Fatal(err)
	}
	golden(t, "capacity-visits.md", md.Bytes())
	golden(t, "capacity-visits.json", js.Bytes())
}
