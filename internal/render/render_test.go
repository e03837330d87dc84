package render

import (
	"bytes"
	"encoding/csv"
	"flag"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/rpcbed/rpcbed/internal/report"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// synthetic builds a small run: go and php over grpc and http, datalist 2 and 200,
// c 1 and 50, with a failed cell and a cell with one failed repeat. shift scales
// every rps (to make a second run for compare).
func synthetic(id string, shift float64) *results.Run {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	yes := true
	spec, _ := plan.ParseSpec([]byte("clients: {go: [grpc, http], php: [grpc, http]}\nitems: [2, 200]\nconcurrency: [1, 50]\nload: {duration: 1s, warmup: 0.5s}\n"))
	spec.Auth = &yes
	run := &results.Run{
		ID: id, Started: t0, Finished: t0.Add(5 * time.Minute), Runner: "local", Commit: "abc1234",
		Machine:  results.Machine{CPU: "Test CPU", Cores: 2, Kernel: "6.1.0", OS: "Debian GNU/Linux 12 (bookworm)", MemMB: 4096},
		Versions: map[string]string{"go-client grpc": "1.85.0", "php-client php": "8.2.36"},
		Spec:     spec,
		Verify: []results.Verify{
			{Pair: "go-grpc-datalist", Status: results.StatusOK, Raw: "raw/verify-go-grpc-datalist.txt"},
			{Pair: "php-http-datalist", Status: results.StatusFailed, ExitCode: 3, Error: "exit code 3 (wrong response): got 3 items; want 2", Raw: "raw/verify-php-http-datalist.txt"},
		},
	}
	for k, c := range spec.Plan() {
		res := results.CellResult{Name: c.Name(), Cell: c, Load: c.Load, Status: results.StatusOK, Started: t0, Finished: t0.Add(5 * time.Second)}
		if c.Client == "php" && c.Protocol == "http" {
			res.Status, res.Error = results.StatusFailed, "verify failed, not timed: exit code 3 (wrong response): got 3 items; want 2"
			run.Cells = append(run.Cells, res)
			continue
		}
		base := 1000.0 * float64(k+1)
		if c.Client == "php" {
			base /= 4
		}
		for i := 1; i <= 3; i++ {
			rps := (base + float64(i*10)) * shift
			rep := results.Repeat{Index: i, Raw: "raw/" + c.Name() + "-r" + string(rune('0'+i)) + ".txt", WallS: 1.6, ClientCPUS: 0.5, ServerCPUS: 0.4, ServerCalls: int64(rps)}
			if c.Name() == "go-http-datalist-200-c50" && i == 2 {
				rep.ExitCode, rep.Error = 1, "exit code 1: boom"
				res.Repeats = append(res.Repeats, rep)
				res.Error = "r2: exit code 1: boom"
				continue
			}
			r := &report.Report{DocumentLength: int64(28*c.Items + 29), Concurrency: c.Concurrency, TimeTakenSeconds: 1, Complete: int64(rps), RequestsPerSecond: rps,
				Rpcbed: &report.Extra{Client: c.Client, Protocol: c.Protocol, Call: c.Call, Items: c.Items, P50Us: int64(500 + 100*k), P99Us: int64(2000 + 300*k + 10*i),
					WarmupCalls: int64(rps / 2), CPUUserSeconds: 0.3, CPUSystemSeconds: 0.1}}
			rep.Report = r
			rep.Metrics = results.Metrics{RPS: rps, P50Us: float64(r.Rpcbed.P50Us), P99Us: float64(r.Rpcbed.P99Us),
				ClientCPUUs: 0.4e6 / rps, ServerCPUUs: 0.4e6 / rps, ClientCPUProcessUs: 0.5e6 / (rps * 1.5),
				ClientCallsPerCPUS: rps / 0.4, ServerCallsPerCPUS: rps / 0.4, ClientBusy: 0.4, ServerBusy: 0.4,
				BytesPerResponse: r.DocumentLength, Complete: r.Complete}
			rep.Window = &results.Window{Seconds: 1, Source: "report", ClientCPUS: 0.4, ServerCPUS: 0.4, ServerKnown: true,
				ClientCores: 1, ServerCores: 1, ClientBusy: 0.4, ServerBusy: 0.4, MachineKnown: true, MachineBusy: 0.9, OutsideCores: 0.1}
			switch {
			case c.Name() == "go-grpc-datalist-200-c50":
				// The server's core is saturated.
				rep.Metrics.ServerBusy, rep.Window.ServerBusy = 0.97, 0.97
			case c.Name() == "php-grpc-datalist-2-c50":
				// The client's core is saturated; one repeat claims more than a core.
				rep.Metrics.ClientBusy, rep.Window.ClientBusy = 0.95, 0.95
				if i == 3 {
					rep.Metrics.ClientBusy, rep.Window.ClientBusy, rep.Metrics.CPUNotUsed = 1.3, 1.3, true
					rep.Flags = []string{results.FlagCPUInvariant}
					rep.Notes = []string{results.FlagCPUInvariant + ": client busy 1.30 cores over the 1.000 s window; it may use 1"}
				}
			case c.Name() == "go-http-datalist-2-c1":
				// A noisy neighbour: the repeats spread and one saw steal.
				rep.Metrics.RPS *= 1 + 0.1*float64(i)
				if i == 2 {
					rep.Window.StealCores = 0.05
				}
			}
			res.Repeats = append(res.Repeats, rep)
		}
		if c.Name() != "go-http-datalist-2-c50" { // a run without a summary saved: computed when rendered
			res.Summary = res.Summarize()
		}
		run.Cells = append(run.Cells, res)
	}
	return run
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	file := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/render -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./internal/render -update rewrites it):\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestGoldens(t *testing.T) {
	run := synthetic("20261130T120000Z", 1)
	for _, tc := range []struct {
		name string
		r    Renderer
	}{
		{"matrix.csv", CSV},
		{"matrix.md", Markdown},
		{"matrix.json", JSON},
		{"bench.txt", Bench},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.r(&b, run); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, b.Bytes())
		})
	}
}

