package reproduce

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/rpcbed/rpcbed/internal/analysis/claims"
	"github.com/rpcbed/rpcbed/internal/measure"
	"github.com/rpcbed/rpcbed/internal/results"
)

// The precision loop: after every experiment's base runs, paired rounds are
// added at the levels where a claim is still inconclusive (its interval
// straddles a band's edge, or holds the no-difference value), one round per
// level per pass, the claims judged again after each pass, until every claim
// is decided, the budget is spent, or a level has had maxPasses added rounds.
// Looking again after each pass and stopping once decided would declare a
// difference that is not there more often than the intervals' 5 %: once an
// experiment takes rounds, its claims are judged at stats.LooksLevel(maxPasses)
// (Bonferroni over the added looks), so a claim with no difference is
// declared one at most 5 % of the time at the first look and 5 % over the
// added ones (TestRefineTrueNull measures it).
// It is the matrix's precision loop (the `precision` spec key) aimed at the
// claims rather than at a width.

// DefaultBudget is `make reproduce`'s: the whole reproduction, base runs and
// added rounds, in 10 minutes.
const DefaultBudget = 10 * time.Minute

// maxPasses bounds the rounds added per level: each pass is one more look at
// a claim, and a claim with no difference to find would otherwise be looked at
// until the budget ran out (TestRefineTrueNull measures what the looks cost).
const maxPasses = 8

// roundReserve is the part of the budget added rounds leave unspent: the
// reports written and the servers stopped after the last round.
const roundReserve = 15 * time.Second

// A rounder is an experiment whose claims can take more paired rounds.
type rounder interface {
	experiment
	// undecided are the levels where a round could decide a claim still inconclusive.
	undecided() []claims.Need
	// addRound runs one paired round at level: each of alts once, in that order,
	// as round n after the base repeats.
	addRound(ctx context.Context, o Options, level int, alts []string, n int) error
	// jobCost bounds one job's time: the longest of the experiment's jobs so far.
	jobCost() time.Duration
	// setLooks sets the looks its claims are judged over from now on
	// (claims' Looks) and returns the confidence that gives each.
	setLooks(n int) float64
}

// clock is the reproduction's budget: total from start, read through now.
type clock struct {
	start time.Time
	total time.Duration
	now   func() time.Time
}

// left is what added rounds may still spend.
func (c clock) left() time.Duration { return c.total - roundReserve - c.now().Sub(c.start) }

// pendingRound is one paired round due at a level: the union of its needs'
// alternatives, and the rules it serves.
type pendingRound struct {
	level int
	alts  []string
	rules []string
}

// byLevel merges needs into one round per level, in level order.
func byLevel(needs []claims.Need) []pendingRound {
	var out []pendingRound
	for _, n := range needs {
		i := slices.IndexFunc(out, func(p pendingRound) bool { return p.level == n.Level })
		if i < 0 {
			out = append(out, pendingRound{level: n.Level})
			i = len(out) - 1
		}
		for _, a := range n.Alts {
			if !slices.Contains(out[i].alts, a) {
				out[i].alts = append(out[i].alts, a)
			}
		}
		if !slices.Contains(out[i].rules, n.Rule) {
			out[i].rules = append(out[i].rules, n.Rule)
		}
	}
	slices.SortFunc(out, func(a, b pendingRound) int { return cmp.Compare(a.level, b.level) })
	return out
}

// roundOrder is the alternatives of round n at level in a fresh random order
// (RMIT: drift within a round does not always hit the same alternative),
// seeded by level and round so a run's order can be told again.
func roundOrder(alts []string, level, n int) []string {
	o := slices.Clone(alts)
	slices.Sort(o)
	rand.New(rand.NewPCG(uint64(level), uint64(n))).Shuffle(len(o), func(i, j int) { o[i], o[j] = o[j], o[i] })
	return o
}

// refine runs the precision loop over exps and returns each one's record, in
// exps' order. A failed round is recorded by the experiment (its Failed) and
// the loop goes on; only a cancelled context stops it with an error.
func refine(ctx context.Context, o Options, c clock, exps []rounder) ([]results.Rounds, error) {
	passes := maxPasses
	if o.Quick {
		passes = 1 // the loop's shape, in seconds
	}
	recs := make([]results.Rounds, len(exps))
	for i := range recs {
		recs[i] = results.Rounds{BudgetS: c.total.Seconds(), MaxPerLevel: passes}
	}
	stop := results.StopMaxRounds
	for pass := 1; pass <= passes; pass++ {
		pending, ran := false, false
		for i, e := range exps {
			for _, p := range byLevel(e.undecided()) {
				pending = true
				cost := time.Duration(len(p.alts)) * e.jobCost()
				if cost <= 0 || cost > c.left() {
					continue
				}
				if recs[i].SpentS == 0 {
					// From its first added round on, each look is one of passes:
					// Bonferroni over them (stats.LooksLevel).
					recs[i].Confidence = e.setLooks(passes)
				}
				t0 := c.now()
				if err := e.addRound(ctx, o, p.level, roundOrder(p.alts, p.level, pass), pass); err != nil {
					return recs, err
				}
				recs[i].SpentS += c.now().Sub(t0).Seconds()
				recs[i].Add(p.level, p.rules)
				ran = true
			}
		}
		if !pending {
			stop = results.StopDecided
			break
		}
		if !ran {
			stop = results.StopBudget
			break
		}
	}
	if stop == results.StopMaxRounds && !slices.ContainsFunc(exps, func(e rounder) bool { return len(e.undecided()) > 0 }) {
		stop = results.StopDecided // the last pass decided the last claim
	}
	for i := range recs {
		recs[i].Stop = stop
		recs[i].ElapsedS = c.now().Sub(c.start).Seconds()
	}
	return recs, nil
}

// jobTimer keeps an experiment's longest job so far (rounder.jobCost).
type jobTimer struct{ longest time.Duration }

// run is runJob, timed.
func (t *jobTimer) run(ctx context.Context, b *measure.RunPath, srv *measure.ServerProc, j measure.Job) (claims.Run, error) {
	t0 := time.Now()
	m, err := runJob(ctx, b, srv, j)
	t.longest = max(t.longest, time.Since(t0))
	return m, err
}

func (t *jobTimer) jobCost() time.Duration { return t.longest }

// logRound is the progress line of one added round.
func logRound(o Options, name string, level int, alts []string, n int) {
	fmt.Fprintf(o.Log, "  precision: %s round +%d at c=%d: %v\n", name, n, level, alts)
}
