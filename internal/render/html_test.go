package render

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/results/resultstest"
)

// node helpers over golang.org/x/net/html's tree.

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func hasClass(n *html.Node, class string) bool {
	v, _ := attr(n, "class")
	return slices.Contains(strings.Fields(v), class)
}

// findAll lists the elements under n (n included) for which match is true.
func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func tag(name string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Data == name }
}

func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func parseHTML(t *testing.T, b []byte) *html.Node {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return doc
}

// tableCells are the data-cell names of the rows of every table.cells, in order.
func tableCells(doc *html.Node) []string {
	var names []string
	for _, tb := range findAll(doc, func(n *html.Node) bool { return n.Data == "table" && hasClass(n, "cells") }) {
		for _, tr := range findAll(tb, tag("tr")) {
			if v, ok := attr(tr, "data-cell"); ok {
				names = append(names, v)
			}
		}
	}
	return names
}

// checkRunPage asserts what every run page holds, from a parsed DOM (ours or
// Chromium's): every cell of the run in exactly one table row, every plot of the
// run as an inline SVG, and nothing fetched from elsewhere.
func checkRunPage(t *testing.T, doc *html.Node, run *results.Run) {
	t.Helper()
	checkRatiosAreRows(t, doc, run)
	got := tableCells(doc)
	seen := map[string]int{}
	for _, n := range got {
		seen[n]++
	}
	for _, c := range run.Cells {
		if seen[c.Name] != 1 {
			t.Errorf("cell %s: in %d table rows; want 1", c.Name, seen[c.Name])
		}
	}
	if len(got) != len(run.Cells) {
		t.Errorf("got %d table rows; want %d (one per cell)", len(got), len(run.Cells))
	}
	figs, err := figures(run)
	if err != nil {
		t.Fatal(err)
	}
	plots := map[string]*html.Node{}
	for _, f := range findAll(doc, tag("figure")) {
		if v, ok := attr(f, "data-plot"); ok {
			plots[v] = f
		}
	}
	if len(plots) != len(figs) {
		t.Errorf("got %d plots; want %d", len(plots), len(figs))
	}
	for _, f := range figs {
		fig, ok := plots[f.name]
		if !ok {
			t.Errorf("plot %s: missing", f.name)
			continue
		}
		svgs := findAll(fig, tag("svg"))
		if len(svgs) != 1 {
			t.Errorf("plot %s: got %d <svg>; want 1", f.name, len(svgs))
			continue
		}
		if len(findAll(svgs[0], tag("path"))) == 0 || len(findAll(svgs[0], tag("text"))) == 0 {
			t.Errorf("plot %s: SVG without paths or text", f.name)
		}
		caps := findAll(fig, tag("figcaption"))
		if len(caps) != 1 || len(strings.TrimSpace(text(caps[0]))) < 40 {
			t.Errorf("plot %s: want one caption saying how to read it", f.name)
		}
	}
	// Self-contained: no stylesheet, script or image from a file or the network.
	for _, n := range findAll(doc, func(*html.Node) bool { return true }) {
		switch n.Data {
		case "link", "img", "iframe", "object", "embed":
			t.Errorf("<%s> found: the page must not load anything", n.Data)
		case "script":
			if _, ok := attr(n, "src"); ok {
				t.Error("<script src> found: scripts must be inline")
			}
		}
		for _, k := range []string{"href", "src"} {
			if v, ok := attr(n, k); ok && regexp.MustCompile(`^[a-z]+:`).MatchString(v) {
				t.Errorf("<%s %s=%q>: links must be relative to the run", n.Data, k, v)
			}
		}
	}
}

// cellText is the text of one cell's column (by its header) in the client tables.
func cellText(t *testing.T, doc *html.Node, cell, head string) string {
	t.Helper()
	col := slices.IndexFunc(cellColumns, func(c column) bool { return c.Head == head })
	if col < 0 {
		t.Fatalf("no column %q", head)
	}
	for _, tr := range findAll(doc, tag("tr")) {
		if v, _ := attr(tr, "data-cell"); v == cell {
			return strings.TrimSpace(text(findAll(tr, tag("td"))[col+1]))
		}
	}
	t.Fatalf("no row %s", cell)
	return ""
}

