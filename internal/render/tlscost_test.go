package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/results/resultstest"
)

// What TLS costs as matrix.md, README's block and the answer's lead print it,
// for a run with a tls-mismatch cell: a golden.
func TestTLSCostGolden(t *testing.T) {
	run := resultstest.SyntheticTLS("20261203T120000Z", true)
	v := analysis.ViewOf(run)
	var b strings.Builder
	b.WriteString("# matrix.md\n")
	mdTLSCost(&b, v)
	b.WriteString("\n# README block tls-costs\n\n")
	if err := TLSCostTable(&b, run); err != nil {
		t.Fatal(err)
	}
	b.WriteString("\n# answers block\n\n")
	var ans []Answer
	for _, a := range Answers(AnswerInput{View: v}) {
		if a.ID == "tls" {
			ans = append(ans, a)
		}
	}
	if err := AnswersMarkdown(&b, ans, "results/x", "tls"); err != nil {
		t.Fatal(err)
	}
	golden(t, "tls.md", []byte(b.String()))
}

// A run without TLS cells says so in one line, in README's block and the answer.
func TestTLSCostNone(t *testing.T) {
	var b strings.Builder
	if err := TLSCostTable(&b, resultstest.Synthetic("plain", 1)); err != nil {
		t.Fatal(err)
	}
	if want := "This run has no TLS cell beside its plaintext cell (`make matrix MATRIX=tls`).\n"; b.String() != want {
		t.Errorf("got %q; want %q", b.String(), want)
	}
}

// The page answers "What does TLS cost" with its grid and the plot inside the
// answer (not again among the plots), the mismatch cell marked and listed in
// Needs attention; matrix.json carries the handshakes.
func TestTLSCostPage(t *testing.T) {
	run := resultstest.SyntheticTLS("20261203T120000Z", true)
	doc := parseHTML(t, renderIndex(t, run, Extras{}))
	var answer *html.Node
	for _, n := range findAll(doc, tag("div")) {
		if id, _ := attr(n, "id"); id == "answer-tls" {
			answer = n
		}
	}
	if answer == nil {
		t.Fatal("no #answer-tls")
	}
	if n := len(findAll(answer, tag("svg"))); n != 1 {
		t.Errorf("answer-tls: %d plots; want 1 (%s)", n, tlsPlotName)
	}
	plots := 0
	for _, n := range findAll(doc, tag("figure")) {
		if p, _ := attr(n, "data-plot"); p == tlsPlotName {
			plots++
		}
	}
	if plots != 1 {
		t.Errorf("%s shown %d times; want once, in the answer", tlsPlotName, plots)
	}
	rows := findAll(answer, tag("tr"))
	if len(rows) != 9 { // a head and 8 TLS cells
		t.Errorf("answer-tls grid: %d rows; want 9", len(rows))
	}
	if s := text(answer); !strings.Contains(s, "go-http 200 c50") || !strings.Contains(s, "not compared") {
		t.Errorf("answer-tls: want the mismatch row go-http 200 c50 not compared; got %q", s)
	}
	if s := text(doc); !strings.Contains(s, "tls-mismatch") {
		t.Error("page: no tls-mismatch in Needs attention")
	}
	var out bytes.Buffer
	if err := JSON(&out, run); err != nil {
		t.Fatal(err)
	}
	var j struct {
		Handshakes []analysis.HandshakeRecord `json:"handshakes"`
	}
	if err := json.Unmarshal(out.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if len(j.Handshakes) != 8 || j.Handshakes[0].Client == nil || j.Handshakes[0].Client.EachUs == nil {
		t.Errorf("matrix.json handshakes: %+v; want 8 with the client's CPU per connection", j.Handshakes)
	}
}

// The plot files: tls-over-plaintext is among the run's plots.
func TestTLSPlotFile(t *testing.T) {
	figs, err := figures(resultstest.SyntheticTLS("x", false))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		if f.name == tlsPlotName {
			if _, err := f.fig.encode("png"); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Errorf("no %s among the run's plots", tlsPlotName)
}
