package render

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/cost"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// The questions every run answers, in the page's order. Each is one producer:
// adding a question is one RegisterAnswer (docs/reports.md).
func init() {
	RegisterAnswer(AnswerProducer{Rank: 10, ID: "language", Question: "What does a caller's language cost, per protocol and size?", Produce: languageAnswer, OnBase: true})
	RegisterAnswer(AnswerProducer{Rank: 20, ID: "protocol", Question: "Which protocol is cheapest, per size and concurrency?", Produce: protocolAnswer, OnBase: true})
	RegisterAnswer(AnswerProducer{Rank: 30, ID: "claims", Question: "Did the published claims hold?", Produce: claimsAnswer})
	RegisterAnswer(AnswerProducer{Rank: 40, ID: "counted", Question: "Timed against counted: why do CPU time and instruction counts differ?", Produce: countedAnswer})
}

var ccpuFig, scpuFig = analysis.FigClientCPU.Figure(), analysis.FigServerCPU.Figure()

// languageAnswer: each client's CPU per call against go's, paired by round.
func languageAnswer(in AnswerInput) Answer {
	v := in.View
	g := verdictGrid(v, analysis.VsGo, ccpuFig)
	if g == nil {
		return Answer{Pending: "This run has no client paired with go on the same protocol and size."}
	}
	g.Caption = "client CPU per call against go's, same protocol, size and concurrency"
	a := Answer{Grid: g, Evidence: []link{{"#grids", "verdict grids"}, {RatiosFile, RatiosFile}, {"#ratios", "every ratio"}}}
	x := newRatioIndex(v)
	s := v.Run.Spec
	n := middle(s.Items)
	for _, client := range runClients(v.Run) {
		if client == "go" {
			continue
		}
		proto := "grpc"
		if !slices.Contains(s.Clients[client], proto) || !slices.Contains(s.Clients["go"], proto) {
			continue
		}
		var parts []string
		for _, c := range slices.Sorted(slices.Values(s.Concurrency)) {
			name := plan.Cell{Client: client, Protocol: proto, Call: s.Calls[0], Items: n, Concurrency: c, ServerLang: s.Servers[proto]}.Name()
			r, ok := x.get(analysis.VsGo, name, ccpuFig.Column)
			if !ok {
				continue
			}
			flag := ""
			if r.AFlags != "" || r.BFlags != "" {
				flag = " ⚑"
			}
			parts = append(parts, fmt.Sprintf("%s%s at c%d (%s)", ratioText(r), flag, c, costWord(r.Verdict)))
		}
		if len(parts) > 0 {
			a.Lead = append(a.Lead, fmt.Sprintf("A %s caller on gRPC at %d items spends Go's client CPU per call times %s.", client, n, strings.Join(parts, ", ")))
		}
	}
	a.Notes = []string{
		"Each entry is the client's CPU per call over Go's on the same protocol, size and concurrency: the median of per-round ratios, with its 95 % interval (a row of ratios.csv). Green: less CPU than Go; red: more; grey: the interval holds 1. ⚑: a cell behind it carries a flag (Needs attention).",
		"Dividing matrix.csv's medians gives a different figure: the median of the rounds' ratios is not the ratio of the medians, and only the paired one cancels the machine's drift between rounds.",
	}
	return a
}

