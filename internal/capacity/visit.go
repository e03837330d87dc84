package capacity

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// Later visits: a cell's knee moves between runs by more than one search's
// runs show (a minute's stalls, a JVM's steady state), so each cell is
// searched again once every cell of its server has been, from its first
// knee, coarser; how far the knees moved from one search to the next, pooled
// over the run's cells, is the least a knee's interval holds (docs/method.md,
// "Capacity at a latency budget").

// A later visit's search: steps of VisitFactor from the first knee, bisected
// until the bracket is within VisitPrecision, no rounds, ended by
// VisitDeadline. Each step is still a run and its repeat.
const (
	VisitFactor    = 1.25
	VisitPrecision = 0.12
	VisitDeadline  = 20 * time.Second
)

// Revisit searches the cell again, as visit v, for each of knees that was
// measured, from that knee (VisitFactor, VisitPrecision), then places the
// knee on every run of the cell, the new ones with the old; the second
// visit's knee over the first goes on the knee (VisitShift).
func (x *Searcher) Revisit(ctx context.Context, knees []Knee, v int) error {
	for i := range knees {
		k := &knees[i]
		if !k.Measured() {
			continue
		}
		s := x.S
		s.Factor, s.Precision, s.Rounds, s.Deadline = VisitFactor, plan.Fraction(VisitPrecision), 0, plan.Duration(VisitDeadline)
		again := &Searcher{P: x.P, S: s, byRate: map[float64][]int{}, slos: x.slos, start: x.start, now: x.now, visit: v}
		k2, err := again.Find(ctx, k.SLO, k.Rate)
		if err != nil {
			return err
		}
		x.Runs = append(x.Runs, again.Runs...)
		if v == 2 && (k2.Status == StatusFound || k2.Status == StatusUnconverged) && k2.Rate > 0 {
			d := math.Log(k2.Rate / k.Rate)
			k.VisitShift = &d
		}
		status := k.Status
		if x.place(k) == fitInside {
			k.Status = status
		}
		x.atKnee(k)
		k.VisitShare = x.laterShare(k.SLO)
	}
	return nil
}

// laterShare is the share of the runs slo's fit takes (span) that later
// visits ran.
func (x *Searcher) laterShare(slo SLO) float64 {
	sp := x.span(slo)
	if len(sp.ids) == 0 {
		return 0
	}
	later := 0
	for _, id := range sp.ids {
		if x.Runs[id].Visit > 0 {
			later++
		}
	}
	return float64(later) / float64(len(sp.ids))
}

// VisitNoise is how far a knee moves between visits at one SLO, pooled over
// a run's cells: the spread of one visit's knee (log scale), from Cells
// shifts.
type VisitNoise struct {
	SLO   SLO     `json:"slo"`
	Cells int     `json:"cells"`
	SD    float64 `json:"sd"`
	// Shift is the shifts' mean (log scale): the whole run's drift from the
	// first visits to the second, kept in SD (a rerun drifts too).
	Shift float64 `json:"shift"`
}

// MinVisitCells is the fewest cells with a shift that make a run's
// VisitNoise: fewer leave each knee's interval to its own runs.
const MinVisitCells = 3

// PoolVisits pools the knees' visit shifts at each of the run's SLOs and
// widens every measured knee's interval to at least what a rerun's knee
// lands in 95 times in 100 from them. A shift d is the difference of two
// searches' knees, which is what a rerun's knee and this one's differ by:
// its variance 2σ² (σ² one search's) is estimated as the mean of d² over the
// cells, about 0 (so the whole run's drift counts in it). The knee is fitted
// on both visits' runs, weighed by their runs (w₁, w₂ of the fit's span:
// VisitShare), so its variance is σ²(w₁² + w₂²) and a rerun's difference
// twice that; the half-width is Student's t at as many degrees of freedom
// as cells times its root. It replaces the knee's own interval (a bootstrap
// over its rates, which sees only the runs of one search: on a simulated
// server its half-width was a median 0.10 on the log scale where a rerun's
// knee moved a median 0.024 without drift and 0.15 with a drift of 15 % a
// visit; TestVisitsCoverDrift).
func PoolVisits(run *Run) {
	run.VisitNoise = nil
	for _, slo := range run.Spec.SLOs {
		var ds []float64
		for _, c := range run.Cells {
			for _, k := range c.Knees {
				if k.SLO == slo && k.VisitShift != nil && k.Measured() {
					ds = append(ds, *k.VisitShift)
				}
			}
		}
		if len(ds) < MinVisitCells {
			continue
		}
		var ss, sum float64
		for _, d := range ds {
			ss += d * d
			sum += d
		}
		vn := VisitNoise{SLO: slo, Cells: len(ds), SD: math.Sqrt(ss / float64(2*len(ds))), Shift: sum / float64(len(ds))}
		run.VisitNoise = append(run.VisitNoise, vn)
		t := stats.TQuantile(0.975, float64(len(ds)))
		for i := range run.Cells {
			for j := range run.Cells[i].Knees {
				k := &run.Cells[i].Knees[j]
				if k.SLO != slo || !k.Measured() {
					continue
				}
				w := k.VisitShare
				h := t * vn.SD * math.Sqrt(2*((1-w)*(1-w)+w*w))
				k.Low, k.High = k.Rate*math.Exp(-h), k.Rate*math.Exp(h)
			}
		}
	}
	slices.SortFunc(run.VisitNoise, func(a, b VisitNoise) int { return int(a.SLO.P99 - b.SLO.P99) })
}
