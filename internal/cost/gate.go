package cost

import (
	"fmt"
	"io"
	"math"
	"sort"
)

// DefaultMax is rpcbed gate's default -max: a growth beyond 2 % fails.
const DefaultMax = 0.02

// Change is one cell and side compared between two cost runs.
type Change struct {
	ID                    string
	BaseIr, NewIr         float64
	BaseCycles, NewCycles float64
}

// IrGrowth and CyclesGrowth are new/base − 1.
func (c Change) IrGrowth() float64     { return c.NewIr/c.BaseIr - 1 }
func (c Change) CyclesGrowth() float64 { return c.NewCycles/c.BaseCycles - 1 }

// GateResult is a comparison of two cost runs.
type GateResult struct {
	Max     float64
	Changes []Change // every cell measured in both runs, by ID
	// Regressions are the changes whose instructions or estimated cycles grew
	// beyond Max.
	Regressions []Change
	// Missing are cells measured in base but not (or not successfully) in new:
	// a gate cannot pass a cell it did not see.
	Missing []string
}

// Pass tells whether no cell regressed and none went missing.
func (g GateResult) Pass() bool { return len(g.Regressions) == 0 && len(g.Missing) == 0 }

// Gate compares new against base: a cell regresses when its instructions or
// estimated cycles per call grew by more than max (0.02 = 2 %).
func Gate(base, new *Result, max float64) GateResult {
	g := GateResult{Max: max}
	nm := new.Lookup()
	for _, b := range base.Cells {
		if b.Status != StatusOK {
			continue
		}
		n, ok := nm[b.ID()]
		if !ok || n.Status != StatusOK {
			g.Missing = append(g.Missing, b.ID())
			continue
		}
		c := Change{ID: b.ID(), BaseIr: b.PerCall.Ir, NewIr: n.PerCall.Ir, BaseCycles: b.PerCall.Cycles, NewCycles: n.PerCall.Cycles}
		g.Changes = append(g.Changes, c)
		if c.IrGrowth() > max || c.CyclesGrowth() > max {
			g.Regressions = append(g.Regressions, c)
		}
	}
	sort.Slice(g.Regressions, func(i, j int) bool {
		return math.Max(g.Regressions[i].IrGrowth(), g.Regressions[i].CyclesGrowth()) >
			math.Max(g.Regressions[j].IrGrowth(), g.Regressions[j].CyclesGrowth())
	})
	return g
}

// Within is the share of cells whose instructions per call lie within ±tol of
// base's (the reproducibility goal: ±1 % on 95 % of the go and php cells),
// counted over the cells whose client is one of clients (all when empty).
func (g GateResult) Within(tol float64, clients ...string) (within, total int) {
	for _, c := range g.Changes {
		if len(clients) > 0 && !clientIn(c.ID, clients) {
			continue
		}
		total++
		if math.Abs(c.IrGrowth()) <= tol {
			within++
		}
	}
	return within, total
}

func clientIn(id string, clients []string) bool {
	for _, cl := range clients {
		// IDs start with the client: go-..., php-..., php-pure-...
		if len(id) > len(cl) && id[:len(cl)+1] == cl+"-" {
			if cl == "php" && len(id) > 9 && id[:9] == "php-pure-" {
				continue
			}
			return true
		}
	}
	return false
}

// Print writes the gate's verdict: the regressed cells, the missing ones, and
// a last line PASS or FAIL.
func (g GateResult) Print(w io.Writer) {
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
