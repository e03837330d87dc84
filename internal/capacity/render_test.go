package capacity

import (
	"bytes"
	"context"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixture is a capacity run searched on simulated one-core servers (dm1),
// seeded and on a fake clock: the same bytes every time. scale multiplies
// every service time (a second run that drifted).
func fixture(t *testing.T, seed uint64, scale float64) *Run {
	t.Helper()
	return fixtureSteal(t, seed, scale, 0)
}

// fixtureSteal is fixture with every run's machine steal at steal cores.
func fixtureSteal(t *testing.T, seed uint64, scale, steal float64) *Run {
	t.Helper()
	run, now := fixtureRun(t, "fixture", "slo: [{p99: 10ms, errors: 0.1%}, {p99: 50ms, errors: 0.1%}]\ncapacity: {cooldown: 0s}\n")
	spec, service := run.Spec, fixtureServices
	for i, c := range spec.Matrix.Plan() {
		s := service[c.Client+"-"+c.Protocol]
		m := &dm1{service: time.Duration(float64(s) * scale), period: time.Second, rng: rand.New(rand.NewPCG(seed, uint64(i)))}
		p := &busyModel{m: m, client: map[string]float64{"go": 20e-6, "php": 150e-6}[c.Client], steal: steal}
		x := NewSearcher(p, spec.Search, now)
		start := StartFrom(1 / m.service.Seconds())
		knees, err := SearchCell(context.Background(), x, spec.SLOs, start)
		if err != nil {
			t.Fatal(err)
		}
		run.Cells = append(run.Cells, CellResult{Name: c.Name(), Cell: c, Closed: 1 / m.service.Seconds(), Start: start,
			Knees: knees, Runs: x.Runs, Seconds: float64(len(x.Runs)) * 1.5})
	}
	run.Finished = now()
	return run
}

// fixtureServices are the fixture cells' mean service times.
var fixtureServices = map[string]time.Duration{"go-grpc": 100 * time.Microsecond, "go-thrift": 80 * time.Microsecond,
	"php-grpc": 250 * time.Microsecond, "php-thrift": 400 * time.Microsecond}

// fixtureRun is an empty run named id of the fixture's cells (go and php on
// grpc and thrift, 200 items, c=50) with tail's SLOs and search, and the fake
// clock its searches read (1.5 s a reading).
func fixtureRun(t *testing.T, id, tail string) (*Run, func() time.Time) {
	t.Helper()
	spec, err := ParseSpec([]byte("clients: {go: [grpc, thrift], php: [grpc, thrift]}\nitems: [200]\nconcurrency: [50]\n" + tail))
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { clock = clock.Add(1500 * time.Millisecond); return clock }
	return &Run{ID: id, Started: clock, Runner: "simulated", Spec: spec}, now
}

// busyModel adds CPU figures to dm1's: the server's per call is its service
// time, the client's a fixed cost per call, each side on one core.
type busyModel struct {
	m      *dm1
	client float64 // CPU seconds per call
	steal  float64 // the machine's steal in every run, cores
}

func (b *busyModel) Probe(ctx context.Context, rate float64) (Obs, error) {
	o, err := b.m.Probe(ctx, rate)
	o.ServerCPUUs, o.ClientCPUUs = b.m.service.Seconds()*1e6, b.client*1e6
	o.ClientBusy = min(1, rate*b.client)
	o.StealCores = b.steal
	return o, err
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	file := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./internal/capacity -update rewrites it):\n%s", name, got)
	}
}

func TestGoldenRenders(t *testing.T) {
	run := fixture(t, 1, 1)
	for _, tc := range []struct {
		file string
		r    func(*bytes.Buffer, *Run) error
	}{
		{"capacity.md", func(b *bytes.Buffer, r *Run) error { return Markdown(b, r) }},
		{"capacity.csv", func(b *bytes.Buffer, r *Run) error { return CSV(b, r) }},
		{"capacity.json", func(b *bytes.Buffer, r *Run) error { return JSON(b, r) }},
		{"readme-block.md", func(b *bytes.Buffer, r *Run) error { return ReadmeBlock(b, r) }},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.r(&b, run); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.file, b.Bytes())
		})
	}
}

