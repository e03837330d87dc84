package measure

import (
	"slices"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/results"
)

// The flag rules, one repeat at a time: each raises its flag with the figure
// that broke it, at the boundary and not before; flags come in the rules'
// order; cpu-invariant and cpu-scope leave the CPU figures out.
func TestFlagRules(t *testing.T) {
	ms := func(v float64) *float64 { return &v }
	quiet := func() flagInput {
		return flagInput{client: true,
			report: &report.Report{Complete: 1000, Rpcbed: &report.Extra{CPUScope: report.ScopeWindow, WarmupSettled: report.SettledYes}},
			window: &results.Window{Seconds: 2, ClientBusy: 1, ClientCores: 1, ServerBusy: 1, ServerCores: 1, ServerKnown: true}}
	}
	for _, tc := range []struct {
		name    string
		change  func(*flagInput)
		flags   []string
		notes   []string // each a part of the note at that place
		cpuUsed bool
	}{
		{"quiet", func(*flagInput) {}, nil, nil, true},
		{"client at its cores + 5 %", func(in *flagInput) { in.window.ClientBusy = 1.05 }, nil, nil, true},
		{"client over its cores + 5 %", func(in *flagInput) { in.window.ClientBusy = 1.06 },
			[]string{results.FlagCPUInvariant}, []string{"cpu-invariant: client busy 1.06 cores over the 2.000 s window; it may use 1"}, false},
		{"server over, not sampled", func(in *flagInput) { in.window.ServerBusy, in.window.ServerKnown = 3, false }, nil, nil, true},
		{"both sides over", func(in *flagInput) { in.window.ClientBusy, in.window.ServerBusy = 2, 3 },
			[]string{results.FlagCPUInvariant}, []string{"client busy 2.00 cores", "server busy 3.00 cores"}, false},
		{"process CPU scope", func(in *flagInput) { in.report.Rpcbed.CPUScope = report.ScopeProcess },
			[]string{results.FlagCPUScope}, []string{"cpu-scope: the client measured its CPU over its whole process (CPU scope: process)"}, false},
		{"ab's report: no rpcbed block to judge", func(in *flagInput) { in.client, in.report.Rpcbed = false, nil }, nil, nil, true},
		{"warm-up unsettled", func(in *flagInput) {
			in.report.Rpcbed.WarmupSettled, in.report.Rpcbed.WarmupSeconds = report.SettledNo, 30
		}, []string{results.FlagWarmup}, []string{"warmup-unsettled: warm-up did not settle in 30.0 s"}, true},
		{"JIT at 5 % of the window", func(in *flagInput) { in.window.ClientJITMs = ms(100) }, nil, nil, true},
		{"JIT over 5 % on both sides", func(in *flagInput) { in.window.ClientJITMs, in.window.ServerJITMs = ms(101), ms(400) },
			[]string{results.FlagJIT}, []string{"the client's JIT compiled for 101 ms of the 2000 ms window (> 5 %)", "the server's JIT compiled for 400 ms"}, true},
		{"20 calls", func(in *flagInput) { in.report.Complete = results.FewCalls }, nil, nil, true},
		{"19 calls", func(in *flagInput) { in.report.Complete = 19 },
			[]string{results.FlagFewCalls}, []string{"few-calls: 19 calls completed in the 2.000 s window (< 20): one call more or less moves req/s by 5 %"}, true},
		{"no call", func(in *flagInput) { in.report.Complete = 0 }, []string{results.FlagFewCalls}, []string{"moves req/s by all of it"}, true},
		{"in the rules' order", func(in *flagInput) {
			in.report.Complete, in.window.ServerBusy, in.report.Rpcbed.CPUScope = 3, 2, report.ScopeProcess
		}, []string{results.FlagCPUScope, results.FlagCPUInvariant, results.FlagFewCalls}, []string{"cpu-scope: ", "cpu-invariant: server", "few-calls: 3 calls"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := quiet()
			tc.change(&in)
			var rep results.Repeat
			applyFlags(&rep, flagRules, in)
			rep.DropFlagged()
			if !slices.Equal(rep.Flags, tc.flags) {
				t.Errorf("flags %q; want %q", rep.Flags, tc.flags)
			}
			if len(rep.Notes) != len(tc.notes) {
				t.Fatalf("notes %q; want %d", rep.Notes, len(tc.notes))
			}
			for i, w := range tc.notes {
				if !strings.Contains(rep.Notes[i], w) {
					t.Errorf("note %d %q; want it to hold %q", i, rep.Notes[i], w)
				}
			}
			if rep.Metrics.CPUNotUsed == tc.cpuUsed {
				t.Errorf("CPU figures not used: %v; want %v", rep.Metrics.CPUNotUsed, !tc.cpuUsed)
			}
		})
	}
}

