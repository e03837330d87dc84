package results

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/report"
)

// Every flag has one rule, and a rule's reading names the threshold its check
// compares against (the legend cannot drift from the check).
func TestFlagRules(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range FlagRules {
		if seen[r.Flag] {
			t.Errorf("%s: two rules; want one", r.Flag)
		}
		seen[r.Flag] = true
		if r.Means == "" || r.Reading == "" {
			t.Errorf("%s: means %q, reading %q; want both", r.Flag, r.Means, r.Reading)
		}
		if r.Threshold == 0 {
			continue
		}
		want := fmt.Sprintf("%.0f", r.Threshold) // a count of calls
		if r.Threshold < 1 {
			want = fmt.Sprintf("%.0f %%", r.Threshold*100) // a share
		}
		if !strings.Contains(r.Means, want) {
			t.Errorf("%s: means %q; want its threshold %q in it", r.Flag, r.Means, want)
		}
	}
	for _, f := range []string{FlagCPUInvariant, FlagCPUScope, FlagWarmup, FlagServerRestarted, FlagJIT, FlagTLSMismatch, FlagConnectMismatch,
		FlagNoisy, FlagWindowSkew, FlagFewCalls, FlagLinkInvariant} {
		if _, ok := RuleOf(f); !ok {
			t.Errorf("%s: no rule; want one in FlagRules", f)
		}
	}
}

// What a flag drops is dropped: the CPU figures, or the whole repeat with the
// flag's notes as its error; other flags leave the figures.
func TestDropFlagged(t *testing.T) {
	for _, tc := range []struct {
		flag   string
		cpu    bool // CPU figures still used
		report bool // the repeat still used
	}{
		{FlagJIT, true, true},
		{FlagCPUScope, false, true},
		{FlagCPUInvariant, false, true},
		{FlagLinkInvariant, true, false},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			r := Repeat{Report: &report.Report{Complete: 100}}
			r.Flag(tc.flag, "why")
			r.Notes = append(r.Notes, "another note")
			r.DropFlagged()
			if got := !r.Metrics.CPUNotUsed; got != tc.cpu {
				t.Errorf("CPU used %v; want %v", got, tc.cpu)
			}
			if got := r.Report != nil; got != tc.report {
				t.Errorf("report kept %v; want %v", got, tc.report)
			}
			if want := tc.flag + ": " + tc.flag + ": why"; !tc.report && r.Error != want {
				t.Errorf("error %q; want %q", r.Error, want)
			}
		})
	}
}
