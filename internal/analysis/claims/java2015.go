package claims

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/results"
)

// JavaFrameworks in the published table's order.
var JavaFrameworks = []string{"ice", "dubbo", "thrift", "grpc"}

// javaSpreadGoal is the largest spread (max-min over median of the repeats'
// tps) a row may have to count as steady.
const javaSpreadGoal = 0.10

// Java2015 is java-rpc-2015: the Java client against the Java baselines,
// ice/dubbo/thrift/grpc at 1..100 clients, tps at steady state. Read fills
// the published tps and levels; the run fills the rest.
type Java2015 struct {
	Pub     map[JKey]float64
	Levels  []int
	Dur     time.Duration
	Repeats int
	Runs    map[JKey][]Run
	First   map[string]Run // each framework's first second on a fresh worker and server
	// Quiet: per framework, how long its server went on using CPU with no calls
	// after the prime (its JIT's queue, its collector) before the rows began.
	Quiet map[string]QuietAfter
	// Rest: per framework, how the rounds after the prime went (JIT at rest or not).
	Rest     map[string]JITRest
	Versions map[string]string
	Failed   Failures
	Settings JavaSettings
}

// JavaSettings are the run's settings that the set-up lines name.
type JavaSettings struct {
	// Prime is each un-recorded prime run's length; WarmupMax bounds each
	// row's -warmup auto.
	Prime, WarmupMax string
	// PrimeMax bounds the rounds after the prime.
	PrimeMax time.Duration
	// A server is quiet when it uses under QuietBusy of a core over QuietStep
	// with no calls.
	QuietBusy float64
	QuietStep time.Duration
}

// JKey is one row of java-rpc-2015: a framework at a concurrency.
type JKey struct {
	FW string
	C  int
}

// The rules of java-rpc-2015: Ice's published lead over each framework, the
// published range widened by about a fifth either side; partly for any lead
// up to twice the published top.
var javaLead = map[string]struct {
	published string
	band      Band
}{
	"thrift": {"1.3-1.6x", Band{Yes: [2]float64{1.05, 1.9}, Partly: [2]float64{1, 3.2}, Unit: "x", Differs: at(1)}},
	"dubbo":  {"3.2-4.4x", Band{Yes: [2]float64{2.6, 5.3}, Partly: [2]float64{1, 8.8}, Unit: "x", Differs: at(1)}},
	"grpc":   {"4.5-6x", Band{Yes: [2]float64{3.6, 7.2}, Partly: [2]float64{1, 12}, Unit: "x", Differs: at(1)}},
}

// ruleLeadGrows: the share of steps between published concurrencies (over all
// three rivals) at which Ice's lead rose beyond the spread, its range up to the
// share that rose or stayed inside the spread (so more than a quarter of steps
// inside the spread is not distinguishable); never yes unless Ice leads.
var ruleLeadGrows = Band{Yes: [2]float64{75, 100}, Partly: [2]float64{40, 100}, Unit: "% of steps"}

// Read reads the published tps (java-rpc-2015_tps.csv).
func (e *Java2015) Read(published string) error {
	rows, err := readCSV(filepath.Join(published, "java-rpc-2015_tps.csv"))
	if err != nil {
		return err
	}
	e.Pub = map[JKey]float64{}
	for _, r := range rows {
		c, err1 := strconv.Atoi(r["clients"])
		v, err2 := strconv.ParseFloat(r["tps"], 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("java-rpc-2015_tps.csv: row %v: want integer clients and a tps", r)
		}
		e.Pub[JKey{r["framework"], c}] = v
		if !containsInt(e.Levels, c) {
			e.Levels = append(e.Levels, c)
		}
	}
	for _, c := range e.Levels {
		for _, fw := range JavaFrameworks {
			if _, ok := e.Pub[JKey{fw, c}]; !ok {
				return fmt.Errorf("java-rpc-2015_tps.csv: no %s at %d clients", fw, c)
			}
		}
	}
	return nil
}

// JITRest is how the rounds after the prime went: how many, how long, and the
// last round's JIT compile time per side over its windows.
type JITRest struct {
	Rounds           int
	Seconds          float64
	ClientMs, Window float64
	ServerMs         float64
	ServerKnown      bool
	AtRest           bool
}

// QuietAfter is how a server came to rest after the prime: after how long, and
// its busy fraction over the first step (the work it went on with, no call asked).
type QuietAfter struct {
	After     time.Duration
	FirstBusy float64
	Quiet     bool // false: still busy at the wait's bound, or no /stats to tell
}

func (e *Java2015) tps(fw string, c int) Figure { return figs(e.Runs[JKey{fw, c}], rps) }

