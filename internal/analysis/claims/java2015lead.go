package claims

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// tpsNoise is the noise of the rows' tps: each row's own spread over its
// repeats, shared with the other rows as far as the rows' spread of variances
// says (stats.Squeeze), so a row's 3 repeats are not read at 2 degrees of
// freedom alone.
func (e *Java2015) tpsNoise() stats.Noise {
	if e.noise != nil {
		return *e.noise
	}
	var n stats.Noise
	var own []stats.Pool
	for _, c := range e.Levels {
		for _, fw := range JavaFrameworks {
			var v []float64
			for _, m := range e.Runs[JKey{fw, c}] {
				v = append(v, rps(m))
			}
			var p stats.Pool
			p.Add(stats.Logs(v))
			n.Pool.Add(stats.Logs(v))
			own = append(own, p)
		}
	}
	n.Prior = stats.Squeeze(own)
	n.Conf = e.Confidence()
	return n
}

// Confidence is what the claims' intervals are judged at (Looks).
func (e *Java2015) Confidence() float64 { return stats.LooksLevel(e.Looks) }

// judging computes the rows' noise once for one judgement (Judge,
// Undecided): the runs do not change while it lasts. Call the returned func
// when it ends.
func (e *Java2015) judging() func() {
	e.noise = nil
	n := e.tpsNoise()
	e.noise = &n
	return func() { e.noise = nil }
}

// leadAt is ice's tps over fw's at concurrency c on the log scale (ratioAt).
func (e *Java2015) leadAt(fw string, c int, n stats.Noise) (stats.LogRatio, bool) {
	return e.ratioAt("ice", fw, c, n)
}

// ratioAt is framework a's tps over b's at concurrency c on the log scale:
// paired by round where the two rows shared at least two rounds (each
// round's ratio; their noise shared with the same pair's other levels,
// pairedLevels), else unpaired from the rows' pooled noise n (the rows ran
// apart, and the drift between them is in the ratio).
func (e *Java2015) ratioAt(a, b string, c int, n stats.Noise) (stats.LogRatio, bool) {
	var pairs []cellPair
	at := -1
	for i, l := range e.Levels {
		pairs = append(pairs, cellPair{e.Runs[JKey{a, l}], e.Runs[JKey{b, l}]})
		if l == c {
			at = i
		}
	}
	if at >= 0 {
		if ls, ok := pairedLevels(pairs, rps, e.Confidence()); ok[at] {
			return ls[at], true
		}
	}
	var va, vb []float64
	for _, m := range e.Runs[JKey{a, c}] {
		va = append(va, rps(m))
	}
	for _, m := range e.Runs[JKey{b, c}] {
		vb = append(vb, rps(m))
	}
	return stats.UnpairedLog(va, vb, n, n)
}

// orderAt is Order for frameworks a and b at concurrency c, judged on a's tps
// over b's (ratioAt): +1 when a is below b beyond the ratio's interval, -1
// when above, 0 inside it (or unknown).
func (e *Java2015) orderAt(a, b string, c int, n stats.Noise) int {
	l, ok := e.ratioAt(a, b, c, n)
	if !ok {
		return 0
	}
	return orderOf(l)
}

func figOf(iv stats.Interval) Figure {
	return Figure{Median: iv.Center, Lo: iv.Low, Hi: iv.High, Known: iv.N > 0}
}

// judgeLead: Ice's lead over fw over the concurrencies, the levels' ratios
// pooled with their intervals (stats.PoolLevels), not the envelope of their
// ranges. Where the pooled lead is still inconclusive, the detail says at how
// many levels the lead held, fell or stayed inside the noise, with each level's
// interval.
func (e *Java2015) judgeLead(fw string) results.Finding {
	l := javaLead[fw]
	n := e.tpsNoise()
	var levels []stats.LogRatio
	var per []string
	held, reversed := 0, 0
	for _, c := range e.Levels {
		lr, ok := e.leadAt(fw, c, n)
		if !ok {
			levels = nil
			break
		}
		levels = append(levels, lr)
		iv := lr.Interval()
		state := "inside the noise"
		switch {
		case iv.Low > 1:
			held++
			state = "ice ahead"
		case iv.High < 1:
			reversed++
			state = fw + " ahead"
		}
		per = append(per, fmt.Sprintf("c=%d %s (%s)", c, figOf(iv).Show("x", 2), state))
	}
	rule := Rule{Name: "java-ice-over-" + fw, Claim: "Ice leads " + fw + " by " + l.published + " (over the concurrencies)", Published: l.published, Band: l.band, Prec: 2}
	var f Figure
	if pooled, ok := PoolLevelsOf(levels); ok {
		f = pooled
	}
	detail := fmt.Sprintf("The %d concurrencies' ice / %s pooled, each weighted by its precision. Per level: %s; ice ahead at %d of %d, %s ahead at %d.",
		len(per), fw, strings.Join(per, ", "), held, len(e.Levels), fw, reversed)
	out := rule.Verdict(f, detail, "")
	if out.Holds == results.NotDistinguished {
		out.Reason = e.undecidedReason(fmt.Sprintf("ice ahead beyond the noise at %d of %d levels: %s", held, len(e.Levels), strings.Join(per, ", ")))
	}
	return out
}

