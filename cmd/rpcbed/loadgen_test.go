package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// loadgenRounds writes a kept bench-loadgen run (KEEP=DIR's files) of fixed,
// made-up figures: 6 closed-loop rounds per tool, plaintext and over TLS (go-client x1.45 of ghz's
// requests/s, about wrk's on HTTP with a spread that holds 1) and 4 open-loop
// rounds at 5000/s (both held) and 30000/s (vegeta 3 % short).
func loadgenRounds(t *testing.T, dir string) {
	t.Helper()
	jit := [][]float64{
		{0.97, 1.02, 0.99, 1.03, 1.00, 0.98},
		{1.01, 0.98, 1.02, 0.99, 1.00, 1.03},
	}
	files := map[string]string{
		"params":     "50 5 10\n",
		"rates":      "5000 30000\n",
		"vegeta-max": "highest rate vegeta held in 3 s trials: 25000/s\n",
	}
	for i, tl := range []struct {
		name                 string
		rps, cpuUs, serverUs float64
		p50                  int
	}{
		{"ghz", 30000, 34.0, 22.8, 1340},
		{"go-client-grpc", 43500, 17.7, 19.6, 1027},
		{"wrk", 77800, 6.6, 16.0, 553},
		{"go-client-http", 76900, 6.2, 17.0, 210},
		// Over TLS: the record cost on both sides.
		{"tls-ghz", 24000, 45.0, 30.1, 1650},
		{"tls-go-client-grpc", 36000, 24.0, 26.0, 1210},
		{"tls-wrk", 52000, 10.5, 24.0, 820},
		{"tls-go-client-http", 55000, 9.8, 23.5, 300},
	} {
		a, b := jit[i%2], jit[(i+1)%2]
		for r := range 6 {
			reqs := math.Round(tl.rps * 5 * a[r])
			files[fmt.Sprintf("%s.%d", tl.name, r+1)] = fmt.Sprintf("%.0f 5.00%d %.4f %.2f %.0f 1000 %d\n",
				reqs, r, reqs*tl.cpuUs*1e-6*b[r], reqs*tl.serverUs*1e-6*a[r], 880*b[r], tl.p50+10*r)
		}
	}
	for _, rate := range []float64{5000, 30000} {
		for r := range 4 {
			short := 1.0
			if rate == 30000 {
				short = 0.97
			}
			n := rate * 10 * short
			files[fmt.Sprintf("open-vegeta-%.0f.%d", rate, r+1)] = fmt.Sprintf("%.0f 0 10.000000 %.1f %d %d %d %d %.4f\n",
				n, rate*short, 480+r, 2100+r, 160+r, 1500+r, n*80e-6*jit[0][r]*5000/rate)
			files[fmt.Sprintf("open-go-client-%.0f.%d", rate, r+1)] = fmt.Sprintf("%.0f 0 10.000000 %.1f %d %d - - %.4f\n",
				rate*10, rate-0.3, 150+r, 470+r, rate*10*40e-6*jit[1][r]*5000/rate)
		}
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// rpcbedBin is a BIN directory holding only rpcbed: this test binary, run as
// rpcbed (TestMain, RPCBED_TEST_AS_RPCBED).
func rpcbedBin(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	script := "#!/bin/sh\nRPCBED_TEST_AS_RPCBED=1 exec '" + strings.ReplaceAll(self, "'", `'\''`) + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "rpcbed"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestBenchLoadgenFrom: scripts/bench-loadgen.sh with FROM=DIR prints its tables,
// its ratios with their intervals and its goals from a kept run's round files
// alone (BIN holds only rpcbed: no tool runs), as testdata/bench-loadgen-from.golden
// has them (go test -update).
func TestBenchLoadgenFrom(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	rounds := t.TempDir()
	loadgenRounds(t, rounds)
	bin := rpcbedBin(t)
	cmd := exec.Command("bash", filepath.Join("..", "..", "scripts", "bench-loadgen.sh"))
	cmd.Env = append(os.Environ(), "FROM="+rounds, "BIN="+bin)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bench-loadgen.sh FROM=...: %v\n%s", err, errb.String())
	}
	if errb.Len() > 0 {
		t.Errorf("stderr: %s", errb.String())
	}
	golden := filepath.Join("testdata", "bench-loadgen-from.golden")
	if *update {
		if err := os.WriteFile(golden, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if string(out) != string(want) {
		t.Errorf("bench-loadgen.sh's summary differs from %s (go test -update):\ngot:\n%s\nwant:\n%s", golden, out, want)
	}
	// Every ratio of the goals block carries its interval and rounds.
	goals := string(out[strings.Index(string(out), "== goals"):])
	n := 0
	for _, l := range strings.Split(goals, "\n") {
		if strings.Contains(l, "cpu/request") || strings.Contains(l, "requests/s") {
			n++
			if !regexp.MustCompile(`: +x[0-9.]+ \[[0-9.]+, [0-9.]+\] over [46] rounds: `).MatchString(l) {
				t.Errorf("goal line without its interval: %q", l)
			}
		}
	}
	if n != 12 {
		t.Errorf("%d ratio lines in the goals block; want 12 (5 closed loop, 5 over TLS, 2 open loop)", n)
	}

	// A directory without a kept run is refused, and a round that cannot give a
	// ratio is said on its line without stopping the summary.
	cmd = exec.Command("bash", filepath.Join("..", "..", "scripts", "bench-loadgen.sh"))
	cmd.Env = append(os.Environ(), "FROM="+t.TempDir(), "BIN="+bin)
	if b, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(b), "holds no kept run") {
		t.Errorf("FROM=an empty directory: %v, %s; want it refused", err, b)
	}
	if err := os.WriteFile(filepath.Join(rounds, "wrk.3"), []byte("0 5.0 0 0 0 1000 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command("bash", filepath.Join("..", "..", "scripts", "bench-loadgen.sh"))
	cmd.Env = append(os.Environ(), "FROM="+rounds, "BIN="+bin)
	b, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(b), "goal go-client/wrk requests/s (HTTP): no ratio (rpcbed ratio failed") ||
		!strings.Contains(string(b), "line 3: B's value 0 is not positive") || !strings.Contains(string(b), "== goals") {
		t.Errorf("a round with no requests: %v\n%s\nwant its ratios refused on their lines, the run's summary complete", err, b)
	}
}

// TestBenchLoadgenDefaults: docs/loadgen.md's command line names the script's
// defaults for the rounds and their lengths.
func TestBenchLoadgenDefaults(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("..", "..", "scripts", "bench-loadgen.sh"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "loadgen.md"))
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^make bench-loadgen +# (.*)$`).FindSubmatch(doc)
	if line == nil {
		t.Fatal("docs/loadgen.md: no `make bench-loadgen  # DEFAULTS` line")
	}
	for _, name := range []string{"C", "DUR", "ROUNDS", "OPEN_DUR", "OPEN_ROUNDS"} {
		m := regexp.MustCompile(`(?m)^` + name + `=\$\{` + name + `:-([^}]*)\}$`).FindSubmatch(script)
		if m == nil {
			t.Errorf("scripts/bench-loadgen.sh: no %s=${%s:-DEFAULT}", name, name)
			continue
		}
		if want := name + "=" + string(m[1]); !strings.Contains(" "+string(line[1])+" ", " "+want+" ") {
			t.Errorf("docs/loadgen.md says %q; want it to name the script's default %s", line[1], want)
		}
	}
}
