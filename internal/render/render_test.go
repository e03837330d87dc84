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

	"golang.org/x/perf/benchfmt"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/results/resultstest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

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
	run := resultstest.Synthetic("20261130T120000Z", 1)
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
	run := resultstest.Synthetic("x", 1)
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
	run := resultstest.Synthetic("x", 1)
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
	files, err := Plots(dir, resultstest.Synthetic("x", 1))
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

// CompareMarkdown: the significant change with its interval and words, the
// unchanged one as indistinguishable.
func TestCompareMarkdown(t *testing.T) {
	a, b := resultstest.Synthetic("a", 1), resultstest.Synthetic("b", 1.5)
	resultstest.FiveRepeats(a, b) // go-grpc-datalist-2-c1
	var out bytes.Buffer
	if err := CompareMarkdown(&out, a, b, analysis.Compare(a, b)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "| go-grpc-datalist-2-c1 |") || !strings.Contains(out.String(), "+50.00% [") || !strings.Contains(out.String(), "faster, better") || !strings.Contains(out.String(), "~ [") {
		t.Errorf("compare table lacks the significant change:\n%s", out.String())
	}
}

// A run with one size and one concurrency still plots (log axes over one value).
func TestPlotsSinglePoint(t *testing.T) {
	run := resultstest.Synthetic("x", 1)
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
// matrix.md and as status "missing" rows of matrix.csv.
func TestMissingCellsAreNamed(t *testing.T) {
	run := resultstest.Synthetic("x", 1)
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
