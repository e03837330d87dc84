package render

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// An Answer is one question people bring, answered once from a run: the page
// opens with every registered Answer and README's "answers" block prints the
// same (docs/reports.md, "Adding an answer").
type Answer struct {
	ID       string // the anchor: #answer-<ID>
	Question string
	// Lead is the answer in a sentence or two, every figure with its interval.
	Lead []string
	// Grid is the answer's table (nil: none), Notes how to read it and why, from
	// figures of the same run; Evidence links to the tables and files behind it.
	Grid     *Grid
	Notes    []string
	Evidence []link
	// Plot names one of the run's plots (plots/NAME.svg) the page shows in the
	// answer rather than among the plots; PlotView is it, drawn (Index).
	Plot     string
	PlotView *plotView
	// Pending says why the run cannot answer yet and what would (a registered
	// slot): set, the page shows the question with it and nothing else.
	Pending string
}

// Grid is a table of an answer or of the verdict grid: a row per subject
// (client-protocol), a column per items and concurrency.
type Grid struct {
	ID, Caption string
	Cols        []GridCol
	Rows        []GridRow
}

// GridCol is one column: items and concurrency (0 for a column that is neither).
type GridCol struct {
	Head     string
	Items, C int
}

// GridRow is one subject's row; Client and Protocol drive the page's filter.
type GridRow struct {
	Head, Client, Protocol string
	Cells                  []GridCell
}

// GridCell is one entry: a ratio of ratios.csv (Ratio names its row: "A|B|figure"),
// coloured by its verdict, marked when a cell behind it carries a flag.
type GridCell struct {
	Text, Verdict, Title, Ratio string
	Flagged                     bool
	Items, C                    int
}

// AnswerInput is what a producer reads: the run's view and what lies beside
// the run (reproduction, cost run).
type AnswerInput struct {
	View   *analysis.View
	Extras Extras
}

// AnswerProducer answers one question. Rank orders the page (10 the caller's
// language, 20 protocols, 30 published claims, 40 timed against counted; TLS,
// links and capacity take 50, 60, 70).
type AnswerProducer struct {
	Rank     int
	ID       string
	Question string
	Produce  func(in AnswerInput) Answer
	// OnBase: the answer reads the run's base condition, so on a run with a
	// link dimension it is given the loopback cells alone (named as without
	// links) and its lead says so.
	OnBase bool
}

var answerProducers []AnswerProducer

// RegisterAnswer adds a producer (from an init function of the file that
// computes it); a second producer with the same ID panics.
func RegisterAnswer(p AnswerProducer) {
	if slices.ContainsFunc(answerProducers, func(q AnswerProducer) bool { return q.ID == p.ID }) {
		panic("render: answer " + p.ID + " registered twice")
	}
	answerProducers = append(answerProducers, p)
	slices.SortStableFunc(answerProducers, func(a, b AnswerProducer) int { return a.Rank - b.Rank })
}

// Answers are every registered producer's answer for the run, in rank order.
func Answers(in AnswerInput) []Answer {
	var out []Answer
	base := baseInput(in)
	for _, p := range answerProducers {
		var a Answer
		if p.OnBase && base != nil {
			a = p.Produce(*base)
			const on = "On loopback (the link the others are compared with)."
			switch {
			case a.Pending != "":
			case len(a.Lead) > 0:
				a.Lead[0] = on + " " + a.Lead[0]
			default:
				a.Lead = []string{on}
			}
		} else {
			a = p.Produce(in)
		}
		a.ID, a.Question = p.ID, p.Question
		out = append(out, a)
	}
	return out
}

// baseInput is in with its run's loopback cells alone, named as without links,
// for the OnBase answers; nil for a run without a loopback link.
func baseInput(in AnswerInput) *AnswerInput {
	if in.View == nil || in.View.Run == nil || !slices.Contains(runLinks(in.View.Run), plan.LinkLoopback) {
		return nil
	}
	b := in
	b.View = analysis.ViewOf(onLink(in.View.Run, plan.LinkLoopback))
	return &b
}

