package render

import (
	"fmt"
	"math"
	"strings"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/results"
)

// repeatOrderMarkdown names the workers whose repeats drift in run order.
func repeatOrderMarkdown(run *results.Run) string {
	orders := analysis.RepeatOrders(run)
	if len(orders) == 0 {
		return ""
	}
	var parts []string
	for _, o := range orders {
		if !o.Drifts {
			continue
		}
		var devs []string
		for i, d := range o.Dev {
			devs = append(devs, fmt.Sprintf("r%d %+.0f %%", i+1, math.Round(d*100)+0)) // +0: no "-0 %"
		}
		t := fmt.Sprintf("%s %s (%d cells; the last repeat %+.0f %% on the first", o.Worker, strings.Join(devs, ", "), o.Cells, o.Drift*100)
		if o.JIT > 0 {
			t += fmt.Sprintf("; %d of %d repeats %s", o.JIT, o.All, results.FlagJIT)
		}
		parts = append(parts, t+")")
	}
	head := fmt.Sprintf("- repeat order (req/s, each repeat's mean distance from its cell's mean, per worker; a worker is named when its last repeat differs from its first by over %.0f %%, 2.5 standard errors and, among %d or more workers, %d times their median drift): ", results.NoisySpread*100, analysis.OrderPeers, analysis.OrderPeerFactor)
	if len(parts) == 0 {
		return head + fmt.Sprintf("no worker's repeats drift (%d workers)\n", len(orders))
	}
	return head + strings.Join(parts, "; ") + "\n"
}

// runDriftMarkdown says how far each server group's figures moved along the
// run (analysis.RunDrifts), beside what the CPU probe timed before the same
// repeats: a level the machine changed mid-run, which the probe's compute
// loop may not show.
func runDriftMarkdown(run *results.Run) string {
	parts := runDriftStrings(run)
	if len(parts) == 0 {
		return ""
	}
	return "- the figures along the run " + driftLegend() + ": " + strings.Join(parts, "; ") + "\n"
}

// runDriftStrings is each server group's drift along the run
// (analysis.RunDrifts) as groupDriftString gives it, in the run's group order.
func runDriftStrings(run *results.Run) []string {
	var parts []string
	for _, g := range analysis.RunDrifts(run) {
		parts = append(parts, groupDriftString(g))
	}
	return parts
}

// driftLegend says how a group's drift is measured and when it moved, as
// matrix.md's line and `rpcbed agree` give it.
func driftLegend() string {
	return fmt.Sprintf("(each cell's last round on its first, before rounds were added, in one fork; the mean over a server group's cells ± 2 standard errors; moved: past ±%s and 2.5 standard errors over at least %d cells; docs/method.md, section 11)",
		pctOf(analysis.DriftMoved), analysis.DriftCells)
}

// driftChange is a change along the run in whole percent, with ± 2 standard
// errors where se is known ("req/s +14 ±6 %").
func driftChange(name string, change, se float64) string {
	s := fmt.Sprintf("%s %+.0f", name, math.Round(change*100)+0) // +0: no "-0"
	if !math.IsNaN(se) {
		s += fmt.Sprintf(" ±%.0f", 200*se)
	}
	return s + " %"
}

// groupDriftString is one group's drift: its figures' changes, the probes' over
// the same repeats, and whether the figures moved.
func groupDriftString(g analysis.GroupDrift) string {
	var figs []string
	for _, f := range g.Figures {
		figs = append(figs, driftChange(f.Figure.Name, f.Change, f.SE))
	}
	if g.ProbeOK {
		figs = append(figs, driftChange("CPU probe", g.Probe, math.NaN()))
	}
	if g.CacheOK {
		figs = append(figs, driftChange("cache probe", g.Cache, g.CacheSE))
	}
	state := "steady"
	switch {
	case g.Moved():
		state = "moved"
	case g.Cells < analysis.DriftCells:
		state = "too few cells to judge"
	}
	return fmt.Sprintf("%s (%d cells, %.1f min apart) %s: %s", strings.TrimSuffix(g.Group, "@"), g.Cells, g.Minutes, strings.Join(figs, ", "), state)
}
