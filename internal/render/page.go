package render

import (
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/results"
)

// fact is one line of a facts table.
type fact struct{ Key, Value string }

type link struct{ Href, Text string }

// attention is one cell (or verify pair) that needs attention: the same cells
// matrix.md counts.
type attention struct {
	Kind    string // failed|partial|missing|flagged|repeat-failed|verify
	Subject string
	Anchor  string // the row's id, when the subject has one
	Flags   string
	Reason  string
	Raw     string
}

// attentionKind is one kind of attention with its count and what it means for
// the figures: one line each.
type attentionKind struct {
	Kind, Guidance string
	Count          int
	Flag           bool // a flag (FlagRules), not a status
}

// column is one figure of the per-client tables.
type column struct {
	Head, Title string
	Num         bool
	value       func(c analysis.CellView) cellValue
}

// cellValue is one entry of a cell table: Sub (a figure's interval) goes on a
// line of its own below Text, which keeps the columns narrow.
type cellValue struct{ Text, Sub, Sort, Class, Title string }

type cellRow struct {
	Name, Link, Class, Note string
	Flags                   string // the cell's flags, "" for none: marked ⚑
	Client, Protocol        string
	Items, C                int
	Values                  []cellValue
	Raw                     []link
}

type clientTable struct {
	Client string
	Rows   []cellRow
}

type plotView struct {
	Name, Caption string
	SVG           template.HTML
}

// filterSet are the values the page's filter offers.
type filterSet struct {
	Clients, Protocols []string
	Items, Concs       []int
}

type indexPage struct {
	Run            *results.Run
	CSS            template.CSS
	JS             template.JS
	Summary        string
	Answers        []Answer
	Filter         filterSet
	Facts          []fact
	Versions       []fact
	Attention      []attention
	AttentionKinds []attentionKind
	Grids          []*Grid
	Columns        []column
	Tables         []clientTable
	Ratios         []ratioTable
	Plots          []plotView
	Repro          []results.Section
	ReproFrom      string
	Cost           template.HTML
}

// HTML writes index.html without extras (a Renderer).
func HTML(w io.Writer, run *results.Run) error { return Index(w, run, Extras{}) }

// Index writes the run's page: the answers to the questions people bring, what
// needs attention, the verdict grids, one sortable table per client, every
// ratio, every plot inline as SVG, and the reproduction and cost run when there
// are. Every table answers to one filter. It needs nothing but itself: styles,
// script and plots are inline, links are relative to the run directory.
func Index(w io.Writer, run *results.Run, x Extras) error {
	v := analysis.ViewOf(run)
	p := indexPage{Run: run, CSS: pageCSS, JS: sortJS, Columns: cellColumns,
		Answers: Answers(AnswerInput{View: v, Extras: x}), Filter: filtersOf(v),
		Facts: runFacts(run), Versions: versionFacts(run),
		Repro: x.Reproduction, ReproFrom: x.ReproductionFrom, Cost: x.Cost}
	p.Attention, p.AttentionKinds = needsAttention(v)
	ok, partial := 0, 0
	for _, c := range run.Cells {
		switch c.Status {
		case results.StatusOK:
			ok++
		case results.StatusPartial:
			partial++
		}
	}
	miss := len(run.Missing())
	p.Summary = fmt.Sprintf("%d cells: %d ok, %d failed", len(run.Cells)+miss, ok, len(run.Cells)-ok-partial)
	if partial > 0 {
		p.Summary += fmt.Sprintf(", %d partial", partial)
	}
	if miss > 0 {
		p.Summary += fmt.Sprintf(", %d not run", miss)
	}
	p.Summary += "."
	if n := len(v.FlaggedCells()); n > 0 {
		p.Summary += fmt.Sprintf(" %d flagged (⚑).", n)
	}
	p.Summary += SharedMachine(v)
	for _, k := range ratioKinds {
		for _, f := range k.figures {
			if g := verdictGrid(v, k.kind, f.Figure()); g != nil {
				g.Caption = k.gridTitle + ": " + f.Figure().Name
				p.Grids = append(p.Grids, g)
			}
		}
	}
	p.Ratios = ratioTables(v)
	for _, client := range runClients(run) {
		t := clientTable{Client: client}
		for _, c := range v.Cells {
			if c.Client == client {
				t.Rows = append(t.Rows, row(c))
			}
		}
		p.Tables = append(p.Tables, t)
	}
	figs, err := figures(run)
	if err != nil {
		return err
	}
	for _, f := range figs {
		svg, err := f.fig.encode("svg")
		if err != nil {
			return fmt.Errorf("plot %s: %w", f.name, err)
		}
		pv := plotView{Name: f.name, Caption: caption(f.name), SVG: inlineSVG(svg)}
		if i := slices.IndexFunc(p.Answers, func(a Answer) bool { return a.Plot == f.name && a.Pending == "" }); i >= 0 {
			p.Answers[i].PlotView = &pv
			continue
		}
		p.Plots = append(p.Plots, pv)
	}
	return execute(w, "index", p)
}

