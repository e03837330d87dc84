package results

import "slices"

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
	// Rounds is how the precision loop went for this experiment; nil when
	// none ran (no budget, or an experiment without levels to add to).
	Rounds *Rounds `json:"rounds,omitempty"`
	// Links are the checks of the link a reproduction with its network back ran
	// across (asked against achieved, before and after its runs); nil on one host.
	Links []LinkCheck `json:"links,omitempty"`
	Err   string      `json:"error,omitempty"`
}

// Rounds is the precision loop's record for one experiment: the paired rounds
// added at the levels where a claim was still inconclusive, within the
// reproduction's budget.
type Rounds struct {
	BudgetS     float64 `json:"budget_s"`      // the whole reproduction's budget
	ElapsedS    float64 `json:"elapsed_s"`     // the reproduction's time when the loop ended
	SpentS      float64 `json:"spent_s"`       // this experiment's added rounds
	MaxPerLevel int     `json:"max_per_level"` // the rounds a level may be given
	// Confidence is what the experiment's intervals were judged at once it
	// took rounds (Bonferroni over MaxPerLevel looks); 0 when it took none.
	Confidence float64 `json:"confidence,omitempty"`
	Stop       string  `json:"stop"` // one of the Stop* reasons
	// Claims: per rule that took rounds, how many and at which levels.
	Claims []ClaimRounds `json:"claims,omitempty"`
}

// ClaimRounds is one claim's added rounds: how many, and the levels they ran at.
type ClaimRounds struct {
	Rule   string `json:"rule"`
	Rounds int    `json:"rounds"`
	Levels []int  `json:"levels"`
}

// Why the precision loop ended.
const (
	StopDecided   = "every claim decided"
	StopBudget    = "budget spent"
	StopMaxRounds = "rounds per level at their bound"
)

// Add counts one round at level for every rule it served.
func (r *Rounds) Add(level int, rules []string) {
	for _, rule := range rules {
		i := slices.IndexFunc(r.Claims, func(c ClaimRounds) bool { return c.Rule == rule })
		if i < 0 {
			r.Claims = append(r.Claims, ClaimRounds{Rule: rule})
			i = len(r.Claims) - 1
		}
		r.Claims[i].Rounds++
		if !slices.Contains(r.Claims[i].Levels, level) {
			r.Claims[i].Levels = append(r.Claims[i].Levels, level)
			slices.Sort(r.Claims[i].Levels)
		}
	}
}

// Of is rule's added rounds (zero when it took none).
func (r *Rounds) Of(rule string) ClaimRounds {
	if r != nil {
		for _, c := range r.Claims {
			if c.Rule == rule {
				return c
			}
		}
	}
	return ClaimRounds{Rule: rule}
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
	// Sharpen: a "partly" whose interval straddles an edge of the "yes" band
	// (more rounds could move it to yes, or settle it at partly): reproduce's
	// precision loop adds rounds to it as to an inconclusive claim. Not saved.
	Sharpen bool `json:"-"`
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
