package claims

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/render"
	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/results"
)

const published = "../../../results/published"

func exact(v float64) Figure { return Figure{Median: v, Lo: v, Hi: v, Known: true} }

// Every rule's band, at its edges, outside them, inside the noise and unmeasured.
func TestRuleBands(t *testing.T) {
	for _, tc := range []struct {
		name string
		band Band
		f    Figure
		want string
	}{
		// gRPC beats Thrift by 3-17 %: yes +0..+22 %, partly to +40 %.
		{"throughput inside", ruleThroughput, exact(10), results.Yes},
		{"throughput at yes edge", ruleThroughput, exact(22), results.Yes},
		{"throughput just past yes edge", ruleThroughput, exact(22.01), results.Partly},
		{"throughput at partly edge", ruleThroughput, exact(40), results.Partly},
		{"throughput far above", ruleThroughput, exact(80), results.No},
		{"throughput negative", ruleThroughput, exact(-5), results.No},
		{"throughput inside the noise", ruleThroughput, Figure{Median: 8, Lo: -3, Hi: 19, Known: true}, results.NotDistinguished},
		{"throughput range touches 0", ruleThroughput, Figure{Median: 5, Lo: 0, Hi: 9, Known: true}, results.NotDistinguished},
		{"throughput negative beyond noise", ruleThroughput, Figure{Median: -10, Lo: -15, Hi: -4, Known: true}, results.No},
		{"throughput straddles the yes edge, inside partly", ruleThroughput, Figure{Median: 20, Lo: 15, Hi: 30, Known: true}, results.Partly},
		{"throughput straddles the partly edge", ruleThroughput, Figure{Median: 38, Lo: 30, Hi: 50, Known: true}, results.NotDistinguished},
		{"throughput interval inside partly", ruleThroughput, Figure{Median: 30, Lo: 25, Hi: 35, Known: true}, results.Partly},
		{"throughput interval beyond partly", ruleThroughput, Figure{Median: 60, Lo: 45, Hi: 80, Known: true}, results.No},
		{"throughput missing", ruleThroughput, Figure{}, results.NotMeasured},
		// about 30 % more server CPU: yes 15..45, partly 0..90.
		{"extra CPU +16 %", ruleExtraCPU, exact(16), results.Yes},
		{"extra CPU at low edge", ruleExtraCPU, exact(15), results.Yes},
		{"extra CPU +10 % (was yes)", ruleExtraCPU, exact(10), results.Partly},
		{"extra CPU at high edge", ruleExtraCPU, exact(45), results.Yes},
		{"extra CPU negative", ruleExtraCPU, exact(-2.3), results.No},
		{"extra CPU inside noise", ruleExtraCPU, Figure{Median: 16, Lo: -1, Hi: 30, Known: true}, results.NotDistinguished},
		{"extra CPU missing", ruleExtraCPU, Figure{}, results.NotMeasured},
		// barely changes: ±10 % yes, ±25 % partly, a range wider than 20 points unclear.
		{"flat", ruleBarely, exact(-3), results.Yes},
		{"flat at edge", ruleBarely, exact(10), results.Yes},
		{"flat partly", ruleBarely, exact(-20), results.Partly},
		{"flat no", ruleBarely, exact(30), results.No},
		{"flat inside wide noise", ruleBarely, Figure{Median: 0, Lo: -15, Hi: 15, Known: true}, results.NotDistinguished},
		{"flat wide range all beyond partly", ruleBarely, Figure{Median: -54, Lo: -66, Hi: -43, Known: true}, results.No},
		{"flat missing", ruleBarely, Figure{}, results.NotMeasured},
		// the C extension closes most of the gap: yes ≥ 50 %, partly ≥ 20 %.
		{"message objects most", ruleMessageObjects, exact(70), results.Yes},
		{"message objects at edge", ruleMessageObjects, exact(50), results.Yes},
		{"message objects some", ruleMessageObjects, exact(30), results.Partly},
		{"message objects little", ruleMessageObjects, exact(5), results.No},
		{"message objects inside noise", ruleMessageObjects, Figure{Median: 40, Lo: -10, Hi: 60, Known: true}, results.NotDistinguished},
		{"message objects missing", ruleMessageObjects, Figure{}, results.NotMeasured},
		// Ice over Thrift 1.3-1.6x: yes 1.05..1.9.
		{"ice/thrift published", javaLead["thrift"].band, exact(1.45), results.Yes},
		{"ice/thrift at edge", javaLead["thrift"].band, exact(1.9), results.Yes},
		{"ice/thrift Thrift leads", javaLead["thrift"].band, exact(0.21), results.No},
		{"ice/thrift inside noise", javaLead["thrift"].band, Figure{Median: 1.02, Lo: 0.95, Hi: 1.1, Known: true}, results.NotDistinguished},
		{"ice/thrift missing", javaLead["thrift"].band, Figure{}, results.NotMeasured},
		{"ice/dubbo far", javaLead["dubbo"].band, exact(9), results.No},
		{"ice/grpc partly", javaLead["grpc"].band, exact(2), results.Partly},
		// lead grows: share of steps rising.
		{"grows all steps", ruleLeadGrows, exact(100), results.Yes},
		{"grows at edge", ruleLeadGrows, Figure{Median: 75, Lo: 75, Hi: 100, Known: true}, results.Yes},
		{"grows half", ruleLeadGrows, Figure{Median: 50, Lo: 50, Hi: 58, Known: true}, results.Partly},
		{"grows never (all fell)", ruleLeadGrows, exact(0), results.No},
		{"grows inside noise", ruleLeadGrows, Figure{Median: 0, Lo: 0, Hi: 100, Known: true}, results.NotDistinguished},
		{"grows missing", ruleLeadGrows, Figure{}, results.NotMeasured},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.band.Judge(tc.f); got != tc.want {
				t.Errorf("Judge(%+v) with %s: got %q; want %q", tc.f, tc.band, got, tc.want)
			}
		})
	}
}

