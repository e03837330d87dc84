package analysis

import (
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/rpcbed/rpcbed/internal/stats"

	"github.com/rpcbed/rpcbed/internal/results"
)

// Calibration is how well one figure's 95 % intervals held across two runs of
// one spec: the cells whose run-B median lies inside run A's interval, and the
// other way round, with each run's median half-widths (docs/method.md, section 11).
type Calibration struct {
	Figure     Figure
	Cells      int // cells with the figure in both runs
	BInA, AInB int
	// HalfA, HalfB: the median over the cells of each run's published (rerun)
	// half-width; InRunA, InRunB: of the in-run one.
	HalfA, HalfB, InRunA, InRunB float64
	// RoundsFor5: the rounds per cell run A's pooled noise says an in-run
	// half-width of ±5 % needs.
	RoundsFor5 int
	// RerunP95 is the 95th percentile over the cells of the rerun difference
	// |log(B/A)| of their medians (0.07: 95 of 100 cells within about ±7 %):
	// what a calibrated interval's half-width should be near (Sharp).
	RerunP95 float64
	// ShiftA, ShiftB: each run's shift against a rerun, as its intervals take
	// it (Uncertainty.Shift), on ShiftDFA and ShiftDFB degrees of freedom;
	// Measured: both from the run's own probe.
	ShiftA, ShiftB     float64
	ShiftDFA, ShiftDFB int
	Measured           bool
	// Apart is how far run B lay from run A across the cells: the mean over the
	// cells of log(B/A) of their medians, as a change (+0.09: B 9 % higher). It
	// is the one shift this rerun made, whose sd ShiftA and ShiftB estimate.
	Apart float64
	// Pools: Apart and the misses per pool of cells (PoolApart), in pool order.
	Pools []PoolApart
	// rerun: every cell's rerun difference |log(B/A)| (what RerunP95 is the
	// 95th percentile of; PoolCalibrations pools them over pairs).
	rerun []float64
}

// PoolApart is one pool's part of a calibration: the cells of one client
// against one server group (Pool: "php on go-server"), how far B lay from A
// across them (the mean of log(B/A) of their medians, as a change), and how
// many of their two ways (B's median in A's interval, A's in B's) missed. A
// machine that moves between runs moves every pool the same way but not by
// as much: the pools that move most are where the misses lie.
type PoolApart struct {
	Pool          string
	Cells, Missed int
	Apart         float64
}

// poolOf names the pool of cell c: its client on its server group ("php on
// go-server", "go on go-server@lan").
func poolOf(c results.CellResult) string {
	return c.Client + " on " + strings.TrimSuffix(c.Cell.GroupKey(), "@")
}

// poolsApart gathers each pool's log ratios and misses (poolSum) by pool name.
type poolsApart map[string]*poolSum

type poolSum struct {
	logs   []float64
	missed int
}

func (p poolsApart) add(pool string, d float64, missed int) {
	if p[pool] == nil {
		p[pool] = &poolSum{}
	}
	p[pool].logs = append(p[pool].logs, d)
	p[pool].missed += missed
}

// list is the pools as PoolAparts, in pool name order.
func (p poolsApart) list() []PoolApart {
	var out []PoolApart
	for _, k := range slices.Sorted(maps.Keys(p)) {
		e := p[k]
		out = append(out, PoolApart{Pool: k, Cells: len(e.logs), Missed: e.missed, Apart: math.Expm1(stats.Mean(e.logs))})
	}
	return out
}

// Way is one direction of a calibration: Name ("B in A's"), the cells whose
// other median lay inside this run's intervals (K), and the run whose
// intervals they were (Run: 0 A, 1 B).
type Way struct {
	Name   string
	K, Run int
}

// Ways are c's two directions, B's medians in A's intervals first.
func (c Calibration) Ways() [2]Way {
	return [2]Way{{"B in A's", c.BInA, 0}, {"A in B's", c.AInB, 1}}
}

// ApartBeyond is how many of a run's shifts apart two runs may lie before their
// distance counts as more than that run's probe measured: a calibrated shift
// (an sd) leaves about 1 pair in 20 past twice itself.
const ApartBeyond = 2.0

// ApartTimes is the runs' distance across the cells in run r's shifts (0:
// A's, 1: B's), |log(1 + Apart)| / the shift: what run r's intervals allowed
// for when they took the other run's medians in; NaN without cells or a shift.
func (c Calibration) ApartTimes(r int) float64 {
	sh := [2]float64{c.ShiftA, c.ShiftB}[r]
	if c.Cells == 0 || !(sh > 0) {
		return math.NaN()
	}
	return math.Abs(math.Log1p(c.Apart)) / sh
}

// Sharpness is the wider run's median half-width over the rerun difference's
// 95th percentile: 1 for an interval exactly as wide as the reruns need, the
// goal at most SharpGoal (NaN without cells).
func (c Calibration) Sharpness() float64 {
	if c.Cells == 0 || !(c.RerunP95 > 0) {
		return math.NaN()
	}
	return max(c.HalfA, c.HalfB) / c.RerunP95
}

// The calibration goal: the other run's median inside a cell's 95 % interval
// for CoverLow to CoverHigh of the cells, both ways (about 95 %, not 100 %: an
// interval that always holds is wider than the data), at a median half-width of
// at most SharpGoal times the pair's 95th-percentile rerun difference.
const (
	CoverLow, CoverHigh = 0.90, 0.98
	SharpGoal           = 1.3
)

