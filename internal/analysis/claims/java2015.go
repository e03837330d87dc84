package claims

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/stats"
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
	// Looks is how many looks reproduce's precision loop may take at the
	// claims once it adds rounds (0 on the base repeats): the claims are then
	// judged at stats.LooksLevel(Looks) (Confidence).
	Looks int
	// noise is the rows' noise while one judgement lasts (judging).
	noise *stats.Noise
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

// tps is a row's tps: the median over its repeats with its in-run 95 %
// interval, the noise pooled over the experiment's rows (tpsNoise).
func (e *Java2015) tps(fw string, c int) Figure {
	var v []float64
	for _, m := range e.Runs[JKey{fw, c}] {
		v = append(v, rps(m))
	}
	f := Fig(v)
	if iv := e.tpsNoise().InRun(v); f.Known && iv.Valid() {
		f.Lo, f.Hi = iv.Low, iv.High
	}
	return f
}

// Judge grades every published claim from the runs: the set-up lines, the
// table of rows, the experiment's one measured cause, and the findings.
func (e *Java2015) Judge(o Setup) results.Section {
	defer e.judging()()
	sec := results.Section{Setup: e.setup(o), Table: e.table(), Cause: e.saturation(),
		Scaled: fmt.Sprintf("The published runs made 300 000 calls per client (up to 30 M calls, 36 min per row at c=100); at this machine's rates that would take hours, so each row is time-bounded instead: a settled warm-up, then %v measured, %d times. Client and server get one core each; the published machines are not described beyond Java 8.", e.Dur, e.Repeats)}
	sec.Findings = e.findings()
	return sec
}