func renderIndex(t *testing.T, run *results.Run, x Extras) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Index(&b, run, x); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestIndexStructure(t *testing.T) {
	run := resultstest.Synthetic("20261130T120000Z", 1)
	doc := parseHTML(t, renderIndex(t, run, Extras{}))
	checkRunPage(t, doc, run)

	// One table per client, in the vocabulary's order.
	var clients []string
	for _, tb := range findAll(doc, func(n *html.Node) bool { return n.Data == "table" && hasClass(n, "cells") }) {
		v, _ := attr(tb, "data-client")
		clients = append(clients, v)
	}
	if want := []string{"go", "php"}; !slices.Equal(clients, want) {
		t.Errorf("got client tables %v; want %v", clients, want)
	}
	// Every header of those tables sorts: the script is there and headers are typed.
	for _, th := range findAll(doc, func(n *html.Node) bool {
		return n.Data == "th" && n.Parent.Parent.Parent != nil && hasClass(n.Parent.Parent.Parent, "cells")
	}) {
		if _, ok := attr(th, "data-type"); !ok {
			t.Errorf("header %q has no data-type", text(th))
		}
	}
	scripts := findAll(doc, tag("script"))
	if len(scripts) != 1 || !strings.Contains(text(scripts[0]), "table.sortable") {
		t.Error("want one inline script sorting table.sortable")
	}
	// Successful cells link to their raw reports.
	row := findAll(doc, func(n *html.Node) bool { v, _ := attr(n, "data-cell"); return v == "go-grpc-datalist-2-c1" })[0]
	var hrefs []string
	for _, a := range findAll(row, tag("a")) {
		h, _ := attr(a, "href")
		hrefs = append(hrefs, h)
	}
	for _, want := range []string{"raw/go-grpc-datalist-2-c1-r1.txt", "raw/go-grpc-datalist-2-c1-r3.txt"} {
		if !slices.Contains(hrefs, want) {
			t.Errorf("row go-grpc-datalist-2-c1: links %v; want %s", hrefs, want)
		}
	}

	// Needs attention: one row a cell (the flagged count is matrix.md's), the
	// failed cells, the failed repeat and the verify failure.
	att := map[string][]string{}
	for _, tr := range findAll(doc, func(n *html.Node) bool { _, ok := attr(n, "data-kind"); return ok }) {
		k, _ := attr(tr, "data-kind")
		att[k] = append(att[k], text(tr))
	}
	for _, tc := range []struct{ kind, want string }{
		{"failed", "php-http-datalist-2-c1"},
		{"failed", "verify failed, not timed"},
		{"repeat-failed", "go-http-datalist-200-c50"},
		{"repeat-failed", "repeat 2 failed"},
		{"verify", "php-http-datalist"},
		{"flagged", "php-grpc-datalist-2-c50"},
		{"flagged", "r3 cpu-invariant: client busy 1.30 cores"},
		{"flagged", "go-http-datalist-2-c1"},
		{"flagged", "noisy: steal 5.0 % of a core"},
	} {
		if !strings.Contains(strings.Join(att[tc.kind], "\n"), tc.want) {
			t.Errorf("needs attention, %s: got %q; want it to name %q", tc.kind, att[tc.kind], tc.want)
		}
	}

	if n := len(att["flagged"]); n != len(analysis.ViewOf(run).FlaggedCells()) {
		t.Errorf("needs attention: %d flagged rows; want matrix.md's count, %d", n, len(analysis.ViewOf(run).FlaggedCells()))
	}
	// Each kind's line of guidance.
	for _, kind := range []string{"failed", "flagged", "verify", "noisy", "cpu-invariant"} {
		li := findAll(doc, func(n *html.Node) bool { v, _ := attr(n, "data-attention-kind"); return v == kind })
		if len(li) != 1 || len(text(li[0])) < 40 {
			t.Errorf("needs attention: no line of guidance for %s", kind)
		}
	}

	// The bottleneck label and both sides' busy fraction.
	for _, tc := range []struct{ cell, col, want string }{
		{"go-grpc-datalist-200-c50", "bound", "server"},
		{"go-grpc-datalist-200-c50", "busy %", "40 / 97"},
		{"go-grpc-datalist-2-c1", "conns", "1"},
	} {
		if got := cellText(t, doc, tc.cell, tc.col); got != tc.want {
			t.Errorf("%s, %s: got %q; want %q", tc.cell, tc.col, got, tc.want)
		}
	}

	// A flagged cell is marked in its row, in the verdict grids and in the ratio
	// tables: php-grpc-datalist-2-c50 (cpu-invariant).
	for _, where := range []struct {
		name string
		in   func(n *html.Node) bool
	}{
		{"its row", func(n *html.Node) bool { v, _ := attr(n, "data-cell"); return v == "php-grpc-datalist-2-c50" }},
		{"a grid", func(n *html.Node) bool {
			v, _ := attr(n, "data-ratio")
			return n.Data == "td" && hasClass(n, "flagged") && strings.HasPrefix(v, "php-grpc-datalist-2-c50|")
		}},
		{"the ratio table", func(n *html.Node) bool {
			return n.Data == "tr" && n.Parent != nil && strings.HasPrefix(text(n), "php-grpc-datalist-2-c50 ⚑")
		}},
	} {
		found := findAll(doc, where.in)
		if len(found) == 0 || !strings.Contains(text(found[0]), "⚑") {
			t.Errorf("flagged php-grpc-datalist-2-c50: no ⚑ in %s", where.name)
		}
	}
	// The language answer comes first and names php against go with intervals.
	ans := findAll(doc, func(n *html.Node) bool { v, _ := attr(n, "id"); return v == "answer-language" })
	if len(ans) != 1 || !regexp.MustCompile(`A php caller on gRPC at 200 items spends Go's client CPU per call times [0-9.]+x \[[0-9.]+-[0-9.]+\] at c1`).MatchString(text(ans[0])) {
		t.Errorf("the language answer: want php on gRPC at 200 items with its interval; got %q", text(ans[0]))
	}
}

