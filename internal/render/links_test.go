package render

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/report"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/results/resultstest"
)

// linkRun is a run with a link dimension: every cell of the plan once per link,
// req/s falling with the rate.
func linkRun(t *testing.T) *results.Run {
	t.Helper()
	spec, err := plan.ParseSpec([]byte(`clients: {go: [http]}
items: [200, 5000]
hosts:
  a: {engine: "unix:///a.sock", address: 198.18.0.1, roles: [go-server], shape: na/da}
  b: {engine: "unix:///b.sock", address: 198.18.0.2, roles: [go], shape: nb/db}
links: [unshaped, 100mbit, 20mbit]
`))
	if err != nil {
		t.Fatal(err)
	}
	run := &results.Run{ID: "links", Spec: spec, Runner: "docker",
		Links: []results.LinkCheck{{Link: "unshaped", From: "b", To: "a", RTTUs: 90, ThroughputBps: 900e6},
			{Link: "100mbit", Rate: "100mbit", From: "b", To: "a", RTTUs: 95, ThroughputBps: 94e6}}}
	rps := map[string]float64{"unshaped": 300, "100mbit": 22, "20mbit": 4.5}
	for _, c := range spec.Plan() {
		m := results.Metrics{RPS: rps[c.Link], BytesPerResponse: 545372, Complete: 100}
		run.Cells = append(run.Cells, results.CellResult{Name: c.Name(), Cell: c, Status: results.StatusOK,
			Repeats: []results.Repeat{{Index: 1, Metrics: m, Report: &report.Report{RequestsPerSecond: m.RPS, Complete: 100, DocumentLength: 545372}}}})
	}
	return run
}

func TestLinkFigures(t *testing.T) {
	run := linkRun(t)
	figs, err := figures(run)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range figs {
		names[f.name] = true
	}
	for _, want := range []string{
		"rps-vs-concurrency-datalist-5000@100mbit", "rps-vs-concurrency-datalist-200@unshaped",
		"rps-vs-link-datalist-5000-c1", "rps-vs-link-datalist-200-c1",
	} {
		if !names[want] {
			t.Errorf("no plot %s; got %v", want, names)
		}
	}
	if names["rps-vs-concurrency-datalist-5000"] {
		t.Error("a plot without its link in a run with a link dimension")
	}
	rates := linkRates(run, runLinks(run))
	if rates["unshaped"] != 900e6 || rates["20mbit"] != 20e6 {
		t.Errorf("rates: got %v; want unshaped at its probed 900e6, 20mbit at 20e6", rates)
	}
	// A probe that measured a busy CPU still puts unshaped right of the fastest rate.
	run.Links[0].ThroughputBps = 40e6
	if got := linkRates(run, runLinks(run))["unshaped"]; got != 200e6 {
		t.Errorf("unshaped probed below 100mbit: got x=%v; want 200e6 (twice the fastest)", got)
	}
}

func TestLinksMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, linkRun(t)); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"## Hosts and links",
		"| a | unix:///a.sock | 198.18.0.1 | go-server | na/da |",
		"| 100mbit | tc tbf 100mbit, both directions | b -> a | 95 | 94.0 |  |",
		"go-http-datalist-5000-c1@20mbit",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("matrix.md lacks %q", want)
		}
	}
	// Without hosts, no such section.
	b.Reset()
	if err := Markdown(&b, resultstest.Synthetic("x", 1)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Hosts and links") {
		t.Error("a one-engine run has a Hosts and links section")
	}
}

// Asked against achieved: every link with delay or loss gets a row, a refused
// one says why, a rate-only link none.
func TestLinkAccuracyMarkdown(t *testing.T) {
	md := linkAccuracyMarkdown([]results.LinkCheck{
		{Link: "100mbit", Rate: "100mbit"},
		{Link: "region", AskedRTTUs: 2000, AddedRTTUs: 1967, AfterAddedRTTUs: 2065, AppliedDelayUs: 860.5,
			Delayer: &results.LinkDelayer{Packets: 71629, LateP50Us: 113, LateP99Us: 18287, CPUSeconds: 2.2}},
		{Link: "lossy", AskedRTTUs: 200, AddedRTTUs: 655, AskedLossPct: 1, LossPct: 1.116, LossPackets: 6360, Refused: "link lossy: the link added 655 µs"},
	})
	for _, want := range []string{
		"| region | 2000 | 1967 | 2065 | 860 | - | - | - | 113/18287, 2.20, 0 | held |",
		"| lossy | 200 | 655 | - | - | 1.00 | 1.12 of 6360 | - | - | refused: link lossy: the link added 655 µs |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("no row %q in\n%s", want, md)
		}
	}
	if strings.Contains(md, "| 100mbit |") {
		t.Errorf("a rate-only link has a row:\n%s", md)
	}
	if linkAccuracyMarkdown([]results.LinkCheck{{Link: "unshaped"}}) != "" {
		t.Errorf("no delay or loss: want no table")
	}
}

