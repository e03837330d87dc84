package matrix

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"

	"github.com/rpcbed/rpcbed/internal/analysis"
)

// MaxRounds bounds the rounds Spec.Precision may add up to, per cell.
const MaxRounds = 100

// addRounds adds rounds to the group's cells whose in-run interval is wider than
// Spec.Precision, the widest first, one round at a time in a fresh random order,
// while the budget allows (budgetFor); every added round is recorded (Added).
func (e *executor) addRounds(ctx context.Context, g *groupRun) error {
	states := g.states
	prec := float64(e.run.Spec.Precision)
	if prec <= 0 || e.run.Spec.Budget <= 0 || len(states) == 0 {
		return nil
	}
	for r := e.run.Spec.RoundsFor(states[0].c) + 1; r <= MaxRounds; r++ {
		cells := make([]results.CellResult, len(states))
		for i, st := range states {
			cells[i] = st.res
		}
		type wide struct {
			st *cellState
			w  float64
		}
		var ws []wide
		for _, st := range states {
			if st.final || st.res.Status != results.StatusOK {
				continue
			}
			if w := analysis.Width(st.res, cells); w > prec {
				ws = append(ws, wide{st, w})
			}
		}
		if len(ws) == 0 {
			return nil
		}
		slices.SortStableFunc(ws, func(a, b wide) int { return cmp.Compare(b.w, a.w) })
		n := e.budgetFor(len(ws))
		if n == 0 {
			e.prog.Note(fmt.Sprintf("precision: %d cells of %s wider than ±%.0f %%, no budget left for another round", len(ws), g.key, prec*100))
			return nil
		}
		var pick []*cellState
		for _, w := range ws[:n] {
			pick = append(pick, w.st)
		}
		e.prog.Note(fmt.Sprintf("precision: round %d for the %d widest of %d cells of %s wider than ±%.0f %% (widest ±%.0f %%)",
			r, len(pick), len(ws), g.key, prec*100, ws[0].w*100))
		if err := e.round(ctx, g, r, true, e.shuffle(g.group, r, pick)); err != nil {
			return err
		}
	}
	return nil
}

// budgetFor is how many of want more runs fit in the run's budget: the time
// left until Started + Budget, less what the later groups' rounds will take at
// the rate the run has gone so far (timed runs and the rest per cell alike).
func (e *executor) budgetFor(want int) int {
	if e.timedRuns == 0 {
		return 0
	}
	elapsed := time.Since(e.run.Started)
	perRun := e.timed / time.Duration(e.timedRuns)
	// Server starts, verify and primes, per cell, at this run's rate.
	cellsDone := max(1, e.timedRuns/max(1, e.run.Spec.Repeats))
	overhead := max(0, elapsed-e.timed) / time.Duration(cellsDone)
	later := time.Duration(e.laterRuns)*perRun + time.Duration(e.later)*overhead + e.laterFixed
	left := e.run.Spec.Budget.D() - budgetReserve - elapsed - later
	if left <= 0 || perRun <= 0 {
		return 0
	}
	return min(want, int(left/perRun))
}

// budgetReserve is the part of Spec.Budget added rounds leave unspent: the
// report written after the last group.
const budgetReserve = 15 * time.Second

// groupStart is what a server group spends before its first run: the server's
// start, its health check and its engine's (a JVM's) start. A reference run's
// java-ice and java-dubbo groups spent 5-9 s each beside their primes.
const groupStart = 8 * time.Second

// fixedCost is what the groups of cells (in run order) spend besides their
// cells' runs, at most: a start per group and fork (Spec.ForksFor), and each
// primed worker's prime at its limit (Spec.PrimeBudget), once per fork. Measured per-cell overhead (budgetFor) cannot
// see these: a group of go cells has none, a group of java cells pays them
// once. A reference run whose go-server group took added rounds ran 22 s past
// its 10-minute budget on the two java groups after it, which this counts.
func (e *executor) fixedCost(cells []plan.Cell) time.Duration {
	var d time.Duration
	group, primed := "", map[string]bool{}
	for _, c := range cells {
		forks := time.Duration(e.run.Spec.ForksFor(c))
		if gk := c.GroupKey(); gk != group {
			group, primed = gk, map[string]bool{}
			d += forks * groupStart
		}
		w := c.Client + "-" + c.Protocol
		if e.run.Spec.Prime[c.Client] > 0 && !primed[w] {
			primed[w] = true
			d += forks * e.run.Spec.PrimeBudget(c.Client, c.Protocol)
		}
	}
	return d
}