// Judge grades every published claim from the runs.
func (e *Java2015) Judge(o Setup) results.Section {
	sec := results.Section{
		Setup: []string{
			"Published: Java 8 clients and servers, Ice 3.6, dubbox 2.8.4, Thrift 0.9.2, gRPC-java 0.7.1; 300 000 calls per client.",
			fmt.Sprintf("Here: java-client in worker mode (one JVM per framework across all its rows) against the Java baselines (`java-client serve -proto P`), today's libraries, server pinned to CPU %s, client to CPU %s.", orAny(o.ServerCPUSet), orAny(o.ClientCPUSet)),
			fmt.Sprintf("Each row: DataType at the published concurrency, after un-recorded "+e.Settings.Prime+" runs at each concurrency per framework (both JVMs compile their hot paths under every concurrency's profile), `-warmup auto` until throughput settles (at most "+e.Settings.WarmupMax+"), then %v measured; %d repeats interleaved across the concurrencies; tps = calls / measured seconds. A row whose repeats spread by %.0f %% or more is marked.", e.Dur, e.Repeats, javaSpreadGoal*100),
			"JIT warm-up: each framework's first run is one second from a cold JVM on both sides (no warm-up), set against its steady c=1 rows.",
		},
		Scaled: fmt.Sprintf("The published runs made 300 000 calls per client (up to 30 M calls, 36 min per row at c=100); at this machine's rates that would take hours, so each row is time-bounded instead: a settled warm-up, then %v measured, %d times. Client and server get one core each; the published machines are not described beyond Java 8.", e.Dur, e.Repeats),
	}
	sec.Setup = append(sec.Setup, e.Failed.Setup()...)
	var vs []string
	for _, k := range []string{"java", "ice", "dubbo", "thrift", "grpc"} {
		if v, ok := e.Versions[k]; ok {
			vs = append(vs, k+" "+v)
		}
	}
	if len(vs) > 0 {
		sec.Setup = append(sec.Setup, "Versions measured: "+strings.Join(vs, ", ")+".")
	}
	sec.Table = [][]string{{"clients", "framework", "published tps", "measured tps", "spread", "published ice / fw", "measured ice / fw", "server busy", "client busy", "server CPU µs/call"}}
	steady, rows := 0, 0
	for _, c := range e.Levels {
		for _, fw := range JavaFrameworks {
			t := e.tps(fw, c)
			spread := "-"
			if t.Known && t.Median > 0 {
				sp := (t.Hi - t.Lo) / t.Median
				spread = fmt.Sprintf("%.1f %%", sp*100)
				rows++
				if sp < javaSpreadGoal {
					steady++
				} else {
					spread += " (noisy)"
				}
			}
			rs := e.Runs[JKey{fw, c}]
			sec.Table = append(sec.Table, []string{strconv.Itoa(c), fw, f0(e.Pub[JKey{fw, c}]), t.Show("", 0), spread,
				ratio(e.Pub[JKey{"ice", c}], e.Pub[JKey{fw, c}]), Ratio(e.tps("ice", c), t).Show("x", 2),
				pctOf(busy(rs, srvBusy)), pctOf(busy(rs, cliBusy)), figs(rs, srvPerCall).Show("", 1)})
		}
	}
	sec.Setup = append(sec.Setup, fmt.Sprintf("Rows with a spread under %.0f %%: %d of %d.", javaSpreadGoal*100, steady, rows))
	jit, all := 0, 0
	var jitRows []string
	for _, c := range e.Levels {
		for _, fw := range JavaFrameworks {
			n := 0
			for _, m := range e.Runs[JKey{fw, c}] {
				all++
				if slices.Contains(m.Flags, results.FlagJIT) {
					n++
				}
			}
			if n > 0 {
				jit += n
				jitRows = append(jitRows, fmt.Sprintf("%s c=%d %d", fw, c, n))
			}
		}
	}
	if all > 0 {
		t := fmt.Sprintf("Repeats in which a JVM's JIT compiled for more than %.0f %% of the window (flagged %s): %d of %d", results.JITQuiet*100, results.FlagJIT, jit, all)
		if len(jitRows) > 0 {
			t += " (" + strings.Join(jitRows, ", ") + ")"
		}
		sec.Setup = append(sec.Setup, t+".")
	}
	if len(e.Rest) > 0 {
		var parts []string
		for _, fw := range JavaFrameworks {
			r, ok := e.Rest[fw]
			if !ok {
				continue
			}
			t := fmt.Sprintf("%s %d rounds, %.1f s, last round client %.0f ms", fw, r.Rounds, r.Seconds, r.ClientMs)
			if r.ServerKnown {
				t += fmt.Sprintf(", server %.0f ms", r.ServerMs)
			}
			t += fmt.Sprintf(" of %.1f s measured", r.Window)
			if r.AtRest {
				t += " (at rest)"
			} else {
				t += " (not at rest)"
			}
			parts = append(parts, t)
		}
		sec.Setup = append(sec.Setup, fmt.Sprintf("After the prime, rounds of 1 s runs at every concurrency went on until both JVMs' JIT compiled for at most %.0f %% of a round (java-client's \"JIT compile:\", the server's /stats), at most %v: %s.",
			results.JITQuiet*100, e.Settings.PrimeMax, strings.Join(parts, "; ")))
	}
	if len(e.Quiet) > 0 {
		var parts []string
		for _, fw := range JavaFrameworks {
			q, ok := e.Quiet[fw]
			switch {
			case !ok:
			case q.Quiet:
				parts = append(parts, fmt.Sprintf("%s %.1f s (%.0f %% busy in the first %v)", fw, q.After.Seconds(), q.FirstBusy*100, e.Settings.QuietStep))
			default:
				parts = append(parts, fmt.Sprintf("%s still above %.0f %% busy after %.1f s", fw, e.Settings.QuietBusy*100, q.After.Seconds()))
			}
		}
		if len(parts) > 0 {
			sec.Setup = append(sec.Setup, fmt.Sprintf("After the prime, the rows waited until the server used under %.0f %% of a core with no calls (its /stats): %s.",
				e.Settings.QuietBusy*100, strings.Join(parts, ", ")))
		}
	}

	sec.Findings = append(sec.Findings, e.judgeOrder("java-ice-leads", "Ice leads at every concurrency", "ice first at all 5 concurrencies",
		func(c int) (bool, bool) {
			ice := e.tps("ice", c)
			all, any := true, false
			for _, fw := range JavaFrameworks[1:] {
				switch Order(e.tps(fw, c), ice) {
				case 1:
				case -1:
					any = true
					all = false
				default:
					all = false
				}
			}
			return all, any
		}))
	for _, fw := range []string{"thrift", "dubbo", "grpc"} {
		sec.Findings = append(sec.Findings, e.judgeLead(fw))
	}
	sec.Findings = append(sec.Findings, e.judgeOrder("java-thrift-second-grpc-last", "Thrift is second and gRPC last", "ice > thrift > dubbo > grpc at all 5 concurrencies",
		func(c int) (bool, bool) {
			ice, th, du, gr := e.tps("ice", c), e.tps("thrift", c), e.tps("dubbo", c), e.tps("grpc", c)
			o1, o2, o3 := Order(th, ice), Order(du, th), Order(gr, du)
			return o1 == 1 && o2 == 1 && o3 == 1, o1 == -1 || o2 == -1 || o3 == -1
		}))
	sec.Findings = append(sec.Findings, e.judgeGrows(), results.Finding{
		Rule: "java-ice-vs-avro", Claim: "a second tester measured Ice at about 25 000 tps, about twice Avro",
		Published: "Ice ≈ 25 000 tps ≈ 2 x Avro", Measured: results.NotMeasured, Tolerance: "-", Holds: results.NotMeasured,
		Detail: "The test bed has no Avro client or server, so this claim is not measured."})
	return sec
}

