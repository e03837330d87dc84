package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/stats"
)

// ratioRun runs `rpcbed ratio ARGS` in-process on stdin in.
func ratioRun(in string, args ...string) (code int, out, errs string) {
	var o, e bytes.Buffer
	code = run(context.Background(), append([]string{"ratio"}, args...), stdio{strings.NewReader(in), &o, &e})
	return code, o.String(), e.String()
}

// Six rounds of go-client's and wrk's requests/s (four rounds below wrk, two a
// little above: the interval holds 1).
const sixRounds = "73410 79851\n72995 74584\n74262 78958\n76011 75102\n# a comment\n\n73950 77010\n75120 74890\n"

func TestRatioCommand(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rounds")
	if err := os.WriteFile(file, []byte(sixRounds), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		in   string
		code int
		out  string // stdout, or a piece of stderr when code != 0
	}{
		{"stdin", []string{"-better", "higher", "-goal", "1", "-label", "goal go-client/wrk requests/s (HTTP)"}, sixRounds, 0,
			"goal go-client/wrk requests/s (HTTP) >= 1.00: x0.97 [0.93, 1.01] over 6 rounds: indistinguishable from 1.00\n"},
		{"file", []string{"-better", "higher", "-goal", "1", file}, "", 0, ">= 1.00: x0.97 [0.93, 1.01] over 6 rounds: indistinguishable from 1.00\n"},
		{"met", []string{"-better", "higher", "-goal", "1.3"}, "44555 30113\n42084 29231\n43565 30957\n", 0, ">= 1.30: x1.44 [1.34, 1.55] over 3 rounds: met\n"},
		{"not met", []string{"-better", "lower", "-goal", "0.45"}, "17.1 33.5\n18.2 35.3\n17.7 33.4\n", 0, "<= 0.45: x0.52 [0.49, 0.55] over 3 rounds: NOT met\n"},
		{"no goal, lower better", []string{"-better", "lower", "-label", "cpu"}, "17.1 33.5\n18.2 35.3\n17.7 33.4\n", 0, "cpu: x0.52 [0.49, 0.55] over 3 rounds: faster\n"},
		{"no goal, higher better", []string{"-better", "higher"}, "17.1 33.5\n18.2 35.3\n17.7 33.4\n", 0, "x0.52 [0.49, 0.55] over 3 rounds: slower\n"},
		{"one round", []string{"-better", "higher", "-goal", "1", "-label", "goal x"}, "73410 79851\n", 0,
			"goal x >= 1.00: x0.92 (a point ratio of 1 round: no interval from fewer than 2 rounds): no verdict\n"},
		{"no better", []string{"-goal", "1"}, sixRounds, 2, "-better is \"\"; want higher or lower"},
		{"bad better", []string{"-better", "up"}, sixRounds, 2, "want higher or lower"},
		{"bad width", []string{"-better", "higher", "-width", "-3"}, sixRounds, 2, "want 0 to 200"},
		{"negative goal", []string{"-better", "higher", "-goal", "-1"}, sixRounds, 2, "want a positive ratio"},
		{"two files", []string{"-better", "higher", file, file}, "", 2, "usage: rpcbed ratio"},
		{"missing file", []string{"-better", "higher", filepath.Join(t.TempDir(), "none")}, "", 1, "no such file"},
		{"empty", []string{"-better", "higher"}, "", 1, "stdin: no rounds"},
		{"only comments", []string{"-better", "higher"}, "# x\n\n", 1, "no rounds"},
		{"one field", []string{"-better", "higher"}, "1 2\n3\n", 1, "line 2: 1 fields; want 2"},
		{"three fields", []string{"-better", "higher"}, "1 2 3\n", 1, "line 1: 3 fields"},
		{"not a number", []string{"-better", "higher"}, "1 x\n", 1, "line 1: B's value \"x\" is not a finite number"},
		{"NaN", []string{"-better", "higher"}, "NaN 1\n", 1, "A's value \"NaN\" is not a finite number"},
		{"infinite", []string{"-better", "higher"}, "1 +Inf\n", 1, "not a finite number"},
		{"zero", []string{"-better", "higher"}, "1 2\n0 2\n", 1, "line 2: A's value 0 is not positive"},
		{"negative", []string{"-better", "higher"}, "1 -2\n", 1, "B's value -2 is not positive"},
		{"overflow", []string{"-better", "higher"}, "1e300 1e-300\n1 1\n", 1, "line 1: the ratio 1e300/1e-300 is out of range"},
		{"long line", []string{"-better", "higher"}, "1 2\n" + strings.Repeat("1", 5000) + " 2\n", 1, "line 2: longer than 4096 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := ratioRun(tc.in, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d; want %d (stderr %q)", code, tc.code, errs)
			}
			if tc.code == 0 && out != tc.out {
				t.Errorf("got  %q\nwant %q", out, tc.out)
			}
			if tc.code != 0 && !strings.Contains(errs, tc.out) {
				t.Errorf("stderr %q; want it to contain %q", errs, tc.out)
			}
		})
	}
	// One round says on stderr why there is no interval.
	if _, _, errs := ratioRun("1 2\n", "-better", "higher"); !strings.Contains(errs, "no interval can be given from fewer than 2 rounds") {
		t.Errorf("one round: stderr %q; want it to say no interval can be given", errs)
	}
}

