package results

import (
	"fmt"
	"strings"
)

// Drops is what a flag takes out of a repeat's figures.
type Drops int

const (
	// DropsNothing: the figures stand, with a reason to doubt them.
	DropsNothing Drops = iota
	// DropsCPU: the repeat's CPU figures are kept but not used (Metrics.CPUNotUsed).
	DropsCPU
	// DropsRepeat: the repeat is not used at all; the flag's notes are its error.
	DropsRepeat
	// DropsRatios: the cell's figures stand in its own row, but it ran another
	// condition than its name says: it is left out of every ratio and verdict.
	DropsRatios
)

// Carry is how a cell's summary carries a flag of its repeats.
type Carry int

const (
	// CarryAny: any repeat's flag is the cell's.
	CarryAny Carry = iota
	// CarryWhenItMatters: the cell carries it only where it changed the cell's
	// req/s (CellResult.flagMatters).
	CarryWhenItMatters
	// CarryCell: no repeat raises it; Summarize does, over the cell's repeats.
	CarryCell
)

// FlagRule is one flag in one place: the threshold its check compares a
// figure against, what it drops of a repeat's figures, how a cell carries it,
// and what it means for a reader. internal/matrix's checks raise it against
// Threshold and drop what Drops says (Repeat.DropFlagged), Summarize carries it
// as Carry says, and matrix.md's "Flagged cells", the page's "Needs attention"
// and docs/reports.md explain it with Means and Reading.
type FlagRule struct {
	Flag string
	// Threshold is the limit of the flag's check, in the check's unit (0: the
	// check has none): a share of the cores, of the window or of a core, or a
	// count of calls.
	Threshold float64
	Drops     Drops
	Carry     Carry
	// Means is what raised it, Reading what it means for the figures.
	Means, Reading string
}

// FlagRules are every flag a repeat or a cell can carry, in the order the
// legends list them; each threshold is the constant of the same name.
var FlagRules = []FlagRule{
	{Flag: FlagNoisy, Threshold: NoisyStealCores, Carry: CarryCell,
		Means:   fmt.Sprintf("steal over %.0f %% of a core in a round", NoisyStealCores*100),
		Reading: "another guest took CPU from the cell: its figures may be slow; rerun on a quiet machine (a wide spread alone is no flag: the interval gives it)"},
	{Flag: FlagCPUInvariant, Threshold: CPUAllowance, Drops: DropsCPU,
		Means:   fmt.Sprintf("a side busier than its cores + %.0f %%", CPUAllowance*100),
		Reading: "that round's CPU figures are left out; req/s and latency stand"},
	{Flag: FlagCPUScope, Drops: DropsCPU,
		Means:   "the client could not measure its CPU over the window",
		Reading: "its CPU per call is left out; req/s and latency stand"},
	{Flag: FlagWarmup, Carry: CarryWhenItMatters,
		Means:   "the warm-up did not settle, and an unsettled round's req/s lies outside the settled rounds' range",
		Reading: "the cell may still have been warming: its req/s and latency may be low; a longer warmup_max settles it"},
	{Flag: FlagJIT, Threshold: JITQuiet,
		Means:   fmt.Sprintf("a JVM side's JIT compiled for over %.0f %% of the window", JITQuiet*100),
		Reading: fmt.Sprintf("the round timed code still being compiled, not the steady state: it is left out of the cell's figures while %d rounds with the JIT at rest remain; a longer prime settles it", MinSteady)},
	{Flag: FlagFewCalls, Threshold: FewCalls,
		Means:   fmt.Sprintf("under %d calls in a window", FewCalls),
		Reading: fmt.Sprintf("one call moves req/s by over %.0f %%: the figure is too coarse to compare; plots draw it apart", 100.0/FewCalls)},
	{Flag: FlagServerRestarted,
		Means:   "the server stopped answering and was restarted before a round",
		Reading: "the rounds ran on two server starts: compare with care"},
	{Flag: FlagTLSMismatch, Drops: DropsRatios, Carry: CarryCell,
		Means:   "the TLS the client negotiated is not the cell's security (TLS asked and none reported, another version, resumption asked and not done)",
		Reading: "the cell ran another condition than its name says: its row stands, it is left out of every ratio and verdict"},
	// connect-mismatch's persistent side is judged against PersistentHandshakes.
	{Flag: FlagConnectMismatch, Drops: DropsRatios, Carry: CarryCell,
		Means:   "a per-call cell's connections opened in the window differ from its calls by more than its concurrency, or a persistent cell reconnected",
		Reading: "the cell ran another connection mode than its name says: its row stands, it is left out of every ratio and verdict"},
	{Flag: FlagWindowSkew, Threshold: SkewShare,
		Means:   fmt.Sprintf("a cluster round's client windows lay over %.0f %% of the window apart", SkewShare*100),
		Reading: "the tasks did not load the server together: req/s is understated"},
	{Flag: FlagLinkInvariant, Drops: DropsRepeat,
		Means:   "over a link with delay, a median call faster than the round trip the link adds, or more calls/s than the calls in flight allow over it",
		Reading: "that round broke the link's physics: it is left out of the cell's figures (a bug or a link that did not hold, never a result)"},
}

// RuleOf is flag's rule; ok false for a flag FlagRules does not list.
func RuleOf(flag string) (FlagRule, bool) {
	for _, r := range FlagRules {
		if r.Flag == flag {
			return r, true
		}
	}
	return FlagRule{}, false
}

// DropFlagged takes out of the repeat what its flags' rules drop: its CPU
// figures, or the whole repeat, whose error is then the flag's notes.
func (r *Repeat) DropFlagged() {
	for _, f := range r.Flags {
		rule, _ := RuleOf(f)
		switch rule.Drops {
		case DropsCPU:
			r.Metrics.CPUNotUsed = true
		case DropsRepeat:
			var why []string
			for _, n := range r.Notes {
				if strings.HasPrefix(n, f+": ") {
					why = append(why, n)
				}
			}
			r.Error = f + ": " + strings.Join(why, "; ")
			r.Report = nil
		}
	}
}
