package render

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/cost"
	"github.com/rpcbed/rpcbed/internal/cost/costrender"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// IndexFile is the run's page, beside matrix.md.
const IndexFile = "index.html"

// NoisyPct is the req/s spread over the repeats ((max - min) / median, in %) above
// which a cell of a run saved with figures only (no repeats, no summary) counts as
// noisy; other cells are noisy by their steal (docs/method.md, section 6).
const NoisyPct = results.NoisySpread * 100

//go:embed templates
var templateFS embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{"md": inlineMarkdown, "slug": slug, "tally": Tally}).ParseFS(templateFS, "templates/*.tmpl"))

// slug makes a verdict a CSS class name: "not distinguishable here" ->
// "not-distinguishable-here" (a class name holds no spaces).
func slug(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), "-")
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// inlineMarkdown escapes s and turns its `code` spans into <code> (the
// reproduction's texts are written for reproduction.md).
func inlineMarkdown(s string) template.HTML {
	return template.HTML(codeSpan.ReplaceAllString(template.HTMLEscapeString(s), "<code>$1</code>"))
}

func asset(name string) string {
	b, err := templateFS.ReadFile("templates/" + name)
	if err != nil {
		panic(err) // embedded: cannot happen
	}
	return string(b)
}

var (
	pageCSS = template.CSS(asset("page.css"))
	sortJS  = template.JS(asset("sort.js"))
)

// fact is one line of a facts table.
type fact struct{ Key, Value string }

// attention is one failed, flagged, noisy cell or failed verify pair.
type attention struct {
	Kind    string // failed|flagged|noisy|verify
	Subject string
	Anchor  string // the row's id, when the subject has one
	Reason  string
	Raw     string
}

// column is one figure of the per-client tables.
type column struct {
	Head, Title string
	Num         bool
	value       func(c results.CellResult) cellValue
}

type cellValue struct{ Text, Sort, Class, Title string }

type link struct{ Href, Text string }

type cellRow struct {
	Name, Link, Class, Note string
	Values                  []cellValue
	Raw                     []link
}

type clientTable struct {
	Client string
	Rows   []cellRow
}

type ratioCell struct{ Text, Title string }

type phpGoRow struct {
	Protocol string
	Cells    []ratioCell
}

type phpGoTable struct {
	Variant     string
	Concurrency int
	Cols        []string
	Rows        []phpGoRow
}

type plotView struct {
	Name, Caption string
	SVG           template.HTML
}

type indexPage struct {
	Run       *results.Run
	CSS       template.CSS
	JS        template.JS
	Summary   string
	Facts     []fact
	Versions  []fact
	Attention []attention
	// AttentionCounts: per kind (Key) how many (Value).
	AttentionCounts []fact
	NoisyPct        float64
	Columns         []column
	Tables          []clientTable
	Ratios          []ratioTable
	PHPGo           []phpGoTable
	Plots           []plotView
	Repro           []results.Section
	ReproFrom       string
	Cost            template.HTML
}

// Extras are what a run's page shows beside the run itself.
type Extras struct {
	// Reproduction is the run's reproduction (reproduction.json), if it has one;
	// ReproductionFrom is its page or file, relative to the run directory.
	Reproduction     []results.Section
	ReproductionFrom string
	// Cost is the run's cost section (internal/cost) when the run directory holds
	// a cost run in cost/ (cost/cost.json).
	Cost template.HTML
}

// LoadExtras finds what belongs on dir's page: the reproduction in
// dir/reproduction.json or dir/reproduction/reproduction.json, and the cost run in
// dir/cost (set against the run's own matrix.csv).
func LoadExtras(dir string) (Extras, error) {
	x, err := loadReproduction(dir)
	if err != nil {
		return x, err
	}
	costDir := filepath.Join(dir, "cost")
	if _, err := os.Stat(filepath.Join(costDir, cost.JSONFile)); err == nil {
		res, err := cost.LoadResult(costDir)
		if err != nil {
			return x, err
		}
		timed, _ := cost.LoadTimed(dir) // none: the section leaves the comparison out
		if x.Cost, err = costrender.HTMLSection(res, timed, "cost"); err != nil {
			return x, err
		}
	}
	return x, nil
}

