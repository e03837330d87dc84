package claims

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/results"
)

// leadRuns fills e with 3 repeats per row: ice at 10000 tps times lead[i] of
// thrift's at level i, the other rivals far behind, each repeat with noise sd.
func leadRuns(e *Java2015, lead []float64, sd float64, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 1))
	e.Runs = map[JKey][]Run{}
	base := map[string]float64{"ice": 10000, "dubbo": 3000, "grpc": 2000}
	for i, c := range e.Levels {
		for _, fw := range JavaFrameworks {
			v := base[fw]
			if fw == "thrift" {
				v = 10000 / lead[i]
			}
			for range 3 {
				e.Runs[JKey{fw, c}] = append(e.Runs[JKey{fw, c}], Run{Report: report.Report{RequestsPerSecond: v * math.Exp(sd*r.NormFloat64())}})
			}
		}
	}
}

// The aggregate lead is judged from the levels' ratios pooled with their
// intervals: where Thrift beats Ice at most levels by more than the noise,
// the pooled lead is "no" (the envelope of the levels' ranges said
// "inconclusive"), and the detail gives every level's interval; a lead
// inside the published band at every level is "yes".
func TestJudgeLeadPooled(t *testing.T) {
	e := &Java2015{}
	if err := e.Read(published); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		lead []float64
		want string
	}{
		{"thrift ahead at most levels", []float64{0.87, 0.79, 0.82, 0.95, 1.05}, results.No},
		{"ice 1.4x everywhere", []float64{1.4, 1.45, 1.5, 1.4, 1.55}, results.Yes},
		{"level to level", []float64{1.0, 1.0, 1.0, 1.0, 1.0}, results.NotDistinguished},
	} {
		leadRuns(e, tc.lead, 0.04, 7)
		f := e.judgeLead("thrift")
		if f.Holds != tc.want {
			t.Errorf("%s: %s (measured %s); want %s", tc.name, f.Holds, f.Measured, tc.want)
		}
		if !strings.Contains(f.Detail, "Per level: c=1 ") || strings.Count(f.Detail, "x [") < len(e.Levels) {
			t.Errorf("%s: detail %q; want every level's interval", tc.name, f.Detail)
		}
		// The envelope of the levels' ranges, the old way, for the first case.
		if tc.want == results.No {
			var lo, hi float64 = math.Inf(1), 0
			for _, c := range e.Levels {
				r := Ratio(Fig(values(e.Runs[JKey{"ice", c}])), Fig(values(e.Runs[JKey{"thrift", c}])))
				lo, hi = min(lo, r.Lo), max(hi, r.Hi)
			}
			if !(lo < 1 && hi > 1) {
				t.Errorf("envelope [%.2f..%.2f] excludes 1: the case shows nothing", lo, hi)
			}
		}
	}
}

func values(rs []Run) []float64 {
	var v []float64
	for _, m := range rs {
		v = append(v, rps(m))
	}
	return v
}

// The saturated client core is named once, with the busy fractions it rests on.
func TestSaturation(t *testing.T) {
	e := &Java2015{}
	if err := e.Read(published); err != nil {
		t.Fatal(err)
	}
	e.Runs = map[JKey][]Run{}
	for _, c := range e.Levels {
		for _, fw := range JavaFrameworks {
			cli := 0.99
			if c == 1 {
				cli = 0.5
			}
			for range 3 {
				e.Runs[JKey{fw, c}] = append(e.Runs[JKey{fw, c}], Run{Report: report.Report{RequestsPerSecond: 1000, Rpcbed: &report.Extra{}},
					Wall: 1, ClientCPU: cli, ServerCPU: 0.6, ServerKnown: true})
			}
		}
	}
	s := e.saturation()
	if !strings.Contains(s, "saturated at c=") || strings.Contains(s, "c=1,") || !strings.Contains(s, "99-99 %") {
		t.Errorf("saturation %q; want the levels above 1 named with client busy 99 %%", s)
	}
	if got := e.Judge(Setup{}).Cause; got != s {
		t.Errorf("Judge's cause %q; want the saturation line once", got)
	}
}

// An aggregate claim still inconclusive says, as its reason, at how many
// levels it held with each level's interval, and names the saturated client
// core as what the rows there compare; a decided one gives no such reason.
func TestUndecidedLeadReason(t *testing.T) {
	e := &Java2015{}
	if err := e.Read(published); err != nil {
		t.Fatal(err)
	}
	saturate := func() {
		for k, rs := range e.Runs {
			for i := range rs {
				cli := 0.99
				if k.C == 1 {
					cli = 0.5
				}
				rs[i].Report.Rpcbed, rs[i].Wall, rs[i].ClientCPU, rs[i].ServerCPU, rs[i].ServerKnown = &report.Extra{}, 1, cli, 0.6, true
			}
		}
	}
	leadRuns(e, []float64{1.0, 1.0, 1.0, 1.0, 1.0}, 0.04, 7)
	saturate()
	f := e.judgeLead("thrift")
	if f.Holds != results.NotDistinguished {
		t.Fatalf("level to level: %s; want %s", f.Holds, results.NotDistinguished)
	}
	for _, want := range []string{"Still inconclusive over the levels; ice ahead beyond the noise at ", " of 5 levels: c=1 ", "x [", "At c=5, 20, 50, 100 the Java client's core was saturated (client busy 99-99 %", "compare the frameworks' client stacks"} {
		if !strings.Contains(f.Reason, want) {
			t.Errorf("reason %q lacks %q", f.Reason, want)
		}
	}
	leadRuns(e, []float64{1.4, 1.45, 1.5, 1.4, 1.55}, 0.04, 7)
	saturate()
	if f := e.judgeLead("thrift"); f.Holds != results.Yes || f.Reason != "" {
		t.Errorf("ice 1.4x: %s, reason %q; want yes and no reason", f.Holds, f.Reason)
	}
}

// Undecided names, for an inconclusive lead, the levels whose interval
// straddles the band (ice and the rival at each), and nothing once decided.
func TestUndecidedNeeds(t *testing.T) {
	e := &Java2015{}
	if err := e.Read(published); err != nil {
		t.Fatal(err)
	}
	leadRuns(e, []float64{1.0, 1.0, 1.0, 1.0, 1.0}, 0.04, 7)
	var got []Need
	for _, n := range e.Undecided() {
		if n.Rule == "java-ice-over-thrift" {
			got = append(got, n)
		}
	}
	if len(got) == 0 {
		t.Fatal("no need for an inconclusive lead; want its levels")
	}
	for _, n := range got {
		if len(n.Alts) != 2 || n.Alts[0] != "ice" || n.Alts[1] != "thrift" {
			t.Errorf("need %+v; want ice and thrift", n)
		}
	}
	leadRuns(e, []float64{1.4, 1.45, 1.5, 1.4, 1.55}, 0.04, 7)
	for _, n := range e.Undecided() {
		if n.Rule == "java-ice-over-thrift" {
			t.Errorf("decided lead: need %+v; want none", n)
		}
	}
}