func TestLevels(t *testing.T) {
	for _, tc := range []struct {
		name                           string
		held, failed, unclear, missing int
		want                           string
	}{
		{"all held", 5, 0, 0, 0, results.Yes},
		{"some held", 3, 2, 0, 0, results.Partly},
		{"held and unclear", 4, 0, 1, 0, results.Partly},
		{"none held", 0, 5, 0, 0, results.No},
		{"reversed and unclear", 0, 2, 3, 0, results.No},
		{"all inside noise", 0, 0, 5, 0, results.NotDistinguished},
		{"held but one missing", 4, 0, 0, 1, results.Partly},
		{"nothing measured", 0, 0, 0, 5, results.NotMeasured},
		{"no levels", 0, 0, 0, 0, results.NotMeasured},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Levels(tc.held, tc.failed, tc.unclear, tc.missing); got != tc.want {
				t.Errorf("got %q; want %q", got, tc.want)
			}
		})
	}
}

func TestMarginRatioOrder(t *testing.T) {
	a, b := Fig([]float64{110, 120, 115}), Fig([]float64{100, 100, 105})
	// Three repeats' 95 % interval (Student's t at 2 degrees of freedom) is wider
	// than the range they span.
	if !(a.Lo < 110 && a.Hi > 120 && a.Median == 115) {
		t.Errorf("Fig(110, 120, 115): got %+v; want median 115 inside an interval wider than 110..120", a)
	}
	if one := Fig([]float64{7}); one.Lo != 7 || one.Hi != 7 || !one.Known {
		t.Errorf("Fig(7): got %+v; want 7 with no interval", one)
	}
	m := Margin(a, b)
	if math.Abs(m.Median-15) > 1e-9 || math.Abs(m.Lo-(a.Lo/b.Hi-1)*100) > 1e-9 || math.Abs(m.Hi-(a.Hi/b.Lo-1)*100) > 1e-9 {
		t.Errorf("Margin: got %+v; want 15 [a.Lo/b.Hi-1 .. a.Hi/b.Lo-1]", m)
	}
	if r := Ratio(a, b); math.Abs(r.Median-1.15) > 1e-9 || !r.Known {
		t.Errorf("Ratio: got %+v; want 1.15", r)
	}
	for _, tc := range []struct {
		name string
		a, b Figure
		want int
	}{
		{"below", exact(1), exact(2), 1},
		{"above", exact(2), exact(1), -1},
		{"overlap", Figure{Median: 1, Lo: 0.5, Hi: 1.5, Known: true}, exact(1.2), 0},
		{"unknown", Figure{}, exact(1), 0},
	} {
		if got := Order(tc.a, tc.b); got != tc.want {
			t.Errorf("Order %s: got %d; want %d", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		f    Figure
	}{
		{"none", Fig(nil)}, {"NaN", Fig([]float64{1, math.NaN()})}, {"margin of unknown", Margin(Figure{}, exact(1))},
		{"ratio over zero", Ratio(exact(1), exact(0))},
	} {
		if tc.f.Known {
			t.Errorf("%s: got known %+v; want unknown", tc.name, tc.f)
		}
	}
}

// Synthetic runs through each experiment's judge: the verdicts follow the figures.
func TestJudgeGRPCThrift(t *testing.T) {
	e := &GRPCThrift{}
	if err := e.Read(published); err != nil {
		t.Fatal(err)
	}
	run := func(r, srvCPU, cliCPU float64, calls int64) Run {
		return Run{Report: report.Report{RequestsPerSecond: r, Complete: calls, Rpcbed: &report.Extra{}},
			ClientCPU: cliCPU, ServerCPU: srvCPU, ServerN: calls, ServerKnown: true, Wall: 1}
	}
	e.Runs = map[GTKey][]Run{
		{"grpc", 50}:    {run(1100, 0.99, 0.6, 1100), run(1110, 0.99, 0.6, 1110), run(1105, 0.99, 0.6, 1105)},
		{"thrift", 50}:  {run(1000, 0.75, 0.5, 1000), run(1001, 0.76, 0.5, 1001), run(1002, 0.75, 0.5, 1002)},
		{"grpc", 800}:   {run(900, 0.99, 0.9, 900), run(1200, 0.99, 0.9, 1200), run(1000, 0.99, 0.9, 1000)},
		{"thrift", 800}: {run(1000, 0.97, 0.9, 1000), run(1000, 0.97, 0.9, 1000), run(1000, 0.97, 0.9, 1000)},
	}
	got := map[string]string{}
	var cpu results.Finding
	for _, f := range e.Judge(Setup{}).Findings {
		if _, dup := got[f.Rule]; dup {
			t.Errorf("%s: two findings; want one verdict per claim", f.Rule)
		}
		got[f.Rule] = f.Holds
		if f.Rule == "grpc-thrift-server-cpu" {
			cpu = f
		}
	}
	if !strings.Contains(cpu.Detail, "Supporting figure, the busy fraction") {
		t.Errorf("grpc-thrift-server-cpu detail %q; want the busy fraction as a supporting figure", cpu.Detail)
	}
	if len(got) != 4 {
		t.Errorf("%d findings %v; want 4 (one per claim)", len(got), got)
	}
	want := map[string]string{
		"grpc-thrift-throughput-c50":  results.Yes,
		"grpc-thrift-throughput-c800": results.NotDistinguished,
		"grpc-thrift-server-cpu":      results.Yes, // per call 900 / 750 µs: +20 %; busy 0.99 / 0.75 a supporting figure
		"grpc-thrift-resources-flat":  results.No,  // thrift's server 75 % -> 97 % busy: +29 %, beyond ±25 %
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q; want %q", k, got[k], v)
		}
	}
}

// The precision loop's needs: the inconclusive throughput claim at c=800 asks
// for gRPC and Thrift there, nothing else; with more rounds judged at the
// stricter confidence (Looks) the intervals only widen.
func TestUndecidedGRPCThrift(t *testing.T) {
	e := &GRPCThrift{}
	if err := e.Read(published); err != nil {
		t.Fatal(err)
	}
	run := func(r float64) Run {
		return Run{Report: report.Report{RequestsPerSecond: r, Complete: int64(r), Rpcbed: &report.Extra{}},
			ClientCPU: 0.5, ServerCPU: 0.9, ServerN: int64(r), ServerKnown: true, Wall: 1}
	}
	e.Runs = map[GTKey][]Run{
		{"grpc", 50}: {run(1100), run(1110), run(1105)}, {"thrift", 50}: {run(1000), run(1001), run(1002)},
		{"grpc", 800}: {run(900), run(1200), run(1000)}, {"thrift", 800}: {run(1000), run(1000), run(1000)},
	}
	var got []Need
	for _, n := range e.Undecided() {
		if strings.HasPrefix(n.Rule, "grpc-thrift-throughput") {
			got = append(got, n)
		}
	}
	if len(got) != 1 || got[0].Rule != "grpc-thrift-throughput-c800" || got[0].Level != 800 || strings.Join(got[0].Alts, ",") != "grpc,thrift" {
		t.Errorf("throughput needs %+v; want grpc and thrift at 800 for grpc-thrift-throughput-c800 alone", got)
	}
	base := Margin(figs(e.Runs[GTKey{"grpc", 50}], rps), figs(e.Runs[GTKey{"thrift", 50}], rps))
	e.Looks = 8
	strict := Margin(figsAt(e.Runs[GTKey{"grpc", 50}], rps, e.Confidence()), figsAt(e.Runs[GTKey{"thrift", 50}], rps, e.Confidence()))
	if e.Confidence() <= 0.99 || !(strict.Lo < base.Lo && strict.Hi > base.Hi) {
		t.Errorf("at %d looks: confidence %.4f, margin %s against %s at 95 %%; want above 99 %% and wider", e.Looks, e.Confidence(), strict.Show("%", 1), base.Show("%", 1))
	}
}

func TestJudgeJava(t *testing.T) {
	e := &Java2015{}
	if err := e.Read(published); err != nil {
		t.Fatal(err)
	}
	e.Runs, e.First = map[JKey][]Run{}, map[string]Run{}
	tps := func(v float64) []Run {
		return []Run{{Report: report.Report{RequestsPerSecond: v}}, {Report: report.Report{RequestsPerSecond: v * 1.02}}}
	}
	// Thrift beats Ice everywhere, its lead over Ice shrinking: Ice never leads.
	for i, c := range e.Levels {
		e.Runs[JKey{"ice", c}] = tps(1000 + 500*float64(i))
		e.Runs[JKey{"thrift", c}] = tps(5000)
		e.Runs[JKey{"dubbo", c}] = tps(400)
		e.Runs[JKey{"grpc", c}] = tps(300)
	}
	got := map[string]string{}
	for _, f := range e.Judge(Setup{}).Findings {
		got[f.Rule] = f.Holds
	}
	for k, v := range map[string]string{
		"java-ice-leads": results.No, "java-ice-over-thrift": results.No, "java-thrift-second-grpc-last": results.No,
		"java-ice-vs-avro": results.NotMeasured,
	} {
		if got[k] != v {
			t.Errorf("%s: got %q; want %q", k, got[k], v)
		}
	}
	// Ice leads none of them: the lead cannot grow, whatever the ratios do.
	for _, c := range e.Levels {
		e.Runs[JKey{"dubbo", c}] = tps(9000)
		e.Runs[JKey{"grpc", c}] = tps(9000)
	}
	for _, f := range e.Judge(Setup{}).Findings {
		if f.Rule == "java-ice-lead-grows" && f.Holds != results.No {
			t.Errorf("lead grows with Ice never leading: got %q; want no", f.Holds)
		}
	}
}

// The JIT on the record: the rounds after the prime and the repeats flagged
// jit-compiling are stated in the set-up, with their figures.
func TestJudgeJavaJIT(t *testing.T) {
	e := &Java2015{}
	if err := e.Read(published); err != nil {
		t.Fatal(err)
	}
	e.Runs, e.First = map[JKey][]Run{}, map[string]Run{}
	for _, c := range e.Levels {
		for _, fw := range JavaFrameworks {
			e.Runs[JKey{fw, c}] = []Run{{Report: report.Report{RequestsPerSecond: 1000}}, {Report: report.Report{RequestsPerSecond: 1000}}}
		}
	}
	e.Runs[JKey{"dubbo", 1}][1].Flags = []string{results.FlagJIT}
	e.Rest = map[string]JITRest{
		"ice":   {Rounds: 2, Seconds: 11.5, ClientMs: 40, Window: 5, ServerMs: 10, ServerKnown: true, AtRest: true},
		"dubbo": {Rounds: 4, Seconds: 21, ClientMs: 900, Window: 5, ServerKnown: false},
	}
	setup := strings.Join(e.Judge(Setup{}).Setup, "\n")
	for _, want := range []string{
		"ice 2 rounds, 11.5 s, last round client 40 ms, server 10 ms of 5.0 s measured (at rest)",
		"dubbo 4 rounds, 21.0 s, last round client 900 ms of 5.0 s measured (not at rest)",
		"(flagged jit-compiling): 1 of 40 (dubbo c=1 1).",
	} {
		if !strings.Contains(setup, want) {
			t.Errorf("set-up lacks %q:\n%s", want, setup)
		}
	}
}

func TestJudgeGrowth(t *testing.T) {
	e := &Growth{}
	if err := e.Read(published); err != nil {
		t.Fatal(err)
	}
	e.Ms = map[GKey][]float64{}
	for _, n := range e.Items {
		e.Ms[GKey{"go-grpc", n}] = []float64{100, 101, 102}
		e.Ms[GKey{"php-http", n}] = []float64{150, 151, 152}
		e.Ms[GKey{"php-grpc", n}] = []float64{200, 201, 202}
		e.Ms[GKey{"php-pure-grpc", n}] = []float64{600, 601, 602}
	}
	e.Ms[GKey{"go-grpc", 200}] = []float64{110, 111, 112}
	e.Ms[GKey{"php-grpc", 200}] = []float64{300, 301, 302}
	e.Ms[GKey{"php-pure-grpc", 200}] = []float64{1100, 1101, 1102}
	e.Ms[GKey{"php-http", 200}] = []float64{250, 251, 252}
	got := map[string]results.Finding{}
	for _, f := range e.Judge(Setup{}).Findings {
		got[f.Rule] = f
	}
	if f := got["php-go-order"]; f.Holds != results.Yes {
		t.Errorf("order: got %q (%s); want yes", f.Holds, f.Detail)
	}
	// Growth from 2 to 200 items: pure +500, C +100, Go +10: (500-100)/(500-10) = 82 %.
	if f := got["php-message-objects"]; f.Holds != results.Yes || !strings.HasPrefix(f.Measured, "82%") {
		t.Errorf("message objects: got %q measured %q; want yes at 80%%", f.Holds, f.Measured)
	}
	if f := got["php-message-objects"]; !strings.Contains(f.Reason, "pure-PHP protobuf 601.0") {
		t.Errorf("reason %q: want the runtimes side by side", f.Reason)
	}
	// One size's order inside the noise: no longer yes.
	e.Ms[GKey{"php-http", 2}] = []float64{90, 150, 210}
	for _, f := range e.Judge(Setup{}).Findings {
		if f.Rule == "php-go-order" && f.Holds != results.Partly {
			t.Errorf("order with one size inside the noise: got %q; want partly", f.Holds)
		}
	}
}

// The published files shipped in results/published read as the experiments expect.
func TestPublishedFiles(t *testing.T) {
	for _, e := range []interface{ Read(string) error }{&GRPCThrift{}, &Growth{}, &Java2015{}} {
		if err := e.Read(published); err != nil {
			t.Errorf("%T: %v", e, err)
		}
	}
	if err := (&Growth{}).Read(t.TempDir()); err == nil {
		t.Error("read of an empty directory: got no error; want one")
	}
}

func TestReproductionMarkdown(t *testing.T) {
	var b bytes.Buffer
	r := Rule{Name: "x-wins", Claim: "it wins", Published: "+5 %", Band: ruleThroughput, Prec: 1}
	render.ReproductionMarkdown(&b, []results.Section{
		{Name: "x", Setup: []string{"one"}, Scaled: "one core each", Table: [][]string{{"a", "b|c"}, {"1", "2"}},
			Findings: []results.Finding{r.Verdict(Figure{Median: -3, Lo: -4, Hi: -2, Known: true}, "it lost", "the server core saturated")}},
		{Name: "y", Err: "server did not start"},
	})
	for _, want := range []string{
		"| experiment | claim | published | measured (median [spread]) | tolerance | verdict | measured reason |",
		"| x | it wins | +5 % | -3.0% [-4.0..-2.0] | yes 0..22%",
		"| **no** | the server core saturated |",
		"| y | (not run) |", "**How this was scaled to this machine.** one core each",
		"| a | b\\|c |", "|---|---|", "(rule `x-wins`) — holds here: **no**",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in:\n%s", want, b.String())
		}
	}
}

