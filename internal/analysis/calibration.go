package analysis

import (
	"math"
	"slices"

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
		var ha, hb, ia, ib []float64
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
			if iva.Contains(ivb.Center) {
				cal.BInA++
			}
			if ivb.Contains(iva.Center) {
				cal.AInB++
			}
			ha, hb = append(ha, iva.HalfWidth()), append(hb, ivb.HalfWidth())
			ia, ib = append(ia, ua.InRun(ca, f).HalfWidth()), append(ib, ub.InRun(cb, f).HalfWidth())
		}
		cal.HalfA, cal.HalfB, cal.InRunA, cal.InRunB = stats.Median(ha), stats.Median(hb), stats.Median(nonNaN(ia)), stats.Median(nonNaN(ib))
		cal.RoundsFor5 = roundsFor(NoiseOf(a.Cells, f.F, 0).Pool.Var(), 0.05)
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
