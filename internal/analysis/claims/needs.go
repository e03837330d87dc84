package claims

import (
	"slices"
	"strconv"
	"strings"

	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// Need is one level where more paired rounds could decide a claim that is still
// inconclusive: a round there runs every alternative in Alts once (reproduce's
// precision loop), so the claim's interval narrows where it straddles its band.
type Need struct {
	Rule  string
	Level int
	Alts  []string
}

// Undecided are go-grpc-thrift-aerospike's needs: every inconclusive claim's
// levels (and every "partly" whose interval straddles the yes band's edge,
// Finding.Sharpen), gRPC and Thrift at each (a throughput claim at its level, server CPU
// at the lower level, "resources flat" at both).
func (e *GRPCThrift) Undecided() []Need {
	if len(e.Levels) < 2 {
		return nil
	}
	lo, hi := e.Levels[0], e.Levels[len(e.Levels)-1]
	alts := []string{"grpc", "thrift"}
	var out []Need
	for _, f := range e.Judge(Setup{}).Findings {
		if f.Holds != results.NotDistinguished && !f.Sharpen {
			continue
		}
		var levels []int
		switch {
		case f.Rule == "grpc-thrift-server-cpu":
			levels = []int{lo}
		case f.Rule == "grpc-thrift-resources-flat":
			levels = []int{lo, hi}
		case strings.HasPrefix(f.Rule, "grpc-thrift-throughput-c"):
			for _, c := range e.Levels {
				if f.Rule == "grpc-thrift-throughput-c"+strconv.Itoa(c) {
					levels = []int{c}
				}
			}
		}
		for _, c := range levels {
			out = append(out, Need{Rule: f.Rule, Level: c, Alts: alts})
		}
	}
	return out
}

// Undecided are java-rpc-2015's needs, from its inconclusive claims (a
// "partly" across the yes band's edge is not sharpened here: a round costs
// every framework at a level, 16 s, and in the measured runs the budget went
// to the claim still inconclusive; sharpening the leads also left more of
// them inconclusive after the last round, TestRefineDecides):
//   - Ice's lead over a rival (pooled over the levels): the levels whose own
//     interval straddles an edge of the band or 1, ice and the rival; every
//     level when none does (the pooled interval narrows with each);
//   - an order claim: the levels whose order is inside the spread, all four;
//   - the lead's growth: both levels of every step inside the noise, ice and
//     that rival.
func (e *Java2015) Undecided() []Need {
	defer e.judging()()
	var out []Need
	n := e.tpsNoise()
	for _, f := range e.findings() {
		if f.Holds != results.NotDistinguished {
			continue
		}
		switch {
		case strings.HasPrefix(f.Rule, "java-ice-over-"):
			fw := strings.TrimPrefix(f.Rule, "java-ice-over-")
			out = append(out, e.leadNeeds(f.Rule, fw, n)...)
		case f.Rule == "java-ice-lead-grows":
			out = append(out, e.growNeeds(f.Rule, n)...)
		case f.Rule == "java-ice-leads" || f.Rule == "java-thrift-second-grpc-last":
			for _, c := range e.Levels {
				if e.orderUnclear(c) {
					out = append(out, Need{Rule: f.Rule, Level: c, Alts: JavaFrameworks})
				}
			}
		}
	}
	return out
}

// leadNeeds are the levels of Ice's lead over fw whose interval straddles an
// edge of the rule's band (or 1); all levels when none does.
func (e *Java2015) leadNeeds(rule, fw string, n stats.Noise) []Need {
	b := javaLead[fw].band
	edges := []float64{b.Yes[0], b.Yes[1], b.Partly[0], b.Partly[1], *b.Differs}
	var out, all []Need
	for _, c := range e.Levels {
		nd := Need{Rule: rule, Level: c, Alts: []string{"ice", fw}}
		all = append(all, nd)
		lr, ok := e.leadAt(fw, c, n)
		if !ok {
			continue
		}
		iv := lr.Interval()
		if slices.ContainsFunc(edges, func(x float64) bool { return iv.Low <= x && x <= iv.High }) {
			out = append(out, nd)
		}
	}
	if len(out) == 0 {
		return all
	}
	return out
}

// growNeeds are both levels of every step of Ice's lead that changed inside
// the noise: at each such level, ice and every rival with such a step there.
func (e *Java2015) growNeeds(rule string, n stats.Noise) []Need {
	at := map[int][]string{}
	for _, fw := range []string{"thrift", "dubbo", "grpc"} {
		for i := 1; i < len(e.Levels); i++ {
			a, okA := e.leadAt(fw, e.Levels[i-1], n)
			b, okB := e.leadAt(fw, e.Levels[i], n)
			if !okA || !okB || stepDecided(a, b) {
				continue
			}
			for _, c := range e.Levels[i-1 : i+1] {
				if len(at[c]) == 0 {
					at[c] = []string{"ice"}
				}
				if !slices.Contains(at[c], fw) {
					at[c] = append(at[c], fw)
				}
			}
		}
	}
	var out []Need
	for _, c := range e.Levels {
		if len(at[c]) > 0 {
			out = append(out, Need{Rule: rule, Level: c, Alts: at[c]})
		}
	}
	return out
}

// stepDecided: the lead's change from level a to b lies beyond its 95 %
// interval (rose or fell), as judgeGrows counts it.
func stepDecided(a, b stats.LogRatio) bool {
	step := stats.LogRatio{Est: b.Est - a.Est, Var: a.Var + b.Var, DF: min(a.DF, b.DF), Conf: b.Conf}.Interval()
	return step.Low > 1 || step.High < 1
}

// orderUnclear: at level c one of the pairs the order claims compare (ice
// over each rival; thrift over dubbo, dubbo over grpc) is inside the noise of
// their ratio (orderAt).
func (e *Java2015) orderUnclear(c int) bool {
	n := e.tpsNoise()
	for _, p := range [][2]string{{"thrift", "ice"}, {"dubbo", "ice"}, {"grpc", "ice"}, {"dubbo", "thrift"}, {"grpc", "dubbo"}} {
		if e.tps(p[0], c).Known && e.tps(p[1], c).Known && e.orderAt(p[0], p[1], c, n) == 0 {
			return true
		}
	}
	return false
}