// judgeOrder grades an order claim per concurrency: held reports the order held
// beyond the spread, reversed that some pair is reversed beyond it.
func (e *Java2015) judgeOrder(rule, claim, published string, at func(c int) (held, reversed bool)) results.Finding {
	var h, fl, un, miss int
	var per []string
	for _, c := range e.Levels {
		held, rev := at(c)
		var order []string
		known := true
		for _, fw := range JavaFrameworks {
			order = append(order, fw+" "+e.tps(fw, c).Show("", 0))
			known = known && e.tps(fw, c).Known
		}
		state := "inside the spread"
		switch {
		case !known:
			miss++
			state = "not measured"
		case held:
			h++
			state = "held"
		case rev:
			fl++
			state = "reversed"
		default:
			un++
		}
		per = append(per, fmt.Sprintf("%d clients %s (%s tps)", c, state, strings.Join(order, ", ")))
	}
	return results.Finding{Rule: rule, Claim: claim, Published: published, Tolerance: LevelsBand,
		Measured: fmt.Sprintf("held at %d of %d concurrencies", h, len(e.Levels)), Holds: Levels(h, fl, un, miss),
		Detail: strings.Join(per, "; ") + ".", Reason: e.reason(JavaFrameworks...)}
}

// judgeLead: Ice's lead over fw, the median over concurrencies of the per-level
// ratio, its range the extremes of every level's range.
func (e *Java2015) judgeLead(fw string) results.Finding {
	l := javaLead[fw]
	var med []float64
	rng := Figure{Known: true}
	var per []string
	for i, c := range e.Levels {
		r := Ratio(e.tps("ice", c), e.tps(fw, c))
		if !r.Known {
			rng = Figure{}
			break
		}
		med = append(med, r.Median)
		if i == 0 || r.Lo < rng.Lo {
			rng.Lo = r.Lo
		}
		if i == 0 || r.Hi > rng.Hi {
			rng.Hi = r.Hi
		}
		per = append(per, fmt.Sprintf("%.2fx at %d", r.Median, c))
	}
	if rng.Known {
		rng.Median = Fig(med).Median
	}
	rule := Rule{Name: "java-ice-over-" + fw, Claim: "Ice leads " + fw + " by " + l.published + " (median over the concurrencies)", Published: l.published, Band: l.band, Prec: 2}
	return rule.Verdict(rng, "Measured ice / "+fw+": "+strings.Join(per, ", ")+".", e.reason("ice", fw))
}