// The page shows every PHP variant against Go and the reproduction when the run
// has one.
func TestIndexVariantsAndReproduction(t *testing.T) {
	run := resultstest.Synthetic("x", 1)
	for _, c := range slices.Clone(run.Cells) {
		if c.Client == "php" && c.Status == results.StatusOK {
			c.Client = "php-pure"
			c.Name = "php-pure" + strings.TrimPrefix(c.Name, "php")
			run.Cells = append(run.Cells, c)
		}
	}
	secs := []results.Section{{Name: "php-go-growth", Setup: []string{"ab at c 1"},
		Table:    [][]string{{"path", "p50 ms"}, {"php", "3.1"}},
		Findings: []results.Finding{{Claim: "Go's latency grows slower", Holds: "yes", Detail: "1.2x vs 3.4x"}}},
		{Name: "java-rpc-2015", Err: "java missing"}}
	doc := parseHTML(t, renderIndex(t, run, Extras{Reproduction: secs, ReproductionFrom: "reproduction.md"}))
	checkRunPage(t, doc, run)
	var variants []string
	for _, tr := range findAll(doc, func(n *html.Node) bool {
		return n.Data == "tr" && n.Parent != nil && n.Parent.Parent != nil && hasClass(n.Parent.Parent, "vgrid")
	}) {
		if tb := n0(tr.Parent.Parent); tb == "grid-client-vs-go-client_cpu_us_per_call" {
			v, _ := attr(tr, "data-client")
			if v != "" && !slices.Contains(variants, v) {
				variants = append(variants, v)
			}
		}
	}
	if want := []string{"php", "php-pure"}; !slices.Equal(variants, want) {
		t.Errorf("client-vs-go grid: got clients %v; want %v", variants, want)
	}
	claims := findAll(doc, func(n *html.Node) bool { v, _ := attr(n, "id"); return v == "answer-claims" })
	if len(claims) != 1 || !strings.Contains(text(claims[0]), "1 published claims re-run: yes 1") {
		t.Errorf("the claims answer: got %q", text(claims[0]))
	}
	repro := findAll(doc, func(n *html.Node) bool { v, _ := attr(n, "id"); return v == "reproduction" })
	if len(repro) != 1 {
		t.Fatal("no reproduction section")
	}
	for _, want := range []string{"Go's latency grows slower", "yes", "java missing", "ab at c 1", "3.1"} {
		if !strings.Contains(text(repro[0]), want) {
			t.Errorf("reproduction section lacks %q", want)
		}
	}
}

