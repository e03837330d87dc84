package results

import "fmt"

// FlagDoc is what a flag means for a cell's figures: the one description
// matrix.md's legend, the page's "Needs attention" and docs/reports.md give.
type FlagDoc struct {
	Flag string
	// Means is what raised it, Reading what it means for the figures.
	Means, Reading string
}

// FlagDocs describes every flag a cell can carry, thresholds from the
// constants that raise them.
var FlagDocs = []FlagDoc{
	{FlagNoisy, fmt.Sprintf("steal over %.0f %% of a core in a round", NoisyStealCores*100),
		"another guest took CPU from the cell: its figures may be slow; rerun on a quiet machine (a wide spread alone is no flag: the interval gives it)"},
	{FlagCPUInvariant, fmt.Sprintf("a side busier than its cores + %.0f %%", CPUAllowance*100),
		"that round's CPU figures are left out; req/s and latency stand"},
	{FlagCPUScope, "the client could not measure its CPU over the window",
		"its CPU per call is left out; req/s and latency stand"},
	{FlagWarmup, "the warm-up did not settle, and an unsettled round's req/s lies outside the settled rounds' range",
		"the cell may still have been warming: its req/s and latency may be low; a longer warmup_max settles it"},
	{FlagJIT, fmt.Sprintf("a JVM side's JIT compiled for over %.0f %% of the window", JITQuiet*100),
		"the round timed code still being compiled, not the steady state: a longer prime settles it"},
	{FlagFewCalls, fmt.Sprintf("under %d calls in a window", FewCalls),
		fmt.Sprintf("one call moves req/s by over %.0f %%: the figure is too coarse to compare; plots draw it apart", 100.0/FewCalls)},
	{FlagServerRestarted, "the server stopped answering and was restarted before a round",
		"the rounds ran on two server starts: compare with care"},
	{FlagTLSMismatch, "the TLS the client negotiated is not the cell's security (TLS asked and none reported, another version, resumption asked and not done)",
		"the cell ran another condition than its name says: its row stands, it is left out of every ratio and verdict"},
	{FlagConnectMismatch, "a per-call cell's connections opened in the window differ from its calls by more than its concurrency, or a persistent cell reconnected",
		"the cell ran another connection mode than its name says: its row stands, it is left out of every ratio and verdict"},
	{FlagLinkInvariant, "over a link with delay, a median call faster than the round trip the link adds, or more calls/s than the calls in flight allow over it",
		"that round broke the link's physics: it is left out of the cell's figures (a bug or a link that did not hold, never a result)"},
	{FlagWindowSkew, fmt.Sprintf("a cluster round's client windows lay over %.0f %% of the window apart", SkewShare*100),
		"the tasks did not load the server together: req/s is understated"},
}

// FlagDocOf is flag's description; ok false for a flag FlagDocs does not list.
func FlagDocOf(flag string) (FlagDoc, bool) {
	for _, d := range FlagDocs {
		if d.Flag == flag {
			return d, true
		}
	}
	return FlagDoc{}, false
}
