package render

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/rpcbed/rpcbed/internal/analysis"
)

// pct1 is a share in per cent with one decimal ("95.6"), "-" for NaN.
func pct1(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	return strconv.FormatFloat(f*100, 'f', 1, 64)
}

// shareCI is a share with its interval: "95.6 % [93.1-97.3 %]".
func shareCI(p analysis.Pooled) string {
	return fmt.Sprintf("%s %% [%s-%s %%]", pct1(p.Share.Center), pct1(p.Share.Low), pct1(p.Share.High))
}

// PooledText prints a calibration pooled over several pairs of runs of one
// spec (`rpcbed agree` given more than one pair): a line a pair (its shares
// both ways, its flips, its own goal), then per figure the share pooled over
// the pairs with its 95 % interval and verdict (analysis.Pooled), and the goal
// over the pairs. low is the goal's lower share.
func PooledText(w io.Writer, pairs []analysis.PairCalibration, low float64) error {
	var b strings.Builder
	flipped := 0
	for i, p := range pairs {
		var figs []string
		cells := 0
		for _, c := range p.Calibration {
			if c.Cells == 0 {
				continue
			}
			cells = max(cells, c.Cells)
			figs = append(figs, fmt.Sprintf("%s %s / %s", c.Figure.Name, pctOf(float64(c.BInA)/float64(c.Cells)), pctOf(float64(c.AInB)/float64(c.Cells))))
		}
		fl, compared := p.FlipCount()
		flipped += fl
		goal := pairGoal(p, low)
		fmt.Fprintf(&b, "pair %d: A = %s, B = %s: %s (B in A's / A in B's, of %d cells); %d of %d verdicts flipped; the pair's own goal: %s\n",
			i+1, p.A, p.B, strings.Join(figs, ", "), cells, fl, compared, goal)
	}
	pooled := analysis.PooledOver(pairs, low)
	fmt.Fprintf(&b, "\npooled over %d pairs (one pair is one draw of the machine's move between runs, which all its cells share: it counts as one cluster, and even calibrated intervals put a pair's two ways in %.0f-%.0f %% in only about 1 pair of 5 on 66 cells; docs/method.md, section 11):\n",
		len(pairs), low*100, analysis.CoverHigh*100)
	var misses []string
	for _, p := range pooled {
		fmt.Fprintf(&b, "  %-16s %d of %d pairs in %.0f-%.0f %% both ways; held %d of %d ways, %s: %s; median half-width ±%s, %.2f x the pairs' rerun difference's 95th percentile (±%s); the runs lay %s times their run shift apart (root mean square of their distance over that of their shifts, 95 %% interval; 1 when the shift reads the move between runs right)%s\n",
			p.Figure.Name, p.InGoal, p.Pairs, low*100, analysis.CoverHigh*100, p.Held, p.Ways, shareCI(p), p.Verdict(),
			pctOf(p.Half), p.Sharpness(), pctOf(p.RerunP95), apartCI(p), apartClause(p))
		if !p.Met(low) {
			misses = append(misses, pooledMiss(p, low))
		}
	}
	if flipped > 0 {
		misses = append(misses, fmt.Sprintf("%d %s between faster and slower", flipped, plural(flipped, "verdict flipped", "verdicts flipped")))
	}
	verdict := "met"
	if len(misses) > 0 {
		verdict = "not met: " + strings.Join(misses, "; ")
	}
	fmt.Fprintf(&b, "\ngoal over the pairs (for each figure, the pooled share's 95 %% interval holds 95 %% and the share lies in %.0f-%.0f %%, at a median half-width of at most %.1f x the pairs' rerun difference's 95th percentile; no verdict flipped between faster and slower): %s\n",
		low*100, analysis.CoverHigh*100, analysis.SharpGoal, verdict)
	_, err := io.WriteString(w, b.String())
	return err
}

// pairGoal is whether pair p met the one-pair goal and, where not, what
// missed, counted: "not met (2 ways outside 90-98 %, 1 half-width over 1.3 x
// the rerun p95)"; flips are on the line already.
func pairGoal(p analysis.PairCalibration, low float64) string {
	if (analysis.Agreement{Calibration: p.Calibration, Flips: p.Flips}).Met(low) {
		return "met"
	}
	outside, blunt := 0, 0
	for _, c := range p.Calibration {
		outside += c.Outside(low)
		if c.Cells > 0 && !(c.Sharpness() <= analysis.SharpGoal) {
			blunt++
		}
	}
	var why []string
	if outside > 0 {
		why = append(why, fmt.Sprintf("%d %s outside %.0f-%.0f %%", outside, plural(outside, "way", "ways"), low*100, analysis.CoverHigh*100))
	}
	if blunt > 0 {
		why = append(why, fmt.Sprintf("%d %s over %.1f x the rerun p95", blunt, plural(blunt, "half-width", "half-widths"), analysis.SharpGoal))
	}
	if len(why) == 0 {
		return "not met"
	}
	return "not met (" + strings.Join(why, ", ") + ")"
}

// apartCI is the runs' distance in run shifts with its interval: "1.31
// [0.85-2.70]" ("-" without pairs).
func apartCI(p analysis.Pooled) string {
	iv := p.ApartRMS
	if iv.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f [%.2f-%.2f]", iv.Center, iv.Low, iv.High)
}

// apartClause is ": " and the apart verdict ("" without pairs).
func apartClause(p analysis.Pooled) string {
	if v := p.ApartVerdict(); v != "" {
		return ": " + v
	}
	return ""
}

// pooledMiss says why p missed the pooled goal.
func pooledMiss(p analysis.Pooled, low float64) string {
	var why []string
	if v := p.Verdict(); v != analysis.PooledCalibrated {
		cause := ""
		if a := p.ApartVerdict(); (v == analysis.PooledNarrow && a == analysis.ApartUnderRead) || (v == analysis.PooledWide && a == analysis.ApartOverRead) {
			cause = fmt.Sprintf(": %s between runs, which lay %s run shifts apart", a, apartCI(p))
		}
		why = append(why, fmt.Sprintf("%s (%s%s)", v, shareCI(p), cause))
	} else if s := p.Share.Center; s < low || s > analysis.CoverHigh {
		why = append(why, fmt.Sprintf("held %s %%, outside %.0f-%.0f %%", pct1(s), low*100, analysis.CoverHigh*100))
	}
	if !(p.Sharpness() <= analysis.SharpGoal) {
		why = append(why, fmt.Sprintf("half-width %.2f x the rerun difference's 95th percentile", p.Sharpness()))
	}
	return p.Figure.Name + " " + strings.Join(why, ", ")
}

// plural is one for n == 1, many otherwise.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
