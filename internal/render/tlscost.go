package render

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// What TLS costs, printed from analysis.View's TLSCosts and Handshakes:
// matrix.md's two sections, the page's answer with its plot, README's block.

func init() {
	RegisterAnswer(AnswerProducer{Rank: 50, ID: "tls", Question: "What does TLS cost, per client and protocol?", Produce: tlsAnswer})
}

// tlsPlotName is the plot of every tls/plaintext ratio (plots/NAME.png, .svg).
const tlsPlotName = "tls-over-plaintext"

// tlsRowHead names a TLS cost row: "go-grpc 200 c1", "+ per-call" after a
// per-call cell's, and the security's variants after tls ("tls12").
func tlsRowHead(c plan.Cell) string {
	h := fmt.Sprintf("%s-%s %d c%d", c.Client, c.Protocol, c.Items, c.Concurrency)
	if c.Call != "datalist" {
		h = fmt.Sprintf("%s-%s %s c%d", c.Client, c.Protocol, c.Call, c.Concurrency)
	}
	if s := c.SecurityMode(); s != plan.TLS {
		h += " " + s
	}
	if c.Link != "" {
		h += " @" + c.Link
	}
	if c.ConnectMode() == plan.PerCall {
		h += " per-call"
	}
	return h
}

// tlsRatioText is one ratio of a TLS cost row as the tables print it:
// "1.21x [1.10-1.33] slower", "-" for none.
func tlsRatioText(t analysis.TLSCost, i analysis.FigureIndex) string {
	c, ok := t.By[i]
	if !ok || !c.Ratio.Valid() {
		return "-"
	}
	return fmt.Sprintf("%sx [%s-%s] %s", sig(c.Ratio.Center), sig(c.Ratio.Low), sig(c.Ratio.High), c.Verdict)
}

// mdTLSCost writes matrix.md's "What TLS costs" and "What a connection per call
// costs" sections (none for a run without TLS or per-call cells).
func mdTLSCost(b *strings.Builder, v *analysis.View) {
	rows := v.TLSCosts()
	if len(rows) > 0 {
		b.WriteString("\n## What TLS costs\n\nEach TLS cell's figure over its plaintext cell's (the same client, protocol, call, " +
			"items, concurrency and connection mode, timed in the same rounds): the median of the per-round ratios with its 95 % " +
			"interval and verdict. Above 1x TLS costs more CPU per call or latency; for req/s below 1x is fewer calls a second. " +
			"A cell whose report did not negotiate what its name asks (tls-mismatch, connect-mismatch) has no ratio.\n\n")
		b.WriteString("| TLS cell | plaintext cell |")
		for _, i := range analysis.TLSCostFigures {
			fmt.Fprintf(b, " %s tls/plaintext |", i.Figure().Name)
		}
		b.WriteString("\n|---|---|" + strings.Repeat("---|", len(analysis.TLSCostFigures)) + "\n")
		for _, t := range rows {
			fmt.Fprintf(b, "| %s | %s |", flagMarked(v, t.A), flagMarked(v, t.B))
			for _, i := range analysis.TLSCostFigures {
				s := tlsRatioText(t, i)
				if t.Dropped != "" {
					s = "not compared: " + t.Dropped
				}
				fmt.Fprintf(b, " %s |", s)
			}
			b.WriteString("\n")
		}
	}
	hs := v.Handshakes()
	if len(hs) == 0 {
		return
	}
	b.WriteString("\n## What a connection per call costs\n\nEach cell that opens a connection per call against the same cell keeping its " +
		"connections, timed in the same rounds. Handshakes per call are the report's TLS handshakes over its calls in the window " +
		"(the median of the rounds, [least-most]); resumed is the share of them that resumed a session. Extra CPU per call is the " +
		"per-call cell's CPU per call minus the persistent cell's, B x (A/B - 1) from the paired ratio and B's interval " +
		"(the two add in quadrature on the log scale; [low-high] is its 95 % interval); per handshake it is that over the handshakes per " +
		"call (a plaintext cell: per connection opened). It holds everything a new connection costs: the TCP connect and close as well as the handshake. " +
		"A new connection never saves CPU, so an interval reaching below 0 is cut at 0, and one wholly below 0 is a broken figure, said and not printed.\n\n")
	b.WriteString("| per-call cell | handshakes/call | resumed | connections/call | client extra µs/call | client µs/handshake | server extra µs/call | server µs/handshake |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, h := range hs {
		fmt.Fprintf(b, "| %s | %s | %s | %s |", flagMarked(v, h.A), perCallText(h), pctOf(h.Resumed), sig(h.Conns))
		for _, s := range []analysis.HandshakeCPU{h.Client, h.Server} {
			if h.Dropped != "" || !s.OK {
				why := "-"
				switch {
				case h.Dropped != "":
					why = "not compared: " + h.Dropped
				case s.Impossible:
					why = "impossible: less CPU than the persistent cell (" + intervalText(s.Ratio.Ratio.Interval) + "): not a result"
				}
				fmt.Fprintf(b, " %s | %s |", why, why)
				continue
			}
			fmt.Fprintf(b, " %s | %s |", intervalText(s.Extra), intervalText(s.Each))
		}
		b.WriteString("\n")
	}
}

