package costrender

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/rpcbed/rpcbed/internal/cost/coststats"
)

// PrintGate writes the gate's verdict: the regressed cells, the missing ones, and
// a last line PASS or FAIL.
func PrintGate(w io.Writer, g coststats.GateResult) {
	fmt.Fprintf(w, "rpcbed gate: %d cells compared, -max %.1f %% on instructions and estimated cycles per call\n", len(g.Changes), 100*g.Max)
	if len(g.Regressions) > 0 {
		fmt.Fprintf(w, "%-44s %14s %14s %8s %14s %14s %8s\n", "cell", "base Ir", "new Ir", "Ir", "base cycles", "new cycles", "cycles")
		for _, c := range g.Regressions {
			fmt.Fprintf(w, "%-44s %14s %14s %+7.2f%% %14s %14s %+7.2f%%\n", c.ID, thousands(c.BaseIr), thousands(c.NewIr), 100*c.IrGrowth(),
				thousands(c.BaseCycles), thousands(c.NewCycles), 100*c.CyclesGrowth())
		}
	}
	for _, id := range g.Missing {
		fmt.Fprintf(w, "%-44s missing from the new run (or not measured there)\n", id)
	}
	var worst float64
	for _, c := range g.Changes {
		worst = math.Max(worst, math.Max(math.Abs(c.IrGrowth()), math.Abs(c.CyclesGrowth())))
	}
	within, total := g.Within(0.01)
	fmt.Fprintf(w, "largest change %.2f %%; %d of %d cells within ±1 %% on instructions\n", 100*worst, within, total)
	if g.Pass() {
		fmt.Fprintln(w, "PASS")
	} else {
		fmt.Fprintf(w, "FAIL: %d cells grew beyond %.1f %%, %d missing\n", len(g.Regressions), 100*g.Max, len(g.Missing))
	}
}

// ReproducibilityGoal is the same-machine goal: two cost runs agree within ±1 %
// on instructions per call for at least 95 % of the go and php cells.
const ReproducibilityGoal = 0.95

// PrintReproducibility prints what the same-machine goal needs from two runs of
// one build: the share of go and php cells (both sides) within ±tol on
// instructions per call, the same share by client and by side, and the cells
// furthest apart.
func PrintReproducibility(w io.Writer, g coststats.GateResult, tol float64) {
	in, total := g.Within(tol, "go", "php", "php-pure")
	share := 0.0
	if total > 0 {
		share = float64(in) / float64(total)
	}
	verdict := "MET"
	if share < ReproducibilityGoal || total == 0 {
		verdict = "NOT MET"
	}
	fmt.Fprintf(w, "reproducibility: %d of %d go and php cells and sides (%.1f %%) within ±%g %% on instructions per call (the garbage collector's apart); goal %.0f %% within ±1 %%: %s\n",
		in, total, 100*share, 100*tol, 100*ReproducibilityGoal, verdict)
	if tin, ttotal := g.Security("tls").Within(tol, "go", "php", "php-pure"); ttotal > 0 {
		tv := "MET"
		if float64(tin) < ReproducibilityGoal*float64(ttotal) {
			tv = "NOT MET"
		}
		fmt.Fprintf(w, "  TLS cells (CELL@tls), of them: %d of %d (%.1f %%) within ±%g %%; goal %.0f %%: %s\n",
			tin, ttotal, 100*float64(tin)/float64(ttotal), 100*tol, 100*ReproducibilityGoal, tv)
	}
	gin, gtotal := g.WithinWithGC(tol, "go", "php", "php-pure")
	fmt.Fprintf(w, "  with the garbage collector's instructions added (not the goal): %d of %d within ±%g %%\n", gin, gtotal, 100*tol)
	for _, grp := range []struct {
		name, side string
		clients    []string
	}{
		{"go, client side", "client", []string{"go"}}, {"go, server side", "server", []string{"go"}},
		{"php, client side", "client", []string{"php"}}, {"php, server side", "server", []string{"php"}},
		{"php-pure, client side", "client", []string{"php-pure"}}, {"php-pure, server side", "server", []string{"php-pure"}},
	} {
		in, total := g.Side(grp.side).Within(tol, grp.clients...)
		if total > 0 {
			fmt.Fprintf(w, "  %-24s %3d of %3d within ±%g %%\n", grp.name+":", in, total, 100*tol)
		}
	}
	ch := slices.Clone(g.Changes)
	slices.SortStableFunc(ch, func(a, b coststats.Change) int {
		da, db := math.Abs(a.IrGrowth()), math.Abs(b.IrGrowth())
		switch {
		case da > db:
			return -1
		case da < db:
			return 1
		}
		return 0
	})
	fmt.Fprintf(w, "cells furthest apart (instructions per call, run A, run B, apart; GC instructions per call, run A, run B):\n")
	for i, c := range ch {
		if i >= 12 || (i >= 5 && math.Abs(c.IrGrowth()) <= tol) {
			break
		}
		fmt.Fprintf(w, "  %-44s %14s %14s %+7.2f %%   GC %s, %s\n", c.ID, thousands(c.BaseIr), thousands(c.NewIr), 100*c.IrGrowth(), thousands(c.BaseGC), thousands(c.NewGC))
	}
}