func loadReproduction(dir string) (Extras, error) {
	for _, rel := range []string{"reproduction.json", filepath.Join("reproduction", "reproduction.json")} {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return Extras{}, err
		}
		var secs []results.Section
		if err := json.Unmarshal(b, &secs); err != nil {
			return Extras{}, fmt.Errorf("%s: %w", filepath.Join(dir, rel), err)
		}
		from := strings.TrimSuffix(filepath.ToSlash(rel), ".json") + ".md"
		return Extras{Reproduction: secs, ReproductionFrom: from}, nil
	}
	return Extras{}, nil
}

// HTML writes index.html without extras (a Renderer).
func HTML(w io.Writer, run *results.Run) error { return Index(w, run, Extras{}) }

// Index writes the run's page: run facts, what needs attention, one sortable table
// per client, PHP's client cost as a multiple of Go's, every plot inline as SVG and
// the reproduction summary when there is one. It needs nothing but itself: styles,
// script and plots are inline, links are relative to the run directory.
func Index(w io.Writer, run *results.Run, x Extras) error {
	p := indexPage{Run: run, CSS: pageCSS, JS: sortJS, NoisyPct: NoisyPct, Columns: cellColumns,
		Facts: runFacts(run), Versions: versionFacts(run), Attention: needsAttention(run),
		Repro: x.Reproduction, ReproFrom: x.ReproductionFrom, Cost: x.Cost}
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
	for _, kind := range []string{"failed", "partial", "missing", "flagged", "noisy", "verify"} {
		n := 0
		for _, a := range p.Attention {
			if a.Kind == kind {
				n++
			}
		}
		if n > 0 {
			p.AttentionCounts = append(p.AttentionCounts, fact{kind, strconv.Itoa(n)})
		}
	}
	u := analysis.UncertaintyOf(run)
	p.Ratios = ratioTables(u)
	for _, client := range runClients(run) {
		t := clientTable{Client: client}
		for _, c := range run.Cells {
			if c.Client == client {
				t.Rows = append(t.Rows, row(c, u))
			}
		}
		p.Tables = append(p.Tables, t)
	}
	p.PHPGo = phpVsGo(run)
	figs, err := figures(run)
	if err != nil {
		return err
	}
	for _, f := range figs {
		svg, err := f.fig.encode("svg")
		if err != nil {
			return fmt.Errorf("plot %s: %w", f.name, err)
		}
		p.Plots = append(p.Plots, plotView{Name: f.name, Caption: caption(f.name), SVG: inlineSVG(svg)})
	}
	return execute(w, "index", p)
}

