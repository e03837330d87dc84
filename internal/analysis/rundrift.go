package analysis

import (
	"math"
	"slices"

	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// GroupDrift is how far one server group's figures moved along the run, seen
// in the figures themselves: each cell's last base round against its first
// (both in one fork; rounds the precision loop added are left out), paired so
// the cell cancels, averaged over the group's cells on the log scale. Beside it
// the CPU probe timed before the same repeats: the probe is a fixed compute
// loop, which leaves out what an RPC adds to compute (the kernel's wake-ups and
// loopback stack, memory beyond L1), and the figures can move where it does
// not (docs/method.md, section 11).
type GroupDrift struct {
	Group string
	Cells int
	// Minutes is the median time between a cell's first and last base round.
	Minutes float64
	Figures []FigureDrift
	// Probe is the CPU probe's mean change over the same repeats (client and
	// server core together); ProbeOK is false without probe times.
	Probe   float64
	ProbeOK bool
	// Cache is the cache probe's: each repeat's level the mean log of its four
	// times (both cores, before and after), the change averaged over the cells
	// with CacheSE its standard error (NaN from one cell); CacheOK is false for
	// a run recorded before the cache probe.
	Cache, CacheSE float64
	CacheOK        bool
}

// FigureDrift is one figure's change along a group's rounds: Change is the
// relative change of the geometric mean (+0.13: 13 % up from the first round to
// the last), SE the standard error of its log over the cells.
type FigureDrift struct {
	Figure     Figure
	Cells      int
	Change, SE float64
}

// Moved says the figure moved beyond DriftMoved and 2.5 standard errors, over
// at least DriftCells cells.
func (f FigureDrift) Moved() bool {
	l := math.Log1p(f.Change)
	return f.Cells >= DriftCells && math.Abs(l) >= math.Log1p(DriftMoved) && math.Abs(l) > 2.5*f.SE
}

// Moved says any of the group's figures moved (FigureDrift.Moved).
func (g GroupDrift) Moved() bool {
	return slices.ContainsFunc(g.Figures, FigureDrift.Moved)
}

// DriftMoved is the change along a run past which a group's figures moved: the
// in-run half-width the report holds cells to by default (DefaultPrecision).
// DriftCells is the fewest cells a group's change is judged over.
const (
	DriftMoved = DefaultPrecision
	DriftCells = 8
)

// RunDrifts is each server group's drift along the run (GroupDrift), for
// req/s and each side's CPU per call, in the groups' order of first appearance;
// groups with no cell timed in two base rounds of one fork are left out.
func RunDrifts(r *results.Run) []GroupDrift {
	var order []string
	byGroup := map[string][]results.CellResult{}
	for _, c := range r.Cells {
		if c.Status != results.StatusOK {
			continue
		}
		k := c.Cell.GroupKey()
		if _, ok := byGroup[k]; !ok {
			order = append(order, k)
		}
		byGroup[k] = append(byGroup[k], c)
	}
	var out []GroupDrift
	for _, g := range order {
		if d, ok := groupDrift(r, g, byGroup[g]); ok {
			out = append(out, d)
		}
	}
	return out
}

// groupDrift is one group's GroupDrift; ok is false when no cell has two base
// rounds of one fork.
func groupDrift(r *results.Run, group string, cells []results.CellResult) (GroupDrift, bool) {
	d := GroupDrift{Group: group}
	var gaps, probe, cache []float64
	for _, f := range PrecisionFigures {
		var logs []float64
		for _, c := range cells {
			first, last, ok := baseEnds(r, c, f)
			if !ok {
				continue
			}
			logs = append(logs, math.Log(f.F(last.Metrics)/f.F(first.Metrics)))
			if f.Key != PrecisionFigures[0].Key {
				continue
			}
			gaps = append(gaps, last.Window.StartUnix-first.Window.StartUnix)
			if p, ok := probeChange(first, last); ok {
				probe = append(probe, p)
			}
			if p, ok := cacheChange(first, last); ok {
				cache = append(cache, p)
			}
		}
		if len(logs) == 0 {
			continue
		}
		m, sd := stats.MeanSD(logs)
		fd := FigureDrift{Figure: f, Cells: len(logs), Change: math.Expm1(m), SE: math.NaN()}
		if len(logs) > 1 {
			fd.SE = sd / math.Sqrt(float64(len(logs)))
		}
		d.Figures = append(d.Figures, fd)
		d.Cells = max(d.Cells, len(logs))
	}
	if len(d.Figures) == 0 {
		return d, false
	}
	d.Minutes = stats.Median(gaps) / 60
	if len(probe) > 0 {
		d.Probe, d.ProbeOK = math.Expm1(stats.Mean(probe)), true
	}
	if len(cache) > 0 {
		m, sd := stats.MeanSD(cache)
		d.Cache, d.CacheSE, d.CacheOK = math.Expm1(m), math.NaN(), true
		if len(cache) > 1 {
			d.CacheSE = sd / math.Sqrt(float64(len(cache)))
		}
	}
	return d, true
}

// baseEnds are c's first counted repeat with figure f among the rounds before
// precision added any (Spec.RoundsFor), and its last one in the same fork; ok
// is false when there are not two.
func baseEnds(r *results.Run, c results.CellResult, f Figure) (first, last results.Repeat, ok bool) {
	counted := c.ByRound(f.F)
	base := r.Spec.RoundsFor(c.Cell)
	var reps []results.Repeat
	for _, rep := range c.Repeats {
		if _, in := counted[rep.Index]; in && rep.Index <= base && rep.Window != nil {
			reps = append(reps, rep)
		}
	}
	if len(reps) < 2 {
		return first, last, false
	}
	slices.SortFunc(reps, func(a, b results.Repeat) int { return a.Index - b.Index })
	first = reps[0]
	for _, rep := range reps[1:] {
		if rep.Fork == first.Fork {
			last, ok = rep, true
		}
	}
	return first, last, ok
}

// probeChange is the CPU probe's log change from a to b, the mean over the
// client's and the server's core; ok is false when either lacks a probe time.
func probeChange(a, b results.Repeat) (float64, bool) {
	if a.Probe == nil || b.Probe == nil {
		return 0, false
	}
	if a.Probe.ClientUs[0] <= 0 || a.Probe.ServerUs[0] <= 0 || b.Probe.ClientUs[0] <= 0 || b.Probe.ServerUs[0] <= 0 {
		return 0, false
	}
	return (math.Log(b.Probe.ClientUs[0]/a.Probe.ClientUs[0]) + math.Log(b.Probe.ServerUs[0]/a.Probe.ServerUs[0])) / 2, true
}

// cacheChange is the cache probe's log change from a to b, each repeat's level
// the mean log of its four times; ok is false when either lacks one.
func cacheChange(a, b results.Repeat) (float64, bool) {
	la, oka := cacheLevel(a.Probe)
	lb, okb := cacheLevel(b.Probe)
	return lb - la, oka && okb
}

func cacheLevel(p *results.Probe) (float64, bool) {
	if p == nil {
		return 0, false
	}
	var sum float64
	for _, t := range [][2]float64{p.ClientCacheUs, p.ServerCacheUs} {
		for _, x := range t {
			if x <= 0 {
				return 0, false
			}
			sum += math.Log(x)
		}
	}
	return sum / 4, true
}
