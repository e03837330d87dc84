package render

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// RunFacts prints one line on where and how a run ran: cells, repeats, failures,
// runner, machine and the time it took.
func RunFacts(w io.Writer, run *results.Run) error {
	ok, failed, partial := run.Tally()
	m := run.Machine
	fmt.Fprintf(w, "%d cells x %d repeats (%d ok, %d failed, %d partial), %s runner, on %s (%d cores, %d MB, %s)",
		len(run.Cells), run.Spec.Repeats, ok, failed, partial, run.Runner, orDash(m.CPU), m.Cores, m.MemMB, orDash(m.OS))
	if !run.Started.IsZero() && run.Finished.After(run.Started) {
		fmt.Fprintf(w, ", %s on %s", run.Finished.Sub(run.Started).Round(1e9), run.Started.Format("2006-01-02"))
	}
	_, err := fmt.Fprintln(w, ".")
	return err
}

// ResultsTable prints the run's requests/s as one Markdown table: a row per
// client-protocol pair in the run's order, a column per items and concurrency
// of the run's first call (the median over the good repeats), and the client's
// CPU µs per call at the middle items count and the highest concurrency.
func ResultsTable(w io.Writer, run *results.Run) error {
	s := run.Spec
	if len(s.Calls) == 0 || len(s.Items) == 0 || len(s.Concurrency) == 0 {
		return fmt.Errorf("run %s: its spec has no calls, items or concurrency", run.ID)
	}
	call := s.Calls[0]
	items, concs := slices.Sorted(slices.Values(s.Items)), slices.Sorted(slices.Values(s.Concurrency))
	cpuItems, cpuConc := items[len(items)/2], concs[len(concs)-1]
	cells := map[string]results.CellResult{}
	var pairs []string
	for _, c := range run.Cells {
		if c.Call != call || c.Link != "" || c.Nodes != 0 {
			continue
		}
		p := c.Client + "-" + c.Protocol
		if !slices.Contains(pairs, p) {
			pairs = append(pairs, p)
		}
		cells[plan.Cell{Client: c.Client, Protocol: c.Protocol, Call: call, Items: c.Items, Concurrency: c.Concurrency}.Name()] = c
	}
	if len(pairs) == 0 {
		return fmt.Errorf("run %s: no %s cell", run.ID, call)
	}
	var b strings.Builder
	b.WriteString("| client-protocol |")
	for _, n := range items {
		for _, c := range concs {
			fmt.Fprintf(&b, " %d items c%d |", n, c)
		}
	}
	fmt.Fprintf(&b, " client CPU µs/call (%d, c%d) |\n|---|", cpuItems, cpuConc)
	for range len(items)*len(concs) + 1 {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, p := range pairs {
		client, proto, _ := strings.Cut(p, "-")
		if strings.HasPrefix(p, "php-pure-") {
			client, proto = "php-pure", strings.TrimPrefix(p, "php-pure-")
		}
		fig := func(n, c int, f func(results.Metrics) float64) string {
			cell, ok := cells[plan.Cell{Client: client, Protocol: proto, Call: call, Items: n, Concurrency: c}.Name()]
			if !ok || cell.Status == results.StatusFailed {
				return "—"
			}
			v := cell.Stat(f).Median
			if math.IsNaN(v) {
				return "—"
			}
			return sig(v)
		}
		fmt.Fprintf(&b, "| %s |", p)
		for _, n := range items {
			for _, c := range concs {
				fmt.Fprintf(&b, " %s |", fig(n, c, results.RPS))
			}
		}
		fmt.Fprintf(&b, " %s |\n", fig(cpuItems, cpuConc, results.ClientCPU))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
