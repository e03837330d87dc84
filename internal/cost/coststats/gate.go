// Package coststats computes over cost runs: the regression gate between two
// runs (Gate) and the share of cells within a tolerance (Within), PHP's cost as a
// multiple of Go's (PHPOverGo), and the counts against the matrix's CPU time
// (CompareTimed, Spearman).
package coststats

import (
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/rpcbed/rpcbed/internal/cost"
)

// DefaultMax is rpcbed gate's default -max: a growth beyond 2 % fails.
const DefaultMax = 0.02

// Change is one cell and side compared between two cost runs.
type Change struct {
	ID                    string
	BaseIr, NewIr         float64
	BaseCycles, NewCycles float64
	// BaseGC and NewGC are the collector's instructions per call, apart from
	// BaseIr and NewIr (cost.LayerGC): reported, not gated.
	BaseGC, NewGC float64
}

// WithGCGrowth is the change of the whole cost, the collector's work included.
func (c Change) WithGCGrowth() float64 { return (c.NewIr+c.NewGC)/(c.BaseIr+c.BaseGC) - 1 }

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
func Gate(base, new *cost.Result, max float64) GateResult {
	g := GateResult{Max: max}
	nm := new.Lookup()
	for _, b := range base.Cells {
		if b.Status != cost.StatusOK {
			continue
		}
		n, ok := nm[b.ID()]
		if !ok || n.Status != cost.StatusOK {
			g.Missing = append(g.Missing, b.ID())
			continue
		}
		c := Change{ID: b.ID(), BaseIr: b.PerCall.Ir, NewIr: n.PerCall.Ir, BaseCycles: b.PerCall.Cycles, NewCycles: n.PerCall.Cycles,
			BaseGC: b.PerCall.GC.Ir, NewGC: n.PerCall.GC.Ir}
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

// WithinWithGC is Within on the whole cost, the collector's work included: how
// far the figure with the collection cycles a window happened to hold
// reproduces (reported beside the goal, not the goal).
func (g GateResult) WithinWithGC(tol float64, clients ...string) (within, total int) {
	for _, c := range g.Changes {
		if len(clients) > 0 && !clientIn(c.ID, clients) {
			continue
		}
		total++
		if math.Abs(c.WithGCGrowth()) <= tol {
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

// Side keeps the changes of one side (client or server), for shares by side.
func (g GateResult) Side(side string) GateResult {
	out := GateResult{Max: g.Max}
	for _, c := range g.Changes {
		if strings.HasSuffix(c.ID, "/"+side) {
			out.Changes = append(out.Changes, c)
		}
	}
	return out
}

// Security keeps the changes of the cells run over sec (tls: CELL@tls/SIDE).
func (g GateResult) Security(sec string) GateResult {
	out := GateResult{Max: g.Max}
	for _, c := range g.Changes {
		name, _, _ := strings.Cut(c.ID, "/")
		if _, cond, ok := strings.Cut(name, "@"); ok && slices.Contains(strings.Split(cond, "+"), sec) {
			out.Changes = append(out.Changes, c)
		}
	}
	return out
}
