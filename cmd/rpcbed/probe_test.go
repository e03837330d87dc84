package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

// rpcbed probe prints, per CPU and kind, min/median/max and the spread; bad
// flags are usage errors (exit 2) that name the flag.
func TestProbeCommand(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"probe", "-rounds", "3", "-gap", "0s", "-cpus", "-1,0", "-mem-steps", "2000"}, stdio{nil, &out, &errb})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	line := regexp.MustCompile(`^CPU +(-1|0) (compute|memory) +probe: min [0-9.]+ ms, median [0-9.]+ ms, max [0-9.]+ ms, spread [0-9]+ % over 3 rounds$`)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d lines; want 4 (2 CPUs x 2 kinds):\n%s", len(lines), out.String())
	}
	for _, l := range lines {
		if !line.MatchString(l) {
			t.Errorf("line %q does not match %s", l, line)
		}
	}
	for _, args := range [][]string{
		{"probe", "-rounds", "0"}, {"probe", "-cpus", "x"}, {"probe", "-mem-steps", "1"}, {"probe", "-gap", "1h"}, {"probe", "extra"},
	} {
		out.Reset()
		errb.Reset()
		if code := run(context.Background(), args, stdio{nil, &out, &errb}); code != 2 {
			t.Errorf("%v: exit %d; want 2 (%s)", args, code, errb.String())
		}
	}
}
