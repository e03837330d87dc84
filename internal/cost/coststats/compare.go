package coststats

import (
	"cmp"
	"math"
	"slices"

	"github.com/rpcbed/rpcbed/internal/cost"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// MaxInstructionsPerNs is the most instructions a core can retire in a ns of
// CPU time: a clock of at most 5 GHz (server cores, Xeon and EPYC, boost to 3.5-4.5)
// times at most 4 instructions a cycle sustained on branchy code such as codecs
// and RPC runtimes (a core's rename width is 4 to 6; such code retires 1 to 3).
// A cell whose count is above it holds work the core does in fewer instructions
// than callgrind counts (callgrind counts every iteration of a rep-prefixed
// string instruction, the hardware counts it once: 100 copies of 1 MiB by Go's
// copy count 11.6 M instructions under callgrind, one per 8 bytes), or the timed
// and the counted runs did different work: its ratio is flagged, not a result.
const MaxInstructionsPerNs = 20.0

// TimedPoint is one cell and side: its counts and the matrix's CPU µs per call
// on that side.
type TimedPoint struct {
	Cell, Side string
	Client     string
	// Instructions and Cycles are per call, the collector's work included (the
	// timed CPU includes it too).
	Instructions float64
	Cycles       float64
	CPUus        float64
	PerNs        float64 // instructions per ns of CPU
	Syscalls     float64
}

// Plausible is whether the point's instructions per CPU ns are within what a
// core can retire (0, MaxInstructionsPerNs].
func (p TimedPoint) Plausible() bool { return p.PerNs > 0 && p.PerNs <= MaxInstructionsPerNs }

// Comparison is the counts against the timed figures.
type Comparison struct {
	Points   []TimedPoint
	Spearman float64
}

// CompareTimed pairs every measured cell with the matrix's CPU per call.
func CompareTimed(r *cost.Result, t cost.Timed) Comparison {
	var out Comparison
	var x, y []float64
	for _, c := range r.Cells {
		if c.Status != cost.StatusOK || c.OneTimeWork() != "" {
			continue // not a result: no ratio either
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
		w := c.PerCall.WithGC()
		cyc := w.Cycles()
		out.Points = append(out.Points, TimedPoint{Cell: c.Cell, Side: c.Side, Client: c.Client, Instructions: w.Ir, Cycles: cyc,
			CPUus: cpu, PerNs: w.Ir / (cpu * 1000), Syscalls: c.PerCall.Syscalls})
		x = append(x, cyc)
		y = append(y, cpu)
	}
	out.Spearman = stats.Spearman(x, y)
	return out
}

// Ends are the n points with the fewest instructions per CPU ns (where the
// count leaves the most out: kernel work, waiting) and the n with the most
// (where it counts the most the core does faster), each in ascending order, no
// point in both.
func (c Comparison) Ends(n int) (low, high []TimedPoint) {
	pts := slices.Clone(c.Points)
	slices.SortStableFunc(pts, func(a, b TimedPoint) int { return cmp.Compare(a.PerNs, b.PerNs) })
	if 2*n > len(pts) {
		n = len(pts) / 2
	}
	return pts[:n], pts[len(pts)-n:]
}

// PerNsSpread is the lowest, the highest and the median instructions per CPU ns
// over the plausible points, and how many there are.
func (c Comparison) PerNsSpread() (low, high, median float64, n int) {
	var v []float64
	for _, p := range c.Points {
		if p.Plausible() {
			v = append(v, p.PerNs)
		}
	}
	if len(v) == 0 {
		return 0, 0, 0, 0
	}
	return slices.Min(v), slices.Max(v), stats.Median(v), len(v)
}
