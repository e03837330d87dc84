package results

// A reproduction (rpcbed reproduce) saves its sections in reproduction.json.

// Section is one published experiment as re-run: its part of reproduction.md.
type Section struct {
	Name  string   `json:"name"`
	Setup []string `json:"setup"` // how it ran
	// Scaled is the "how this was scaled to this machine" paragraph.
	Scaled   string     `json:"scaled"`
	Table    [][]string `json:"table"` // header row first
	Findings []Finding  `json:"findings"`
	// Cause is the experiment's one measured account of its results (e.g. the
	// core that saturated, with its busy fraction), stated once rather than
	// beside every finding; "" when the run measured none.
	Cause string `json:"cause,omitempty"`
	Err   string `json:"error,omitempty"`
}

// Finding is a published claim judged by its rule (rule.go): the published and
// the measured figure, the tolerance, the verdict, and the reason this run's
// figures give for it.
type Finding struct {
	Rule      string `json:"rule"`
	Claim     string `json:"claim"`
	Published string `json:"published"`
	Measured  string `json:"measured"`  // median [lo..hi] over the repeats
	Tolerance string `json:"tolerance"` // the band for yes / partly / no
	Holds     string `json:"holds"`     // one of Verdicts
	Detail    string `json:"detail"`    // the figures the verdict rests on
	// Reason quotes this run's figures and names the measurement behind each
	// cause it gives; empty when the run measured none.
	Reason string `json:"reason,omitempty"`
}

// Verdicts a rule gives. A rule never gives an empty verdict, and never "yes"
// without a measurement.
const (
	Yes    = "yes"
	Partly = "partly"
	No     = "no"
	// NotDistinguished: the 95 % interval straddles the claim's tolerance (or
	// holds the value the claim says the figure differs from).
	NotDistinguished = "inconclusive"
	NotMeasured      = "not measured"
)

// Verdicts lists every verdict a rule may give (tests check against it).
var Verdicts = []string{Yes, Partly, No, NotDistinguished, NotMeasured}
