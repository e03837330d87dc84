package reproduce

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/matrix"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// javaFrameworks in the published table's order.
var javaFrameworks = []string{"ice", "dubbo", "thrift", "grpc"}

// javaWarmupMax bounds each row's -warmup auto: both JVMs are primed (javaPrime)
// before the rows, so a row settles within a second on a quiet machine.
const javaWarmupMax = "2s"

// javaPrime is how long each un-recorded run lasts, one per published
// concurrency, after the first second from cold and before the rows: both JVMs
// (client worker and server) compile their hot paths under every concurrency's
// profile. Primed at c=20 alone, the first c=1 row still ran at 1474-1649 tps
// against 5716-6766 later, both sides 92-98 % busy and the server at 590-659 µs
// of CPU per call (its JIT recompiling for the new profile), and rows that
// followed the cold second directly: ice c=1 [2979..15963] tps.
const javaPrime = "2s"

// javaPrimeMax bounds the rounds of 1 s runs (one per published concurrency)
// that follow the prime while either JVM's JIT still compiles for more than
// matrix.JITQuiet of a round (the client's report, the server's /stats): on one
// core each JIT needs 15-20 s of load to rest.
const javaPrimeMax = 20 * time.Second

// javaSpreadGoal is the largest spread (max-min over median of the repeats'
// tps) a row may have to count as steady.
const javaSpreadGoal = 0.10

// java2015 is java-rpc-2015: the Java client against the Java baselines,
// ice/dubbo/thrift/grpc at 1..100 clients, tps at steady state.
type java2015 struct {
	pub     map[jKey]float64
	levels  []int
	dur     time.Duration
	repeats int
	runs    map[jKey][]measured
	first   map[string]measured // each framework's first second on a fresh worker and server
	// quiet: per framework, how long its server went on using CPU with no calls
	// after the prime (its JIT's queue, its collector) before the rows began.
	quiet map[string]quietAfter
	// rest: per framework, how the rounds after the prime went (JIT at rest or not).
	rest     map[string]jitRest
	versions map[string]string
	failed   failures
}