// delayRun is a run over delayed and lossy links: p99 grows with the round
// trip each link achieved, req/s falls with the loss; region's check refused it.
func delayRun(t *testing.T) *results.Run {
	t.Helper()
	spec, err := plan.ParseSpec([]byte(`clients: {go: [http, grpc]}
items: [200]
concurrency: [1, 50]
hosts:
  a: {engine: "unix:///a.sock", address: 198.18.0.1, roles: [go-server], shape: na/da}
  b: {engine: "unix:///b.sock", address: 198.18.0.2, roles: [go], shape: nb/db}
links: [unshaped, lan, wan, lossy]
`))
	if err != nil {
		t.Fatal(err)
	}
	run := &results.Run{ID: "delays", Spec: spec, Runner: "docker",
		Links: []results.LinkCheck{{Link: "unshaped", RTTUs: 90},
			{Link: "lan", RTTUs: 300, AskedRTTUs: 200, AddedRTTUs: 210},
			{Link: "wan", RTTUs: 30100, AskedRTTUs: 30000, AskedLossPct: 0.1, LossPct: 0.12, Refused: "link wan: refused"},
			{Link: "lossy", RTTUs: 310, AskedRTTUs: 200, AddedRTTUs: 220, AskedLossPct: 1, LossPct: 1.05}}}
	p99 := map[string]float64{"unshaped": 400, "lan": 700, "lossy": 9000}
	rps := map[string]float64{"unshaped": 3000, "lan": 1500, "lossy": 400}
	for _, c := range spec.Plan() {
		if c.Link == "wan" {
			continue
		}
		m := results.Metrics{RPS: rps[c.Link], P99Us: p99[c.Link], BytesPerResponse: 20000, Complete: 100}
		run.Cells = append(run.Cells, results.CellResult{Name: c.Name(), Cell: c, Status: results.StatusOK,
			Repeats: []results.Repeat{{Index: 1, Metrics: m, Report: &report.Report{RequestsPerSecond: m.RPS, Complete: 100, DocumentLength: 20000}}}})
	}
	return run
}

// p99 against the achieved round trip has one link per round trip, the least
// lossy (not the refused one, no rate link); req/s against loss has the links
// that differ only in loss, in the order of the loss achieved.
func TestDelayFigures(t *testing.T) {
	run := delayRun(t)
	idx := index(run)
	links := runLinks(run)
	k := callItems{"datalist", 200}
	f, err := p99VsRTT(idx, k, 1, links, run.Links)
	if err != nil || f == nil {
		t.Fatalf("p99-vs-rtt: %v, %v; want a figure", f, err)
	}
	if f.lines != 3 { // go-http, go-grpc and y = RTT
		t.Errorf("p99-vs-rtt: %d lines; want 3", f.lines)
	}
	tickLabels := func(f *figure) string {
		var labels []string
		for _, tk := range f.p.X.Tick.Marker.Ticks(0, 0) {
			labels = append(labels, tk.Label)
		}
		return strings.Join(labels, ", ")
	}
	// One point per round trip: lan, not lossy beside it; wan (held) with its
	// loss named; a rate link left out.
	held := slices.Clone(run.Links)
	held[2].Refused = ""
	held = append(held, results.LinkCheck{Link: "100mbit", RTTUs: 95, Rate: "100mbit"})
	f, err = p99VsRTT(idx, k, 1, append(slices.Clone(links), "100mbit"), held)
	if err != nil || f == nil {
		t.Fatalf("p99-vs-rtt with wan held: %v, %v; want a figure", f, err)
	}
	if got := tickLabels(f); got != "unshaped 0.09, lan 0.30, wan 30.10, 0.1 % loss" {
		t.Errorf("p99-vs-rtt ticks %q; want unshaped, lan and wan with its loss", got)
	}
	f, err = rpsVsLoss(idx, k, 50, links, run.Links)
	if err != nil || f == nil {
		t.Fatalf("rps-vs-loss: %v, %v; want a figure", f, err)
	}
	ticks := f.p.X.Tick.Marker.Ticks(0, 0)
	var labels []string
	for _, tk := range ticks {
		labels = append(labels, tk.Label)
	}
	if got := strings.Join(labels, ", "); got != "lan 0 %, lossy 1.1 %" {
		t.Errorf("rps-vs-loss ticks %q; want lan, then lossy (the links that differ only in loss)", got)
	}
	// Without a lossy link there is no loss plot, and one link gives no RTT plot.
	run.Links = run.Links[:2]
	if f, _ := rpsVsLoss(idx, k, 50, links, run.Links); f != nil {
		t.Error("rps-vs-loss without a lossy link; want none")
	}
	if f, _ := p99VsRTT(idx, k, 1, []string{"lan"}, run.Links); f != nil {
		t.Error("p99-vs-rtt over one link; want none")
	}
}