// TestRatioGolden: the lines rpcbed ratio prints for a set of round files, one
// per goal kind and direction, against testdata/ratio.golden (go test -update).
func TestRatioGolden(t *testing.T) {
	var got strings.Builder
	for _, tc := range []struct {
		args []string
		in   string
	}{
		{[]string{"-better", "higher", "-goal", "1.3", "-label", "goal go-client/ghz requests/s (gRPC)", "-width", "51"}, "44555 30113\n42084 29231\n43565 30957\n44012 30520\n43101 29877\n44890 30811\n"},
		{[]string{"-better", "lower", "-label", "     go-client/ghz cpu/request (gRPC)", "-width", "51"}, "17.1 33.5\n18.2 35.3\n17.7 33.4\n17.4 33.9\n17.9 34.6\n17.6 34.0\n"},
		{[]string{"-better", "higher", "-goal", "1", "-label", "goal go-client/wrk requests/s (HTTP)", "-width", "51"}, sixRounds},
		{[]string{"-better", "lower", "-goal", "1", "-label", "goal go-client/wrk cpu/request (HTTP)", "-width", "51"}, "6.2 6.6\n6.2 6.9\n6.1 6.4\n6.3 6.5\n6.2 6.7\n6.1 6.6\n"},
		{[]string{"-better", "lower", "-label", "     server cpu/request under go-client/wrk (HTTP)", "-width", "51"}, "17.0 15.7\n17.1 16.8\n16.8 15.6\n16.9 16.1\n17.2 16.0\n16.7 16.2\n"},
		{[]string{"-better", "lower", "-goal", "1", "-label", "goal open loop 5000/s: cpu/request go-client/vegeta"}, "40.7 80.6\n41.3 79.0\n40.1 82.2\n"},
		{[]string{"-better", "lower", "-goal", "1", "-label", "goal open loop 30000/s: cpu/request go-client/vegeta"}, "16.3 16.1\n16.2 16.5\n"},
		{[]string{"-better", "higher", "-goal", "1", "-label", "goal one round"}, "1.02 1\n"},
		{[]string{"-better", "higher", "-goal", "1", "-label", "goal equal rounds"}, "2 1\n4 2\n6 3\n"},
		{[]string{"-better", "lower", "-goal", "0.05", "-label", "goal small"}, "0.004 1\n0.0041 1\n0.0039 1\n"},
	} {
		code, out, errs := ratioRun(tc.in, tc.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errs)
		}
		got.WriteString(out)
	}
	golden := filepath.Join("testdata", "ratio.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if got.String() != string(want) {
		t.Errorf("rpcbed ratio's lines differ from %s (go test -update):\ngot:\n%s\nwant:\n%s", golden, got.String(), want)
	}
}