// PoolLevelsOf is the Figure of levels pooled (stats.PoolLevels): unknown when
// there are none.
func PoolLevelsOf(levels []stats.LogRatio) (Figure, bool) {
	if len(levels) == 0 {
		return Figure{}, false
	}
	p, ok := stats.PoolLevels(levels)
	if !ok {
		return Figure{}, false
	}
	return figOf(p.Interval()), true
}

// saturation names, once for the experiment, what its rows compare: where the
// client's core was saturated (busy at results.BoundBusy or more) at a level
// while the server's was not, the rows there compare clients, not servers.
// It quotes the busy fractions it rests on; "" when no row's core saturated.
func (e *Java2015) saturation() string {
	levels, lowest, highest := e.saturated()
	if len(levels) == 0 {
		return ""
	}
	return fmt.Sprintf("The Java client's core is saturated at c=%s (client busy %.0f-%.0f %% of its core for every framework, each server less): there the rows compare the frameworks' client stacks, not their servers.",
		joinInts(levels), lowest*100, highest*100)
}

// saturated are the levels where every framework's client core was busy at
// results.BoundBusy or more and its server less, with the lowest and highest
// client busy fraction among them.
func (e *Java2015) saturated() (levels []int, lowest, highest float64) {
	lowest = math.Inf(1)
	for _, c := range e.Levels {
		var at []float64
		for _, fw := range JavaFrameworks {
			cb, sb := busy(e.Runs[JKey{fw, c}], cliBusy), busy(e.Runs[JKey{fw, c}], srvBusy)
			if !cb.Known || cb.Median < results.BoundBusy || (sb.Known && sb.Median >= cb.Median) {
				at = nil
				break
			}
			at = append(at, cb.Median)
		}
		if len(at) > 0 {
			levels = append(levels, c)
			lowest, highest = min(lowest, slices.Min(at)), max(highest, slices.Max(at))
		}
	}
	return levels, lowest, highest
}

// undecidedReason is the reason of an aggregate claim still inconclusive:
// where it held (held: at how many levels, with their intervals), and, where
// the Java client's core was saturated, that the rows there compare the
// client stacks.
func (e *Java2015) undecidedReason(held string) string {
	s := "Still inconclusive over the levels; " + held + "."
	if sat, lo, hi := e.saturated(); len(sat) > 0 {
		s += fmt.Sprintf(" At c=%s the Java client's core was saturated (client busy %.0f-%.0f %% for every framework, each server less): there the rows compare the frameworks' client stacks, not their servers.",
			joinInts(sat), lo*100, hi*100)
	}
	return s
}

func joinInts(v []int) string {
	var s []string
	for _, x := range v {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ", ")
}

// judgeGrows: Ice's lead grows with concurrency, judged on every step between
// published concurrencies for every rival: a step rose or fell when the
// change of the lead's log ratio between the two levels (both levels' variances
// added) lies beyond its 95 % interval, else it is inside the noise. The share
// of steps that rose is the figure, up to the share that rose or stayed inside
// the noise; no when Ice leads nowhere.
func (e *Java2015) judgeGrows() results.Finding {
	r := Rule{Name: "java-ice-lead-grows", Claim: "Ice's lead grows with concurrency", Published: "1.4x -> 1.65x over Thrift from 1 to 100 clients", Band: ruleLeadGrows, Prec: 0}
	n := e.tpsNoise()
	var rose, fell, flat, leads int
	missing := false
	var per []string
	for _, fw := range []string{"thrift", "dubbo", "grpc"} {
		var rs []string
		var prev stats.LogRatio
		for i, c := range e.Levels {
			cur, ok := e.leadAt(fw, c, n)
			missing = missing || !ok
			if !ok {
				continue
			}
			iv := cur.Interval()
			rs = append(rs, figOf(iv).Show("x", 2))
			if iv.Low > 1 {
				leads++
			}
			if i > 0 {
				step := stats.LogRatio{Est: cur.Est - prev.Est, Var: cur.Var + prev.Var, DF: min(cur.DF, prev.DF), Conf: cur.Conf}.Interval()
				switch {
				case step.Low > 1:
					rose++
				case step.High < 1:
					fell++
				default:
					flat++
				}
			}
			prev = cur
		}
		per = append(per, "ice/"+fw+" "+strings.Join(rs, " -> "))
	}
	steps := rose + fell + flat
	var f Figure
	if steps > 0 && !missing {
		f = Figure{Median: float64(rose) / float64(steps) * 100, Lo: float64(rose) / float64(steps) * 100, Hi: float64(rose+flat) / float64(steps) * 100, Known: true}
	}
	out := r.Verdict(f, fmt.Sprintf("Over the %d steps between neighbouring concurrencies: %s.", steps, strings.Join(per, "; ")), "")
	if f.Known {
		out.Measured = fmt.Sprintf("the lead rose at %d of %d steps, fell at %d, changed inside the noise at %d", rose, steps, fell, flat)
	}
	if leads == 0 && out.Holds != results.NotMeasured {
		out.Holds = results.No
		out.Detail = "Ice leads at no concurrency beyond the noise, so there is no lead to grow. " + out.Detail
	}
	if out.Holds == results.NotDistinguished {
		out.Reason = e.undecidedReason(fmt.Sprintf("the lead rose beyond the noise at %d of %d steps (%s)", rose, steps, strings.Join(per, "; ")))
	}
	return out
}