// Reasons and names come from outside (client output, spec globs): the page
// escapes them.
func TestIndexEscapes(t *testing.T) {
	run := resultstest.Synthetic("x", 1)
	run.Cells[0].Status, run.Cells[0].Error = results.StatusFailed, `<script>alert(1)</script><img src=x onerror=alert(2)>`
	run.Versions["php-client <b>"] = `"><script>x</script>`
	b := renderIndex(t, run, Extras{})
	if bytes.Contains(b, []byte("<script>alert")) || bytes.Contains(b, []byte("<img src=x")) || bytes.Contains(b, []byte("<script>x")) {
		t.Error("outside text was written unescaped")
	}
	doc := parseHTML(t, b)
	if n := len(findAll(doc, tag("script"))); n != 1 {
		t.Errorf("got %d <script>; want 1 (ours)", n)
	}
}

// An unfinished run names its missing and partial cells at the top.
func TestIndexUnfinishedRun(t *testing.T) {
	run := resultstest.Synthetic("x", 1)
	var kept []results.CellResult
	for _, c := range run.Cells {
		if c.Name != "go-http-datalist-2-c1" {
			kept = append(kept, c)
		}
	}
	run.Cells = kept
	run.Cells[0].Status, run.Cells[0].Repeats = results.StatusPartial, run.Cells[0].Repeats[:1]
	doc := parseHTML(t, renderIndex(t, run, Extras{}))
	checkRunPage(t, doc, run)
	page := text(doc)
	for _, want := range []string{"16 cells: 10 ok, 4 failed, 1 partial, 1 not run.", "go-http-datalist-2-c1no result: the run ended before this cell",
		"go-grpc-datalist-2-c11 of 3 repeats done"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// All writes index.html beside the other files; LoadExtras finds the
// reproduction in either place a run keeps it.
func TestAllWritesIndex(t *testing.T) {
	for _, rel := range []string{"", "reproduction.json", "reproduction/reproduction.json"} {
		t.Run("repro="+rel, func(t *testing.T) {
			dir := t.TempDir()
			if rel != "" {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, rel), []byte(`[{"name":"php-go-growth","findings":[{"claim":"CLAIM-X","holds":"no"}]}]`), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			run := resultstest.Synthetic("x", 1)
			if err := All(dir, run); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, IndexFile))
			if err != nil {
				t.Fatal(err)
			}
			checkRunPage(t, parseHTML(t, b), run)
			if got := bytes.Contains(b, []byte("CLAIM-X")); got != (rel != "") {
				t.Errorf("reproduction on the page: got %v; want %v", got, rel != "")
			}
		})
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "reproduction.json"), []byte("{not json"), 0o644)
	if _, err := LoadExtras(dir); err == nil || !strings.Contains(err.Error(), "reproduction.json") {
		t.Errorf("bad reproduction.json: got %v; want an error naming the file", err)
	}
}

