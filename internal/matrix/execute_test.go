package matrix

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/matrix/matrixtest"
	"github.com/rpcbed/rpcbed/internal/measure"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"

	"github.com/rpcbed/rpcbed/internal/analysis"
)

const fakeSpec = `
clients: {go: [grpc, thrift, http], java: [dubbo]}
items: [2, 200]
concurrency: [1, 4]
load: {n: 100}
repeats: 2
`

func TestExecuteRecordsFailedCells(t *testing.T) {
	spec, err := plan.ParseSpec([]byte(fakeSpec))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fr := matrixtest.New()
	fr.Outcome["go-thrift-datalist-2-c1-"] = "exit1"
	fr.Outcome["go-thrift-datalist-200-c4-r2"] = "garbage"
	fr.Outcome["verify-go-http-datalist"] = "exit3"
	run, err := Execute(context.Background(), Options{Spec: spec, Dir: dir, Runner: fr, RunnerName: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(run.Cells), len(spec.Plan()); got != want {
		t.Fatalf("got %d cells; want %d", got, want)
	}
	byName := map[string]results.CellResult{}
	for _, c := range run.Cells {
		byName[c.Name] = c
	}
	for _, tc := range []struct {
		cell, status, errPart string
		repeatsWithReport     int
	}{
		{"go-grpc-datalist-2-c1", results.StatusOK, "", 2},
		{"go-thrift-datalist-2-c1", results.StatusFailed, "r1: exit code 1: boom", 0},
		{"go-thrift-datalist-200-c4", results.StatusOK, "r2: report:", 1},
		{"go-http-datalist-2-c1", results.StatusFailed, "verify failed, not timed: exit code 3 (wrong response)", 0},
		{"go-http-datalist-200-c4", results.StatusFailed, "verify failed", 0},
		{"java-dubbo-datalist-200-c4", results.StatusOK, "", 2},
	} {
		c, ok := byName[tc.cell]
		if !ok {
			t.Errorf("%s: no result", tc.cell)
			continue
		}
		with := 0
		for _, r := range c.Repeats {
			if r.Report != nil {
				with++
			}
		}
		if c.Status != tc.status || !strings.Contains(c.Error, tc.errPart) || with != tc.repeatsWithReport {
			t.Errorf("%s: got status %s, error %q, %d reports; want %s, error containing %q, %d reports",
				tc.cell, c.Status, c.Error, with, tc.status, tc.errPart, tc.repeatsWithReport)
		}
	}
	for _, r := range fr.TimedRuns() {
		if strings.HasPrefix(r, "go-http-") {
			t.Errorf("cell run %s was timed although its verify failed", r)
		}
	}
	// Figures: the fake server's /stats says 25 µs of CPU per call; the fake
	// client's whole process used 50 ms for 100 + 9 warm-up + 1 verify calls, and
	// 3 ms over its 20 ms window.
	ok := byName["go-grpc-datalist-200-c4"]
	m := ok.Repeats[0].Metrics
	w := ok.Repeats[0].Window
	if w == nil || w.Source != "report" || !w.ServerKnown || !w.MachineKnown {
		t.Fatalf("window: got %+v; want the report's, with server and machine figures", w)
	}
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"rps", m.RPS, 200},
		{"server cpu us/call", round(m.ServerCPUUs), 25},
		{"client cpu us/call (window)", round(m.ClientCPUUs), 30},
		{"client cpu us/call (process)", round(m.ClientCPUProcessUs), round(50e3 / 110)},
		{"client calls per cpu-s", round(m.ClientCallsPerCPUS), round(100 / 0.003)},
		{"client busy cores", math.Round(w.ClientBusy*100) / 100, 0.15},
		{"bytes", float64(m.BytesPerResponse), 5600},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v; want %v", tc.name, tc.got, tc.want)
		}
	}
	// Raw output is kept for every repeat, failed ones included.
	for _, name := range []string{"go-thrift-datalist-2-c1-r1.txt", "go-grpc-datalist-2-c1-r2.txt", "verify-go-http-datalist.txt", "server-go-server.txt"} {
		if _, err := os.Stat(filepath.Join(dir, results.RawDir, name)); err != nil {
			t.Errorf("raw file: %v", err)
		}
	}
	stdout, stderr, err := readRaw(filepath.Join(dir, results.RawDir, "go-thrift-datalist-2-c1-r1.txt"))
	if err != nil || len(stdout) != 0 || string(stderr) != "boom\n" {
		t.Errorf("raw file: got stdout %q stderr %q err %v; want empty, %q", stdout, stderr, err, "boom\n")
	}
}