type jKey struct {
	fw string
	c  int
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

func (e *java2015) read(published string) error {
	rows, err := readCSV(filepath.Join(published, "java-rpc-2015_tps.csv"))
	if err != nil {
		return err
	}
	e.pub = map[jKey]float64{}
	for _, r := range rows {
		c, err1 := strconv.Atoi(r["clients"])
		v, err2 := strconv.ParseFloat(r["tps"], 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("java-rpc-2015_tps.csv: row %v: want integer clients and a tps", r)
		}
		e.pub[jKey{r["framework"], c}] = v
		if !containsInt(e.levels, c) {
			e.levels = append(e.levels, c)
		}
	}
	for _, c := range e.levels {
		for _, fw := range javaFrameworks {
			if _, ok := e.pub[jKey{fw, c}]; !ok {
				return fmt.Errorf("java-rpc-2015_tps.csv: no %s at %d clients", fw, c)
			}
		}
	}
	return nil
}

func (e *java2015) run(ctx context.Context, o Options) error {
	e.dur, e.repeats = 2*time.Second, 3
	if o.Quick {
		e.dur, e.repeats, e.levels = 300*time.Millisecond, 2, e.levels[:2]
	}
	e.runs, e.first, e.versions, e.quiet = map[jKey][]measured{}, map[string]measured{}, map[string]string{}, map[string]quietAfter{}
	e.rest = map[string]jitRest{}
	for _, fw := range javaFrameworks {
		if err := e.runFramework(ctx, o, fw); err != nil {
			return err
		}
	}
	return nil
}

// runFramework: one server and one client worker; first one second from cold
// (JIT warm-up: the first second against steady state), then every level's
// repeats after a settled warm-up.
func (e *java2015) runFramework(ctx context.Context, o Options, fw string) error {
	srv, err := matrix.StartServerProc(ctx, o.Runner, "java-"+fw, matrix.ServerProcConfig{
		Programs: o.Programs, Resources: plan.Resources{CPUSet: o.ServerCPUSet}, Store: "memory", Auth: true,
	})
	if err != nil {
		return err
	}
	defer srv.Svc.Stop(context.Background())
	b, stop := newRunPath(o)
	defer stop()
	job := func(name string, args ...string) matrix.Job {
		return matrix.Job{Name: name, Client: "java", Worker: true, Proto: fw, Call: "datatype", Timeout: 3 * time.Minute,
			Args: append([]string{"-proto", fw, "-call", "datatype", "-addr", srv.Addrs[fw]}, args...)}
	}
	name := fmt.Sprintf("java2015-%s-c1-first-second", fw)
	fmt.Fprintf(o.Log, "  %s\n", name)
	m, err := once(ctx, b, srv, job(name, "-c", "1", "-t", "1s"))
	if err == nil {
		e.first[fw] = m
	} else if err := e.failed.keep(ctx, err); err != nil {
		return err
	}
	if !o.Quick {
		for _, c := range e.levels {
			name := fmt.Sprintf("java2015-%s-c%d-prime", fw, c)
			fmt.Fprintf(o.Log, "  %s\n", name)
			if _, err := once(ctx, b, srv, job(name, "-c", strconv.Itoa(c), "-t", javaPrime)); err != nil {
				if err := e.failed.keep(ctx, err); err != nil {
					return err
				}
			}
		}
		rest, err := e.primeUntilRest(ctx, o, b, srv, fw, job)
		if err != nil {
			return err
		}
		e.rest[fw] = rest
		q, err := waitQuiet(ctx, srv)
		if err != nil {
			return err
		}
		e.quiet[fw] = q
	}
	for r := 1; r <= e.repeats; r++ {
		for _, c := range e.levels {
			name := fmt.Sprintf("java2015-%s-c%d-r%d", fw, c, r)
			fmt.Fprintf(o.Log, "  %s\n", name)
			args := []string{"-c", strconv.Itoa(c), "-t", matrix.Seconds(e.dur)}
			if !o.Quick {
				args = append(args, "-warmup", "auto", "-warmup-max", javaWarmupMax)
			}
			m, err := once(ctx, b, srv, job(name, args...))
			if err != nil {
				if err := e.failed.keep(ctx, err); err != nil {
					return err
				}
				continue
			}
			e.runs[jKey{fw, c}] = append(e.runs[jKey{fw, c}], m)
			if m.Report.Rpcbed != nil {
				for k, v := range m.Report.Rpcbed.Versions {
					e.versions[k] = v
				}
			}
		}
	}
	return nil
}

// jitRest is how the rounds after the prime went: how many, how long, and the
// last round's JIT compile time per side over its windows.
type jitRest struct {
	Rounds           int
	Seconds          float64
	ClientMs, Window float64
	ServerMs         float64
	ServerKnown      bool
	AtRest           bool
}

// primeUntilRest runs rounds of 1 s un-recorded runs, one per published
// concurrency, while either JVM's JIT compiled for more than matrix.JITQuiet of
// the round's windows, at most javaPrimeMax; the first round always runs.
func (e *java2015) primeUntilRest(ctx context.Context, o Options, b *matrix.RunPath, srv *matrix.ServerProc, fw string,
	job func(string, ...string) matrix.Job) (jitRest, error) {
	var r jitRest
	start := time.Now()
	for round := 1; ; round++ {
		var cms, sms, win float64
		cKnown, sKnown := false, true
		t0 := time.Now()
		for _, c := range e.levels {
			name := fmt.Sprintf("java2015-%s-c%d-rest%d", fw, c, round)
			fmt.Fprintf(o.Log, "  %s\n", name)
			m, err := once(ctx, b, srv, job(name, "-c", strconv.Itoa(c), "-t", "1s"))
			if err != nil {
				if err := e.failed.keep(ctx, err); err != nil {
					return r, err
				}
				sKnown = false
				continue
			}
			win += m.Wall
			if m.ClientJITMs != nil {
				cms += *m.ClientJITMs
				cKnown = true
			}
			if m.ServerJITMs != nil {
				sms += *m.ServerJITMs
			} else {
				sKnown = false
			}
		}
		r.Rounds, r.Seconds = round, time.Since(start).Seconds()
		r.ClientMs, r.ServerMs, r.Window, r.ServerKnown = cms, sms, win, sKnown
		quiet := win > 0 && !results.JITBusy(cms, win) && (!sKnown || !results.JITBusy(sms, win))
		if quiet || !cKnown {
			r.AtRest = quiet
			return r, nil
		}
		if time.Since(start)+time.Since(t0) > javaPrimeMax {
			return r, nil
		}
	}
}

// A server is quiet when it uses under javaQuietBusy of a core over javaQuietStep
// with no calls; waitQuiet gives up after javaQuietMax.
const (
	javaQuietBusy = 0.10
	javaQuietStep = 500 * time.Millisecond
	javaQuietMax  = 20 * time.Second
)

// quietAfter is how a server came to rest after the prime: after how long, and
// its busy fraction over the first step (the work it went on with, no call asked).
type quietAfter struct {
	After     time.Duration
	FirstBusy float64
	Quiet     bool // false: still busy at javaQuietMax, or no /stats to tell
}

// waitQuiet waits, after the prime, until the server's own counters (/stats) say
// it stopped working: right after a load stops, a JVM's JIT compiles what the
// load queued and its collector runs, on the one core the next row needs (the
// first c=1 row after the prime once ran at 1649 tps against 5716-6766, the
// server at 97 % busy and 590 µs of CPU per call).
func waitQuiet(ctx context.Context, srv *matrix.ServerProc) (quietAfter, error) {
	var q quietAfter
	if srv.StatsURL == "" {
		return q, nil
	}
	prev, err := srv.Snapshot(ctx, "", "")
	if err != nil {
		return q, ctx.Err()
	}
	start := time.Now()
	for time.Since(start) < javaQuietMax {
		select {
		case <-ctx.Done():
			return q, ctx.Err()
		case <-time.After(javaQuietStep):
		}
		cur, err := srv.Snapshot(ctx, "", "")
		if err != nil {
			return q, ctx.Err()
		}
		busy := (cur.CPU - prev.CPU) / javaQuietStep.Seconds()
		if q.After == 0 {
			q.FirstBusy = busy
		}
		q.After = time.Since(start)
		prev = cur
		if busy < javaQuietBusy {
			q.Quiet = true
			return q, nil
		}
	}
	return q, nil
}

func (e *java2015) tps(fw string, c int) Figure { return figs(e.runs[jKey{fw, c}], rps) }

func (e *java2015) judge(o Options) results.Section {
	sec := results.Section{
		Setup: []string{
			"Published: Java 8 clients and servers, Ice 3.6, dubbox 2.8.4, Thrift 0.9.2, gRPC-java 0.7.1; 300 000 calls per client.",
			fmt.Sprintf("Here: java-client in worker mode (one JVM per framework across all its rows) against the Java baselines (`java-client serve -proto P`), today's libraries, server pinned to CPU %s, client to CPU %s.", orAny(o.ServerCPUSet), orAny(o.ClientCPUSet)),
			fmt.Sprintf("Each row: DataType at the published concurrency, after un-recorded "+javaPrime+" runs at each concurrency per framework (both JVMs compile their hot paths under every concurrency's profile), `-warmup auto` until throughput settles (at most "+javaWarmupMax+"), then %v measured; %d repeats interleaved across the concurrencies; tps = calls / measured seconds. A row whose repeats spread by %.0f %% or more is marked.", e.dur, e.repeats, javaSpreadGoal*100),
			"JIT warm-up: each framework's first run is one second from a cold JVM on both sides (no warm-up), set against its steady c=1 rows.",
		},
		Scaled: fmt.Sprintf("The published runs made 300 000 calls per client (up to 30 M calls, 36 min per row at c=100); at this machine's rates that would take hours, so each row is time-bounded instead: a settled warm-up, then %v measured, %d times. Client and server get one core each; the published machines are not described beyond Java 8.", e.dur, e.repeats),
	}
	sec.Setup = append(sec.Setup, e.failed.setup()...)
	var vs []string
	for _, k := range []string{"java", "ice", "dubbo", "thrift", "grpc"} {
		if v, ok := e.versions[k]; ok {
			vs = append(vs, k+" "+v)
		}
	}
	if len(vs) > 0 {
		sec.Setup = append(sec.Setup, "Versions measured: "+strings.Join(vs, ", ")+".")
	}
	sec.Table = [][]string{{"clients", "framework", "published tps", "measured tps", "spread", "published ice / fw", "measured ice / fw", "server busy", "client busy", "server CPU µs/call"}}
	steady, rows := 0, 0
	for _, c := range e.levels {
		for _, fw := range javaFrameworks {
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
			rs := e.runs[jKey{fw, c}]
			sec.Table = append(sec.Table, []string{strconv.Itoa(c), fw, f0(e.pub[jKey{fw, c}]), t.Show("", 0), spread,
				ratio(e.pub[jKey{"ice", c}], e.pub[jKey{fw, c}]), Ratio(e.tps("ice", c), t).Show("x", 2),
				pctOf(figs(rs, srvBusy)), pctOf(figs(rs, cliBusy)), figs(rs, srvPerCall).Show("", 1)})
		}
	}
	sec.Setup = append(sec.Setup, fmt.Sprintf("Rows with a spread under %.0f %%: %d of %d.", javaSpreadGoal*100, steady, rows))
	jit, all := 0, 0
	var jitRows []string
	for _, c := range e.levels {
		for _, fw := range javaFrameworks {
			n := 0
			for _, m := range e.runs[jKey{fw, c}] {
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
	if len(e.rest) > 0 {
		var parts []string
		for _, fw := range javaFrameworks {
			r, ok := e.rest[fw]
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
			results.JITQuiet*100, javaPrimeMax, strings.Join(parts, "; ")))
	}
	if len(e.quiet) > 0 {
		var parts []string
		for _, fw := range javaFrameworks {
			q, ok := e.quiet[fw]
			switch {
			case !ok:
			case q.Quiet:
				parts = append(parts, fmt.Sprintf("%s %.1f s (%.0f %% busy in the first %v)", fw, q.After.Seconds(), q.FirstBusy*100, javaQuietStep))
			default:
				parts = append(parts, fmt.Sprintf("%s still above %.0f %% busy after %.1f s", fw, javaQuietBusy*100, q.After.Seconds()))
			}
		}
		if len(parts) > 0 {
			sec.Setup = append(sec.Setup, fmt.Sprintf("After the prime, the rows waited until the server used under %.0f %% of a core with no calls (its /stats): %s.",
				javaQuietBusy*100, strings.Join(parts, ", ")))
		}
	}

	sec.Findings = append(sec.Findings, e.judgeOrder("java-ice-leads", "Ice leads at every concurrency", "ice first at all 5 concurrencies",
		func(c int) (bool, bool) {
			ice := e.tps("ice", c)
			all, any := true, false
			for _, fw := range javaFrameworks[1:] {
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
func (e *java2015) judgeOrder(rule, claim, published string, at func(c int) (held, reversed bool)) results.Finding {
	var h, fl, un, miss int
	var per []string
	for _, c := range e.levels {
		held, rev := at(c)
		var order []string
		known := true
		for _, fw := range javaFrameworks {
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
		Measured: fmt.Sprintf("held at %d of %d concurrencies", h, len(e.levels)), Holds: Levels(h, fl, un, miss),
		Detail: strings.Join(per, "; ") + ".", Reason: e.reason(javaFrameworks...)}
}

// judgeLead: Ice's lead over fw, the median over concurrencies of the per-level
// ratio, its range the extremes of every level's range.
func (e *java2015) judgeLead(fw string) results.Finding {
	l := javaLead[fw]
	var med []float64
	rng := Figure{Known: true}
	var per []string
	for i, c := range e.levels {
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
func (e *java2015) judgeGrows() results.Finding {
	r := Rule{Name: "java-ice-lead-grows", Claim: "Ice's lead grows with concurrency", Published: "1.4x -> 1.65x over Thrift from 1 to 100 clients", Band: ruleLeadGrows, Prec: 0}
	var rose, fell, flat, leads int
	missing := false
	var per []string
	for _, fw := range []string{"thrift", "dubbo", "grpc"} {
		var rs []string
		for i, c := range e.levels {
			cur := Ratio(e.tps("ice", c), e.tps(fw, c))
			rs = append(rs, cur.Show("x", 2))
			missing = missing || !cur.Known
			if cur.Known && cur.Lo > 1 {
				leads++
			}
			if i == 0 {
				continue
			}
			prev := Ratio(e.tps("ice", e.levels[i-1]), e.tps(fw, e.levels[i-1]))
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
	out := r.Verdict(f, fmt.Sprintf("Over %d steps: %d rose, %d fell, %d inside the spread. %s.", steps, rose, fell, flat, strings.Join(per, "; ")), e.reason(javaFrameworks...))
	if leads == 0 && out.Holds != results.NotMeasured {
		out.Holds = results.No
		out.Detail = "Ice leads at no concurrency beyond the spread, so there is no lead to grow. " + out.Detail
	}
	return out
}

// reason is the measured account of the Java rows: JIT warm-up (the first
// second against steady state) and the saturated core at the highest
// concurrency (busy fractions), per framework.
func (e *java2015) reason(fws ...string) string {
	var s []string
	lo, hi := e.levels[0], e.levels[len(e.levels)-1]
	for _, fw := range fws {
		first, ok := e.first[fw]
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
		rs := e.runs[jKey{fw, hi}]
		if sb, cb := figs(rs, srvBusy), figs(rs, cliBusy); sb.Known && cb.Known {
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
