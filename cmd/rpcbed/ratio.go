package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/rpcbed/rpcbed/internal/stats"
)

// runRatio is `rpcbed ratio`: A's figure over B's from their paired rounds, with
// its 95 % interval and a verdict, for make bench-loadgen's goals.
func runRatio(_ context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("ratio", flag.ContinueOnError)
	fs.SetOutput(s.err)
	better := fs.String("better", "", "which way the figure is better: higher (requests/s) or lower (CPU per request, latency); required")
	goal := fs.Float64("goal", 0, "the ratio A/B must reach: higher-better at least, lower-better at most; 0 = no goal (the verdict is against 1)")
	label := fs.String("label", "", "what the line is about, printed first (\"goal go-client/wrk requests/s (HTTP)\")")
	width := fs.Int("width", 0, "pad \"LABEL >= G:\" to this many characters, so that a block of lines aligns")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: rpcbed ratio -better higher|lower [-goal G] [-label TEXT] [-width N] [FILE]   (stdin without FILE)\n\n"+
			"Reads one round a line, \"A B\": A's figure and B's in that round (the two ran side by\n"+
			"side), blank lines and lines starting with # skipped. Prints A/B as the median of the\n"+
			"rounds' ratios with its 95 % interval, a t interval on the rounds' log ratios at n-1\n"+
			"degrees of freedom (internal/stats; docs/method.md, section 11), and a verdict. With\n"+
			"-goal G: met when the whole interval lies on the better side of G, NOT met when it\n"+
			"lies wholly on the worse side, \"indistinguishable from G\" when it holds G. Without:\n"+
			"faster (A better), slower or indistinguishable, against 1. One round gives its point\n"+
			"ratio, marked as such, and no verdict.\n\n"+
			"  LABEL >= G: xCENTRE [LOW, HIGH] over N rounds: VERDICT\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	var higherBetter bool
	switch *better {
	case "higher":
		higherBetter = true
	case "lower":
	default:
		fmt.Fprintf(s.err, "rpcbed ratio: -better is %q; want higher or lower\n", *better)
		fs.Usage()
		return 2
	}
	if *goal < 0 || math.IsNaN(*goal) || math.IsInf(*goal, 0) {
		fmt.Fprintf(s.err, "rpcbed ratio: -goal %v: want a positive ratio, or 0 for none\n", *goal)
		return 2
	}
	if *width < 0 || *width > 200 {
		fmt.Fprintf(s.err, "rpcbed ratio: -width %d: want 0 to 200\n", *width)
		return 2
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return 2
	}
	in, name := s.in, "stdin"
	if fs.NArg() == 1 {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			fmt.Fprintf(s.err, "rpcbed ratio: %v\n", err)
			return 1
		}
		defer f.Close()
		in, name = f, fs.Arg(0)
	}
	a, b, err := readRounds(in)
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed ratio: %s: %v\n", name, err)
		return 1
	}
	j := judgeRatio(a, b, *goal, higherBetter)
	if !j.Ratio.Valid() {
		fmt.Fprintf(s.err, "rpcbed ratio: %s: %d round: no interval can be given from fewer than 2 rounds; the ratio printed is a point ratio\n", name, j.Rounds)
	}
	fmt.Fprintln(s.out, ratioLine(*label, *width, j))
	return 0
}

// maxRoundLine is the longest input line readRounds takes (two numbers need far
// less).
const maxRoundLine = 4096