// protocolAnswer: per client, size and concurrency, the protocol with the least
// server CPU per call against gRPC's.
func protocolAnswer(in AnswerInput) Answer {
	v := in.View
	x := newRatioIndex(v)
	s := v.Run.Spec
	if len(s.Calls) == 0 {
		return Answer{Pending: "This run has no calls."}
	}
	items, concs := slices.Sorted(slices.Values(s.Items)), slices.Sorted(slices.Values(s.Concurrency))
	g := &Grid{ID: "cheapest", Caption: "the protocol with the least server CPU per call, against gRPC's (same client, size and concurrency)"}
	for _, n := range items {
		for _, c := range concs {
			g.Cols = append(g.Cols, GridCol{Head: fmt.Sprintf("%d items c%d", n, c), Items: n, C: c})
		}
	}
	wins := map[string]int{}
	total := 0
	for _, client := range runClients(v.Run) {
		protos := s.Clients[client]
		if !slices.Contains(protos, "grpc") || len(protos) < 2 {
			continue
		}
		row := GridRow{Head: client + " client", Client: client}
		for _, col := range g.Cols {
			best, ok, same, any := analysis.RatioRecord{}, false, []string{}, false
			for _, p := range protos {
				if p == "grpc" {
					continue
				}
				name := plan.Cell{Client: client, Protocol: p, Call: s.Calls[0], Items: col.Items, Concurrency: col.C, ServerLang: s.Servers[p]}.Name()
				r, found := x.get(analysis.VsGRPC, name, scpuFig.Column)
				if !found {
					continue
				}
				any = true
				switch r.Verdict {
				case stats.Faster:
					if !ok || r.Ratio < best.Ratio {
						best, ok = r, true
					}
				case stats.Indistinguishable:
					same = append(same, p)
				}
			}
			cell := GridCell{Items: col.Items, C: col.C}
			switch {
			case !any:
				cell.Text = "-"
				row.Cells = append(row.Cells, cell)
				continue
			case ok:
				cell = gridCell(best)
				cell.Items, cell.C = col.Items, col.C
				p := protocolOf(v, best.A)
				cell.Text = p + " " + cell.Text
				wins[p]++
			default:
				cell.Text, cell.Verdict = "grpc", "base"
				if len(same) > 0 {
					cell.Text += " ~ " + strings.Join(same, ", ")
				}
				cell.Title = "no protocol needs less server CPU per call than grpc here; ~: indistinguishable from it"
				wins["grpc"]++
			}
			total++
			row.Cells = append(row.Cells, cell)
		}
		if slices.ContainsFunc(row.Cells, func(c GridCell) bool { return c.Verdict != "" }) {
			g.Rows = append(g.Rows, row)
		}
	}
	if len(g.Rows) == 0 {
		return Answer{Pending: "This run has no client with gRPC and another protocol, both measured."}
	}
	var parts []string
	for _, p := range slices.SortedFunc(maps.Keys(wins), func(a, b string) int { return wins[b] - wins[a] }) {
		parts = append(parts, fmt.Sprintf("%s in %d", p, wins[p]))
	}
	return Answer{Grid: g,
		Lead:     []string{fmt.Sprintf("Least server CPU per call, of %d client x size x concurrency: %s (a protocol counts only where its interval against gRPC's excludes 1).", total, strings.Join(parts, ", "))},
		Notes:    []string{"Server CPU per call is what the protocol costs the one-core server; each entry is that protocol's ratio to gRPC's from the same client (ratios.csv). ice and dubbo run on Java servers and are compared with gRPC on go-server unpaired. \"grpc ~ thrift\": no protocol is cheaper than gRPC beyond its interval, thrift indistinguishable from it."},
		Evidence: []link{{"#grids", "verdict grids"}, {RatiosFile, RatiosFile}}}
}

// protocolOf is the protocol of the cell named name.
func protocolOf(v *analysis.View, name string) string {
	if c, ok := v.Cell(name); ok {
		return c.Protocol
	}
	return name
}

// claimsAnswer: the reproduction's findings, counted by verdict.
func claimsAnswer(in AnswerInput) Answer {
	secs := in.Extras.Reproduction
	if len(secs) == 0 {
		return Answer{Pending: "No reproduction beside this run: `make reproduce` re-runs the three published comparisons and writes one."}
	}
	n := map[string]int{}
	total := 0
	var order []string
	for _, s := range secs {
		for _, f := range s.Findings {
			h := strings.TrimSpace(f.Holds)
			if n[h] == 0 {
				order = append(order, h)
			}
			n[h]++
			total++
		}
	}
	var parts []string
	for _, h := range order {
		parts = append(parts, fmt.Sprintf("%s %d", h, n[h]))
	}
	return Answer{Lead: []string{fmt.Sprintf("%d published claims re-run: %s.", total, strings.Join(parts, ", "))},
		Evidence: []link{{"#reproduction", "the reproduction"}, {in.Extras.ReproductionFrom, in.Extras.ReproductionFrom}}}
}