// findings are the experiment's claims judged, in the write-up's order.
func (e *Java2015) findings() []results.Finding {
	var out []results.Finding
	n := e.tpsNoise()
	out = append(out, e.judgeOrder("java-ice-leads", "Ice leads at every concurrency", "ice first at all 5 concurrencies",
		func(c int) (bool, bool) {
			all, any := true, false
			for _, fw := range JavaFrameworks[1:] {
				switch e.orderAt(fw, "ice", c, n) {
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
		out = append(out, e.judgeLead(fw))
	}
	out = append(out, e.judgeOrder("java-thrift-second-grpc-last", "Thrift is second and gRPC last", "ice > thrift > dubbo > grpc at all 5 concurrencies",
		func(c int) (bool, bool) {
			o1, o2, o3 := e.orderAt("thrift", "ice", c, n), e.orderAt("dubbo", "thrift", c, n), e.orderAt("grpc", "dubbo", c, n)
			return o1 == 1 && o2 == 1 && o3 == 1, o1 == -1 || o2 == -1 || o3 == -1
		}))
	out = append(out, e.judgeGrows(), results.Finding{
		Rule: "java-ice-vs-avro", Claim: "a second tester measured Ice at about 25 000 tps, about twice Avro",
		Published: "Ice ≈ 25 000 tps ≈ 2 x Avro", Measured: results.NotMeasured, Tolerance: "-", Holds: results.NotMeasured,
		Detail: "The test bed has no Avro client or server, so this claim is not measured."})

	return out
}

// setup is the section's set-up lines: what ran, the versions, how steady the
// rows were, and how the JVMs came to rest.
func (e *Java2015) setup(o Setup) []string {
	setup := []string{
		"Published: Java 8 clients and servers, Ice 3.6, dubbox 2.8.4, Thrift 0.9.2, gRPC-java 0.7.1; 300 000 calls per client.",
		fmt.Sprintf("Here: java-client in worker mode (one JVM per framework across all its rows, the four frameworks' servers and workers up together) against the Java baselines (`java-client serve -proto P`), today's libraries, server pinned to CPU %s, client to CPU %s.", orAny(o.ServerCPUSet), orAny(o.ClientCPUSet)),
		fmt.Sprintf("Each row: DataType at the published concurrency, after un-recorded "+e.Settings.Prime+" runs at each concurrency per framework (both JVMs compile their hot paths under every concurrency's profile), `-warmup auto` until throughput settles (at most "+e.Settings.WarmupMax+"), then %v measured; %d rounds, each of every concurrency with the four frameworks one after the other in a fresh random order; tps = calls / measured seconds, its 95 %% interval from the row's repeats with the noise pooled over the rows; a ratio between two frameworks from the rounds' ratios (paired: the drift between rounds cancels). A row whose interval spans %.0f %% of its median or more is marked.", e.Dur, e.Repeats, javaSpreadGoal*100),
		"JIT warm-up: each framework's first run is one second from a cold JVM on both sides (no warm-up), set against its steady c=1 rows.",
	}
	setup = append(setup, e.Failed.Setup()...)
	var vs []string
	for _, k := range []string{"java", "ice", "dubbo", "thrift", "grpc"} {
		if v, ok := e.Versions[k]; ok {
			vs = append(vs, k+" "+v)
		}
	}
	if len(vs) > 0 {
		setup = append(setup, "Versions measured: "+strings.Join(vs, ", ")+".")
	}
	steady, rows := e.steadyRows()
	setup = append(setup, fmt.Sprintf("Rows with a spread under %.0f %%: %d of %d.", javaSpreadGoal*100, steady, rows))
	return append(setup, e.restLines()...)
}

// spread is a row's interval width over its median ("-" unknown), marked
// noisy from javaSpreadGoal; ok says it is known, steady that it is under.
func (e *Java2015) spread(fw string, c int) (s string, ok, steady bool) {
	t := e.tps(fw, c)
	if !t.Known || t.Median <= 0 {
		return "-", false, false
	}
	sp := (t.Hi - t.Lo) / t.Median
	s = fmt.Sprintf("%.1f %%", sp*100)
	if sp >= javaSpreadGoal {
		s += " (noisy)"
	}
	return s, true, sp < javaSpreadGoal
}

// steadyRows counts the rows with a known spread, and those under javaSpreadGoal.
func (e *Java2015) steadyRows() (steady, rows int) {
	for _, c := range e.Levels {
		for _, fw := range JavaFrameworks {
			if _, ok, st := e.spread(fw, c); ok {
				rows++
				if st {
					steady++
				}
			}
		}
	}
	return steady, rows
}

// table is one row per framework and concurrency: published and measured tps,
// ice's lead both ways, both sides' busy fractions and the server's CPU per call.
func (e *Java2015) table() [][]string {
	t := [][]string{{"clients", "framework", "published tps", "measured tps", "spread", "published ice / fw", "measured ice / fw", "server busy", "client busy", "server CPU µs/call"}}
	n := e.tpsNoise()
	for _, c := range e.Levels {
		for _, fw := range JavaFrameworks {
			sp, _, _ := e.spread(fw, c)
			lead := "-"
			if lr, ok := e.leadAt(fw, c, n); ok {
				lead = figOf(lr.Interval()).Show("x", 2)
			}
			rs := e.Runs[JKey{fw, c}]
			t = append(t, []string{strconv.Itoa(c), fw, f0(e.Pub[JKey{fw, c}]), e.tps(fw, c).Show("", 0), sp,
				ratio(e.Pub[JKey{"ice", c}], e.Pub[JKey{fw, c}]), lead,
				pctOf(busy(rs, srvBusy)), pctOf(busy(rs, cliBusy)), figs(rs, srvPerCall).Show("", 1)})
		}
	}
	return t
}

// restLines say how the JVMs came to rest: repeats flagged for JIT work, the
// rounds after the prime, the servers' quiet after it.
func (e *Java2015) restLines() []string {
	var lines []string
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
		lines = append(lines, t+".")
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
		lines = append(lines, fmt.Sprintf("After the prime, rounds of 1 s runs at every concurrency went on until both JVMs' JIT compiled for at most %.0f %% of a round (java-client's \"JIT compile:\", the server's /stats), at most %v: %s.",
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
			lines = append(lines, fmt.Sprintf("After the prime, the rows waited until the server used under %.0f %% of a core with no calls (its /stats): %s.",
				e.Settings.QuietBusy*100, strings.Join(parts, ", ")))
		}
	}

	return lines
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
		Detail: strings.Join(per, "; ") + ".", Reason: ""}
}