func round(f float64) float64 { return float64(int64(f + 0.5)) }

func TestExecuteResume(t *testing.T) {
	spec, err := plan.ParseSpec([]byte(fakeSpec))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	fr := matrixtest.New()
	// Repeats are interleaved: the first 4 runs are repeat 1 of the first 4 cells;
	// the 5th is cancelled and not recorded.
	fr.Cancel, fr.CancelAfter = cancel, 5
	_, err = Execute(ctx, Options{Spec: spec, Dir: dir, Runner: fr, RunnerName: "fake"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: got %v; want context.Canceled", err)
	}
	cells, err := results.LoadCells(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 4 {
		t.Fatalf("after the interruption: got %d cell files; want 4 (one per finished repeat's cell)", len(cells))
	}
	for _, c := range cells {
		if c.Status != results.StatusPartial || len(c.Repeats) != 1 || c.Repeats[0].Report == nil {
			t.Errorf("%s: got status %s with %d repeats; want partial with repeat 1 kept", c.Name, c.Status, len(c.Repeats))
		}
	}
	if _, err := Execute(context.Background(), Options{Spec: spec, Dir: dir, Runner: matrixtest.New()}); err == nil {
		t.Fatal("a second run into the same directory without Resume: got no error")
	}

	fr2 := matrixtest.New()
	run, err := Execute(context.Background(), Options{Dir: dir, Resume: true, Runner: fr2, RunnerName: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(run.Cells), len(spec.Plan()); got != want {
		t.Fatalf("after resume: got %d cells; want %d", got, want)
	}
	for _, r := range fr2.TimedRuns() {
		for _, c := range cells {
			if r == c.Name+"-r1" {
				t.Errorf("resume re-ran kept repeat %s", r)
			}
		}
	}
	if got, want := len(fr2.TimedRuns()), 2*len(spec.Plan())-4; got != want {
		t.Errorf("resume: got %d timed runs; want %d", got, want)
	}
	for i, c := range run.Cells {
		if want := spec.Plan()[i].Name(); c.Name != want {
			t.Errorf("cell %d: got %s; want %s (plan order)", i, c.Name, want)
		}
		if c.Status != results.StatusOK || len(c.Repeats) != 2 || c.Repeats[0].Index != 1 || c.Repeats[1].Index != 2 || c.Summary == nil {
			t.Errorf("%s: got status %s (%s), %d repeats; want ok with r1 and r2 and a summary", c.Name, c.Status, c.Error, len(c.Repeats))
		}
	}
	if run.Finished.IsZero() {
		t.Error("resumed run has no finish time")
	}
}

// Rounds: every cell of a server group once per round, in a random order of
// the round's own drawn from the seed; the order is recorded, and two runs with
// one seed share it (docs/method.md, section 5).
func TestExecuteRandomRounds(t *testing.T) {
	const base = "clients: {go: [grpc, thrift]}\nitems: [2, 200, 5000]\nconcurrency: [1, 4]\nload: {n: 10}\nrepeats: 4\n"
	execute := func(t *testing.T, seed string) (*results.Run, []string) {
		t.Helper()
		spec, err := plan.ParseSpec([]byte(base + seed))
		if err != nil {
			t.Fatal(err)
		}
		fr := matrixtest.New()
		run, err := Execute(context.Background(), Options{Spec: spec, Dir: t.TempDir(), Runner: fr, RunnerName: "fake"})
		if err != nil {
			t.Fatal(err)
		}
		return run, fr.TimedRuns()
	}
	a, ranA := execute(t, "seed: 26\n")
	_, ranB := execute(t, "seed: 26\n")
	c, _ := execute(t, "seed: 27\n")
	if a.Seed != 26 || len(a.Rounds) != 4 {
		t.Fatalf("seed %d, %d rounds recorded; want 26 and 4", a.Seed, len(a.Rounds))
	}
	if strings.Join(ranA, " ") != strings.Join(ranB, " ") {
		t.Errorf("one seed, two runs: orders differ:\n%v\n%v", ranA, ranB)
	}
	var recorded []string
	orders := map[string]bool{}
	for i, r := range a.Rounds {
		if r.Index != i+1 || r.Group != "go-server@" || len(r.Order) != 12 {
			t.Errorf("round %d: %+v; want index %d of go-server@ with 12 cells", i, r, i+1)
		}
		if !slices.Equal(slices.Sorted(slices.Values(r.Order)), slices.Sorted(slices.Values(a.Rounds[0].Order))) {
			t.Errorf("round %d does not hold every cell once: %v", r.Index, r.Order)
		}
		orders[strings.Join(r.Order, " ")] = true
		for _, n := range r.Order {
			recorded = append(recorded, fmt.Sprintf("%s-r%d", n, r.Index))
		}
	}
	if strings.Join(recorded, " ") != strings.Join(ranA, " ") {
		t.Errorf("recorded order is not the order run:\nrecorded %v\nran      %v", recorded, ranA)
	}
	if len(orders) < 3 {
		t.Errorf("%d distinct orders in 4 rounds; want a fresh order each round", len(orders))
	}
	if strings.Join(c.Rounds[0].Order, " ") == strings.Join(a.Rounds[0].Order, " ") && strings.Join(c.Rounds[1].Order, " ") == strings.Join(a.Rounds[1].Order, " ") {
		t.Errorf("seeds 26 and 27 drew the same orders")
	}
	for _, cell := range a.Cells {
		for i, r := range cell.Repeats {
			if r.Index != i+1 {
				t.Errorf("%s repeat %d has round %d", cell.Name, i, r.Index)
			}
		}
	}
	// No seed: the run picks one and records it.
	d, _ := execute(t, "")
	if d.Seed == 0 {
		t.Error("no seed in the spec: run.Seed 0; want the one picked")
	}
}

// precision and budget: cells whose in-run interval is wider than the precision
// get added rounds, the widest first, until within it or the budget is spent;
// the added rounds are recorded.
func TestExecutePrecision(t *testing.T) {
	const base = "clients: {go: [grpc, thrift]}\nitems: [2, 200, 5000]\nconcurrency: [1, 4]\nload: {n: 10}\nrepeats: 3\nseed: 5\n"
	execute := func(t *testing.T, extra string) *results.Run {
		t.Helper()
		spec, err := plan.ParseSpec([]byte(base + extra))
		if err != nil {
			t.Fatal(err)
		}
		fr := matrixtest.New()
		var mu sync.Mutex
		n := map[string]int{}
		// go-grpc-datalist-2-c1 alternates 1000 and 1300 req/s; the other 11 cells
		// are steady.
		fr.RPS = func(name string) float64 {
			mu.Lock()
			defer mu.Unlock()
			if !strings.HasPrefix(name, "go-grpc-datalist-2-c1-") {
				return 500
			}
			n[name]++
			if len(n)%2 == 0 {
				return 1300
			}
			return 1000
		}
		run, err := Execute(context.Background(), Options{Spec: spec, Dir: t.TempDir(), Runner: fr, RunnerName: "fake"})
		if err != nil {
			t.Fatal(err)
		}
		return run
	}
	repeats := func(run *results.Run) map[string]int {
		m := map[string]int{}
		for _, c := range run.Cells {
			m[c.Name] = len(c.Repeats)
		}
		return m
	}
	run := execute(t, "precision: 10%\nbudget: 1h\n")
	got := repeats(run)
	// The fake server's CPU per call moves with scheduling on a loaded machine, so
	// a steady cell may now and then be wide too; most stay at 3 rounds.
	steady := 0
	for name, n := range got {
		if name != "go-grpc-datalist-2-c1" && n == 3 {
			steady++
		}
	}
	if steady < 8 {
		t.Errorf("%d of 11 steady cells kept 3 rounds; want most (within precision): %v", steady, got)
	}
	if r := got["go-grpc-datalist-2-c1"]; r <= 3 {
		t.Errorf("noisy cell: %d repeats; want rounds added", r)
	}
	if w := analysis.Width(run.Cells[0], run.Cells); run.Cells[0].Name != "go-grpc-datalist-2-c1" || w > 0.10 {
		t.Errorf("%s after the added rounds: ±%.1f %%; want within 10 %%", run.Cells[0].Name, w*100)
	}
	added := 0
	for _, r := range run.Rounds {
		if r.Added {
			added++
			if !slices.Contains(r.Order, "go-grpc-datalist-2-c1") {
				t.Errorf("added round %d: %v; want the noisy cell in it", r.Index, r.Order)
			}
		}
	}
	if added == 0 || got["go-grpc-datalist-2-c1"] != 3+added {
		t.Errorf("%d added rounds recorded for %d repeats", added, got["go-grpc-datalist-2-c1"])
	}
	for _, c := range run.Cells {
		if c.Status != results.StatusOK || c.Summary == nil {
			t.Errorf("%s: status %s, summary %v; want ok with a summary", c.Name, c.Status, c.Summary != nil)
		}
	}
	// A spent budget adds nothing.
	if got := repeats(execute(t, "precision: 10%\nbudget: 1ms\n")); got["go-grpc-datalist-2-c1"] != 3 {
		t.Errorf("budget 1ms: %d repeats; want 3", got["go-grpc-datalist-2-c1"])
	}
	if _, err := plan.ParseSpec([]byte(base + "precision: 5%\n")); err == nil || !strings.Contains(err.Error(), "budget") {
		t.Errorf("precision without budget: %v; want an error naming budget", err)
	}
	// run_shift is gone: the run measures its own (analysis.RunShift).
	for _, bad := range []string{"precision: 150%", "precision: -1%", "precision: lots", "run_shift: 8%"} {
		if _, err := plan.ParseSpec([]byte(base + bad + "\nbudget: 1m\n")); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	s, err := plan.ParseSpec([]byte(base + "precision: 0.05\nbudget: 10m\n"))
	if err != nil || s.Precision != 0.05 {
		t.Errorf("precision 0.05: %v %v", s.Precision, err)
	}
}

func TestWriteFileAtomicLeavesNoTemporaries(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "sub", "x.json")
	for i := range 3 {
		if err := results.WriteFileAtomic(name, []byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(name)
	entries, _ := os.ReadDir(filepath.Dir(name))
	if string(b) != "2" || len(entries) != 1 {
		t.Errorf("got %q and %d files; want \"2\" and 1 file", b, len(entries))
	}
	if fi, err := os.Stat(name); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode: got %v (%v); want 0644, readable by everyone as the results are", fi.Mode().Perm(), err)
	}
}

// readRaw reads a raw file back and splits it into the client's stdout and stderr.
func readRaw(name string) (stdout, stderr []byte, err error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, nil, err
	}
	out, errb, _ := strings.Cut(string(b), results.RawStderrMarker)
	return []byte(out), []byte(errb), nil
}

// From the second repeat on, a worker that timed the cell's previous repeat runs
// repeat_warmup instead of the first repeat's warm-up; a fresh (or no) worker
// runs the full one.
func TestRepeatWarmup(t *testing.T) {
	spec, err := plan.ParseSpec([]byte("clients: {go: [grpc]}\nitems: [2]\nconcurrency: [1]\n" +
		"load: {duration: 1s, warmup: auto, warmup_max: 1.5s, repeat_warmup: 0.5s}\n" +
		"overrides: [{match: '*-c1', repeat_warmup: auto}]\nrepeats: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := spec.Plan()[0]
	if got := c.Load.RepeatWarmup; got != plan.Auto {
		t.Fatalf("override: got repeat_warmup %v; want auto", got)
	}
	c.Load.RepeatWarmup = plan.Duration(500 * time.Millisecond)
	e := &executor{}
	srv := &measure.ServerProc{Key: "go", Addrs: map[string]string{"grpc": "127.0.0.1:1"}}
	for _, tc := range []struct {
		r    int
		warm bool
		want string
	}{
		{1, false, "-warmup auto -warmup-max 1.5s"},
		{1, true, "-warmup auto -warmup-max 1.5s"},
		{2, false, "-warmup auto -warmup-max 1.5s"},
		{2, true, "-warmup 0.5s"},
		{3, true, "-warmup 0.5s"},
	} {
		j := e.job(srv, c, tc.r, tc.warm)
		if got := strings.Join(j.Args, " "); !strings.Contains(got, tc.want+" ") {
			t.Errorf("r%d warm=%v: got args %q; want %q", tc.r, tc.warm, got, tc.want)
		}
	}
	if got, want := c.Load.ForRepeat(2, true).Warmup, c.Load.RepeatWarmup; got != want {
		t.Errorf("ForRepeat(2, warm): got warm-up %v; want %v", got, want)
	}
	var none plan.Load
	none.Warmup = plan.Duration(time.Second)
	if got := none.ForRepeat(2, true).Warmup; got != none.Warmup {
		t.Errorf("no repeat_warmup: got %v; want the warm-up %v", got, none.Warmup)
	}
}

// prime_max: rounds of prime runs, each at the next concurrency, until a round
// after every concurrency was primed shows the JIT at rest; a JIT that never
// rests ends the priming at prime_max; a client without a JIT gets one round.
func TestExecutePrimeUntilJITQuiet(t *testing.T) {
	primes := func(t *testing.T, spec string, jit map[string]int64) ([]string, *matrixtest.Runner, []string) {
		t.Helper()
		sp, err := plan.ParseSpec([]byte(spec))
		if err != nil {
			t.Fatal(err)
		}
		fr := matrixtest.New()
		fr.JIT = jit
		var out bytes.Buffer // the progress writer is used from one goroutine
		_, err = Execute(context.Background(), Options{Spec: sp, Dir: t.TempDir(), Runner: fr, RunnerName: "fake", Progress: &out})
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Split(out.String(), "\n")
		var v []string
		for _, r := range fr.TimedRuns() {
			if strings.HasPrefix(r, "prime-") {
				v = append(v, r)
			}
		}
		return v, fr, notes
	}
	const base = "clients: {go: [grpc]}\nitems: [2, 200]\nconcurrency: [1, 50]\nload: {duration: 0.2s}\nrepeats: 1\n"
	t.Run("at rest after every concurrency", func(t *testing.T) {
		got, fr, notes := primes(t, base+"prime: {go: 0.1s}\nprime_max: {go: 30s}\n",
			map[string]int64{"prime-": 500, "prime-go-grpc-datalist-2-r": 0, "prime-go-grpc-datalist-200-r": 0})
		want := "prime-go-grpc-datalist-2 prime-go-grpc-datalist-200 prime-go-grpc-datalist-2-r2 prime-go-grpc-datalist-200-r2"
		if strings.Join(got, " ") != want {
			t.Fatalf("primes: got %q; want %q", got, want)
		}
		fr.Mu.Lock()
		c1, c2 := matrixtest.FlagValue(fr.Args["prime-go-grpc-datalist-2"], "-c"), matrixtest.FlagValue(fr.Args["prime-go-grpc-datalist-2-r2"], "-c")
		fr.Mu.Unlock()
		if c1 != "50" || c2 != "1" {
			t.Errorf("round concurrencies: got %s, %s; want 50 then 1", c1, c2)
		}
		if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "JIT at rest after 2 rounds") }) {
			t.Errorf("no at-rest note in %q", notes)
		}
	})
	t.Run("quiet from the start still primes every concurrency", func(t *testing.T) {
		got, _, _ := primes(t, base+"prime: {go: 0.1s}\nprime_max: {go: 30s}\n", map[string]int64{"prime-": 0})
		if len(got) != 4 {
			t.Fatalf("primes: got %q; want 2 rounds of 2", got)
		}
	})
	t.Run("never at rest stops at prime_max", func(t *testing.T) {
		got, _, notes := primes(t, base+"prime: {go: 0.1s}\nprime_max: {go: 0.4s}\n", map[string]int64{"prime-": 500})
		if len(got) < 4 || len(got) > 40 {
			t.Fatalf("primes: got %d runs (%q); want rounds until 0.4 s were spent", len(got), got)
		}
		if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "JIT not at rest after") }) {
			t.Errorf("no not-at-rest note in %q", notes)
		}
	})
	t.Run("a worker's own prime_max wins over its client's", func(t *testing.T) {
		// go: 30 s would go on for a minute of rounds; go-grpc's 0.4 s stops them.
		got, _, notes := primes(t, base+"prime: {go: 0.1s}\nprime_max: {go: 30s, go-grpc: 0.4s}\n", map[string]int64{"prime-": 500})
		if len(got) < 4 || len(got) > 40 {
			t.Fatalf("primes: got %d runs (%q); want rounds until go-grpc's 0.4 s were spent", len(got), got)
		}
		if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "(prime_max 400ms)") }) {
			t.Errorf("no note naming go-grpc's budget in %q", notes)
		}
	})
	t.Run("no JIT: one round", func(t *testing.T) {
		got, _, _ := primes(t, base+"prime: {go: 0.1s}\nprime_max: {go: 30s}\n", nil)
		if len(got) != 2 {
			t.Fatalf("primes: got %q; want one round", got)
		}
	})
}