// linkRatioRun: go over grpc and http at c=1 and 50 on loopback, lan and lossy,
// 3 rounds each with a shared round drift: lan doubles p50 and halves req/s,
// lossy divides req/s by 5.
func linkRatioRun(t *testing.T) *results.Run {
	t.Helper()
	spec, err := plan.ParseSpec([]byte(`clients: {go: [grpc, http]}
items: [200]
concurrency: [1, 50]
hosts:
  a: {engine: "unix:///a.sock", address: 198.18.0.1, roles: [go-server], shape: na/da}
  b: {engine: "unix:///b.sock", address: 198.18.0.2, roles: [go], shape: nb/db}
links: [loopback, lan, lossy]
`))
	if err != nil {
		t.Fatal(err)
	}
	run := &results.Run{ID: "links-ratio", Spec: spec, Runner: "docker",
		Links: []results.LinkCheck{{Link: "loopback", Loopback: true, RTTUs: 40},
			{Link: "lan", RTTUs: 300, AskedRTTUs: 200, AddedRTTUs: 210},
			{Link: "lossy", RTTUs: 310, AskedRTTUs: 200, AddedRTTUs: 220, AskedLossPct: 1, LossPct: 1.05}}}
	for j, c := range spec.Plan() {
		p50 := map[string]float64{"loopback": 300, "lan": 600, "lossy": 650}[c.Link]
		rps := map[string]float64{"loopback": 3000, "lan": 1500, "lossy": 600}[c.Link]
		res := results.CellResult{Name: c.Name(), Cell: c, Load: c.Load, Status: results.StatusOK}
		for i := 1; i <= 3; i++ {
			f := (1 + 0.03*math.Sin(float64(i)*2.1)) * (1 + 0.01*math.Sin(float64(i*7+j)))
			m := results.Metrics{RPS: rps / f, P50Us: p50 * f, P99Us: 3 * p50 * f, ClientCPUUs: 50 * f, ServerCPUUs: 40 * f,
				ClientBusy: 0.2, ServerBusy: 0.2, BytesPerResponse: 5629, Complete: int64(rps)}
			res.Repeats = append(res.Repeats, results.Repeat{Index: i, Metrics: m,
				Report: &report.Report{RequestsPerSecond: m.RPS, Complete: int64(rps), DocumentLength: 5629}})
		}
		res.Summary = res.Summarize()
		run.Cells = append(run.Cells, res)
	}
	return run
}

func TestLinkTableGolden(t *testing.T) {
	var b bytes.Buffer
	if err := LinkTable(&b, linkRatioRun(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "link-table.md", b.Bytes())
	if err := LinkTable(&b, linkRun(t)); err == nil {
		t.Error("a run without loopback cells: got no error")
	}
}

// The page's answer on links: a grid of every link ratio (a column per link and
// figure, a row per client-protocol) led by one sentence per link with what its
// check achieved and the range of its ratios; pending without a link dimension.
func TestLinkAnswer(t *testing.T) {
	a := linkAnswer(AnswerInput{View: analysis.ViewOf(linkRatioRun(t))})
	if a.Pending != "" || a.Grid == nil {
		t.Fatalf("got %+v; want an answer with a grid", a)
	}
	if len(a.Grid.Rows) != 2 || len(a.Grid.Cols) != 4 {
		t.Errorf("grid %d rows x %d columns; want 2 (go-grpc, go-http) x 4 (lan, lossy x p50, req/s)", len(a.Grid.Rows), len(a.Grid.Cols))
	}
	lead := strings.Join(a.Lead, "\n")
	for _, want := range []string{
		"Over lan (round trip 0.30 ms, 210 µs added against 200 asked): p50 at c=1 1.98x-2.04x of loopback's (2 pairs, 0 indistinguishable); req/s at c=50 0.494x-0.496x of loopback's",
		"Over lossy (round trip 0.31 ms, 220 µs added against 200 asked, loss 1.1 % against 1 %): p50 at c=1",
	} {
		if !strings.Contains(lead, want) {
			t.Errorf("lead %q; want %q in it", lead, want)
		}
	}
	if a := linkAnswer(AnswerInput{View: analysis.ViewOf(delayRun(t))}); a.Pending == "" {
		t.Error("a run without loopback cells: got an answer; want pending")
	}
	// The answers on the run's base condition read its loopback cells.
	for _, a := range Answers(AnswerInput{View: analysis.ViewOf(linkRatioRun(t))}) {
		if a.ID == "protocol" && (a.Pending != "" || len(a.Lead) == 0 || !strings.HasPrefix(a.Lead[0], "On loopback")) {
			t.Errorf("protocol answer on a run with links: %+v; want one on its loopback cells", a)
		}
	}
}
