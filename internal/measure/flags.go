package measure

import (
	"fmt"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// The flag rules: what makes a repeat's figures unusable or doubtful
// (docs/method.md, sections 3 and 9), apart from the run path that measures
// them. Each rule reads one repeat's report and window and gives the reasons
// it raises its flag (none: not raised).

// flagInput is what a flag rule reads of one repeat: the report, the window it
// was measured over, and whether the report is an rpcbed client's (with the
// rpcbed block: ab's and a front's load program's are not).
type flagInput struct {
	report *report.Report
	window *results.Window
	client bool
}

// flagRule is one named check over what In holds of a repeat: each reason why
// gives, against the threshold of the flag's rule (results.FlagRules), is one
// note on the repeat.
type flagRule[In any] struct {
	flag string
	why  func(in In, threshold float64) []string
}

// flagRules are the rules RunPath.Measure judges a repeat by, in the order its
// flags and notes are listed.
var flagRules = []flagRule[flagInput]{
	{results.FlagCPUScope, cpuScope},
	{results.FlagWarmup, warmupUnsettled},
	{results.FlagCPUInvariant, clientBusier},
	{results.FlagCPUInvariant, serverBusier},
	{results.FlagJIT, clientJIT},
	{results.FlagJIT, serverJIT},
	{results.FlagFewCalls, fewCalls},
	{results.FlagLinkInvariant, linkFaster},
}

// applyFlags applies rules to rep in their order, each against its flag's
// threshold; what the flags drop is dropped after the last rule
// (Repeat.DropFlagged).
func applyFlags[In any](rep *results.Repeat, rules []flagRule[In], in In) {
	for _, r := range rules {
		rule, _ := results.RuleOf(r.flag)
		for _, why := range r.why(in, rule.Threshold) {
			rep.Flag(r.flag, why)
		}
	}
}

// linkFaster: the physics of a link with delay. No median call can be faster
// than the round trip the link adds, and c calls in flight cannot complete more
// than c per round trip.
func linkFaster(in flagInput, _ float64) []string {
	w, r := in.window, in.report
	if w.LinkFloorUs <= 0 || r == nil {
		return nil
	}
	var why []string
	if x := r.Rpcbed; x != nil && x.P50Us > 0 && float64(x.P50Us) < w.LinkFloorUs {
		why = append(why, fmt.Sprintf("median call %d µs, faster than the %.0f µs the link adds to every round trip", x.P50Us, w.LinkFloorUs))
	}
	if c := r.Concurrency; c > 0 && r.RequestsPerSecond > float64(c)*1e6/w.LinkFloorUs {
		why = append(why, fmt.Sprintf("%.0f calls/s, more than %d calls in flight allow over a %.0f µs round trip (%.0f/s)", r.RequestsPerSecond, c, w.LinkFloorUs, float64(c)*1e6/w.LinkFloorUs))
	}
	return why
}

// cpuScope: the client measured its CPU over its whole process, not the window.
func cpuScope(in flagInput, _ float64) []string {
	if x := in.report.Rpcbed; in.client && x != nil && x.CPUScope != report.ScopeWindow {
		return []string{"the client measured its CPU over its whole process (CPU scope: " + x.CPUScope + ")"}
	}
	return nil
}

// warmupUnsettled: an auto warm-up reached its bound without settling.
func warmupUnsettled(in flagInput, _ float64) []string {
	if x := in.report.Rpcbed; in.client && x != nil && x.WarmupSettled == report.SettledNo {
		return []string{fmt.Sprintf("warm-up did not settle in %.1f s", x.WarmupSeconds)}
	}
	return nil
}

// clientBusier and serverBusier: the CPU invariant, a side busier over the
// window than the cores it may use (+ the allowance, results.CPUAllowance).
func clientBusier(in flagInput, allowance float64) []string {
	w := in.window
	return busier("client", w.ClientBusy, w.ClientCores, true, w.Seconds, allowance)
}

func serverBusier(in flagInput, allowance float64) []string {
	w := in.window
	return busier("server", w.ServerBusy, w.ServerCores, w.ServerKnown, w.Seconds, allowance)
}

func busier(side string, busy, cores float64, known bool, seconds, allowance float64) []string {
	if known && cores > 0 && busy > cores*(1+allowance) {
		return []string{fmt.Sprintf("%s busy %.2f cores over the %.3f s window; it may use %.4g", side, busy, seconds, cores)}
	}
	return nil
}

// clientJIT and serverJIT: a JVM side's JIT compiled for more than the quiet
// share (results.JITQuiet) of the window.
func clientJIT(in flagInput, quiet float64) []string {
	return jitBusy("client", in.window.ClientJITMs, in.window.Seconds, quiet)
}

func serverJIT(in flagInput, quiet float64) []string {
	return jitBusy("server", in.window.ServerJITMs, in.window.Seconds, quiet)
}

func jitBusy(side string, ms *float64, seconds, quiet float64) []string {
	if ms != nil && seconds > 0 && *ms > quiet*seconds*1000 {
		return []string{fmt.Sprintf("the %s's JIT compiled for %.0f ms of the %.0f ms window (> %.0f %%)", side, *ms, seconds*1000, quiet*100)}
	}
	return nil
}

// fewCalls: fewer calls in the window than the least (results.FewCalls), so
// that one more or less moves req/s by more than its inverse.
func fewCalls(in flagInput, least float64) []string {
	if n := in.report.Complete; float64(n) < least {
		return []string{fmt.Sprintf("%d calls completed in the %.3f s window (< %.0f): one call more or less moves req/s by %s", n, in.window.Seconds, least, fewCallsStep(n))}
	}
	return nil
}

// fewCallsStep is how much one call moves a rate counted from n calls.
func fewCallsStep(n int64) string {
	if n < 1 {
		return "all of it"
	}
	return fmt.Sprintf("%.0f %%", 100/float64(n))
}

// FlagCluster judges a cluster repeat in three steps (skewRules, then
// taskFlagRules for each task on its own node's cores, then mergedFlagRules)
// and drops what its flags drop: rep's merged report m and window w, each
// task's window length, and each task's record and report.
func FlagCluster(rep *results.Repeat, m *report.Report, w *results.Window, taskSeconds []float64, tasks []ClusterTask, coresPerNode float64) {
	applyFlags(rep, skewRules, clusterInput{window: w, taskSeconds: taskSeconds})
	for _, t := range tasks {
		applyFlags(rep, taskFlagRules, taskInput{rec: t.Rec, report: t.Report, cores: coresPerNode})
	}
	applyFlags(rep, mergedFlagRules, flagInput{report: m, window: w, client: true})
	rep.DropFlagged()
}

// ClusterTask is one task of a cluster repeat as its checks read it.
type ClusterTask struct {
	Rec    results.TaskRecord
	Report *report.Report
}

// A cluster repeat (matrix's swarm placement) is judged in three steps: the tasks' windows
// against each other (skewRules), each task on its own node (taskFlagRules),
// then the merged window's server and calls (mergedFlagRules).

// skewRules judge a cluster repeat's tasks' windows against each other.
var skewRules = []flagRule[clusterInput]{{results.FlagWindowSkew, windowSkew}}

// mergedFlagRules judge a cluster repeat's merged window.
var mergedFlagRules = []flagRule[flagInput]{
	{results.FlagCPUInvariant, serverBusier},
	{results.FlagJIT, serverJIT},
	{results.FlagFewCalls, fewCalls},
	{results.FlagLinkInvariant, linkFaster},
}

// taskFlagRules judge one task of a cluster repeat: its client on its node.
var taskFlagRules = []flagRule[taskInput]{
	{results.FlagCPUInvariant, taskBusier},
	{results.FlagCPUScope, taskCPUScope},
	{results.FlagWarmup, taskWarmup},
	{results.FlagJIT, taskJIT},
}

// clusterInput is a cluster repeat's merged window and each task's window length.
type clusterInput struct {
	window      *results.Window
	taskSeconds []float64
}

// windowSkew: the tasks' windows start or end further apart on the driver's
// clock than a share (results.SkewShare) of their median length.
func windowSkew(in clusterInput, share float64) []string {
	w := in.window
	if med := stats.Of(in.taskSeconds).Median; med > 0 && w.SkewS > share*med {
		return []string{fmt.Sprintf("the tasks' windows start or end %.1f ms apart on the driver's clock, over %.0f %% of the %.3f s window", w.SkewS*1000, share*100, med)}
	}
	return nil
}

// taskInput is one task of a cluster repeat: its record, its report and the
// cores its node lets it use.
type taskInput struct {
	rec    results.TaskRecord
	report *report.Report
	cores  float64
}

func taskBusier(in taskInput, allowance float64) []string {
	t := in.rec
	if sec := t.WindowEndUnix - t.WindowStartUnix; sec > 0 && in.cores > 0 {
		if busy := t.ClientCPUS / sec; busy > in.cores*(1+allowance) {
			return []string{fmt.Sprintf("client on %s busy %.2f cores over its %.3f s window; it may use %.4g", t.NodeAddr, busy, sec, in.cores)}
		}
	}
	return nil
}

func taskCPUScope(in taskInput, _ float64) []string {
	if x := in.report.Rpcbed; x.CPUScope != report.ScopeWindow {
		return []string{"a task measured its CPU over its whole process (CPU scope: " + x.CPUScope + ")"}
	}
	return nil
}

func taskWarmup(in taskInput, _ float64) []string {
	if x := in.report.Rpcbed; x.WarmupSettled == report.SettledNo {
		return []string{fmt.Sprintf("warm-up did not settle on %s in %.1f s", in.rec.NodeAddr, x.WarmupSeconds)}
	}
	return nil
}

func taskJIT(in taskInput, quiet float64) []string {
	t, x := in.rec, in.report.Rpcbed
	if x.JITCompileMs != nil && float64(*x.JITCompileMs) > quiet*(t.WindowEndUnix-t.WindowStartUnix)*1000 {
		return []string{fmt.Sprintf("the client's JIT on %s compiled for %d ms of its window", t.NodeAddr, *x.JITCompileMs)}
	}
	return nil
}
