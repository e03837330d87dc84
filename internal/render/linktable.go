package render

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// LinkTable is README's "What a slower, lossier link does" block: for each
// client x protocol x size, each link's p50 at c=1 and req/s at c=50 as paired
// ratios to the same cell on loopback, with their 95 % intervals and a mark on
// the indistinguishable, under a line per link of what its check achieved. A
// refused link has no column; a flagged cell's ratio is marked ⚑.
func LinkTable(w io.Writer, run *results.Run) error {
	lr := linkRatios(analysis.ViewOf(run))
	rows, links, byKey := lr.rows, lr.links, lr.byKey
	if len(rows) == 0 {
		return fmt.Errorf("run %s has no cell over a link beside its loopback cell", run.ID)
	}
	checks := linkAchieved(run, links)
	fmt.Fprintf(w, "Run %s, each link against loopback (paired rounds, 95 %% intervals; ≈ indistinguishable). Achieved: %s.\n\n", run.ID, strings.Join(checks, "; "))
	head := []string{"client-protocol"}
	for _, l := range links {
		head = append(head, l+" p50 c=1", l+" req/s c=50")
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	p50, rps := analysis.FigP50.Figure().Column, analysis.FigRPS.Figure().Column
	for _, row := range rows {
		cells := []string{row}
		for _, l := range links {
			for _, f := range []struct {
				fig  string
				conc int
			}{{p50, 1}, {rps, 50}} {
				r, ok := byKey[linkKey{row, l, f.fig, f.conc}]
				if !ok {
					cells = append(cells, "-")
					continue
				}
				t := ratioText(r)
				if r.Verdict == stats.Indistinguishable {
					t = "≈ " + t
				}
				if r.AFlags != "" || r.BFlags != "" {
					t += " ⚑"
				}
				cells = append(cells, t)
			}
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	return nil
}

// linkKey names one link ratio: a row (client-protocol call-items), its link,
// figure and concurrency.
type linkKey struct {
	row, link, fig string
	conc           int
}

// linkRatioSet is a run's ratios of each cell over a link to its loopback
// cell: its rows and links in the run's order, and each ratio by its key.
type linkRatioSet struct {
	rows, links []string
	// clients and protos are each row's client and protocol.
	clients, protos map[string]string
	byKey           map[linkKey]analysis.RatioRecord
}

// linkRatios gathers v's link-vs-loopback ratios (none without a link dimension).
func linkRatios(v *analysis.View) linkRatioSet {
	lr := linkRatioSet{clients: map[string]string{}, protos: map[string]string{}, byKey: map[linkKey]analysis.RatioRecord{}}
	for _, r := range v.Records() {
		if r.Kind != analysis.VsLoopback {
			continue
		}
		a, ok := v.Cell(r.A)
		if !ok {
			continue
		}
		c := a.Cell
		row := fmt.Sprintf("%s-%s %s", c.Client, c.Protocol, callItems{c.Call, c.Items})
		lr.byKey[linkKey{row, c.Link, r.Figure, c.Concurrency}] = r
		lr.clients[row], lr.protos[row] = c.Client, c.Protocol
		if !slices.Contains(lr.rows, row) {
			lr.rows = append(lr.rows, row)
		}
		if !slices.Contains(lr.links, c.Link) {
			lr.links = append(lr.links, c.Link)
		}
	}
	return lr
}

// linkAchieved is what each link's check achieved before its cells, one phrase
// per link ("lan: round trip 0.29 ms, 223 µs added against 200 asked").
func linkAchieved(run *results.Run, links []string) []string {
	var checks []string
	for _, l := range links {
		if p, ok := linkProbe(run.Links, l); ok {
			s := fmt.Sprintf("%s: round trip %.2f ms, %.0f µs added against %.0f asked", l, p.RTTUs/1e3, p.AddedRTTUs, p.AskedRTTUs)
			if p.AskedLossPct > 0 {
				s += fmt.Sprintf(", loss %.2g %% against %.2g %%", p.LossPct, p.AskedLossPct)
			}
			checks = append(checks, s)
		}
	}
	return checks
}