// countedAnswer sets each php cell's client CPU per call against go's (timed)
// beside their instructions per call (make cost, counted), and says by how
// much they differ and where the difference goes: instructions per ns of user
// time, and the kernel's share of the CPU, per language.
func countedAnswer(in AnswerInput) Answer {
	res, v := in.Extras.CostResult, in.View
	if res == nil {
		return Answer{Pending: "No cost run beside this run: `make cost` counts instructions per call (results/reference/cost)."}
	}
	instr := map[string]float64{}
	for _, c := range res.Cells {
		if c.Side == "client" && c.Status == cost.StatusOK {
			instr[c.Cell] = c.PerCall.WithGC().Ir
		}
	}
	x := newRatioIndex(v)
	g := &Grid{ID: "counted", Caption: "client side, php over go, c1: timed (CPU per call) against counted (instructions per call)",
		Cols: []GridCol{{Head: "timed"}, {Head: "counted"}, {Head: "timed / counted"}, {Head: "instructions per ns of user time, php / go"}, {Head: "kernel share of CPU, php / go"}}}
	var worst string
	worstGap := 0.0
	for _, cv := range v.Cells {
		if cv.Client != "php" || cv.Concurrency != 1 {
			continue
		}
		goCell := cv.Cell
		goCell.Client = "go"
		gv, ok1 := v.Cell(goCell.Name())
		r, ok2 := x.get(analysis.VsGo, cv.Name, ccpuFig.Column)
		ip, ok3 := instr[cv.Name]
		ig, ok4 := instr[goCell.Name()]
		if !ok1 || !ok2 || !ok3 || !ok4 || ig <= 0 {
			continue
		}
		counted := ip / ig
		gap := r.Ratio / counted
		ipnsP, ksP := userRate(cv, ip)
		ipnsG, ksG := userRate(gv, ig)
		row := GridRow{Head: fmt.Sprintf("%s-%d", cv.Protocol, cv.Items), Client: "php", Protocol: cv.Protocol}
		timed := gridCell(r)
		timed.Items, timed.C = cv.Items, 1
		row.Cells = []GridCell{timed,
			{Text: sig(counted) + "x", Title: fmt.Sprintf("php %s, go %s instructions per call (collector included)", sig(ip), sig(ig)), Items: cv.Items, C: 1},
			{Text: sig(gap) + "x", Items: cv.Items, C: 1},
			{Text: sig(ipnsP) + " / " + sig(ipnsG), Items: cv.Items, C: 1},
			{Text: pctOf(ksP) + " / " + pctOf(ksG), Items: cv.Items, C: 1}}
		g.Rows = append(g.Rows, row)
		if d := math.Abs(math.Log(gap)); d > worstGap {
			worstGap, worst = d, fmt.Sprintf("%s at %d items: timed %s, counted %s, %sx apart; php ran %s instructions per ns of user time against go's %s, and the kernel took %s of php's CPU against %s of go's",
				cv.Protocol, cv.Items, ratioText(r), sig(counted)+"x", sig(gap), sig(ipnsP), sig(ipnsG), pctOf(ksP), pctOf(ksG))
		}
	}
	if len(g.Rows) == 0 {
		return Answer{Pending: "The cost run and this run share no php and go cell at c1."}
	}
	return Answer{Grid: g,
		Lead:     []string{"Instructions are not time: callgrind counts user-space instructions, the timed figure is CPU time, kernel included. Widest gap: " + worst + "."},
		Notes:    []string{"timed / counted is exactly go's instructions per ns of CPU over php's: a language whose instructions run slower per ns (interpreter dispatch, cache misses) or that spends more of its CPU in the kernel costs more time per instruction. Waiting is in neither figure."},
		Evidence: []link{{"cost/cost.md", "cost/cost.md"}, {RatiosFile, RatiosFile}}}
}

// userRate is a cell's instructions per ns of user time (instructions per call
// over the user part of its client CPU per call) and the kernel's share of
// that CPU, from its rounds' reports (medians).
func userRate(c analysis.CellView, instr float64) (ipns, kernel float64) {
	var shares []float64
	for _, r := range c.Repeats {
		if r.Report == nil || r.Report.Rpcbed == nil {
			continue
		}
		u, s := r.Report.Rpcbed.CPUUserSeconds, r.Report.Rpcbed.CPUSystemSeconds
		if u+s > 0 {
			shares = append(shares, s/(u+s))
		}
	}
	kernel = math.NaN()
	if len(shares) > 0 {
		kernel = stats.Median(shares)
	}
	cpu := c.Median[analysis.FigClientCPU]
	user := cpu
	if !math.IsNaN(kernel) {
		user = cpu * (1 - kernel)
	}
	if !(user > 0) {
		return math.NaN(), kernel
	}
	return instr / (user * 1000), kernel
}