// A repeat whose window the JIT spent compiling is flagged jit-compiling.
func TestExecuteFlagsJIT(t *testing.T) {
	spec, err := plan.ParseSpec([]byte("clients: {go: [grpc]}\nitems: [2]\nconcurrency: [1, 50]\nload: {duration: 0.2s}\nrepeats: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	fr := matrixtest.New()
	fr.JIT = map[string]int64{"go-grpc-datalist-2-c1": 0, "go-grpc-datalist-2-c50": 15}
	run, err := Execute(context.Background(), Options{Spec: spec, Dir: t.TempDir(), Runner: fr, RunnerName: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range run.Cells {
		r := c.Repeats[0]
		want := c.Name == "go-grpc-datalist-2-c50" // 15 ms of a 20 ms window; c1's 0 ms is at rest
		if r.Has(results.FlagJIT) != want || c.Flagged(results.FlagJIT) != want {
			t.Errorf("%s: flagged %v (cell %v); want %v (notes %q)", c.Name, r.Has(results.FlagJIT), c.Flagged(results.FlagJIT), want, r.Notes)
		}
		if r.Window.ClientJITMs == nil {
			t.Errorf("%s: no client JIT figure in the window", c.Name)
		}
		if r.Window.ServerJITMs != nil {
			t.Errorf("%s: a server JIT figure from a server without one", c.Name)
		}
	}
}

// prime: one un-recorded run per primed client's worker, after verify and before
// the first timed repeat, at the largest concurrency of its cells, no warm-up.
func TestExecutePrimes(t *testing.T) {
	spec, err := plan.ParseSpec([]byte("clients: {go: [grpc, http]}\nitems: [2, 200]\nconcurrency: [1, 50]\n" +
		"load: {duration: 0.2s}\nprime: {go: 0.3s}\nrepeats: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	testPrimes(t, spec, "prime-go-grpc-datalist-2 prime-go-grpc-datalist-200 prime-go-http-datalist-2 prime-go-http-datalist-200", 8)
}

// A TLS cell's shape is primed apart from its plaintext twin's: its record layer
// and ciphers are other code for a JIT.
func TestPrimePlanTLS(t *testing.T) {
	spec, err := plan.ParseSpec([]byte("clients: {java: [grpc]}\nitems: [200, 5000]\nconcurrency: [1, 50]\nsecurity: [plaintext, tls]\n" +
		"exclude: ['*-c1@tls', '*-5000-c*@tls']\nprime: {java: 1s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	e := &executor{run: &results.Run{Spec: spec}}
	plans := e.primePlan(spec.Plan())
	if len(plans) != 1 {
		t.Fatalf("got %d workers primed; want 1 (java-grpc)", len(plans))
	}
	var shapes []string
	for _, c := range plans[0].shapes {
		shapes = append(shapes, primeKey(c))
	}
	slices.Sort(shapes)
	if want := []string{"java-grpc-datalist-200", "java-grpc-datalist-200@tls", "java-grpc-datalist-5000"}; !slices.Equal(shapes, want) {
		t.Errorf("prime shapes %q; want %q", shapes, want)
	}
	if want := []int{50, 1}; !slices.Equal(plans[0].concs, want) {
		t.Errorf("prime concurrencies %v; want %v", plans[0].concs, want)
	}
}

// testPrimes runs spec and checks its prime runs (in order, before every timed
// repeat, at the largest concurrency, without warm-up) and its cell count.
func testPrimes(t *testing.T, spec plan.Spec, want string, cells int) {
	t.Helper()
	fr := matrixtest.New()
	dir := t.TempDir()
	run, err := Execute(context.Background(), Options{Spec: spec, Dir: dir, Runner: fr, RunnerName: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	runs := fr.TimedRuns()
	var primes []string
	for i, r := range runs {
		if strings.HasPrefix(r, "prime-") {
			primes = append(primes, r)
			if i >= 4 {
				t.Errorf("%s ran at position %d; want before every timed repeat (%v)", r, i, runs)
			}
		}
	}
	if got := strings.Join(primes, " "); got != want {
		t.Fatalf("primes: got %q; want %q", got, want)
	}
	fr.Mu.Lock()
	args := fr.Args["prime-go-grpc-datalist-200"]
	fr.Mu.Unlock()
	if matrixtest.FlagValue(args, "-c") != "50" || matrixtest.FlagValue(args, "-t") != "0.3s" || matrixtest.FlagValue(args, "-items") != "200" || matrixtest.FlagValue(args, "-warmup") != "" {
		t.Errorf("prime args %q: want -items 200 -c 50 -t 0.3s and no warm-up", args)
	}
	if _, err := os.Stat(filepath.Join(dir, results.RawDir, "prime-go-grpc-datalist-200.txt")); err != nil {
		t.Errorf("prime raw file: %v", err)
	}
	if len(run.Cells) != cells {
		t.Errorf("got %d cells; want %d (primes are not cells)", len(run.Cells), cells)
	}
}

// A window with fewer than FewCalls completed calls is flagged few-calls, with
// the count and what one call is worth; one with FewCalls is not.
func TestExecuteFlagsFewCalls(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want bool
		note string
	}{
		{5, true, "few-calls: 5 calls completed in the"},
		{results.FewCalls - 1, true, "(< 20): one call more or less moves req/s by 5 %"},
		{results.FewCalls, false, ""},
	} {
		spec, err := plan.ParseSpec([]byte(fmt.Sprintf("clients: {go: [grpc]}\nitems: [2]\nconcurrency: [1]\nload: {n: %d}\nrepeats: 1\n", tc.n)))
		if err != nil {
			t.Fatal(err)
		}
		run, err := Execute(context.Background(), Options{Spec: spec, Dir: t.TempDir(), Runner: matrixtest.New(), RunnerName: "fake"})
		if err != nil {
			t.Fatal(err)
		}
		c := run.Cells[0]
		r := c.Repeats[0]
		if r.Has(results.FlagFewCalls) != tc.want || c.Flagged(results.FlagFewCalls) != tc.want {
			t.Errorf("n %d: flagged %v (cell %v); want %v (notes %q)", tc.n, r.Has(results.FlagFewCalls), c.Flagged(results.FlagFewCalls), tc.want, r.Notes)
		}
		if tc.want && !strings.Contains(strings.Join(r.Notes, "\n"), tc.note) {
			t.Errorf("n %d: notes %q lack %q", tc.n, r.Notes, tc.note)
		}
	}
}

// forks: a group whose server is a JVM starts it Spec.Forks times, its rounds
// split evenly over the starts (at least two each), each start primed again;
// every repeat records its fork, and a group on go-server does not fork.
func TestExecuteForks(t *testing.T) {
	spec, err := plan.ParseSpec([]byte("clients: {go: [grpc, thrift]}\nservers: {grpc: java}\nitems: [2]\nconcurrency: [1, 4]\n" +
		"load: {n: 10}\nprime: {go: 0.1s}\nrepeats: 3\nforks: 2\nseed: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	fr := matrixtest.New()
	run, err := Execute(context.Background(), Options{Spec: spec, Dir: t.TempDir(), Runner: fr, RunnerName: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	starts := map[string]int{}
	fr.Mu.Lock()
	for _, s := range fr.Services {
		starts[s.Name()]++
	}
	fr.Mu.Unlock()
	var primes []string
	for _, r := range fr.TimedRuns() {
		if strings.HasPrefix(r, "prime-go-grpc") {
			primes = append(primes, r)
		}
	}
	// The second fork's prime has names of its own: it keeps the first's raw files.
	if want := []string{"prime-go-grpc-datalist-2", "prime-go-grpc-datalist-2-f2"}; !slices.Equal(primes, want) {
		t.Errorf("go-grpc primed as %q; want once per fork, %q", primes, want)
	}
	for name, n := range starts {
		want := 1
		if strings.Contains(name, "java") {
			want = 2
		}
		if n != want {
			t.Errorf("%s started %d times; want %d", name, n, want)
		}
	}
	if len(starts) != 2 {
		t.Errorf("servers started: %v; want a java one and go-server", starts)
	}
	for _, c := range run.Cells {
		var forks []int
		for _, r := range c.Repeats {
			forks = append(forks, r.Fork)
		}
		want := []int{0, 0, 0}
		if c.Protocol == "grpc" {
			want = []int{1, 1, 2, 2}
		}
		if !slices.Equal(forks, want) || c.Status != results.StatusOK {
			t.Errorf("%s: status %s, forks %v; want ok and %v", c.Name, c.Status, forks, want)
		}
	}
}