// Calibrated says c meets the calibration goal: coverage in [low, CoverHigh]
// both ways and Sharpness at most SharpGoal.
func (c Calibration) Calibrated(low float64) bool {
	return c.Covered(low) && c.Sharpness() <= SharpGoal
}

// Covered says both of c's ways held the other run's medians for a share of
// the cells in [low, CoverHigh] (the goal's coverage, without its sharpness).
func (c Calibration) Covered(low float64) bool {
	return c.Cells > 0 && c.Outside(low) == 0
}

// Outside is how many of c's two ways held the other run's medians for a
// share of the cells outside [low, CoverHigh] (none without cells).
func (c Calibration) Outside(low float64) int {
	n, out := float64(c.Cells), 0
	for _, w := range c.Ways() {
		if k := float64(w.K); c.Cells > 0 && (k < low*n || k > CoverHigh*n) {
			out++
		}
	}
	return out
}

// Flips counts, for one kind of comparison and figure, the verdicts of run B
// against run A's: faster and slower swapped (Flipped, by name), and moves to or
// from indistinguishable.
type Flips struct {
	Kind, Figure         string
	Compared             int
	Flipped              []string
	ToIndist, FromIndist int
	SameVerdict          int
}

// Calibrate compares run b's medians with run a's intervals and b's with a's,
// per figure (req/s and each side's CPU per call), and the two runs' verdicts.
func Calibrate(a, b *results.Run) ([]Calibration, []Flips) {
	ua, ub := UncertaintyOf(a), UncertaintyOf(b)
	bc := map[string]results.CellResult{}
	for _, c := range b.Cells {
		bc[c.Name] = c
	}
	var cals []Calibration
	for _, f := range PrecisionFigures {
		cal := Calibration{Figure: f}
		cal.ShiftA, cal.ShiftB, cal.Measured = ua.Shift, ub.Shift, ua.ShiftMeasured && ub.ShiftMeasured
		cal.ShiftDFA, cal.ShiftDFB = ua.ShiftDF, ub.ShiftDF
		var ha, hb, ia, ib, diff, signed []float64
		pools := poolsApart{}
		for _, ca := range a.Cells {
			cb, ok := bc[ca.Name]
			if !ok {
				continue
			}
			iva, ivb := ua.Interval(ca, f), ub.Interval(cb, f)
			if !iva.Valid() || !ivb.Valid() {
				continue
			}
			cal.Cells++
			d := math.Log(ivb.Center / iva.Center)
			diff, signed = append(diff, math.Abs(d)), append(signed, d)
			missed := 2
			if iva.Contains(ivb.Center) {
				cal.BInA++
				missed--
			}
			if ivb.Contains(iva.Center) {
				cal.AInB++
				missed--
			}
			pools.add(poolOf(ca), d, missed)
			ha, hb = append(ha, iva.HalfWidth()), append(hb, ivb.HalfWidth())
			ia, ib = append(ia, ua.InRun(ca, f).HalfWidth()), append(ib, ub.InRun(cb, f).HalfWidth())
		}
		cal.HalfA, cal.HalfB, cal.InRunA, cal.InRunB = stats.Median(ha), stats.Median(hb), stats.Median(nonNaN(ia)), stats.Median(nonNaN(ib))
		cal.rerun = slices.Clone(diff)
		cal.RerunP95 = percentile(diff, 0.95)
		if len(signed) > 0 {
			cal.Apart = math.Expm1(stats.Mean(signed))
		}
		cal.Pools = pools.list()
		cal.RoundsFor5 = roundsFor(NoiseOf(a.Cells, f.F).Pool.Var(), 0.05)
		cals = append(cals, cal)
	}
	return cals, flips(ua.Comparisons(), ub.Comparisons())
}

// roundsFor is the rounds whose in-run 95 % half-width of a median reaches hw
// with noise variance v (log scale): (1.96 sd / hw)^2 times the median's pi/2.
func roundsFor(v, hw float64) int {
	if math.IsNaN(v) || v <= 0 {
		return 0
	}
	z := 1.96 * math.Sqrt(v) / hw
	return int(math.Ceil(math.Pi / 2 * z * z))
}

// percentile is v's p-quantile, the order statistic at ceil(p n) (NaN for an
// empty v); v is sorted in place.
func percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	return v[max(0, int(math.Ceil(p*float64(len(v))))-1)]
}

func nonNaN(v []float64) []float64 {
	return slices.DeleteFunc(v, math.IsNaN)
}

func flips(a, b []Comparison) []Flips {
	key := func(c Comparison) string { return c.Kind + " " + c.Figure.Key + " " + c.A + " " + c.B }
	bv := map[string]string{}
	for _, c := range b {
		bv[key(c)] = c.Verdict
	}
	var out []Flips
	idx := map[string]int{}
	for _, c := range a {
		vb, ok := bv[key(c)]
		if !ok {
			continue
		}
		k := c.Kind + " " + c.Figure.Key
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Flips{Kind: c.Kind, Figure: c.Figure.Name})
		}
		fl := &out[i]
		fl.Compared++
		switch {
		case vb == c.Verdict:
			fl.SameVerdict++
		case c.Verdict == stats.Indistinguishable:
			fl.FromIndist++
		case vb == stats.Indistinguishable:
			fl.ToIndist++
		default:
			fl.Flipped = append(fl.Flipped, c.A+" vs "+c.B+": "+c.Verdict+" -> "+vb)
		}
	}
	return out
}
