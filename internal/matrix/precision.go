package matrix

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/rpcbed/rpcbed/internal/results"

	"github.com/rpcbed/rpcbed/internal/analysis"
)

// MaxRounds bounds the rounds Spec.Precision may add up to, per cell.
const MaxRounds = 100

// addRounds adds rounds to the group's cells whose in-run interval is wider than
// Spec.Precision, the widest first, one round at a time in a fresh random order,
// while the budget allows (budgetFor); every added round is recorded (Added).
func (e *executor) addRounds(ctx context.Context, g *groupRun, states []*cellState) error {
	prec := float64(e.run.Spec.Precision)
	if prec <= 0 || e.run.Spec.Budget <= 0 {
		return nil
	}
	for r := e.run.Spec.Repeats + 1; r <= MaxRounds; r++ {
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
			e.prog.note(fmt.Sprintf("precision: %d cells of %s wider than ±%.0f %%, no budget left for another round", len(ws), g.key, prec*100))
			return nil
		}
		var pick []*cellState
		for _, w := range ws[:n] {
			pick = append(pick, w.st)
		}
		e.prog.note(fmt.Sprintf("precision: round %d for the %d widest of %d cells of %s wider than ±%.0f %% (widest ±%.0f %%)",
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
	later := time.Duration(e.later) * (time.Duration(e.run.Spec.Repeats)*perRun + overhead)
	// 15 s stay in reserve: the later groups' server starts and primes are
	// estimated from this one's.
	left := e.run.Spec.Budget.D() - budgetReserve - elapsed - later
	if left <= 0 || perRun <= 0 {
		return 0
	}
	return min(want, int(left/perRun))
}

// budgetReserve is the part of Spec.Budget added rounds leave unspent.
const budgetReserve = 15 * time.Second