// readRounds reads "A B" lines, one round each, into A's and B's values. Every
// value must be a positive finite number (a ratio of figures); blank lines and
// lines starting with # are skipped. No round at all is an error.
func readRounds(r io.Reader) (a, b []float64, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256), maxRoundLine)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Fields(text)
		if len(f) != 2 {
			return nil, nil, fmt.Errorf("line %d: %d fields; want 2, A's value and B's (\"A B\")", line, len(f))
		}
		var v [2]float64
		for i, side := range []string{"A", "B"} {
			x, err := strconv.ParseFloat(f[i], 64)
			switch {
			case err != nil || math.IsNaN(x) || math.IsInf(x, 0):
				return nil, nil, fmt.Errorf("line %d: %s's value %q is not a finite number", line, side, f[i])
			case x <= 0:
				return nil, nil, fmt.Errorf("line %d: %s's value %s is not positive (a ratio needs positive figures)", line, side, f[i])
			}
			v[i] = x
		}
		if r := v[0] / v[1]; r == 0 || math.IsInf(r, 0) {
			return nil, nil, fmt.Errorf("line %d: the ratio %s/%s is out of range", line, f[0], f[1])
		}
		a, b = append(a, v[0]), append(b, v[1])
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, nil, fmt.Errorf("line %d: longer than %d bytes", line+1, maxRoundLine)
		}
		return nil, nil, err
	}
	if len(a) == 0 {
		return nil, nil, errors.New("no rounds (want one \"A B\" line per round)")
	}
	return a, b, nil
}

// A ratioJudgement is a paired ratio and its verdict.
type ratioJudgement struct {
	Ratio stats.Ratio // the interval; not Valid below 2 rounds
	// Point is the median of the rounds' ratios, the centre with or without an
	// interval.
	Point        float64
	Rounds       int
	Goal         float64 // 0: none
	HigherBetter bool
	// Verdict: with a goal met, NOT met or indistinguishable from it; without,
	// stats' faster, slower or indistinguishable; "" without an interval.
	Verdict string
}

// Goal verdicts.
const (
	goalMet    = "met"
	goalNotMet = "NOT met"
)

// judgeRatio computes A/B over paired rounds (stats.PairedRounds) and judges it
// against the goal, or against 1 without one.
func judgeRatio(a, b []float64, goal float64, higherBetter bool) ratioJudgement {
	j := ratioJudgement{Ratio: stats.PairedRounds(a, b), Rounds: min(len(a), len(b)), Goal: goal, HigherBetter: higherBetter}
	if j.Ratio.Valid() {
		j.Point = j.Ratio.Center
	} else if j.Rounds > 0 {
		r := make([]float64, j.Rounds)
		for i := range r {
			r[i] = a[i] / b[i]
		}
		j.Point = stats.Median(r)
		return j
	}
	if goal == 0 {
		j.Verdict = stats.VerdictOf(j.Ratio.Interval, 1, higherBetter)
		return j
	}
	switch stats.VerdictOf(j.Ratio.Interval, goal, higherBetter) {
	case stats.Faster:
		j.Verdict = goalMet
	case stats.Slower:
		j.Verdict = goalNotMet
	default:
		j.Verdict = stats.Indistinguishable + " from " + fmtRatio(goal)
	}
	return j
}

// ratioLine is the one line rpcbed ratio prints:
// "LABEL >= G: xCENTRE [LOW, HIGH] over N rounds: VERDICT", its "LABEL >= G:"
// padded to width.
func ratioLine(label string, width int, j ratioJudgement) string {
	var b strings.Builder
	b.WriteString(label)
	if j.Goal > 0 {
		if label != "" {
			b.WriteByte(' ')
		}
		op := "<="
		if j.HigherBetter {
			op = ">="
		}
		fmt.Fprintf(&b, "%s %s", op, fmtRatio(j.Goal))
	}
	if b.Len() > 0 {
		b.WriteString(":")
		for b.Len() < width {
			b.WriteByte(' ')
		}
		b.WriteByte(' ')
	}
	if !j.Ratio.Valid() {
		fmt.Fprintf(&b, "x%s (a point ratio of %d round: no interval from fewer than 2 rounds): no verdict", fmtRatio(j.Point), j.Rounds)
		return b.String()
	}
	fmt.Fprintf(&b, "x%s [%s, %s] over %d rounds: %s", fmtRatio(j.Point), fmtRatio(j.Ratio.Low), fmtRatio(j.Ratio.High), j.Rounds, j.Verdict)
	return b.String()
}

// fmtRatio prints a ratio with two decimals, or three significant digits when
// two decimals would hide it (below 0.1) or it is large.
func fmtRatio(x float64) string {
	if x >= 0.1 && x < 1000 {
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}
