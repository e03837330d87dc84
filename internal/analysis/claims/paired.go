package claims

import (
	"math"

	"github.com/rpcbed/rpcbed/internal/stats"
)

// A comparison between two cells that ran in the same rounds is judged on the
// rounds' ratios (stats.PairedLog): the machine's drift between rounds cancels
// in each round's ratio. Cells that did not share two rounds fall back to
// their medians' ratio, each median with its own interval (unpaired).

// cellPair is the runs of the two cells a comparison sets against each other
// at one level: a's figure over b's.
type cellPair struct{ a, b []Run }

// byRound is f of each run keyed by its Round; runs with no round, and values
// that are not positive and finite, are left out.
func byRound(runs []Run, f func(Run) float64) map[int]float64 {
	out := map[int]float64{}
	for _, m := range runs {
		if v := f(m); m.Round > 0 && v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
			out[m.Round] = v
		}
	}
	return out
}

// pairedLevels is, at each level, a's figure f over b's on the log scale,
// paired by round (pairedRounds of the cells' runs keyed by round); ok[i] is
// false where level i's cells shared fewer than two rounds.
func pairedLevels(levels []cellPair, f func(Run) float64, conf float64) (out []stats.LogRatio, ok []bool) {
	var rounds [][2]map[int]float64
	for _, p := range levels {
		rounds = append(rounds, [2]map[int]float64{byRound(p.a, f), byRound(p.b, f)})
	}
	return pairedRounds(rounds, conf)
}

// pairedRounds is, at each level, the first cell's values over the second's
// (each keyed by round) on the log scale, paired by round (stats.PairedLog),
// the rounds' noise shared over the levels (stats.PairedNoise) at confidence
// conf (0: 95 %); ok[i] is false where level i's cells shared fewer than two
// rounds.
func pairedRounds(levels [][2]map[int]float64, conf float64) (out []stats.LogRatio, ok []bool) {
	var logs [][]float64
	for _, p := range levels {
		logs = append(logs, stats.PairedLogRatios(p[0], p[1]))
	}
	n := stats.PairedNoise(logs, conf)
	for _, p := range levels {
		l, k := stats.PairedLog(p[0], p[1], n)
		out, ok = append(out, l), append(ok, k)
	}
	return out, ok
}

// marginOf is a paired log ratio as a margin in % ("a beats b by N %"), its
// interval too.
func marginOf(l stats.LogRatio) Figure {
	iv := l.Interval()
	return Figure{Median: (iv.Center - 1) * 100, Lo: (iv.Low - 1) * 100, Hi: (iv.High - 1) * 100, Known: true}
}

// pairedMargin is the margin of a's figure f over b's at level i of levels
// (pairedLevels), paired by round; unpaired (Margin of the two cells' own
// intervals at conf) where the cells shared fewer than two rounds.
func pairedMargin(levels []cellPair, i int, f func(Run) float64, conf float64, fig func([]Run, func(Run) float64, float64) Figure) Figure {
	ls, ok := pairedLevels(levels, f, conf)
	if ok[i] {
		return marginOf(ls[i])
	}
	return Margin(fig(levels[i].a, f, conf), fig(levels[i].b, f, conf))
}

// orderOf is Order read from a's figure over b's (a log ratio): +1 when a is
// below b beyond the ratio's interval (wholly under 1), -1 when above, 0 when
// the interval holds 1.
func orderOf(l stats.LogRatio) int {
	switch iv := l.Interval(); {
	case iv.High < 1:
		return 1
	case iv.Low > 1:
		return -1
	}
	return 0
}