// perCallText is handshakes per call with the rounds' range: "1.00 [0.998-1.00]".
func perCallText(h analysis.Handshake) string {
	if math.IsNaN(h.PerCall) {
		return "-"
	}
	return fmt.Sprintf("%s [%s-%s]", sig(h.PerCall), sig(h.PerCallLow), sig(h.PerCallHigh))
}

// intervalText is a figure that may be negative with its interval: "12.3 [8.1-16.9]".
func intervalText(iv stats.Interval) string {
	if iv.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%s [%s-%s]", sig(iv.Center), sig(iv.Low), sig(iv.High))
}

// tlsAnswer: every tls/plaintext ratio as a grid, the plot beside it, and a
// lead that counts the verdicts per side and names the handshake's cost.
func tlsAnswer(in AnswerInput) Answer {
	v := in.View
	rows := v.TLSCosts()
	if len(rows) == 0 {
		return Answer{Pending: "This run has no TLS cell beside its plaintext cell: `make matrix MATRIX=tls` measures every client and protocol over TLS, persistent and per call (the default matrix carries every pair's 200-item cells)."}
	}
	recs := map[string]analysis.RatioRecord{}
	for _, r := range v.Records() {
		recs[r.Kind+"|"+r.A+"|"+r.Figure] = r
	}
	g := &Grid{ID: "tls-costs", Caption: "each TLS cell's figure over its plaintext cell's (same rounds): client CPU, server CPU per call, p50, req/s"}
	for _, i := range analysis.TLSCostFigures {
		g.Cols = append(g.Cols, GridCol{Head: i.Figure().Name + " tls/plaintext"})
	}
	for _, t := range rows {
		row := GridRow{Head: tlsRowHead(t.Cell), Client: t.Client, Protocol: t.Protocol}
		for _, i := range analysis.TLSCostFigures {
			r, ok := recs[analysis.TLSVsPlaintext+"|"+t.A+"|"+i.Figure().Column]
			cell := GridCell{Text: "-", Items: t.Items, C: t.Concurrency}
			if t.Dropped != "" {
				cell.Text, cell.Flagged, cell.Title = "not compared", true, t.Dropped
			} else if ok {
				cell = gridCell(r)
				cell.Items, cell.C = t.Items, t.Concurrency
			}
			row.Cells = append(row.Cells, cell)
		}
		g.Rows = append(g.Rows, row)
	}
	a := Answer{Grid: g, Plot: tlsPlotName,
		Evidence: []link{{"matrix.md", "matrix.md (What TLS costs)"}, {RatiosFile, RatiosFile}, {"#plot-" + tlsPlotName, "the plot"}}}
	a.Lead = append(a.Lead, tlsLead(rows, plan.Persistent), tlsLead(rows, plan.PerCall))
	a.Lead = slices.DeleteFunc(a.Lead, func(s string) bool { return s == "" })
	if s := handshakeLead(v.Handshakes()); s != "" {
		a.Lead = append(a.Lead, s)
	}
	a.Notes = []string{
		"Each entry is the TLS cell's figure over its plaintext cell's, the median of per-round ratios with its 95 % interval (a row of ratios.csv, kind tls-vs-plaintext). Red: TLS costs more (more CPU or latency, fewer req/s); grey: the interval holds 1. A cell whose report did not negotiate what its name asks is not compared (tls-mismatch, connect-mismatch: Needs attention).",
		"A per-call cell opens a connection, and over TLS a handshake, for every call; its extra CPU per call over the persistent cell, per handshake, is in matrix.md (What a connection per call costs).",
	}
	return a
}

