package render

import (
	"fmt"
	"strings"

	"github.com/rpcbed/rpcbed/internal/stats"

	"github.com/rpcbed/rpcbed/internal/analysis"
)

// ratioString is "0.82x [0.75-0.90] slower" from its row of ratios.csv ("-"
// for none), "(unpaired)" after an unpaired one.
func ratioString(r analysis.RatioRecord, ok bool) string {
	if !ok {
		return "-"
	}
	s := ratioText(r) + " " + r.Verdict
	if !r.Paired {
		s += " (unpaired)"
	}
	return s
}

// verdictTally words a table's verdicts per figure: "req/s: 12 faster, 30
// slower, 6 indistinguishable".
func verdictTally(t analysis.RatioTable) string {
	var parts []string
	for _, f := range t.Figures {
		n := t.Tally(f)
		parts = append(parts, fmt.Sprintf("%s: %d faster, %d slower, %d indistinguishable", f.Name,
			n[stats.Faster], n[stats.Slower], n[stats.Indistinguishable]))
	}
	return strings.Join(parts, "; ")
}

// ratioKinds are the comparison tables, in the order the report gives them.
var ratioKinds = []struct {
	kind, title, gridTitle string
	figures                []analysis.FigureIndex
}{
	{analysis.VsGo, "Each client against go (same protocol, call, items, concurrency)", "each client against go",
		[]analysis.FigureIndex{analysis.FigClientCPU, analysis.FigRPS}},
	{analysis.VsGRPC, "Each protocol against grpc (same client, call, items, concurrency)", "each protocol against grpc",
		[]analysis.FigureIndex{analysis.FigServerCPU, analysis.FigRPS}},
	{analysis.TLSVsPlaintext, "What TLS costs: each TLS cell against its plaintext cell (same client, protocol, call, items, concurrency and connection mode, in the same rounds)", "TLS against plaintext",
		[]analysis.FigureIndex{analysis.FigClientCPU, analysis.FigServerCPU, analysis.FigP50, analysis.FigRPS}},
	// No grid: matrix.md's "What a connection per call costs" gives these per handshake.
	{analysis.PerCallVsPersistent, "What a connection per call costs: each per-call cell against the same cell keeping its connections (in the same rounds)", "per call against persistent", nil},
	// No grid: a grid's rows would mix links; the table names each pair.
	{analysis.VsLoopback, "Each link against loopback (same cell, its client beside its server): what a slower, lossier link does", "each link against loopback", nil},
}

// ratiosMarkdown writes matrix.md's ratio tables: every client against go, every
// protocol against grpc, each ratio with its 95 % interval and verdict.
func ratiosMarkdown(v *analysis.View) string {
	cs := v.Comparisons
	if len(cs) == 0 {
		return ""
	}
	recs := map[string]analysis.RatioRecord{}
	for _, r := range v.Records() {
		recs[ratioKey(r)] = r
	}
	var b strings.Builder
	b.WriteString("\n## Ratios\n\nEach ratio is cell A's figure over cell B's, the median of the per-round ratios where A and B ran " +
		"in the same rounds (paired: the machine's drift cancels), with its 95 % interval; the verdict is A faster or slower " +
		"than B when the interval excludes 1 (less CPU per call is faster), indistinguishable when it holds 1. Unpaired ratios " +
		"(cells on two servers, which ran minutes apart) add both cells' noise and the run shift (docs/method.md, section 11).\n")
	for _, k := range ratioKinds {
		t := analysis.Ratios(cs, k.kind)
		if len(t.Rows) == 0 || k.kind == analysis.TLSVsPlaintext {
			continue // TLS against plaintext: matrix.md's "What TLS costs" (tlscost.go)
		}
		fmt.Fprintf(&b, "\n### %s\n\n%s.\n\n| A | B |", k.title, verdictTally(t))
		for _, f := range t.Figures {
			fmt.Fprintf(&b, " %s A/B |", f.Name)
		}
		b.WriteString("\n|---|---|" + strings.Repeat("---|", len(t.Figures)) + "\n")
		for _, r := range t.Rows {
			fmt.Fprintf(&b, "| %s | %s |", flagMarked(v, r.A), flagMarked(v, r.B))
			for _, f := range t.Figures {
				c, ok := r.By[f.Key]
				rec, ok2 := recs[c.A+"|"+c.B+"|"+f.Column]
				fmt.Fprintf(&b, " %s |", ratioString(rec, ok && ok2))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// flagMarked is a cell's name, marked "⚑" when the cell carries a flag.
func flagMarked(v *analysis.View, name string) string {
	if c, ok := v.Cell(name); ok {
		return mdFlagMark(c)
	}
	return name
}