// execute renders a template through a buffer: a failing template writes nothing.
func execute(w io.Writer, name string, data any) error {
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// writeIndex writes dir/index.html with what LoadExtras finds in dir.
func writeIndex(dir string, run *results.Run) error {
	x, err := LoadExtras(dir)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := Index(&b, run, x); err != nil {
		return fmt.Errorf("%s: %w", IndexFile, err)
	}
	return results.WriteFileAtomic(filepath.Join(dir, IndexFile), b.Bytes())
}

var svgProlog = regexp.MustCompile(`(?s)^\s*(<\?xml[^>]*\?>\s*)?(<!--.*?-->\s*)?`)

// inlineSVG turns an SVG document into an element to put in a page: no XML
// prolog, and a viewBox so that CSS may scale it.
func inlineSVG(b []byte) template.HTML {
	b = svgProlog.ReplaceAll(b, nil)
	return template.HTML(b)
}

// caption says how to read a plot, by its kind.
func caption(name string) string {
	switch {
	case strings.HasPrefix(name, "rps-vs-concurrency-"):
		return "requests/s (higher is better) against concurrency, one line per client-protocol (colour = client, dash = protocol); a line that stops rising has hit a limit. Both axes are log scales."
	case strings.HasPrefix(name, "latency-vs-items-"):
		return "p50 (solid) and p99 (dashed) latency (lower is better) against the items per response, one colour per protocol; the slope is how latency grows with the payload. Both axes are log scales."
	case strings.HasPrefix(name, "client-cpu-vs-items-"):
		return "client CPU per call (whole client process; lower is better) against the items per response, one line per client-protocol; the vertical gap between two lines is their cost ratio (log scale)."
	case strings.HasPrefix(name, "php-go-cpu-ratio-"):
		return "PHP's client CPU per call divided by Go's, one line per PHP variant and protocol (php in the protocol's colour, php-pure in its own): 1 is equal cost, 4 means PHP spends four times Go's CPU per call."
	}
	return "one figure of this run; see its title and axes."
}

// runClients are the clients with a cell in the run, in the vocabulary's order
// (clients the vocabulary does not list, such as a new variant, come last).
func runClients(run *results.Run) []string {
	var out []string
	for _, c := range run.Cells {
		if !slices.Contains(out, c.Client) {
			out = append(out, c.Client)
		}
	}
	rank := func(c string) int {
		if i := slices.Index(plan.Clients, c); i >= 0 {
			return i
		}
		return len(plan.Clients)
	}
	slices.SortStableFunc(out, func(a, b string) int { return rank(a) - rank(b) })
	return out
}

func runFacts(run *results.Run) []fact {
	s, m := run.Spec, run.Machine
	f := []fact{
		{"run", run.ID},
		{"machine", fmt.Sprintf("%s, %d cores, %d MB, %s, kernel %s", orDash(m.CPU), m.Cores, m.MemMB, orDash(m.OS), orDash(m.Kernel))},
		{"commit", orDash(run.Commit)},
		{"runner", orDash(run.Runner)},
	}
	if !run.Started.IsZero() {
		took := "not finished"
		if !run.Finished.IsZero() {
			took = run.Finished.Sub(run.Started).Round(1e9).String()
		}
		f = append(f, fact{"started", run.Started.UTC().Format("2006-01-02 15:04:05 UTC")}, fact{"time taken", took})
	}
	var clients []string
	for _, c := range runClients(run) {
		clients = append(clients, c+": "+strings.Join(s.Clients[c], ", "))
	}
	items := make([]string, len(s.Items))
	for i, n := range s.Items {
		items[i] = strconv.Itoa(n)
	}
	conc := make([]string, len(s.Concurrency))
	for i, n := range s.Concurrency {
		conc[i] = strconv.Itoa(n)
	}
	f = append(f,
		fact{"spec: clients", strings.Join(clients, "; ")},
		fact{"spec: cells", fmt.Sprintf("%s; items %s; c %s", strings.Join(s.Calls, ", "), strings.Join(items, ", "), strings.Join(conc, ", "))},
		fact{"spec: load", fmt.Sprintf("%s; %d repeats, interleaved%s; clients as %s", loadString(s.Load), s.Repeats, primeString(s.Prime, s.PrimeMax), ranAs(run))},
		fact{"spec: resources", fmt.Sprintf("client cpuset %s, server cpuset %s; store %s; auth %s", orDash(s.ClientResources.CPUSet), orDash(s.ServerResources.CPUSet), orDash(s.Store), onOff(s.Auth != nil && *s.Auth))},
	)
	var ov []string
	for _, o := range s.Overrides {
		ov = append(ov, o.Match+": "+overrideString(o))
	}
	if len(ov) > 0 {
		f = append(f, fact{"spec: overrides", strings.Join(ov, "; ")})
	}
	return f
}

// versionFacts groups the versions by component: "go-client grpc" and
// "go-client thrift" make one line "go-client: grpc 1.85.0, thrift 0.22.0".
// ranAs says how the clients ran, from the repeats (a run made before workers
// has none marked), else from the spec.
func ranAs(run *results.Run) string {
	seen := false
	for _, c := range run.Cells {
		for _, r := range c.Repeats {
			if r.Worker {
				return "long-lived workers"
			}
			seen = true
		}
	}
	if seen {
		return "one process per run"
	}
	return workerWords(run.Spec.Worker)
}

func versionFacts(run *results.Run) []fact {
	keys := make([]string, 0, len(run.Versions))
	for k := range run.Versions {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var f []fact
	for _, k := range keys {
		comp, lib, ok := strings.Cut(k, " ")
		if !ok {
			comp, lib = k, ""
		}
		v := strings.TrimSpace(lib + " " + run.Versions[k])
		if n := len(f); n > 0 && f[n-1].Key == comp {
			f[n-1].Value += ", " + v
			continue
		}
		f = append(f, fact{comp, v})
	}
	return f
}

// spread is the cell's req/s spread (results.CellResult.Spread) in %.
func spread(c results.CellResult) float64 { return c.Spread() * 100 }

// cellFlags are the cell's flags other than noisy (which needsAttention words
// itself), each with the reasons that name it (the summary's "rN flag: ..." and
// "flag: ..." lines).
func cellFlags(c results.CellResult) (flags []fact) {
	if c.Summary == nil && len(c.Repeats) == 0 {
		return nil
	}
	sum := c.Summarized()
	for _, f := range sum.Flags {
		if f == results.FlagNoisy {
			continue
		}
		var why []string
		for _, r := range sum.Reasons {
			if strings.HasPrefix(r, f+": ") || strings.Contains(r, " "+f+": ") {
				why = append(why, r)
			}
		}
		flags = append(flags, fact{f, strings.Join(why, "; ")})
	}
	return flags
}

func needsAttention(run *results.Run) []attention {
	var out []attention
	for _, c := range run.Cells {
		raw := ""
		if len(c.Repeats) > 0 {
			raw = c.Repeats[0].Raw
		}
		anchor := "cell-" + c.Name
		switch c.Status {
		case results.StatusOK:
		case results.StatusPartial:
			out = append(out, attention{Kind: "partial", Subject: c.Name, Anchor: anchor, Raw: raw,
				Reason: fmt.Sprintf("%d of %d repeats done (rpcbed matrix -resume finishes the run)%s", len(c.Repeats), max(run.Spec.Repeats, len(c.Repeats)), prefixed("; ", c.Error))})
			continue
		default:
			out = append(out, attention{Kind: "failed", Subject: c.Name, Anchor: anchor, Reason: orDash(c.Error), Raw: raw})
			continue
		}
		for _, r := range c.Repeats {
			if r.Report == nil {
				out = append(out, attention{Kind: "flagged", Subject: c.Name, Anchor: anchor,
					Reason: fmt.Sprintf("repeat %d failed, its figures are left out: %s", r.Index, orDash(r.Error)), Raw: r.Raw})
			}
		}
		for _, f := range cellFlags(c) {
			why := f.Value // the reasons name their flag
			if why == "" {
				why = f.Key
			}
			out = append(out, attention{Kind: "flagged", Subject: c.Name, Anchor: anchor, Reason: why})
		}
		if c.Noisy() {
			s := c.Stat(results.RPS)
			why := fmt.Sprintf("req/s spread %.0f %% over %d repeats (min %s, median %s, max %s)", spread(c), s.N, sig(s.Min), sig(s.Median), sig(s.Max))
			if c.Summary != nil && c.Summary.MaxStealCores > results.NoisyStealCores {
				why += fmt.Sprintf("; steal up to %.1f %% of a core", c.Summary.MaxStealCores*100)
			}
			if c.Summary != nil && c.Summary.MaxOutsideCores > 0 {
				why += fmt.Sprintf("; CPU used outside the cell up to %s cores", sig(c.Summary.MaxOutsideCores))
			}
			out = append(out, attention{Kind: "noisy", Subject: c.Name, Anchor: anchor, Reason: why})
		}
	}
	for _, m := range run.Missing() {
		out = append(out, attention{Kind: "missing", Subject: m.Name(), Reason: "no result: the run ended before this cell (rpcbed matrix -resume runs it)"})
	}
	for _, v := range run.Verify {
		if v.Status != results.StatusOK {
			out = append(out, attention{Kind: "verify", Subject: v.Pair, Reason: orDash(v.Error), Raw: v.Raw})
		}
	}
	return out
}

func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

func numValue(v float64, text string) cellValue {
	if math.IsNaN(v) {
		return cellValue{Text: "-"}
	}
	return cellValue{Text: text, Sort: strconv.FormatFloat(v, 'g', 6, 64)}
}

func median(f func(results.Metrics) float64, format func(float64) string) func(results.CellResult) cellValue {
	return func(c results.CellResult) cellValue {
		v := c.Stat(f).Median
		return numValue(v, format(v))
	}
}

// perCPUSecond is calls per CPU-second on one side (gRPC's benchmark's queries per
// CPU-second): the run's own figure, or 1e6 / µs per call for a run made before it.
func perCPUSecond(calls, us func(results.Metrics) float64) func(results.CellResult) cellValue {
	return func(c results.CellResult) cellValue {
		v := c.Stat(calls).Median
		if math.IsNaN(v) {
			if u := c.Stat(us).Median; u > 0 {
				v = 1e6 / u
			}
		}
		return numValue(v, sig(v))
	}
}

func pct(f func(results.Metrics) float64) func(results.CellResult) cellValue {
	return func(c results.CellResult) cellValue {
		v := c.Stat(f).Median * 100
		return numValue(v, strconv.FormatFloat(v, 'f', 0, 64))
	}
}

var cellColumns = []column{
	{"proto", "protocol", false, func(c results.CellResult) cellValue { return cellValue{Text: c.Protocol} }},
	{"call", "", false, func(c results.CellResult) cellValue { return cellValue{Text: c.Call} }},
	{"items", "items per datalist response", true, func(c results.CellResult) cellValue {
		return cellValue{Text: strconv.Itoa(c.Items), Sort: strconv.Itoa(c.Items)}
	}},
	{"c", "concurrency", true, func(c results.CellResult) cellValue {
		return cellValue{Text: strconv.Itoa(c.Concurrency), Sort: strconv.Itoa(c.Concurrency)}
	}},
	{"conns", "TCP connections the client opened", true, func(c results.CellResult) cellValue {
		n := c.Load.ConnsFor(c.Concurrency)
		if c.Summary != nil && c.Summary.Conns > 0 {
			n = c.Summary.Conns
		}
		return cellValue{Text: strconv.Itoa(n), Sort: strconv.Itoa(n)}
	}},
	{"req/s", "requests per second, median of the good rounds ± its 95 % interval (hover: the bounds, the lowest and highest round)", true, func(c results.CellResult) cellValue {
		s := c.Stat(results.RPS)
		v := numValue(s.Median, sig(s.Median))
		if s.N > 1 {
			v.Title = "lowest round " + sig(s.Min) + ", highest " + sig(s.Max)
		}
		return v
	}},
	{"spread %", "(max - min) / median of req/s over the good rounds (the 95 % interval beside req/s says what it means)", true, func(c results.CellResult) cellValue {
		v := spread(c)
		cv := numValue(v, strconv.FormatFloat(v, 'f', 1, 64))
		cv.Class = "spread"
		if c.Noisy() {
			cv.Class += " noisy"
		}
		return cv
	}},
	{"p50 ms", "median latency", true, median(results.P50, ms)},
	{"p99 ms", "99th percentile latency", true, median(results.P99, ms)},
	{"client CPU µs/call", "the client's CPU per call over its measured window (runs before the window: the whole client process per call it made)", true, median(results.ClientCPU, sig)},
	{"server CPU µs/call", "the server's CPU per call over the same window", true, median(results.ServerCPU, sig)},
	{"client calls per CPU-s", "efficiency: calls per CPU-second of the client", true, perCPUSecond(results.ClientCallsPerCPUS, results.ClientCPU)},
	{"server calls per CPU-s", "efficiency: calls per CPU-second of the server", true, perCPUSecond(results.ServerCallsPerCPUS, results.ServerCPU)},
	{"client busy %", "the client's CPU over the window / the cores it may use", true, pct(results.ClientBusy)},
	{"server busy %", "the server's CPU over the window / the cores it may use", true, pct(results.ServerBusy)},
	{"bottleneck", "client-bound or server-bound: that side 90 % busy or more; latency-bound: neither", false, func(c results.CellResult) cellValue {
		if c.Summary == nil || c.Summary.Bottleneck == "" {
			return cellValue{Text: "-"}
		}
		return cellValue{Text: c.Summary.Bottleneck, Class: c.Summary.Bottleneck}
	}},
	{"bytes", "encoded response size", true, median(results.BytesPerResponse, func(v float64) string { return num(v, 0) })},
	{"ok", "good repeats / repeats run", true, func(c results.CellResult) cellValue {
		n := c.Stat(results.RPS).N
		return cellValue{Text: fmt.Sprintf("%d/%d", n, len(c.Repeats)), Sort: strconv.Itoa(n)}
	}},
}

func row(c results.CellResult, u *analysis.Uncertainty) cellRow {
	r := cellRow{Name: c.Name}
	for i, rep := range c.Repeats {
		if rep.Raw == "" {
			continue
		}
		if r.Link == "" {
			r.Link = rep.Raw
		}
		r.Raw = append(r.Raw, link{rep.Raw, "r" + strconv.Itoa(cmp(rep.Index, i+1))})
	}
	if c.Status != results.StatusOK {
		r.Class, r.Note = "failed", "failed: "+short(c.Error, 300)
		for range cellColumns {
			r.Values = append(r.Values, cellValue{Text: "-"})
		}
		// Coordinates stay, so the row sorts with its neighbours.
		for i := 0; i < 5; i++ {
			r.Values[i] = cellColumns[i].value(c)
			if cellColumns[i].Num {
				r.Values[i].Class = "n"
			}
		}
		return r
	}
	for _, col := range cellColumns {
		v := col.value(c)
		if col.Num {
			v.Class = strings.TrimSpace("n " + v.Class)
		}
		if f, ok := intervalColumns[col.Head]; ok {
			// The figure's 95 % interval: its half-width beside it, the bounds on hover.
			if iv := u.Interval(c, f); iv.Valid() {
				v.Text += pm(iv)
				v.Title = strings.TrimSpace("95 % interval " + sig(iv.Low) + "-" + sig(iv.High) + " (where a rerun's median lands). " + v.Title)
			}
		}
		r.Values = append(r.Values, v)
	}
	if c.Noisy() {
		r.Class = "noisy"
	}
	r.Note = short(c.Error, 200)
	if w := u.Width(c); w > analysis.PrecisionOf(u.Spec()) {
		r.Note = strings.TrimPrefix(r.Note+"; ", "; ") + fmt.Sprintf("±%s in this run (wider than ±%s)", pctOf(w), pctOf(analysis.PrecisionOf(u.Spec())))
	}
	return r
}

// intervalColumns are the cell table's columns that carry a 95 % interval, by head.
var intervalColumns = map[string]analysis.Figure{
	"req/s":              analysis.Figures[0],
	"p99 ms":             analysis.Figures[2],
	"client CPU µs/call": analysis.Figures[3],
	"server CPU µs/call": analysis.Figures[4],
}

// ratioTable is one kind of comparison for index.html.
type ratioTable struct {
	Title, Tally string
	Figures      []string
	Rows         []ratioHTMLRow
}

type ratioHTMLRow struct {
	A, B  string
	Cells []cellValue
}

// ratioTables are the run's ratio tables (as matrix.md's), for index.html.
func ratioTables(u *analysis.Uncertainty) []ratioTable {
	cs := u.Comparisons()
	var out []ratioTable
	for _, k := range ratioKinds {
		rt := analysis.Ratios(cs, k.kind)
		if len(rt.Rows) == 0 {
			continue
		}
		t := ratioTable{Title: k.title, Tally: verdictTally(rt)}
		for _, f := range rt.Figures {
			t.Figures = append(t.Figures, f.Name+" A/B")
		}
		for _, r := range rt.Rows {
			hr := ratioHTMLRow{A: r.A, B: r.B}
			for _, f := range rt.Figures {
				c, ok := r.By[f.Key]
				v := cellValue{Text: ratioString(c, ok)}
				if ok {
					v.Class = "verdict-" + c.Verdict
				}
				hr.Cells = append(hr.Cells, v)
			}
			t.Rows = append(t.Rows, hr)
		}
		out = append(out, t)
	}
	return out
}

// cmp is a when it is set, else b.
func cmp(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// phpVsGo is PHP's client CPU per call over Go's for each PHP variant in the run
// (php, php-pure), per concurrency, protocol and call x items: the run's paired
// ratio with its 95 % interval and verdict (analysis.Comparisons).
func phpVsGo(run *results.Run) []phpGoTable {
	x := index(run)
	if len(x.protos["go"]) == 0 {
		return nil
	}
	var out []phpGoTable
	for _, variant := range runClients(run) {
		if variant != "php" && !strings.HasPrefix(variant, "php-") {
			continue
		}
		for _, c := range x.conc {
			t := phpGoTable{Variant: variant, Concurrency: c}
			keys := x.callItems()
			for _, k := range keys {
				t.Cols = append(t.Cols, k.String())
			}
			for _, proto := range x.protos[variant] {
				if !slices.Contains(x.protos["go"], proto) {
					continue
				}
				pr := phpGoRow{Protocol: proto}
				any := false
				for _, k := range keys {
					a := plan.Cell{Client: variant, Protocol: proto, Call: k.call, Items: k.items, Concurrency: c}
					b := plan.Cell{Client: "go", Protocol: proto, Call: k.call, Items: k.items, Concurrency: c}
					r, ok := x.vsGo(a, b)
					if !ok {
						pr.Cells = append(pr.Cells, ratioCell{Text: "-"})
						continue
					}
					any = true
					php, gov := x.median(a, results.ClientCPU), x.median(b, results.ClientCPU)
					pr.Cells = append(pr.Cells, ratioCell{Text: fmt.Sprintf("%.2fx [%.2f-%.2f]", r.Ratio.Center, r.Ratio.Low, r.Ratio.High),
						Title: fmt.Sprintf("%s %s µs/call / go %s µs/call, 95 %% interval, %s", variant, sig(php), sig(gov), r.Verdict)})
				}
				if any {
					t.Rows = append(t.Rows, pr)
				}
			}
			if len(t.Rows) > 0 {
				out = append(out, t)
			}
		}
	}
	return out
}