// filtersOf are the run's clients, protocols, sizes and concurrencies.
func filtersOf(v *analysis.View) filterSet {
	f := filterSet{Clients: runClients(v.Run)}
	for _, c := range v.Cells {
		if !slices.Contains(f.Protocols, c.Protocol) {
			f.Protocols = append(f.Protocols, c.Protocol)
		}
	}
	f.Items = slices.Sorted(slices.Values(v.Run.Spec.Items))
	f.Concs = slices.Sorted(slices.Values(v.Run.Spec.Concurrency))
	return f
}

// needsAttention lists the cells that need attention, one row a cell, and each
// kind's count with what it means: flagged counts the cells matrix.md's
// "Flagged cells" counts, and each flag's line comes from results.FlagRules.
func needsAttention(v *analysis.View) ([]attention, []attentionKind) {
	run := v.Run
	var out []attention
	for _, c := range v.Cells {
		raw := ""
		if len(c.Repeats) > 0 {
			raw = c.Repeats[0].Raw
		}
		anchor := "cell-" + c.Name
		switch c.Status {
		case results.StatusOK:
		case results.StatusPartial:
			out = append(out, attention{Kind: "partial", Subject: c.Name, Anchor: anchor, Raw: raw,
				Reason: fmt.Sprintf("%d of %d repeats done%s", len(c.Repeats), max(run.Spec.Rounds, len(c.Repeats)), prefixed("; ", c.Error))})
			continue
		default:
			out = append(out, attention{Kind: "failed", Subject: c.Name, Anchor: anchor, Reason: orDash(c.Error), Raw: raw})
			continue
		}
		if c.Flagged() {
			out = append(out, attention{Kind: "flagged", Subject: c.Name, Anchor: anchor, Flags: strings.Join(c.Sum.Flags, " "),
				Reason: short(strings.Join(c.Sum.Reasons, "; "), 300)})
			continue
		}
		for _, r := range c.Repeats {
			if r.Report == nil {
				out = append(out, attention{Kind: "repeat-failed", Subject: c.Name, Anchor: anchor,
					Reason: fmt.Sprintf("repeat %d failed: %s", r.Index, orDash(r.Error)), Raw: r.Raw})
				break
			}
		}
	}
	for _, m := range run.Missing() {
		out = append(out, attention{Kind: "missing", Subject: m.Name(), Reason: "no result: the run ended before this cell"})
	}
	for _, x := range run.Verify {
		if x.Status != results.StatusOK {
			out = append(out, attention{Kind: "verify", Subject: x.Pair, Reason: orDash(x.Error), Raw: x.Raw})
		}
	}
	count := func(kind string) int {
		n := 0
		for _, a := range out {
			if a.Kind == kind {
				n++
			}
		}
		return n
	}
	var kinds []attentionKind
	for _, k := range statusGuidance {
		if n := count(k.Kind); n > 0 {
			k.Count = n
			kinds = append(kinds, k)
		}
	}
	flagged := v.FlaggedCells()
	for _, d := range results.FlagRules {
		if n := countFlag(flagged, d.Flag); n > 0 {
			kinds = append(kinds, attentionKind{Kind: d.Flag, Count: n, Flag: true, Guidance: d.Means + ": " + d.Reading + "."})
		}
	}
	return out, kinds
}

// statusGuidance says what each kind of attention other than a flag means for
// the figures.
var statusGuidance = []attentionKind{
	{Kind: "failed", Guidance: "no result: the cell's figures are missing from every table; its reason says why."},
	{Kind: "partial", Guidance: "some rounds missing: the figures stand on fewer rounds (rpcbed matrix -resume DIR finishes them)."},
	{Kind: "missing", Guidance: "the run stopped before the cell (rpcbed matrix -resume DIR runs it)."},
	{Kind: "flagged", Guidance: "a result, with a reason not to trust a figure (⚑ in every table): the lines below say which figure and why."},
	{Kind: "repeat-failed", Guidance: "one round failed: the figures are from the other rounds."},
	{Kind: "verify", Guidance: "the one-call check before timing failed: that client and protocol's cells did not run."},
}

