package claims

import (
	"fmt"
	"math"
	"strings"

	"github.com/rpcbed/rpcbed/internal/stats"

	"github.com/rpcbed/rpcbed/internal/results"
)

// Figure is one measured figure over the repeats: its median and its 95 %
// interval (Fig; a ratio's interval is its two sides' extremes, see Ratio).
type Figure struct {
	Median, Lo, Hi float64
	// Known is false when nothing was measured (the run failed, the server was
	// not sampled): the rule's verdict is then NotMeasured.
	Known bool
}

// Fig is a figure from repeats' values (unknown when there are none or one is
// NaN): their median with its in-run 95 % interval from their own spread
// (stats.Noise.InRun, Student's t at n-1 degrees of freedom); one value has none.
func Fig(v []float64) Figure { return FigAt(v, 0) }

// FigAt is Fig at confidence conf (0: 95 %; stats.LooksLevel after added rounds).
func FigAt(v []float64, conf float64) Figure {
	if len(v) == 0 {
		return Figure{}
	}
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return Figure{}
		}
	}
	s := stats.Of(v)
	f := Figure{Median: s.Median, Lo: s.Median, Hi: s.Median, Known: true}
	if iv := (stats.Noise{Conf: conf}).InRun(v); iv.Valid() {
		f.Lo, f.Hi = iv.Low, iv.High
	} else if s.N > 1 {
		f.Lo, f.Hi = s.Min, s.Max // non-positive values: no log-scale interval
	}
	return f
}

// FigFraction is Fig for fractions (busy fractions of a core, shares): its
// median and 95 % interval never leave [0, 1] (stats.FractionMedian: clamped,
// built on the logit scale).
func FigFraction(v []float64) Figure { return FigFractionAt(v, 0) }

// FigFractionAt is FigFraction at confidence conf (0: 95 %).
func FigFractionAt(v []float64, conf float64) Figure {
	iv := stats.FractionMedianAt(v, conf)
	if iv.N == 0 || iv.N < len(v) {
		return Figure{}
	}
	return Figure{Median: iv.Center, Lo: iv.Low, Hi: iv.High, Known: true}
}

// Margin is a/b - 1 in per cent, its range from the two sides' extremes: the
// smallest a over the largest b, the largest a over the smallest b.
func Margin(a, b Figure) Figure {
	if !a.Known || !b.Known || b.Median <= 0 || b.Lo <= 0 {
		return Figure{}
	}
	return Figure{Median: (a.Median/b.Median - 1) * 100, Lo: (a.Lo/b.Hi - 1) * 100, Hi: (a.Hi/b.Lo - 1) * 100, Known: true}
}

// Ratio is a/b, its range from the two sides' extremes.
func Ratio(a, b Figure) Figure {
	if !a.Known || !b.Known || b.Median <= 0 || b.Lo <= 0 {
		return Figure{}
	}
	return Figure{Median: a.Median / b.Median, Lo: a.Lo / b.Hi, Hi: a.Hi / b.Lo, Known: true}
}

// Band is a rule's tolerance: the closed intervals of the measured figure that
// give "yes" and "partly" (Partly contains Yes); anything else is "no".
type Band struct {
	Yes, Partly [2]float64
	// Unit prints after each figure ("%", "x", " of levels").
	Unit string
	// Differs is the value the claim says the figure differs from (0 for "A beats
	// B by N %", 1 for "A is N x B"): when the repeats' range holds it, the
	// difference is inside the noise and the verdict is NotDistinguished.
	Differs *float64
}

func at(v float64) *float64 { return &v }

// Judge grades a measured figure and its 95 % interval against the band:
//   - nothing measured: NotMeasured;
//   - the interval holds the value the claim says it differs from (a
//     difference smaller than the noise): NotDistinguished (inconclusive);
//   - a claim of no difference (Differs nil): No when the whole range lies
//     outside the "partly" band, else NotDistinguished when the range is wider
//     than the "yes" band (the noise could hide any change);
//   - else the interval's place: Yes or Partly when it lies wholly inside that
//     band, No when wholly outside "partly", inconclusive when it straddles an
//     edge (edges count as inside).
func (b Band) Judge(f Figure) string {
	switch {
	case !f.Known:
		return results.NotMeasured
	case b.Differs != nil && f.Lo <= *b.Differs && *b.Differs <= f.Hi:
		return results.NotDistinguished
	case b.Differs == nil && (f.Hi < b.Partly[0] || f.Lo > b.Partly[1]):
		return results.No
	case b.Differs == nil && f.Hi-f.Lo > b.Yes[1]-b.Yes[0]:
		return results.NotDistinguished
	case b.Differs == nil && in(f.Median, b.Yes):
		return results.Yes
	case b.Differs == nil && in(f.Median, b.Partly):
		return results.Partly
	case b.Differs == nil:
		return results.No
	case in(f.Lo, b.Yes) && in(f.Hi, b.Yes):
		return results.Yes
	case in(f.Lo, b.Partly) && in(f.Hi, b.Partly):
		return results.Partly
	case f.Hi < b.Partly[0] || f.Lo > b.Partly[1]:
		return results.No
	}
	return results.NotDistinguished // the interval straddles the tolerance's edge
}