func TestFailuresSetup(t *testing.T) {
	if got := (Failures{"x-c800-r2: 587 of 4656 calls failed"}).Setup(); len(got) != 1 || !strings.Contains(got[0], "587 of 4656") {
		t.Errorf("setup: got %q; want the failed run named", got)
	}
	if got := (Failures{}).Setup(); got != nil {
		t.Errorf("no failures: got %q; want nil", got)
	}
}

// Across a link: the set-up says where the server and the client ran, each
// cell's reason carries the link's delayers' CPU, and delayers past their
// ceiling are named as the limit (link-bound), not the server or the client.
func TestJudgeGRPCThriftAcrossLink(t *testing.T) {
	e := &GRPCThrift{}
	if err := e.Read(published); err != nil {
		t.Fatal(err)
	}
	run := func(link float64, known bool) Run {
		return Run{Report: report.Report{RequestsPerSecond: 1000, Complete: 1000, Rpcbed: &report.Extra{}},
			ClientCPU: 0.5, ServerCPU: 0.5, ServerN: 1000, ServerKnown: true, Wall: 1, LinkCPU: link, LinkKnown: known,
			MachineBusy: 1 + link + 0.1, MachineKnown: true}
	}
	for _, tc := range []struct {
		name  string
		link  float64
		known bool
		want  []string
		never []string
	}{
		{"loopback", 0, false, []string{"neither core saturated"}, []string{"delayers", "whole machine"}},
		{"lan", 0.3, true, []string{"the link's delayers 0.30 cores (median; 0.30-0.30 over the runs), the whole machine 1.40 cores", "neither core saturated"}, []string{"link-bound"}},
		{"machine full", 0.75, true, []string{"the whole machine 1.85 cores", "the machine's 2 cores were saturated"}, []string{"neither core saturated", "link-bound"}},
		{"busy delayers", 0.9, true, []string{"the link's delayers 0.90 cores", "past their ceiling (link-bound)"}, []string{"neither core saturated"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.Runs = map[GTKey][]Run{}
			for _, k := range []GTKey{{"grpc", 50}, {"thrift", 50}, {"grpc", 800}, {"thrift", 800}} {
				e.Runs[k] = []Run{run(tc.link, tc.known), run(tc.link, tc.known), run(tc.link, tc.known)}
			}
			got := e.bottleneck(50, Setup{MachineCores: 2})
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("bottleneck %q; want %q in it", got, w)
				}
			}
			for _, w := range tc.never {
				if strings.Contains(got, w) {
					t.Errorf("bottleneck %q; want no %q in it", got, w)
				}
			}
		})
	}
	here := func(s Setup) string {
		for _, l := range e.Judge(s).Setup {
			if strings.HasPrefix(l, "Here:") {
				return l
			}
		}
		return ""
	}
	if h := here(Setup{}); !strings.Contains(h, "over 127.0.0.1") {
		t.Errorf("one host: %q; want over 127.0.0.1", h)
	}
	if h := here(Setup{Across: "the lan link"}); !strings.Contains(h, "across the lan link") || strings.Contains(h, "127.0.0.1") {
		t.Errorf("across a link: %q; want across the lan link, no 127.0.0.1", h)
	}
}