// tlsLead counts one connection mode's verdicts on each side's CPU per call
// and names its largest client CPU ratio.
func tlsLead(rows []analysis.TLSCost, mode string) string {
	var n, more [2]int
	var worst analysis.TLSCost
	worstR := 0.0
	for _, t := range rows {
		if t.ConnectMode() != mode || t.Dropped != "" {
			continue
		}
		for k, i := range []analysis.FigureIndex{analysis.FigClientCPU, analysis.FigServerCPU} {
			c, ok := t.By[i]
			if !ok {
				continue
			}
			n[k]++
			if c.Verdict == stats.Slower {
				more[k]++
			}
			if k == 0 && c.Ratio.Center > worstR {
				worstR, worst = c.Ratio.Center, t
			}
		}
	}
	if n[0]+n[1] == 0 {
		return ""
	}
	words := map[string]string{plan.Persistent: "Over persistent connections", plan.PerCall: "With a connection per call"}[mode]
	return fmt.Sprintf("%s, TLS costs the client more CPU per call in %d of %d cells and the server in %d of %d (the others indistinguishable or less); the most, the client of %s: %s.",
		words, more[0], n[0], more[1], n[1], tlsRowHead(worst.Cell), tlsRatioText(worst, analysis.FigClientCPU))
}

// handshakeLead names each TLS per-call cell's handshake cost per side, at
// most three, the first in the run's order.
func handshakeLead(hs []analysis.Handshake) string {
	var parts []string
	for _, h := range hs {
		if !h.Sec().IsTLS() || h.Dropped != "" || !h.Client.OK || !h.Server.OK || math.IsNaN(h.PerCall) {
			continue
		}
		if len(parts) == 3 {
			break
		}
		parts = append(parts, fmt.Sprintf("%s: %s handshakes per call, %s µs [%s-%s] of client CPU and %s µs [%s-%s] of server CPU per handshake",
			tlsRowHead(h.Cell), sig(h.PerCall), sig(h.Client.Each.Center), sig(h.Client.Each.Low), sig(h.Client.Each.High),
			sig(h.Server.Each.Center), sig(h.Server.Each.Low), sig(h.Server.Each.High)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "A connection per call over persistent ones, " + strings.Join(parts, "; ") + " (TCP connect and close included)."
}

// TLSCostTable prints README's "tls-costs" block: a row per TLS cell with its
// client and server CPU per call tls/plaintext, then (for per-call cells) the
// CPU per handshake on each side; one line saying why when the run has none.
func TLSCostTable(w io.Writer, run *results.Run) error {
	v := analysis.ViewOf(run)
	rows := v.TLSCosts()
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "This run has no TLS cell beside its plaintext cell (`make matrix MATRIX=tls`).")
		return err
	}
	hs := map[string]analysis.Handshake{}
	for _, h := range v.Handshakes() {
		hs[h.A] = h
	}
	var b strings.Builder
	b.WriteString("| TLS cell | client CPU/call | server CPU/call | p50 | req/s | client µs/handshake | server µs/handshake |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, t := range rows {
		fmt.Fprintf(&b, "| %s |", mdEscape(tlsRowHead(t.Cell)))
		for _, i := range analysis.TLSCostFigures {
			s := "-"
			if c, ok := t.By[i]; ok && t.Dropped == "" && c.Ratio.Valid() {
				s = ratioWord(c)
			} else if t.Dropped != "" {
				s = "⚑"
			}
			fmt.Fprintf(&b, " %s |", s)
		}
		h, ok := hs[t.A]
		for _, s := range []analysis.HandshakeCPU{h.Client, h.Server} {
			if !ok || !s.OK || h.Dropped != "" || s.Each.N == 0 {
				b.WriteString(" - |")
				continue
			}
			fmt.Fprintf(&b, " %s |", intervalText(s.Each))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ratioWord is a ratio with its interval and a one-sign verdict: "1.21x
// [1.10-1.33] ▲" (TLS costs more: slower), "▼" faster, "~" indistinguishable.
func ratioWord(c analysis.Comparison) string {
	mark := map[string]string{stats.Slower: "▲", stats.Faster: "▼", stats.Indistinguishable: "~"}[c.Verdict]
	return fmt.Sprintf("%sx [%s-%s] %s", sig(c.Ratio.Center), sig(c.Ratio.Low), sig(c.Ratio.High), mark)
}

// tlsFigure is the dot plot of every tls/plaintext ratio: a row per TLS cell,
// a dot per figure with its 95 % interval as a bar, on a log axis with a line
// at 1x (nil for a run without TLS ratios).
func tlsFigure(v *analysis.View) (*figure, error) {
	var rows []analysis.TLSCost
	for _, t := range v.TLSCosts() {
		if t.Dropped == "" && len(t.By) > 0 {
			rows = append(rows, t)
		}
	}
	if len(rows) == 0 {
		return nil, nil
	}
	f := newFigure("What TLS costs: each TLS cell over its plaintext cell", "TLS / plaintext (median of per-round ratios, 95 % interval, log scale)", "", true, false)
	f.p.X.Tick.Marker = Ticks125{}
	f.h = max(plotH, vg.Length(len(rows))*0.3*vg.Inch+1.6*vg.Inch)
	f.left = 0.2 * vg.Inch
	var heads []string
	// Rows top to bottom in the run's order: the first row at the top.
	for j := range rows {
		heads = append(heads, tlsRowHead(rows[len(rows)-1-j].Cell))
	}
	colors := []color.Color{
		color.RGBA{R: 0x24, G: 0x4c, B: 0x8f, A: 0xff}, color.RGBA{R: 0xc0, G: 0x39, B: 0x2b, A: 0xff},
		color.RGBA{R: 0x27, G: 0xae, B: 0x60, A: 0xff}, color.RGBA{R: 0x8e, G: 0x44, B: 0xad, A: 0xff}}
	glyphs := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}}
	lo, hi := 1.0, 1.0
	for k, i := range analysis.TLSCostFigures {
		var pts xErrPoints
		for j, t := range rows {
			c, ok := t.By[i]
			if !ok || !c.Ratio.Valid() {
				continue
			}
			y := float64(len(rows)-1-j) + 0.18*(1.5-float64(k))
			pts.xy = append(pts.xy, plotter.XY{X: c.Ratio.Center, Y: y})
			pts.err = append(pts.err, [2]float64{c.Ratio.Center - c.Ratio.Low, c.Ratio.High - c.Ratio.Center})
			lo, hi = math.Min(lo, c.Ratio.Low), math.Max(hi, c.Ratio.High)
		}
		if len(pts.xy) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts.xy)
		if err != nil {
			return nil, err
		}
		sc.Color, sc.Shape, sc.Radius = colors[k], glyphs[k], vg.Points(3.5)
		bars, err := plotter.NewXErrorBars(pts)
		if err != nil {
			return nil, err
		}
		bars.Color, bars.Width = colors[k], vg.Points(1)
		f.p.Add(bars, sc)
		f.legend.Add(i.Figure().Name, sc)
		f.lines++
	}
	f.p.NominalY(heads...)
	f.p.Y.Min, f.p.Y.Max = -0.6, float64(len(rows))-0.4
	f.p.X.Min, f.p.X.Max = lo/1.15, hi*1.15
	one, err := plotter.NewLine(plotter.XYs{{X: 1, Y: f.p.Y.Min}, {X: 1, Y: f.p.Y.Max}})
	if err != nil {
		return nil, err
	}
	one.Color, one.Width, one.Dashes = color.Black, vg.Points(1), []vg.Length{vg.Points(1), vg.Points(2)}
	f.p.Add(one)
	f.legend.Add("1x: as plaintext", one)
	return f, nil
}

// xErrPoints are points with their distances to an interval's ends along x.
type xErrPoints struct {
	xy  plotter.XYs
	err [][2]float64
}

func (p xErrPoints) Len() int                        { return len(p.xy) }
func (p xErrPoints) XY(i int) (float64, float64)     { return p.xy[i].X, p.xy[i].Y }
func (p xErrPoints) XError(i int) (float64, float64) { return p.err[i][0], p.err[i][1] }
