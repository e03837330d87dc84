package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/cost"
	"github.com/rpcbed/rpcbed/internal/cost/costrender"
)

// costSpec is one cell, client side: go-client over gRPC, 200 items, 40 and 140
// calls under callgrind (as cost.yaml), its peer's bytes 1 ms late (about 6 s per
// cost run on a quiet 2-core machine, 12 s with both cores busy). The cell is
// chosen for the spread of two runs of one build, which the gate must pass:
//   - the 2-item cell this test used before (20 and 1020 calls) moves with the
//     scheduler's wait path on every call (a fixed few hundred instructions that
//     vary run to run, about 1 % of a 76 k call): a quiet fresh-clone CI run read
//     75,296 and 76,528 (+1.64 %) against a padded build at +3.69 %, and earlier
//     runs spread 1.1-2.5 % (docs/cost.md, "What moved the counts").
//   - at 200 items the same wait path is a smaller share of a 408 k call: in six
//     tests (2026-12-02, five quiet, one with two busy loops on both cores) a and b
//     of one build were 0.02-0.54 % apart. But it grows with the load around the
//     test: a fresh-clone CI run on 2026-12-04, its other packages' tests beside it
//     on a slower machine, read 402,397 and 409,332 (+1.72 %), with 22.7 and 28.4
//     system calls per call: each extra wait is a trip through the scheduler and
//     the poller. go-client collects in the window (gc_cycles 1/2); the
//     collector's instructions are apart from the gated figure (cost.md).
const costSpec = `
clients: {go: [grpc]}
items: [200]
sides: [client]
calls: {short: 40, long: 140}
servers: {grpc: go}
gogc: "100"
read_delay: 1ms
`

// padRounds is the busy loop the regressed build adds to every call (6
// instructions a round, 28.8 k): about +7 % instructions per call, a real
// regression the gate must catch. Half of it (2,400 rounds) measured +2.69 % to
// +3.92 % against run a in the six tests of 2026-12-02, and +5.45 % on 2026-12-04
// (against that CI run's low a).
const padRounds = "4800"

// gateMax is the gate's -max (%) here, set between the two measured spreads: one
// build's two runs at most 1.72 % apart (the loaded CI run above), the padded
// build 7 % less that spread: margins of about 2 % on either side. At 1.5 % the
// loaded CI run failed.
const gateMax = "3.5"

// TestCostAndGate runs go-client under callgrind for real (rpcbed cost), twice
// with one build and once with a build that adds a fixed per-call workload
// (internal/load.costPad), and checks that rpcbed gate -max gateMax passes the
// first pair and catches the regression.
func TestCostAndGate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go-client under valgrind")
	}
	if _, err := exec.LookPath("valgrind"); err != nil {
		if strings.Contains(os.Getenv("RPCBED_REQUIRE"), "valgrind") {
			t.Fatal("RPCBED_REQUIRE has valgrind, but valgrind is not installed")
		}
		t.Skip("valgrind not installed (apt-get install valgrind)")
	}
	root := buildGo(t)
	padded := t.TempDir()
	cmd := exec.Command("go", "build", "-ldflags", "-X github.com/rpcbed/rpcbed/internal/load.costPad="+padRounds,
		"-o", filepath.Join(padded, "bin", "go-client"), "./go-client")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build (padded): %v\n%s", err, out)
	}
	if err := os.Symlink(filepath.Join(root, "bin", "go-server"), filepath.Join(padded, "bin", "go-server")); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(t.TempDir(), "cost.yaml")
	if err := os.WriteFile(spec, []byte(costSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute) // about 40 s at load 3-5; minutes on a busy machine
	defer cancel()
	measure := func(name, root string) string {
		t.Helper()
		dir := filepath.Join(t.TempDir(), name)
		var out, errb bytes.Buffer
		t0 := time.Now()
		code := run(ctx, []string{"cost", "-spec", spec, "-root", root, "-out", dir, "-matrix", "", "-client-cpu", "", "-server-cpu", ""},
			stdio{out: &out, err: &errb})
		if code != 0 {
			t.Fatalf("rpcbed cost (%s) exit %d\n%s%s", name, code, out.String(), errb.String())
		}
		t.Logf("%s (%.0f s): %s", name, time.Since(t0).Seconds(), strings.TrimSpace(errb.String()))
		return dir
	}
	a := measure("a", root)
	b := measure("b", root)
	p := measure("padded", padded)

	res, err := cost.LoadResult(a)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != 1 || res.Cells[0].Status != cost.StatusOK {
		t.Fatalf("cells: %+v; want go-grpc-datalist-200-c1/client ok", res.Cells)
	}
	c := res.Cells[0].PerCall
	// Sanity bounds, far from the measured figure (408 k instructions, 5570 bytes
	// in, 92 out, 22-26 system calls per call): the figures are counts of one call.
	for _, f := range []struct {
		name     string
		got      float64
		min, max float64
	}{
		{"instructions", c.Ir, 100_000, 4_000_000},
		{"est. cycles", c.Cycles, c.Ir, 10 * c.Ir},
		{"bytes in", c.BytesIn, 1000, 100_000},
		{"bytes out", c.BytesOut, 30, 1000},
		{"syscalls", c.Syscalls, 2, 200},
	} {
		if f.got < f.min || f.got > f.max {
			t.Errorf("%s per call = %.1f; want %.0f..%.0f", f.name, f.got, f.min, f.max)
		}
	}
	for _, f := range []string{cost.JSONFile, costrender.CSVFile, costrender.MDFile} {
		if _, err := os.Stat(filepath.Join(a, f)); err != nil {
			t.Error(err)
		}
	}

	gate := func(base, new string) (int, string) {
		var out bytes.Buffer
		code := run(ctx, []string{"gate", "-max", gateMax, base, new}, stdio{out: &out, err: &out})
		return code, out.String()
	}
	if code, out := gate(a, b); code != 0 {
		t.Errorf("gate of two runs of one build: exit %d; want 0\n%s", code, out)
	} else {
		t.Logf("gate a b:\n%s", out)
	}
	code, out := gate(a, p)
	if code != 1 || !strings.Contains(out, "go-grpc-datalist-200-c1/client") {
		t.Errorf("gate of the padded build: exit %d; want 1 and the cell printed\n%s", code, out)
	}
	pr, err := cost.LoadResult(p)
	if err != nil {
		t.Fatal(err)
	}
	growth := pr.Cells[0].PerCall.Ir/c.Ir - 1
	t.Logf("padded build: %+.2f %% instructions per call (collections in the short and long run: %v, padded %v)\n%s",
		100*growth, res.Cells[0].GCCycles, pr.Cells[0].GCCycles, out)
	if growth > 0.12 {
		t.Errorf("the padded build grew by %.1f %%: want a regression near 7 %%, not a large one", 100*growth)
	}
}