// AnswersMarkdown prints the answers as README's "answers" block: each
// question with its answer and evidence in one paragraph, and the tables of the
// answers named in grids; links relative to dir (the run's directory, from the
// README).
func AnswersMarkdown(w io.Writer, answers []Answer, dir string, grids ...string) error {
	var b strings.Builder
	for i, a := range answers {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "**%s**", a.Question)
		if a.Pending != "" {
			fmt.Fprintf(&b, " %s\n", a.Pending)
			continue
		}
		fmt.Fprintf(&b, " %s", strings.Join(a.Lead, " "))
		var ev []string
		for _, l := range a.Evidence {
			ev = append(ev, fmt.Sprintf("[%s](%s)", l.Text, strings.TrimSuffix(dir, "/")+"/"+l.Href))
		}
		if len(ev) > 0 {
			fmt.Fprintf(&b, " Evidence: %s.", strings.Join(ev, ", "))
		}
		b.WriteString("\n")
		if g := a.Grid; g != nil && slices.Contains(grids, a.ID) {
			b.WriteString("\n" + gridMarkdown(g))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// gridMarkdown is g as a Markdown table, flagged entries marked ⚑.
func gridMarkdown(g *Grid) string {
	var b strings.Builder
	b.WriteString("| |")
	for _, c := range g.Cols {
		fmt.Fprintf(&b, " %s |", c.Head)
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(g.Cols)) + "\n")
	for _, r := range g.Rows {
		fmt.Fprintf(&b, "| %s |", r.Head)
		for _, c := range r.Cells {
			t := c.Text
			if c.Flagged {
				t += " ⚑"
			}
			fmt.Fprintf(&b, " %s |", mdEscape(t))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// ratioText is a ratio as the page prints it: "1.19x [1.04-1.36]", the
// figures ratios.csv holds (ratio, ratio_low, ratio_high) to three digits.
func ratioText(r analysis.RatioRecord) string {
	return fmt.Sprintf("%sx [%s-%s]", sig(r.Ratio), sig(r.Low), sig(r.High))
}

// ratioKey names a ratio's row of ratios.csv: "A|B|figure".
func ratioKey(r analysis.RatioRecord) string { return r.A + "|" + r.B + "|" + r.Figure }

// ratioIndex finds the view's ratios by kind, A's coordinates and figure.
type ratioIndex struct {
	by map[string]analysis.RatioRecord
}

func newRatioIndex(v *analysis.View) ratioIndex {
	x := ratioIndex{by: map[string]analysis.RatioRecord{}}
	for _, r := range v.Records() {
		x.by[r.Kind+"|"+r.A+"|"+r.Figure] = r
	}
	return x
}

func (x ratioIndex) get(kind, a, figure string) (analysis.RatioRecord, bool) {
	r, ok := x.by[kind+"|"+a+"|"+figure]
	return r, ok
}

// gridCell is a ratio as a grid entry.
func gridCell(r analysis.RatioRecord) GridCell {
	c := GridCell{Text: ratioText(r), Verdict: r.Verdict, Ratio: ratioKey(r), Flagged: r.AFlags != "" || r.BFlags != ""}
	c.Title = fmt.Sprintf("%s / %s, %s; %s", r.A, r.B, pairedWord(r.Paired), r.Verdict)
	if c.Flagged {
		var why []string
		if r.AFlags != "" {
			why = append(why, r.A+": "+r.AFlags)
		}
		if r.BFlags != "" {
			why = append(why, r.B+": "+r.BFlags)
		}
		c.Title += "; flagged: " + strings.Join(why, "; ")
	}
	return c
}

func pairedWord(p bool) string {
	if p {
		return "paired by round"
	}
	return "unpaired (two servers)"
}

// verdictGrid lays out the run's ratios of kind for one figure: a row per A's
// client-protocol, a column per items and concurrency of the run's first call.
func verdictGrid(v *analysis.View, kind string, f analysis.Figure) *Grid {
	x := newRatioIndex(v)
	s := v.Run.Spec
	if len(s.Calls) == 0 {
		return nil
	}
	call := s.Calls[0]
	items, concs := slices.Sorted(slices.Values(s.Items)), slices.Sorted(slices.Values(s.Concurrency))
	g := &Grid{ID: "grid-" + kind + "-" + f.Column}
	for _, n := range items {
		for _, c := range concs {
			g.Cols = append(g.Cols, GridCol{Head: fmt.Sprintf("%d items c%d", n, c), Items: n, C: c})
		}
	}
	seen := map[string]int{}
	for _, cv := range v.Cells {
		if cv.Call != call || cv.Link != "" || cv.Nodes != 0 {
			continue
		}
		// A TLS or per-call cell is a row of its own beside its plaintext one.
		head := cv.Client + "-" + cv.Protocol
		if cond := conditionsOf(cv.Cell); cond != "" {
			head += "@" + cond
		}
		i, ok := seen[head]
		if !ok {
			i = len(g.Rows)
			seen[head] = i
			row := GridRow{Head: head, Client: cv.Client, Protocol: cv.Protocol}
			for _, col := range g.Cols {
				row.Cells = append(row.Cells, GridCell{Text: "-", Items: col.Items, C: col.C})
			}
			g.Rows = append(g.Rows, row)
		}
		r, ok := x.get(kind, cv.Name, f.Column)
		if !ok {
			continue
		}
		j := slices.IndexFunc(g.Cols, func(col GridCol) bool { return col.Items == cv.Items && col.C == cv.Concurrency })
		if j < 0 {
			continue
		}
		gc := gridCell(r)
		gc.Items, gc.C = cv.Items, cv.Concurrency
		g.Rows[i].Cells[j] = gc
	}
	g.Rows = slices.DeleteFunc(g.Rows, func(r GridRow) bool {
		return !slices.ContainsFunc(r.Cells, func(c GridCell) bool { return c.Ratio != "" })
	})
	if len(g.Rows) == 0 {
		return nil
	}
	return g
}

// conditionsOf is a cell's security and connection mode as its name gives
// them ("tls+percall"; "" for plaintext and persistent).
func conditionsOf(c plan.Cell) string {
	c.Link, c.Nodes = "", 0
	_, cond, _ := strings.Cut(c.Name(), "@")
	return cond
}

// costWord is how a lead sentence words a verdict of A against B on a figure
// where less is faster: "more", "less", "indistinguishable".
func costWord(verdict string) string {
	switch verdict {
	case stats.Slower:
		return "more"
	case stats.Faster:
		return "less"
	}
	return "indistinguishable"
}

// middle is the middle of the run's sorted item counts (200 of 2, 200, 5000).
func middle(v []int) int {
	s := slices.Sorted(slices.Values(v))
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func itoa(n int) string { return strconv.Itoa(n) }