func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

func numValue(v float64, text string) cellValue {
	if v != v { // NaN
		return cellValue{Text: "-"}
	}
	return cellValue{Text: text, Sort: strconv.FormatFloat(v, 'g', 6, 64)}
}

// figValue is a timed figure's median with its 95 % interval beside it (±%
// when symmetric, else [low-high]); hover: the bounds and the rounds' range.
func figValue(i analysis.FigureIndex) func(analysis.CellView) cellValue {
	f := i.Figure()
	return func(c analysis.CellView) cellValue {
		v := numValue(c.Median[i], sig(c.Median[i]*f.Scale))
		iv := c.Interval[i]
		if iv.Valid() {
			v.Sub = strings.TrimSpace(pm(iv, f.Scale))
			v.Title = "95 % interval " + sig(iv.Low*f.Scale) + "-" + sig(iv.High*f.Scale) + " " + f.Unit + " (where a rerun's median lands)"
		}
		if s := c.Stat(f.F); s.N > 1 {
			v.Title = strings.TrimPrefix(v.Title+"; ", "; ") + "rounds " + sig(s.Min*f.Scale) + " to " + sig(s.Max*f.Scale)
		}
		return v
	}
}

func intValue(n int) cellValue { return cellValue{Text: strconv.Itoa(n), Sort: strconv.Itoa(n)} }

// cellColumns are the per-client tables' columns, narrow enough that a table
// fits 1400 px with its note: calls per CPU-second and the call are in
// matrix.md and matrix.csv.
var cellColumns = []column{
	{"proto", "protocol", false, func(c analysis.CellView) cellValue { return cellValue{Text: c.Protocol} }},
	{"items", "items per datalist response", true, func(c analysis.CellView) cellValue { return intValue(c.Items) }},
	{"c", "concurrency", true, func(c analysis.CellView) cellValue { return intValue(c.Concurrency) }},
	{"conns", "TCP connections the client opened", true, func(c analysis.CellView) cellValue { return intValue(c.Sum.Conns) }},
	{"req/s", "requests per second, median of the good rounds with its 95 % interval", true, figValue(analysis.FigRPS)},
	{"p50 ms", "median latency (its interval: matrix.csv)", true, func(c analysis.CellView) cellValue {
		return numValue(c.Median[analysis.FigP50], ms(c.Median[analysis.FigP50]))
	}},
	{"p99 ms", "99th percentile latency with its 95 % interval", true, figValue(analysis.FigP99)},
	{"client CPU µs/call", "the client's CPU per call over its measured window, with its 95 % interval", true, figValue(analysis.FigClientCPU)},
	{"server CPU µs/call", "the server's CPU per call over the same window, with its 95 % interval", true, figValue(analysis.FigServerCPU)},
	{"busy %", "each side's CPU over the window / the cores it may use: client / server", true, func(c analysis.CellView) cellValue {
		cb, sb := c.Stat(results.ClientBusy).Median, c.Stat(results.ServerBusy).Median
		v := numValue(cb*100, pctNum(cb)+" / "+pctNum(sb))
		return v
	}},
	{"bound", "client-bound or server-bound: that side 90 % busy or more; latency-bound: neither", false, func(c analysis.CellView) cellValue {
		if c.Sum.Bottleneck == "" {
			return cellValue{Text: "-"}
		}
		return cellValue{Text: strings.TrimSuffix(c.Sum.Bottleneck, "-bound"), Class: c.Sum.Bottleneck, Title: c.Sum.Bottleneck}
	}},
	{"bytes", "encoded response size", true, func(c analysis.CellView) cellValue {
		v := c.Stat(results.BytesPerResponse).Median
		return numValue(v, num(v, 0))
	}},
	{"ok", "good repeats / repeats run", true, func(c analysis.CellView) cellValue {
		n := c.Stat(results.RPS).N
		return cellValue{Text: fmt.Sprintf("%d/%d", n, len(c.Repeats)), Sort: strconv.Itoa(n)}
	}},
}

// pctNum is a fraction as a whole percentage without the sign ("-" for NaN).
func pctNum(f float64) string {
	if f != f {
		return "-"
	}
	return strconv.FormatFloat(f*100, 'f', 0, 64)
}

