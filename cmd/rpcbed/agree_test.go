package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// rpcbed agree's arguments: a pair, several pairs pooled, and what it refuses
// (an odd count, a run that does not read, named by its pair).
func TestAgreeArgs(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none")
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string // in stdout
		err  string // in stderr
	}{
		{"one pair", []string{reference, reference}, 0, "calibration (", ""},
		{"two pairs pooled", []string{reference, reference, reference, reference}, 0, "pooled over 2 pairs", ""},
		{"odd count", []string{reference, reference, reference}, 2, "", "usage: rpcbed agree"},
		{"one run", []string{reference}, 2, "", "usage: rpcbed agree"},
		{"second pair's run missing", []string{reference, reference, reference, missing}, 1, "", "pair 2:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			code := run(context.Background(), append([]string{"agree"}, tc.args...), stdio{nil, &out, &errs})
			if code != tc.code {
				t.Fatalf("exit %d; want %d\n%s", code, tc.code, errs.String())
			}
			if !strings.Contains(out.String(), tc.out) || !strings.Contains(errs.String(), tc.err) {
				t.Errorf("stdout %q, stderr %q; want %q and %q in them", out.String(), errs.String(), tc.out, tc.err)
			}
		})
	}
}
