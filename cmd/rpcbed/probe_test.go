package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// rpcbed probe prints, per CPU and kind, min/median/max and the spread; bad
// flags are usage errors (exit 2) that name the flag.
func TestProbeCommand(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"probe", "-rounds", "3", "-gap", "0s", "-cpus", "-1,0", "-mem-steps", "2000"}, stdio{nil, &out, &errb})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	line := regexp.MustCompile(`^CPU +(-1|0) (compute|memory|cache) +probe: min [0-9.]+ ms, median [0-9.]+ ms, max [0-9.]+ ms, spread [0-9]+ % over 3 rounds$`)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 6 {
		t.Fatalf("got %d lines; want 6 (2 CPUs x 3 kinds):\n%s", len(lines), out.String())
	}
	for _, l := range lines {
		if !line.MatchString(l) {
			t.Errorf("line %q does not match %s", l, line)
		}
	}
	for _, args := range [][]string{
		{"probe", "-rounds", "0"}, {"probe", "-cpus", "x"}, {"probe", "-mem-steps", "1"}, {"probe", "-gap", "1h"}, {"probe", "extra"},
		{"probe", "-sustained", "1s"}, {"probe", "-sustained", "11m"}, {"probe", "-sustained", "-4s"},
	} {
		out.Reset()
		errb.Reset()
		if code := run(context.Background(), args, stdio{nil, &out, &errb}); code != 2 {
			t.Errorf("%v: exit %d; want 2 (%s)", args, code, errb.String())
		}
	}
}

// rpcbed probe -sustained: after the short probes, one line per CPU with the
// decode rate and its sd over 0.25 s and 1 s windows (16 slots: four 1 s windows,
// too few for 4 s ones).
func TestProbeCommandSustained(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"probe", "-rounds", "1", "-gap", "0s", "-cpus", "-1", "-mem-steps", "2000", "-sustained", "4s"}, stdio{nil, &out, &errb})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	line := regexp.MustCompile(`^CPU -1 sustained decode \(5000-item DataList, protobuf\) for 4s: median [0-9]+ decodes/s; sd of the rate over 250ms windows [0-9]+ %, 1s windows [0-9]+ % \(independent slots: [0-9]+ %\)$`)
	if len(lines) != 4 || !line.MatchString(lines[3]) {
		t.Fatalf("got:\n%s\nwant 3 short-probe lines, then one matching %s", out.String(), line)
	}
}

// sustainedLine names each window length with its sd, and says so when there
// are too few slots for any.
func TestSustainedLine(t *testing.T) {
	for _, tc := range []struct {
		rates []float64
		want  string
	}{
		{[]float64{100, 100, 100}, "CPU  1 sustained decode (5000-item DataList, protobuf) for 1s: median 100 decodes/s; sd of the rate over no window: too few slots"},
		{[]float64{100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100},
			"CPU  1 sustained decode (5000-item DataList, protobuf) for 1s: median 100 decodes/s; sd of the rate over 250ms windows 0 %, 1s windows 0 % (independent slots: 0 %)"},
	} {
		if got := sustainedLine(1, time.Second, tc.rates); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}
