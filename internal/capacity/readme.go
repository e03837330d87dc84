package capacity

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/plan"
)

// ReadmeSLO is the budget the README's block quotes.
const ReadmeSLO = 10 * time.Millisecond

// ReadmeBlock is the README's "How much load each stack carries within 10 ms
// p99": a protocol x client table of knees with their intervals at the run's
// 10 ms SLO (its first SLO when it has none), from a committed run.
func ReadmeBlock(w io.Writer, run *Run) error {
	if len(run.Spec.SLOs) == 0 {
		return fmt.Errorf("capacity run %s has no SLO", run.ID)
	}
	slo := run.Spec.SLOs[0]
	for _, s := range run.Spec.SLOs {
		if s.P99.D() == ReadmeSLO {
			slo = s
		}
	}
	type key struct{ rest, proto, client string }
	knees := map[key]*Knee{}
	var rests, protos, clients []string
	for i := range run.Cells {
		c := &run.Cells[i]
		r := rest(c.Cell)
		k := kneeOf(c, slo)
		if c.Error != "" {
			k = &Knee{Status: StatusFailed}
		}
		if k == nil {
			continue
		}
		knees[key{r, c.Cell.Protocol, c.Cell.Client}] = k
		if !slices.Contains(rests, r) {
			rests = append(rests, r)
		}
		if !slices.Contains(protos, c.Cell.Protocol) {
			protos = append(protos, c.Cell.Protocol)
		}
		if !slices.Contains(clients, c.Cell.Client) {
			clients = append(clients, c.Cell.Client)
		}
	}
	byVocab := func(v []string) func(a, b string) int {
		return func(a, b string) int { return slices.Index(v, a) - slices.Index(v, b) }
	}
	slices.SortFunc(protos, byVocab(plan.Protocols))
	slices.SortFunc(clients, byVocab(plan.Clients))
	fmt.Fprintf(w, "Calls/s each stack carries with p99 (from each call's intended start) within %v and at most %v of calls failed: "+
		"the knee with its 95 %% interval, one server core, run %s (`make capacity`; docs/method.md, \"Capacity at a latency budget\"). "+
		"⚑: the client's core saturated first, so the figure is the client's, not the stack's; — not searched.\n",
		slo.P99, slo.Errors, run.ID)
	for _, r := range rests {
		fmt.Fprintf(w, "\n| %s | %s |\n|---|%s\n", strings.TrimPrefix(r, "-"), strings.Join(clients, " | "), strings.Repeat("---|", len(clients)))
		for _, p := range protos {
			row := []string{p}
			for _, c := range clients {
				k := knees[key{r, p, c}]
				switch {
				case k == nil:
					row = append(row, "—")
				case k.ClientBound && k.Measured():
					row = append(row, kneeCell(*k)+" ⚑")
				default:
					row = append(row, kneeCell(*k))
				}
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
		}
	}
	return nil
}
