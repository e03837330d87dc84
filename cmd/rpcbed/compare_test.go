package main

import (
	"strings"
	"testing"
)

// compare with fewer or more than two runs says what is missing, not only the usage.
func TestCompareRunCount(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"none", []string{"compare"}, "rpcbed compare: no runs given: want two, RUN_A and RUN_B"},
		{"one", []string{"compare", "results/reference"}, "rpcbed compare: one run given (results/reference): want a second, RUN_B, to compare it with"},
		{"one with a flag", []string{"compare", "results/reference", "-o", "x.md"}, "one run given (results/reference)"},
		{"three", []string{"compare", "a", "b", "c"}, "rpcbed compare: 3 runs given (a, b, c): want two"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := rpcbed(t, "", tc.args...)
			if code != 2 || out != "" || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing, stderr with %q", code, out, errs, tc.want)
			}
		})
	}
	code, _, errs := rpcbed(t, "", "compare", "-h")
	if code != 0 || strings.Contains(errs, "Mann-Whitney U, as") || !strings.Contains(errs, "The interval is the verdict's only") {
		t.Errorf("compare -h: exit %d, %q; want the interval named as the verdict's ground", code, errs)
	}
}