func TestReproductionHTML(t *testing.T) {
	var b bytes.Buffer
	secs := []results.Section{{Name: "go-grpc-thrift-aerospike", Findings: []results.Finding{
		{Claim: "gRPC beats Thrift", Holds: "partly", Published: "+3..+17 %", Measured: "+9 % [4..12]", Tolerance: "yes 0..22%", Reason: "server 94 % busy"},
		{Claim: "about 30 % more server CPU", Holds: "not distinguishable here"},
	}}}
	if err := ReproductionHTML(&b, secs); err != nil {
		t.Fatal(err)
	}
	doc := parseHTML(t, b.Bytes())
	cells := findAll(doc, func(n *html.Node) bool { return n.Data == "td" && hasClass(n, "holds-partly") })
	if len(cells) != 1 {
		t.Errorf("got %d 'holds: partly' cells; want 1", len(cells))
	}
	// A verdict with spaces is one class, not three.
	if n := len(findAll(doc, func(n *html.Node) bool { return n.Data == "td" && hasClass(n, "holds-not-distinguishable-here") })); n != 1 {
		t.Errorf("got %d 'not distinguishable here' cells; want 1 with class holds-not-distinguishable-here", n)
	}
	// The summary has reproduction.md's columns.
	page := b.String()
	for _, want := range []string{"<th>published</th>", "<th>measured (median [spread])</th>", "<th>tolerance</th>", "<th>measured reason</th>",
		"+9 % [4..12]", "server 94 % busy", "(none measured)"} {
		if !strings.Contains(page, want) {
			t.Errorf("reproduction.html lacks %q", want)
		}
	}
}

// svgBodies stands in for each plot's SVG in the golden files, which would
// otherwise change with every gonum release.
var svgBodies = regexp.MustCompile(`(?s)<svg .*?</svg>`)

func TestHTMLGoldens(t *testing.T) {
	run := resultstest.Synthetic("20261130T120000Z", 1)
	golden(t, "index.html", svgBodies.ReplaceAll(renderIndex(t, run, Extras{}), []byte("<svg/>")))

	a, b := compareRuns()
	var out bytes.Buffer
	if err := CompareHTML(&out, a, b, analysis.Compare(a, b)); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.html", out.Bytes())
}

// compareRuns are two runs where B's req/s is 1.5 times A's, with 5 repeats a
// side in go-grpc-datalist-2-c1 (enough for a significant change) and a cell
// only A has.
func compareRuns() (*results.Run, *results.Run) {
	a, b := resultstest.Synthetic("a", 1), resultstest.Synthetic("b", 1.5)
	resultstest.FiveRepeats(a, b)
	// B's p99 is worse in that cell.
	for i := range b.Cells[0].Repeats {
		b.Cells[0].Repeats[i].Metrics.P99Us *= 2
	}
	b.Cells = b.Cells[:len(b.Cells)-1]
	b.Commit = "def5678"
	return a, b
}

func TestCompareHTML(t *testing.T) {
	a, b := compareRuns()
	var out bytes.Buffer
	if err := CompareHTML(&out, a, b, analysis.Compare(a, b)); err != nil {
		t.Fatal(err)
	}
	doc := parseHTML(t, out.Bytes())
	rows := map[string][]string{}
	for _, tr := range findAll(doc, tag("tr")) {
		cell, ok := attr(tr, "data-cell")
		if !ok {
			continue
		}
		for _, td := range findAll(tr, tag("td")) {
			if v, ok := attr(td, "data-verdict"); ok {
				rows[cell] = append(rows[cell], v)
			}
		}
	}
	for _, tc := range []struct {
		cell string
		want []string // req/s, p99, client CPU, server CPU
	}{
		{"go-grpc-datalist-2-c1", []string{analysis.Improved, analysis.Regressed, analysis.Improved, analysis.Improved}},
		// 3 rounds a side: the intervals still tell +50 % req/s (p99 unchanged).
		{"go-grpc-datalist-2-c50", []string{analysis.Improved, analysis.NoChange, analysis.Improved, analysis.Improved}},
	} {
		if !slices.Equal(rows[tc.cell], tc.want) {
			t.Errorf("%s: got verdicts %v; want %v", tc.cell, rows[tc.cell], tc.want)
		}
	}
	if _, ok := rows["php-http-datalist-2-c1"]; ok {
		t.Error("a cell failed on both sides has a row")
	}
	page := text(doc)
	last := a.Cells[len(a.Cells)-1].Name
	for _, want := range []string{last + ": only in A", "php-http-datalist-2-c1: no successful repeat in A nor B", "abc1234", "def5678", "The interval is the verdict's only ground"} {
		if !strings.Contains(page, want) {
			t.Errorf("compare page lacks %q", want)
		}
	}
	for _, never := range []string{"Mann-Whitney", "p=", "need >="} {
		if strings.Contains(page, never) {
			t.Errorf("compare page says %q: its verdicts come from intervals", never)
		}
	}
	differ := findAll(doc, func(n *html.Node) bool { return n.Data == "tr" && hasClass(n, "differ") })
	if len(differ) != 1 || !strings.Contains(text(differ[0]), "commit") {
		t.Errorf("want exactly the commit row marked as differing; got %d rows", len(differ))
	}
}