// A cluster repeat's rules: the tasks' windows against each other, each task
// on its node, then the merged window's server and calls.
func TestClusterFlagRules(t *testing.T) {
	jit := int64(200)
	task := func(addr string, cpuS float64) taskInput {
		return taskInput{cores: 1,
			rec:    results.TaskRecord{NodeAddr: addr, WindowStartUnix: 100, WindowEndUnix: 102, ClientCPUS: cpuS},
			report: &report.Report{Rpcbed: &report.Extra{CPUScope: report.ScopeWindow, WarmupSettled: report.SettledYes}}}
	}
	for _, tc := range []struct {
		name   string
		in     taskInput
		change func(*taskInput)
		want   string // "": no flag
	}{
		{"quiet", task("198.18.1.2", 2), func(*taskInput) {}, ""},
		{"busier than its node", task("198.18.1.2", 2.2), func(*taskInput) {}, "cpu-invariant: client on 198.18.1.2 busy 1.10 cores over its 2.000 s window; it may use 1"},
		{"process scope", task("198.18.1.3", 1), func(in *taskInput) { in.report.Rpcbed.CPUScope = report.ScopeProcess }, "cpu-scope: a task measured its CPU over its whole process"},
		{"unsettled", task("198.18.1.3", 1), func(in *taskInput) {
			in.report.Rpcbed.WarmupSettled, in.report.Rpcbed.WarmupSeconds = report.SettledNo, 9
		}, "warmup-unsettled: warm-up did not settle on 198.18.1.3 in 9.0 s"},
		{"compiling", task("198.18.1.3", 1), func(in *taskInput) { in.report.Rpcbed.JITCompileMs = &jit }, "jit-compiling: the client's JIT on 198.18.1.3 compiled for 200 ms of its window"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			tc.change(&in)
			var rep results.Repeat
			applyFlags(&rep, taskFlagRules, in)
			if got := strings.Join(rep.Notes, "; "); (tc.want == "") != (got == "") || !strings.HasPrefix(got, tc.want) {
				t.Errorf("notes %q; want %q", got, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		skew float64
		want bool
	}{{0.019, false}, {0.021, true}} {
		var rep results.Repeat
		applyFlags(&rep, skewRules, clusterInput{window: &results.Window{SkewS: tc.skew}, taskSeconds: []float64{2, 2, 2}})
		if rep.Has(results.FlagWindowSkew) != tc.want {
			t.Errorf("windows %.0f ms apart over 2 s: window-skew %v; want %v (%q)", tc.skew*1000, !tc.want, tc.want, rep.Notes)
		}
	}
}

// The link's physics: a repeat over a link with delay whose median call beats
// the round trip the link adds, or whose calls/s beat c per round trip, is
// flagged and not used at all; at the boundary it stands.
func TestLinkPhysics(t *testing.T) {
	in := func(p50 int64, rps float64, c int) flagInput {
		return flagInput{client: true,
			report: &report.Report{Complete: 1000, Concurrency: c, RequestsPerSecond: rps, Rpcbed: &report.Extra{P50Us: p50, CPUScope: report.ScopeWindow}},
			window: &results.Window{Seconds: 1, LinkFloorUs: 1800}}
	}
	for _, tc := range []struct {
		name string
		in   flagInput
		bad  bool
	}{
		{"at the floor", in(1800, 555, 1), false},
		{"median below the floor", in(1799, 500, 1), true},
		{"c=1 faster than one per round trip", in(1900, 556, 1), true},
		{"c=50 within 50 per round trip", in(40000, 27000, 50), false},
		{"c=50 beyond 50 per round trip", in(1900, 28000, 50), true},
		{"no link", func() flagInput { x := in(10, 1e6, 1); x.window.LinkFloorUs = 0; return x }(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := results.Repeat{Report: tc.in.report}
			applyFlags(&rep, flagRules, tc.in)
			rep.DropFlagged()
			if got := rep.Has(results.FlagLinkInvariant); got != tc.bad {
				t.Fatalf("link-invariant %v; want %v (notes %q)", got, tc.bad, rep.Notes)
			}
			if tc.bad && (rep.Report != nil || !strings.HasPrefix(rep.Error, "link-invariant: ")) {
				t.Fatalf("a repeat that broke the link's physics kept its report (error %q)", rep.Error)
			}
		})
	}
}

// Every flag a check raises has its rule (threshold, drops, reading) in
// results.FlagRules.
func TestFlagChecksHaveRules(t *testing.T) {
	var flags []string
	for _, r := range flagRules {
		flags = append(flags, r.flag)
	}
	for _, r := range mergedFlagRules {
		flags = append(flags, r.flag)
	}
	for _, r := range taskFlagRules {
		flags = append(flags, r.flag)
	}
	for _, r := range skewRules {
		flags = append(flags, r.flag)
	}
	for _, f := range flags {
		if _, ok := results.RuleOf(f); !ok {
			t.Errorf("%s: raised with no rule; want one in results.FlagRules", f)
		}
	}
}
