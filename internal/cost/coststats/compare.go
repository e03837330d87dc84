package coststats

import (
	"math"
	"slices"

	"github.com/rpcbed/rpcbed/internal/cost"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// TimedPoint is one cell and side: its estimated cycles and the matrix's CPU µs
// per call on that side.
type TimedPoint struct {
	Cell, Side string
	Client     string
	Cycles     float64
	CPUus      float64
	PerNs      float64 // est. cycles per ns of CPU
	Syscalls   float64
}

// Comparison is the counts against the timed figures.
type Comparison struct {
	Points   []TimedPoint
	Spearman float64
}

// CompareTimed pairs every measured cell with the matrix's CPU per call.
func CompareTimed(r *cost.Result, t cost.Timed) Comparison {
	var cmp Comparison
	var x, y []float64
	for _, c := range r.Cells {
		if c.Status != cost.StatusOK {
			continue
		}
		tm, ok := t[c.Cell]
		if !ok {
			continue
		}
		cpu := tm.Client
		if c.Side == cost.SideServer {
			cpu = tm.Server
		}
		if math.IsNaN(cpu) || cpu <= 0 {
			continue
		}
		// The timed CPU includes the collector's work: so do these cycles.
		cyc := c.PerCall.WithGC().Cycles()
		cmp.Points = append(cmp.Points, TimedPoint{Cell: c.Cell, Side: c.Side, Client: c.Client, Cycles: cyc,
			CPUus: cpu, PerNs: cyc / (cpu * 1000), Syscalls: c.PerCall.Syscalls})
		x = append(x, cyc)
		y = append(y, cpu)
	}
	cmp.Spearman = stats.Spearman(x, y)
	return cmp
}

// Outliers are the n points whose cycles per CPU ns lie furthest (on a log
// scale) from the median: where the count and the time disagree most.
func (c Comparison) Outliers(n int) []TimedPoint {
	if len(c.Points) == 0 {
		return nil
	}
	var v []float64
	for _, p := range c.Points {
		v = append(v, math.Log(p.PerNs))
	}
	med := stats.Median(v)
	pts := slices.Clone(c.Points)
	slices.SortStableFunc(pts, func(a, b TimedPoint) int {
		da, db := math.Abs(math.Log(a.PerNs)-med), math.Abs(math.Log(b.PerNs)-med)
		switch {
		case da > db:
			return -1
		case da < db:
			return 1
		}
		return 0
	})
	if len(pts) > n {
		pts = pts[:n]
	}
	return pts
}