// A run with nothing to show (no cell yet, or every cell failed) still renders a
// page that says so.
func TestIndexEmptyAndAllFailed(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*results.Run)
		want string
	}{
		{"no cells", func(r *results.Run) { r.Cells = nil; r.Verify = nil; r.Finished = time.Time{} }, "16 cells: 0 ok, 0 failed, 16 not run."},
		{"all failed", func(r *results.Run) {
			for i := range r.Cells {
				r.Cells[i].Status, r.Cells[i].Error, r.Cells[i].Repeats = results.StatusFailed, "server did not start", nil
			}
		}, "0 ok, 16 failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := resultstest.Synthetic("x", 1)
			tc.edit(run)
			b := renderIndex(t, run, Extras{})
			doc := parseHTML(t, b)
			checkRunPage(t, doc, run)
			if !strings.Contains(text(doc), tc.want) {
				t.Errorf("page lacks %q", tc.want)
			}
			if n := len(findAll(doc, func(n *html.Node) bool { return n.Data == "table" && hasClass(n, "vgrid") })); n != 0 {
				t.Errorf("got %d verdict grids; want none", n)
			}
		})
	}
}

func TestInlineMarkdown(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"run `ab -c 1` here", "run <code>ab -c 1</code> here"},
		{"<b>`x<y`</b>", "&lt;b&gt;<code>x&lt;y</code>&lt;/b&gt;"},
		{"one ` tick", "one ` tick"},
	} {
		if got := string(inlineMarkdown(tc.in)); got != tc.want {
			t.Errorf("inlineMarkdown(%q): got %q; want %q", tc.in, got, tc.want)
		}
	}
}

// n0 is a node's id.
func n0(n *html.Node) string { v, _ := attr(n, "id"); return v }

// pageRatio is a ratio as the page prints it: 1.19x [1.04-1.36].
var pageRatio = regexp.MustCompile(`[0-9][0-9.]*x \[[0-9][0-9.]*-[0-9][0-9.]*\]`)

// checkRatiosAreRows asserts that every ratio on the page is a row of the run's
// ratios.csv: an element marked data-ratio names its row and prints its
// figures, and every ratio in the page's text prints some row's.
func checkRatiosAreRows(t *testing.T, doc *html.Node, run *results.Run) {
	t.Helper()
	var b bytes.Buffer
	if err := RatiosCSV(&b, run); err != nil {
		t.Fatal(err)
	}
	recs, err := analysis.ReadRatiosCSV(&b)
	if err != nil {
		t.Fatalf("ratios.csv does not read back: %v", err)
	}
	byKey, texts := map[string]analysis.RatioRecord{}, map[string]bool{}
	for _, r := range recs {
		byKey[ratioKey(r)] = r
		texts[ratioText(r)] = true
	}
	for _, n := range findAll(doc, func(n *html.Node) bool { _, ok := attr(n, "data-ratio"); return ok }) {
		k, _ := attr(n, "data-ratio")
		r, ok := byKey[k]
		if !ok {
			t.Errorf("the page's ratio %q is no row of ratios.csv", k)
			continue
		}
		if !strings.Contains(text(n), ratioText(r)) {
			t.Errorf("ratio %s: the page prints %q; ratios.csv has %s", k, text(n), ratioText(r))
		}
	}
	body := findAll(doc, tag("body"))
	if len(body) == 0 {
		return
	}
	var visible strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && (n.Data == "script" || n.Data == "svg" || n.Data == "style") {
			return
		}
		if n.Type == html.TextNode {
			visible.WriteString(n.Data + "\n")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(body[0])
	for _, m := range pageRatio.FindAllString(visible.String(), -1) {
		if !texts[m] {
			t.Errorf("the page prints the ratio %s, which no row of ratios.csv holds", m)
		}
	}
}