// TestRatioInvariant: over seeded random rounds (2 to 12, ratios 0.5 to 2, noise
// 0 to 30 %) and goals, the centre lies inside the interval, the interval is
// ordered and positive, and the verdict is the one its position says: met only
// when the whole interval is on the better side of the goal, NOT met only when it
// is wholly on the worse side, indistinguishable when it holds the goal; the same
// against 1 without a goal. The printed line carries the verdict.
func TestRatioInvariant(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 6))
	for trial := range 5000 {
		n := 2 + r.IntN(11)
		truth, sd := math.Exp(0.7*(2*r.Float64()-1)), 0.3*r.Float64()
		var a, b []float64
		for range n {
			drift := math.Exp(0.2 * r.NormFloat64())
			a = append(a, 1000*truth*drift*math.Exp(sd*r.NormFloat64()))
			b = append(b, 1000*drift*math.Exp(sd*r.NormFloat64()))
		}
		goal := 0.0
		if r.IntN(4) > 0 {
			goal = math.Exp(0.7 * (2*r.Float64() - 1))
		}
		higher := r.IntN(2) == 0
		j := judgeRatio(a, b, goal, higher)
		iv := j.Ratio.Interval
		name := fmt.Sprintf("trial %d (%d rounds, goal %.3f, higher %v): %+v", trial, n, goal, higher, iv)
		if !iv.Valid() || j.Rounds != n || iv.N != n {
			t.Fatalf("%s: want a valid interval over %d rounds", name, n)
		}
		if !(iv.Low <= iv.Center && iv.Center <= iv.High) || j.Point != iv.Center {
			t.Fatalf("%s: the centre (point %v) is not inside the interval", name, j.Point)
		}
		ref := goal
		if ref == 0 {
			ref = 1
		}
		good := (higher && iv.Low > ref) || (!higher && iv.High < ref)
		bad := (higher && iv.High < ref) || (!higher && iv.Low > ref)
		want := stats.Indistinguishable
		switch {
		case good && goal > 0:
			want = goalMet
		case bad && goal > 0:
			want = goalNotMet
		case good:
			want = stats.Faster
		case bad:
			want = stats.Slower
		case goal > 0:
			want = stats.Indistinguishable + " from " + fmtRatio(goal)
		}
		if j.Verdict != want {
			t.Fatalf("%s: verdict %q; want %q", name, j.Verdict, want)
		}
		if line := ratioLine("x", 0, j); !strings.HasSuffix(line, fmt.Sprintf(" over %d rounds: %s", n, want)) {
			t.Fatalf("%s: line %q does not end in its verdict", name, line)
		}
	}
}

// FuzzReadRounds: no input panics the round reader or the command; rounds it
// accepts are positive and finite, A's and B's alike in number, and the command
// prints one line for them.
func FuzzReadRounds(f *testing.F) {
	for _, s := range []string{sixRounds, "", "1 2\n", "1e300 1e-300\n", "0x1p-3 4\n", "# c\n\n1 1\n1 1", "1 2 3\n", "NaN Inf\n", "-0 1\n", "1\t2\r\n3 4\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		a, b, err := readRounds(strings.NewReader(in))
		code, out, errs := ratioRun(in, "-better", "lower", "-goal", "1")
		if err != nil {
			if code != 1 || out != "" {
				t.Fatalf("readRounds refused (%v) but the command exited %d printing %q", err, code, out)
			}
			return
		}
		if len(a) == 0 || len(a) != len(b) {
			t.Fatalf("%d and %d values", len(a), len(b))
		}
		for i := range a {
			for _, x := range []float64{a[i], b[i], a[i] / b[i]} {
				if !(x > 0) || math.IsInf(x, 0) {
					t.Fatalf("round %d: %v / %v accepted", i+1, a[i], b[i])
				}
			}
		}
		if code != 0 || strings.Count(out, "\n") != 1 {
			t.Fatalf("exit %d, output %q (stderr %q); want one line", code, out, errs)
		}
	})
}