func row(c analysis.CellView) cellRow {
	r := cellRow{Name: c.Name, Client: c.Client, Protocol: c.Protocol, Items: c.Items, C: c.Concurrency}
	for i, rep := range c.Repeats {
		if rep.Raw == "" {
			continue
		}
		if r.Link == "" {
			r.Link = rep.Raw
		}
		r.Raw = append(r.Raw, link{rep.Raw, "r" + strconv.Itoa(cmp(rep.Index, i+1))})
	}
	if c.Flagged() {
		r.Flags = strings.Join(c.Sum.Flags, ", ")
	}
	if c.Status != results.StatusOK {
		r.Class, r.Note = "failed", "failed: "+short(c.Error, 300)
		for i, col := range cellColumns {
			v := cellValue{Text: "-"}
			if i < 4 { // coordinates stay, so the row sorts with its neighbours
				v = col.value(c)
			}
			if col.Num {
				v.Class = "n"
			}
			r.Values = append(r.Values, v)
		}
		return r
	}
	for _, col := range cellColumns {
		v := col.value(c)
		if col.Num {
			v.Class = strings.TrimSpace("n " + v.Class)
		}
		r.Values = append(r.Values, v)
	}
	if c.Noisy() {
		r.Class = "noisy"
	}
	r.Note = strings.Join(c.Notes, "; ")
	return r
}

// cmp is a when it is set, else b.
func cmp(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// ratioTable is one kind of comparison for index.html.
type ratioTable struct {
	Title, Tally string
	Figures      []string
	Rows         []ratioHTMLRow
}

type ratioHTMLRow struct {
	A, B             string
	AFlags, BFlags   string
	Client, Protocol string
	Items, C         int
	Cells            []GridCell
}

// ratioTables are the run's ratio tables (as matrix.md's), for index.html.
func ratioTables(v *analysis.View) []ratioTable {
	recs := map[string]analysis.RatioRecord{}
	for _, r := range v.Records() {
		recs[ratioKey(r)] = r
	}
	var out []ratioTable
	for _, k := range ratioKinds {
		rt := analysis.Ratios(v.Comparisons, k.kind)
		if len(rt.Rows) == 0 {
			continue
		}
		t := ratioTable{Title: k.title, Tally: verdictTally(rt)}
		for _, f := range rt.Figures {
			t.Figures = append(t.Figures, f.Name+" A/B")
		}
		for _, r := range rt.Rows {
			hr := ratioHTMLRow{A: r.A, B: r.B}
			if a, ok := v.Cell(r.A); ok {
				hr.Client, hr.Protocol, hr.Items, hr.C = a.Client, a.Protocol, a.Items, a.Concurrency
				hr.AFlags = strings.Join(a.Sum.Flags, ", ")
			}
			if b, ok := v.Cell(r.B); ok {
				hr.BFlags = strings.Join(b.Sum.Flags, ", ")
			}
			for _, f := range rt.Figures {
				c, ok := r.By[f.Key]
				if !ok {
					hr.Cells = append(hr.Cells, GridCell{Text: "-"})
					continue
				}
				rec := recs[c.A+"|"+c.B+"|"+f.Column]
				gc := gridCell(rec)
				gc.Text += " " + rec.Verdict
				if !rec.Paired {
					gc.Text += " (unpaired)"
				}
				hr.Cells = append(hr.Cells, gc)
			}
			t.Rows = append(t.Rows, hr)
		}
		out = append(out, t)
	}
	return out
}

// SharedMachine is a sentence for a run whose cells were mostly measured while
// another guest stole CPU (noisy in more than half of them), "" otherwise: such
// a run's figures may be slow and its intervals wide, and no cell's flag alone
// says that the whole run is affected.
func SharedMachine(v *analysis.View) string {
	noisy, most := 0, 0.0
	for _, c := range v.Cells {
		if c.Sum != nil && slices.Contains(c.Sum.Flags, results.FlagNoisy) {
			noisy++
			most = max(most, c.Sum.MaxStealCores)
		}
	}
	if noisy == 0 || 2*noisy <= len(v.Cells) {
		return ""
	}
	return fmt.Sprintf(" The machine was shared: %d of %d cells were measured while another guest stole over %.0f %% of a core (up to %.0f %%), so their figures may be slow and their intervals wide; rerun on a quiet machine before relying on them.",
		noisy, len(v.Cells), results.NoisyStealCores*100, most*100)
}