func in(v float64, r [2]float64) bool { return v >= r[0] && v <= r[1] }

// String prints the band for reproduction.md's tolerance column.
func (b Band) String() string {
	s := fmt.Sprintf("yes %s; partly %s; else no", span(b.Yes, b.Unit), span(b.Partly, b.Unit))
	if b.Differs != nil {
		s += fmt.Sprintf("; a 95 %% interval that holds %s%s or straddles a band's edge is inconclusive", num(*b.Differs), b.Unit)
	} else {
		s += fmt.Sprintf("; a 95 %% interval wider than %s%s is inconclusive", num(b.Yes[1]-b.Yes[0]), b.Unit)
	}
	return s
}

func span(r [2]float64, unit string) string {
	return fmt.Sprintf("%s..%s%s", num(r[0]), num(r[1]), unit)
}

func num(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "-∞"
	case v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}

// Show prints a figure as "median [lo..hi]unit" ("not measured" when unknown).
func (f Figure) Show(unit string, prec int) string {
	if !f.Known {
		return results.NotMeasured
	}
	p := func(v float64) string { return fmt.Sprintf("%.*f", prec, v) }
	if f.Lo == f.Hi {
		return p(f.Median) + unit
	}
	return fmt.Sprintf("%s%s [%s..%s]", p(f.Median), unit, p(f.Lo), p(f.Hi))
}

// Rule is one published claim: its words, the published figure, the band it is
// judged by, and (once measured) the figure and verdict with the reason the
// run's own figures give.
type Rule struct {
	Name      string
	Claim     string
	Published string
	Band      Band
	Prec      int // decimals of the measured figure
}

// Verdict judges f and fills a Finding: reason must quote this run's figures and
// name the measurement behind each cause it claims ("" when there is none).
func (r Rule) Verdict(f Figure, detail, reason string) results.Finding {
	out := results.Finding{
		Rule: r.Name, Claim: r.Claim, Published: r.Published,
		Measured: f.Show(r.Band.Unit, r.Prec), Tolerance: r.Band.String(),
		Holds: r.Band.Judge(f), Detail: detail, Reason: reason,
	}
	out.Sharpen = out.Holds == results.Partly && r.Band.straddlesYes(f)
	return out
}

// straddlesYes: f's interval holds an edge of the yes band inside it (a
// "partly" that more rounds could make "yes").
func (b Band) straddlesYes(f Figure) bool {
	return f.Known && ((f.Lo < b.Yes[0] && b.Yes[0] < f.Hi) || (f.Lo < b.Yes[1] && b.Yes[1] < f.Hi))
}

// Levels grades a claim made at every level (size, concurrency): held, failed,
// unclear and missing count the levels where the claimed order held beyond the
// repeats' spread, was reversed beyond it, was inside it, or was not measured.
// A missing level is never counted as held.
func Levels(held, failed, unclear, missing int) string {
	switch n := held + failed + unclear + missing; {
	case n == missing:
		return results.NotMeasured
	case held == n:
		return results.Yes
	case failed == n:
		return results.No
	case held == 0 && failed == 0:
		return results.NotDistinguished // inside the spread, or partly missing
	case held == 0:
		// Some reversed, the rest inside the noise: not once shown to hold.
		return results.No
	}
	return results.Partly
}

// LevelsBand is the tolerance text of a Levels rule.
const LevelsBand = "yes: held at every level beyond the noise (each pair's ratio over the rounds where they shared rounds, else the repeats' spread); partly: held at some; no: held at none; a level whose order is inside the noise counts as neither"

// Order compares a < b beyond the repeats' spread: +1 when a's highest is below
// b's lowest, -1 when b's highest is below a's lowest, 0 inside the spread (or
// either unknown).
func Order(a, b Figure) int {
	switch {
	case !a.Known || !b.Known:
		return 0
	case a.Hi < b.Lo:
		return 1
	case b.Hi < a.Lo:
		return -1
	}
	return 0
}