func TestCSVShape(t *testing.T) {
	var b bytes.Buffer
	run := synthetic("x", 1)
	if err := CSV(&b, run); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(recs), len(run.Cells)+1; got != want {
		t.Errorf("got %d rows; want %d (header + one per cell)", got, want)
	}
	for i, r := range recs {
		if len(r) != len(CSVHeader) {
			t.Errorf("row %d: got %d fields; want %d", i, len(r), len(CSVHeader))
		}
	}
}

// bench.txt must be what benchstat reads: every repeat with a report is one result.
func TestBenchReadsAsGoBenchmarkFormat(t *testing.T) {
	var b bytes.Buffer
	run := synthetic("x", 1)
	if err := Bench(&b, run); err != nil {
		t.Fatal(err)
	}
	r := benchfmt.NewReader(&b, "bench.txt")
	n, units := 0, map[string]bool{}
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			n++
			for _, v := range rec.Values {
				units[v.Unit] = true
			}
		case *benchfmt.SyntaxError:
			t.Errorf("syntax error: %v", rec)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, c := range run.Cells {
		want += len(c.Values(results.RPS))
	}
	if n != want {
		t.Errorf("got %d results; want %d", n, want)
	}
	for _, u := range []string{"sec/op", "req/s", "p99-us", "client-cpu-us/op", "server-cpu-us/op"} {
		if !units[u] {
			t.Errorf("unit %s missing (got %v)", u, units)
		}
	}
}

func TestPlotsWritten(t *testing.T) {
	dir := t.TempDir()
	files, err := Plots(dir, synthetic("x", 1))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"rps-vs-concurrency-datalist-2.png", "rps-vs-concurrency-datalist-200.svg",
		"latency-vs-items-go-c50.png", "latency-vs-items-php-c1.svg",
		"client-cpu-vs-items-c50.png", "php-go-cpu-ratio-c1.png", "php-go-cpu-ratio-c50.svg",
	}
	have := map[string]bool{}
	for _, f := range files {
		have[filepath.Base(f)] = true
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("plot %s not written (got %v)", w, files)
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasSuffix(f, ".png"):
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			if sz := img.Bounds().Size(); sz.X < 400 || sz.Y < 200 {
				t.Errorf("%s: got %v; want at least 400x200", f, sz)
			}
		case strings.HasSuffix(f, ".svg"):
			if !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("</svg>")) {
				t.Errorf("%s: not an SVG document (%d bytes)", f, len(b))
			}
		}
	}
}

func TestCompare(t *testing.T) {
	a, b := synthetic("a", 1), synthetic("b", 1.5)
	fiveRepeats(a, b) // go-grpc-datalist-2-c1
	changes := Compare(a, b)
	byCell := map[string]CellChange{}
	for _, c := range changes {
		byCell[c.Cell] = c
	}
	if _, ok := byCell["php-http-datalist-2-c1"]; ok {
		t.Error("a cell failed on both sides was compared")
	}
	for _, tc := range []struct {
		cell, metric string
		significant  bool
		delta        string
	}{
		{"go-grpc-datalist-2-c1", "req/s", true, "+50.00%"},
		// 3 vs 3 rounds: Mann-Whitney's smallest p is 0.1, but +50 % lies beyond the
		// interval (quiet rounds and a 6 % run shift): the interval tells.
		{"go-grpc-datalist-2-c50", "req/s", true, "+50.00%"},
		{"go-grpc-datalist-2-c1", "p99", false, "~"}, // unchanged
	} {
		var ch *Change
		for i, c := range byCell[tc.cell].Changes {
			if c.Metric == tc.metric {
				ch = &byCell[tc.cell].Changes[i]
			}
		}
		if ch == nil {
			t.Errorf("%s %s: not compared", tc.cell, tc.metric)
			continue
		}
		if ch.Significant != tc.significant || ch.Delta != tc.delta {
			t.Errorf("%s %s: got significant=%v delta %q (p=%.3f); want %v %q", tc.cell, tc.metric, ch.Significant, ch.Delta, ch.P, tc.significant, tc.delta)
		}
	}
	var out bytes.Buffer
	if err := CompareMarkdown(&out, a, b, changes); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "| go-grpc-datalist-2-c1 |") || !strings.Contains(out.String(), "+50.00% [") || !strings.Contains(out.String(), "faster, better") || !strings.Contains(out.String(), "~ [") {
		t.Errorf("compare table lacks the significant change:\n%s", out.String())
	}
}