// TestWriteAndLoad: Write's files read back (capacity.json) into the same
// run, and a plot per cell is a PNG.
func TestWriteAndLoad(t *testing.T) {
	run := fixture(t, 1, 1)
	dir := t.TempDir()
	if err := Write(dir, run); err != nil {
		t.Fatal(err)
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	Markdown(&a, run)
	Markdown(&b, back)
	if a.String() != b.String() {
		t.Error("capacity.md of the loaded run differs from the written run's")
	}
	for _, c := range run.Cells {
		png, err := os.ReadFile(filepath.Join(dir, PlotsDir, c.Name+".png"))
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Errorf("%s: plot: %v; want a PNG", c.Name, err)
		}
	}
}

func TestAgree(t *testing.T) {
	a, b := fixture(t, 1, 1), fixture(t, 2, 1)
	if g := Agree(a, a); !g.Met() || g.Inside != g.Cells || g.Cells != 8 {
		t.Errorf("a run against itself: %d of %d inside, %d flips; want 8 of 8, none", g.Inside, g.Cells, g.Flips)
	}
	g := Agree(a, b)
	var out bytes.Buffer
	g.Print(&out, "A", "B")
	t.Log(out.String())
	if g.Cells != 8 || g.Flips != 0 {
		t.Errorf("two seeds: %d cells, %d flips; want 8, 0", g.Cells, g.Flips)
	}
	// A run whose servers all got 30 % slower: no knee inside the other's interval.
	c := fixture(t, 1, 1.3)
	if g := Agree(a, c); g.Met() || g.Inside > 0 {
		t.Errorf("a 30 %% slower run: %d of %d inside; want 0, not met", g.Inside, g.Cells)
	}
	if !strings.Contains(out.String(), "capacity agreement A vs B:") {
		t.Errorf("no verdict line:\n%s", out.String())
	}
}

// A knee placed by runs with steal over 2 % of a core is noisy, in its table
// cell and in the agreement's count; at or under 2 % it is not.
func TestNoisyKnee(t *testing.T) {
	for _, tc := range []struct {
		steal float64
		noisy bool
	}{{0, false}, {0.02, false}, {0.05, true}} {
		run := fixtureSteal(t, 1, 1, tc.steal)
		for _, c := range run.Cells {
			for _, k := range c.Knees {
				if k.Noisy() != tc.noisy || strings.Contains(kneeCell(k), "noisy") != tc.noisy {
					t.Errorf("steal %.2f: %s at %s: noisy %v, cell %q; want noisy %v", tc.steal, c.Name, k.SLO.Key(), k.Noisy(), kneeCell(k), tc.noisy)
				}
			}
		}
	}
	g := Agree(fixture(t, 1, 1), fixtureSteal(t, 1, 1.3, 0.05))
	var out bytes.Buffer
	g.Print(&out, "A", "B")
	if g.Noisy != g.Cells-g.Inside || g.Noisy == 0 || !strings.Contains(out.String(), "(noisy)") {
		t.Errorf("a slower run with steal: %d noisy of %d outside; want all, and said:\n%s", g.Noisy, g.Cells-g.Inside, out.String())
	}
}

// capacity.md names the checkout and the machine a run was made on, and says
// nothing of either when the run recorded neither.
func TestProvenance(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  Run
		want string
	}{
		{"neither", Run{}, ""},
		{"commit", Run{Commit: "a9785e9-dirty"}, "Made from commit a9785e9-dirty.\n"},
		{"both", Run{Commit: "a9785e9", Machine: &results.Machine{CPU: "AMD EPYC", Cores: 2, MemMB: 24105, OS: "Debian 12", Kernel: "6.18"}},
			"Made from commit a9785e9 on AMD EPYC (2 cores, 24105 MB, Debian 12, kernel 6.18).\n"},
	} {
		if got := provenance(&tc.run); got != tc.want {
			t.Errorf("%s: got %q; want %q", tc.name, got, tc.want)
		}
	}
}