// judgeGrows: Ice's lead grows with concurrency, judged on every step between
// published concurrencies for every rival, each step beyond the spread or not;
// no when Ice leads nowhere.
func (e *Java2015) judgeGrows() results.Finding {
	r := Rule{Name: "java-ice-lead-grows", Claim: "Ice's lead grows with concurrency", Published: "1.4x -> 1.65x over Thrift from 1 to 100 clients", Band: ruleLeadGrows, Prec: 0}
	var rose, fell, flat, leads int
	missing := false
	var per []string
	for _, fw := range []string{"thrift", "dubbo", "grpc"} {
		var rs []string
		for i, c := range e.Levels {
			cur := Ratio(e.tps("ice", c), e.tps(fw, c))
			rs = append(rs, cur.Show("x", 2))
			missing = missing || !cur.Known
			if cur.Known && cur.Lo > 1 {
				leads++
			}
			if i == 0 {
				continue
			}
			prev := Ratio(e.tps("ice", e.Levels[i-1]), e.tps(fw, e.Levels[i-1]))
			switch Order(prev, cur) {
			case 1:
				rose++
			case -1:
				fell++
			default:
				flat++
			}
		}
		per = append(per, "ice/"+fw+" "+strings.Join(rs, " -> "))
	}
	steps := rose + fell + flat
	var f Figure
	if steps > 0 && !missing {
		f = Figure{Median: float64(rose) / float64(steps) * 100, Lo: float64(rose) / float64(steps) * 100, Hi: float64(rose+flat) / float64(steps) * 100, Known: true}
	}
	out := r.Verdict(f, fmt.Sprintf("Over %d steps: %d rose, %d fell, %d inside the spread. %s.", steps, rose, fell, flat, strings.Join(per, "; ")), e.reason(JavaFrameworks...))
	if leads == 0 && out.Holds != results.NotMeasured {
		out.Holds = results.No
		out.Detail = "Ice leads at no concurrency beyond the spread, so there is no lead to grow. " + out.Detail
	}
	return out
}

// reason is the measured account of the Java rows: JIT warm-up (the first
// second against steady state) and the saturated core at the highest
// concurrency (busy fractions), per framework.
func (e *Java2015) reason(fws ...string) string {
	var s []string
	lo, hi := e.Levels[0], e.Levels[len(e.Levels)-1]
	for _, fw := range fws {
		first, ok := e.First[fw]
		steady := e.tps(fw, lo)
		if !ok || !steady.Known {
			continue
		}
		part := fmt.Sprintf("%s: first second from cold %.0f tps, steady %s at c=%d (JIT warm-up", fw, rps(first), steady.Show("", 0), lo)
		if first.ClientJITMs != nil {
			part += fmt.Sprintf(": the client's JIT compiled %.0f ms in that second", *first.ClientJITMs)
			if first.ServerJITMs != nil {
				part += fmt.Sprintf(", the server's %.0f ms", *first.ServerJITMs)
			}
		}
		part += ")"
		rs := e.Runs[JKey{fw, hi}]
		if sb, cb := busy(rs, srvBusy), busy(rs, cliBusy); sb.Known && cb.Known {
			side := "neither core saturated"
			switch {
			case sb.Median >= results.BoundBusy && sb.Median >= cb.Median:
				side = "the server core saturated"
			case cb.Median >= results.BoundBusy:
				side = "the client core saturated"
			}
			part += fmt.Sprintf("; at c=%d server %s busy, client %s (busy fractions): %s", hi, pctOf(sb), pctOf(cb), side)
			if pc := figs(rs, srvPerCall); pc.Known {
				part += fmt.Sprintf(", server %s µs per call", pc.Show("", 1))
			}
		}
		s = append(s, part)
	}
	if len(s) == 0 {
		return ""
	}
	return strings.Join(s, ". ") + "."
}