// A run with one size and one concurrency still plots (log axes over one value).
func TestPlotsSinglePoint(t *testing.T) {
	run := synthetic("x", 1)
	run.Cells = run.Cells[:1]
	files, err := Plots(t.TempDir(), run)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Error("no plot written")
	}
}

// An unfinished run names the cells of its plan that have no result, in
// matrix.md and as status "missing" rows of matrix.csv (issue 18 #10).
func TestMissingCellsAreNamed(t *testing.T) {
	run := synthetic("x", 1)
	var kept []results.CellResult
	for _, c := range run.Cells {
		if c.Name != "php-grpc-datalist-200-c50" && c.Name != "go-http-datalist-2-c1" {
			kept = append(kept, c)
		}
	}
	run.Cells = kept
	var md, cb bytes.Buffer
	if err := Markdown(&md, run); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"16 cells: 10 ok, 4 failed, 2 not run", "## Not run", "- go-http-datalist-2-c1\n", "- php-grpc-datalist-200-c50\n"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("matrix.md lacks %q:\n%s", want, md.String())
		}
	}
	if err := CSV(&cb, run); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&cb).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(recs), len(run.Spec.Plan())+1; got != want {
		t.Errorf("got %d rows; want %d (one per cell of the plan)", got, want)
	}
	missing := 0
	for _, r := range recs[1:] {
		if r[8] == "missing" {
			missing++
		}
	}
	if missing != 2 {
		t.Errorf("got %d missing rows; want 2", missing)
	}
}

// Agree: cells within ±10 % count as agreeing, per figure; a cell outside is
// listed with whether the other run's median lies in its interval; calibration
// counts the cells whose intervals hold the other run's median.
func TestAgree(t *testing.T) {
	a, b := synthetic("a", 1), synthetic("b", 1)
	for i := range b.Cells {
		c := &b.Cells[i]
		for j := range c.Repeats {
			switch c.Name {
			case "go-grpc-datalist-2-c1": // throughput 20 % up, not noisy in either run
				c.Repeats[j].Metrics.RPS *= 1.2
			case "go-http-datalist-2-c1": // noisy in both runs, client CPU 30 % up
				c.Repeats[j].Metrics.ClientCPUUs *= 1.3
			}
		}
	}
	for i := range a.Cells { // B's cores ran the probe 10 % slower (client) and as fast (server)
		for j := range a.Cells[i].Repeats {
			a.Cells[i].Repeats[j].Probe = &results.Probe{ClientUs: [2]float64{6000, 6000}, ServerUs: [2]float64{5000, 5000}}
			b.Cells[i].Repeats[j].Probe = &results.Probe{ClientUs: [2]float64{6600, 6600}, ServerUs: [2]float64{5000, 5000}}
		}
	}
	ag := Agree(a, b, 0.10, 0.9)
	want := map[string][2]int{"req/s": {11, 12}, "client CPU/call": {11, 12}, "server CPU/call": {12, 12}}
	for _, f := range ag.Figures {
		if w := want[f.Name]; f.Agree != w[0] || f.Cells != w[1] {
			t.Errorf("%s: got %d of %d; want %d of %d", f.Name, f.Agree, f.Cells, w[0], w[1])
		}
	}
	if len(ag.Outside) != 2 || ag.Outside[0].Cell != "go-grpc-datalist-2-c1" || ag.Outside[1].Cell != "go-http-datalist-2-c1" {
		t.Errorf("outside: got %+v; want go-grpc-datalist-2-c1 and go-http-datalist-2-c1", ag.Outside)
	}
	if len(ag.Calibration) != 3 {
		t.Fatalf("calibration: %d figures; want 3", len(ag.Calibration))
	}
	if c := ag.Calibration[0]; c.Cells != 12 || c.BInA > 11 {
		t.Errorf("req/s calibration: B in A's interval %d of %d; want at most 11 of 12 (a cell moved 20 %% on quiet rounds)", c.BInA, c.Cells)
	}
	// 11 of 12 is over 90 % and no verdict flipped: the goal holds; at 95 % it does not.
	if !ag.Met(0.9) || ag.Met(0.95) {
		t.Errorf("goal: met at 90 %% %v, at 95 %% %v; want met, not met", ag.Met(0.9), ag.Met(0.95))
	}
	var out bytes.Buffer
	ag.Write(&out, 0.9)
	for _, w := range []string{"req/s            11 of 12 cells within ±10 %: 92 %",
		"CPU probe, client core: median 6000 µs in A, 6600 µs in B (+10 %: the same work took that much longer in B)",
		"CPU probe, server core: median 5000 µs in A, 5000 µs in B (+0 %: the same time in both runs)", "go-grpc-datalist-2-c1: req/s 1020 -> 1224 (+20 %, outside A's interval)", "calibration", "B in A's: 11 of 12, 92 %", "): met"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
}
