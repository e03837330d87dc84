package render

import (
	"fmt"
	"math"
	"strings"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/stats"
)

func init() {
	RegisterAnswer(AnswerProducer{Rank: 60, ID: "links", Question: "What does a slower, lossier link do?", Produce: linkAnswer})
}

// linkFigures are the link answer's columns per link: p50 at c=1 (what a call
// waits) and req/s at c=50 (what the stack carries).
var linkAnswerFigures = []struct {
	fig  analysis.FigureIndex
	conc int
}{{analysis.FigP50, 1}, {analysis.FigRPS, 50}}

// linkAnswer: each cell over a link against its loopback cell, paired by round,
// as a grid (a column per link and figure), led by one sentence per link with
// what its check achieved and the range of its ratios.
func linkAnswer(in AnswerInput) Answer {
	v := in.View
	lr := linkRatios(v)
	if len(lr.rows) == 0 {
		return Answer{Pending: "This run has no cell over a link beside its loopback cell: `make matrix-net-full` runs every client and protocol on loopback, lan, region, wan and lossy between two hosts (README, What a slower, lossier link does)."}
	}
	g := &Grid{ID: "links", Caption: "each cell over a link against the same cell on loopback (same rounds): p50 at c=1, req/s at c=50"}
	for _, l := range lr.links {
		for _, f := range linkAnswerFigures {
			g.Cols = append(g.Cols, GridCol{Head: fmt.Sprintf("%s %s c=%d", l, f.fig.Figure().Name, f.conc), C: f.conc})
		}
	}
	for _, row := range lr.rows {
		gr := GridRow{Head: row, Client: lr.clients[row], Protocol: lr.protos[row]}
		for _, l := range lr.links {
			for _, f := range linkAnswerFigures {
				cell := GridCell{Text: "-", C: f.conc}
				if r, ok := lr.byKey[linkKey{row, l, f.fig.Figure().Column, f.conc}]; ok {
					cell = gridCell(r)
					cell.C = f.conc
				}
				gr.Cells = append(gr.Cells, cell)
			}
		}
		g.Rows = append(g.Rows, gr)
	}
	a := Answer{Grid: g, Evidence: []link{{"matrix.md", "matrix.md (Hosts and links)"}, {RatiosFile, RatiosFile}, {"#plots", "the plots (p99 against the round trip, req/s against loss)"}}}
	achieved := linkAchieved(v.Run, lr.links)
	for i, l := range lr.links {
		var parts []string
		for _, f := range linkAnswerFigures {
			if s := linkRange(lr, l, f.fig.Figure(), f.conc); s != "" {
				parts = append(parts, s)
			}
		}
		if len(parts) == 0 {
			continue
		}
		lead := "Over " + l
		if i < len(achieved) && strings.HasPrefix(achieved[i], l+":") {
			lead += " (" + strings.TrimPrefix(achieved[i], l+": ") + ")"
		}
		a.Lead = append(a.Lead, lead+": "+strings.Join(parts, "; ")+".")
	}
	a.Notes = []string{
		"Each entry is the cell's figure over the link against the same cell on loopback (client beside its server, 127.0.0.1), the median of per-round ratios with its 95 % interval (a row of ratios.csv, kind link-vs-loopback). Grey: the interval holds 1. ⚑: a cell behind it carries a flag (Needs attention).",
		"What each link achieved, asked against the round trip and loss its check measured before and after its cells, is in matrix.md (Hosts and links); a refused link has no column.",
	}
	return a
}

// linkRange is the range of link l's ratios of figure f at conc over the rows,
// and how many were indistinguishable: "p50 at c=1 1.66x-2.53x of loopback's
// (9 pairs, 0 indistinguishable)"; "" when none.
func linkRange(lr linkRatioSet, l string, f analysis.Figure, conc int) string {
	lo, hi, n, same := math.Inf(1), math.Inf(-1), 0, 0
	for _, row := range lr.rows {
		r, ok := lr.byKey[linkKey{row, l, f.Column, conc}]
		if !ok || math.IsNaN(r.Ratio) {
			continue
		}
		lo, hi, n = math.Min(lo, r.Ratio), math.Max(hi, r.Ratio), n+1
		if r.Verdict == stats.Indistinguishable {
			same++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s at c=%d %sx-%sx of loopback's (%d pairs, %d indistinguishable)", f.Name, conc, sig(lo), sig(hi), n, same)
}
