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
