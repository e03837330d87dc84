package analysis

import (
	"math"

	"github.com/rpcbed/rpcbed/internal/stats"
)

// Pooled is one figure's calibration over several pairs of runs of one spec
// (`rpcbed agree` with more than one pair). One pair is one draw of the
// machine's move between runs, which every cell of the pair shares, so its
// share scatters even when the intervals are calibrated (a calibrated interval
// on 66 cells puts both of a pair's ways in 90-98 % in about 1 pair of 5:
// stats.TestPairShareScatter). Pooled over pairs, a pair one cluster
// (stats.ClusterShare), the share says whether the intervals hold about 95 %.
type Pooled struct {
	Figure Figure
	Pairs  int
	// Held of Ways: the cells' medians inside the other run's interval, both
	// ways of every pair counted (two ways a cell and pair).
	Held, Ways int
	// Share is Held / Ways with its 95 % interval over the pairs.
	Share stats.Interval
	// InGoal: the pairs whose two ways both lay in [low, CoverHigh] (the
	// single pair's goal without its sharpness: Calibration.Covered).
	InGoal int
	// Half is the median over the runs of their median half-widths; RerunP95 the
	// 95th percentile of every pair's cells' rerun difference |log(B/A)|.
	Half, RerunP95 float64
	// ApartRMS is how far the pairs' runs lay apart in run shifts, with its 95 %
	// interval (stats.SpreadRatio: a pair one draw, its distance across the
	// cells |log(1 + Apart)| over the root mean square of its runs' shifts, on
	// their probes' degrees of freedom): 1 when the run shift reads the
	// machine's move between runs right (N = 0 without). A ratio of root mean
	// squares, not a mean of per-run ratios, so a run whose probe read a shift
	// near 0 does not swamp it.
	ApartRMS stats.Interval
}

// PoolCalibrations pools the calibrations of several pairs (one []Calibration
// a pair, from Calibrate), figure by figure; low is the single pair's goal's
// lower share (CoverLow).
func PoolCalibrations(pairs [][]Calibration, low float64) []Pooled {
	var out []Pooled
	for i, f := range PrecisionFigures {
		p := Pooled{Figure: f}
		var held, ways []int
		var halves, rerun []float64
		var apart []stats.Scaled
		for _, cals := range pairs {
			if i >= len(cals) || cals[i].Cells == 0 {
				continue
			}
			c := cals[i]
			p.Pairs++
			held, ways = append(held, c.BInA+c.AInB), append(ways, 2*c.Cells)
			if c.Covered(low) {
				p.InGoal++
			}
			halves = append(halves, c.HalfA, c.HalfB)
			rerun = append(rerun, c.rerun...)
			apart = append(apart, c.apartScaled())
		}
		for k := range held {
			p.Held, p.Ways = p.Held+held[k], p.Ways+ways[k]
		}
		p.Share = stats.ClusterShare(held, ways)
		p.Half, p.RerunP95 = stats.Median(nonNaN(halves)), percentile(rerun, 0.95)
		p.ApartRMS = stats.SpreadRatio(apart)
		out = append(out, p)
	}
	return out
}

// apartScaled is the pair's distance across the cells as one draw of the
// machine's move between runs, scaled by the root mean square of the two runs'
// shifts; their degrees of freedom add when both probes measured theirs (a
// fallback shift counts as known).
func (c Calibration) apartScaled() stats.Scaled {
	df := 0.0
	if c.Measured {
		df = float64(c.ShiftDFA + c.ShiftDFB)
	}
	return stats.Scaled{D: math.Log1p(c.Apart), SD: math.Sqrt((c.ShiftA*c.ShiftA + c.ShiftB*c.ShiftB) / 2), DF: df}
}

// Apart verdicts: the runs' distance in run shifts (Pooled.ApartRMS) holds 1
// in its interval (the shift reads the move between runs), lies wholly over
// it (the shift under-read the move: intervals too narrow for it) or wholly
// under it (over-read).
const (
	ApartRead      = "the shift reads the move"
	ApartUnderRead = "the shift under-read the move"
	ApartOverRead  = "the shift over-read the move"
)

// ApartVerdict judges ApartRMS against 1 ("" without pairs).
func (p Pooled) ApartVerdict() string {
	switch iv := p.ApartRMS; {
	case iv.N == 0:
		return ""
	case iv.Low > 1:
		return ApartUnderRead
	case iv.High < 1:
		return ApartOverRead
	}
	return ApartRead
}

// Pooled verdicts: the pooled share's interval holds stats.Confidence
// (calibrated), lies wholly under it (too narrow) or wholly over it (too wide);
// one pair cannot tell (one pair).
const (
	PooledCalibrated = "calibrated"
	PooledNarrow     = "too narrow"
	PooledWide       = "too wide"
	PooledOnePair    = "one pair: pool several"
)

// Verdict judges the pooled share against stats.Confidence.
func (p Pooled) Verdict() string {
	switch {
	case p.Share.N < 2:
		return PooledOnePair
	case p.Share.High < stats.Confidence:
		return PooledNarrow
	case p.Share.Low > stats.Confidence:
		return PooledWide
	}
	return PooledCalibrated
}

// Sharpness is the median half-width over the pooled rerun difference's 95th
// percentile (Calibration.Sharpness over the pairs; NaN without).
func (p Pooled) Sharpness() float64 {
	if !(p.RerunP95 > 0) {
		return math.NaN()
	}
	return p.Half / p.RerunP95
}

// Met says the pooled goal holds for p: calibrated over the pairs, the pooled
// share inside [low, CoverHigh], and a Sharpness of at most SharpGoal.
func (p Pooled) Met(low float64) bool {
	s := p.Share.Center
	return p.Verdict() == PooledCalibrated && s >= low && s <= CoverHigh && p.Sharpness() <= SharpGoal
}

// PairCalibration is one pair of runs' part of a pooled calibration: the runs'
// directories, its calibration per figure and its verdict flips (Calibrate).
type PairCalibration struct {
	A, B        string
	Calibration []Calibration
	Flips       []Flips
}

// FlipCount is how many verdicts a pair compared and how many flipped between
// faster and slower.
func (p PairCalibration) FlipCount() (flipped, compared int) {
	for _, f := range p.Flips {
		flipped += len(f.Flipped)
		compared += f.Compared
	}
	return flipped, compared
}

// PooledOver pools the pairs' calibrations (PoolCalibrations).
func PooledOver(pairs []PairCalibration, low float64) []Pooled {
	cals := make([][]Calibration, len(pairs))
	for i, p := range pairs {
		cals[i] = p.Calibration
	}
	return PoolCalibrations(cals, low)
}
