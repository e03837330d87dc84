package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/render"

	"github.com/rpcbed/rpcbed/internal/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// reference is the committed reference run: every file rpcbed renders from it is
// itself a golden file, so a change that moves code around must render it again
// byte for byte.
const reference = "../../results/reference"

// The inputs of a run directory: what `rpcbed matrix` records. Everything else in
// results/reference is rendered from them.
var referenceInputs = []string{results.RunFile, results.SpecFile, results.VerifyFile, results.CellsDir,
	filepath.Join("reproduction", "reproduction.json"), "cost"}

// committedRuns are the committed run directories README and docs link to
// besides the reference: each is rendered again from its inputs and compared
// file by file with what is committed (the files it keeps; a run kept without
// its page keeps fewer), so none goes stale when a renderer changes.
var committedRuns = []string{"../../results/reference-b", "../../results/reference-tls", "../../results/links", "../../results/swarm-split"}

// TestReferenceRendersUnchanged re-renders results/reference and every other
// committed run from its inputs (`rpcbed matrix -render`) and compares every
// rendered file with the committed one.
func TestReferenceRendersUnchanged(t *testing.T) {
	for _, ref := range append([]string{reference}, committedRuns...) {
		t.Run(filepath.Base(ref), func(t *testing.T) { rendersUnchanged(t, ref, ref == reference) })
	}
}

// rendersUnchanged renders the run in ref again in a temporary directory and
// compares each rendered file ref keeps; all of them must be there when every
// is true.
func rendersUnchanged(t *testing.T, ref string, every bool) {
	dir := t.TempDir()
	for _, rel := range referenceInputs {
		copyTree(t, filepath.Join(ref, rel), filepath.Join(dir, rel))
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"matrix", "-render", dir}, stdio{nil, &stdout, &stderr}); code != 0 {
		t.Fatalf("rpcbed matrix -render: exit %d\n%s", code, stderr.String())
	}
	sameRendered(t, dir, ref, []string{"matrix.csv", "ratios.csv", results.JSONFile, "matrix.md", "bench.txt", "index.html"}, every)
}

// sameRendered compares the files rendered into dir with those committed in
// ref: the named files and every plot ref keeps under plots/. With every, all
// must be in ref (and it must keep plots); without it, what ref does not keep
// is skipped, but it must keep one.
func sameRendered(t *testing.T, dir, ref string, rendered []string, every bool) {
	t.Helper()
	plots, err := filepath.Glob(filepath.Join(ref, "plots", "*"))
	if err != nil || (every && len(plots) == 0) {
		t.Fatalf("no plots in %s/plots (%v)", ref, err)
	}
	for _, p := range plots {
		rendered = append(rendered, filepath.Join("plots", filepath.Base(p)))
	}
	kept := 0
	for _, rel := range rendered {
		if _, err := os.Stat(filepath.Join(ref, rel)); !every && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		kept++
		sameFile(t, filepath.Join(dir, rel), filepath.Join(ref, rel))
	}
	if kept == 0 {
		t.Errorf("%s keeps no rendered file", ref)
	}
}

// TestReferenceReproductionUnchanged writes reproduction.md and reproduction.html
// again from the reproduction.json of results/reference/reproduction and of the
// committed reproductions README compares (reproduce-loopback, reproduce-lan).
func TestReferenceReproductionUnchanged(t *testing.T) {
	for _, src := range []string{filepath.Join(reference, "reproduction"), "../../results/reproduce-loopback", "../../results/reproduce-lan"} {
		t.Run(filepath.Base(src), func(t *testing.T) { reproductionUnchanged(t, src) })
	}
}

func reproductionUnchanged(t *testing.T, src string) {
	b, err := os.ReadFile(filepath.Join(src, "reproduction.json"))
	if err != nil {
		t.Fatal(err)
	}
	var secs []results.Section
	if err := json.Unmarshal(b, &secs); err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	render.ReproductionMarkdown(&md, secs)
	sameBytes(t, "reproduction.md", md.Bytes(), filepath.Join(src, "reproduction.md"))
	var page bytes.Buffer
	if err := render.ReproductionHTML(&page, secs); err != nil {
		t.Fatal(err)
	}
	sameBytes(t, "reproduction.html", page.Bytes(), filepath.Join(src, "reproduction.html"))
}

// TestReferenceAgreeCompare: `rpcbed agree` and `rpcbed compare` of
// results/reference against a run B made from it (each cell's first two repeats,
// so medians, spreads and the noise model all move), and agree pooled over that
// pair and the committed one, as golden files.
func TestReferenceAgreeCompare(t *testing.T) {
	b := referenceFirstRepeats(t, 2)
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"reference-agree.txt", []string{"agree", reference, b}},
		{"reference-compare.md", []string{"compare", reference, b}},
		// Pooled over two pairs: the committed pair and the reference against B.
		{"reference-agree-pooled.txt", []string{"agree", reference, "../../results/reference-b", reference, b}},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), tc.args, stdio{nil, &stdout, &stderr}); code != 0 {
				t.Fatalf("rpcbed %s: exit %d\n%s", tc.args[0], code, stderr.String())
			}
			got := strings.ReplaceAll(stdout.String(), b, "B")
			if tc.args[0] == "compare" && (strings.Contains(got, "p=") || strings.Contains(got, "need >=") || strings.Contains(got, "Mann-Whitney")) {
				t.Error("compare prints a rank test's p or warnings beside verdicts made from intervals")
			}
			golden(t, tc.golden, []byte(got))
		})
	}
}

// referenceFirstRepeats writes a run directory holding results/reference with
// only the first n repeats of each cell, as matrix.json, and returns it.
func referenceFirstRepeats(t *testing.T, n int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(reference, results.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	for _, c := range r["cells"].([]any) {
		cell := c.(map[string]any)
		if reps, ok := cell["repeats"].([]any); ok && len(reps) > n {
			cell["repeats"] = reps[:n]
		}
	}
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "first-repeats")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.JSONFile), out, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
		return // an input this reference does not have
	}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func sameFile(t *testing.T, got, want string) {
	t.Helper()
	b, err := os.ReadFile(got)
	if err != nil {
		t.Errorf("%v", err)
		return
	}
	sameBytes(t, filepath.Base(got), b, want)
}

// sameBytes fails when got differs from the file want, naming the first line
// that differs.
func sameBytes(t *testing.T, name string, got []byte, want string) {
	t.Helper()
	if *update { // a change meant to move the committed render (say why in the commit)
		if err := os.WriteFile(want, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	w, err := os.ReadFile(want)
	if err != nil {
		t.Errorf("%v", err)
		return
	}
	if bytes.Equal(got, w) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(w), "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, x string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			x = wl[i]
		}
		if g != x {
			t.Errorf("%s differs from %s at line %d (%d bytes; want %d):\ngot:  %.300q\nwant: %.300q", name, want, i+1, len(got), len(w), g, x)
			return
		}
	}
}

// golden compares got with testdata/name; -update rewrites it.
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
		return
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("%v (run go test ./cmd/rpcbed -run Reference -update)", err)
	}
	sameBytes(t, name, got, file)
}

// TestReferenceReproducibility: the README's reproducibility block for
// results/reference against a run B made from it, as a golden file.
func TestReferenceReproducibility(t *testing.T) {
	b := referenceFirstRepeats(t, 2)
	var out bytes.Buffer
	if err := docBlocks("")["reproducibility"](&out, []string{reference, b}); err != nil {
		t.Fatal(err)
	}
	golden(t, "reference-reproducibility.md", out.Bytes())
	if err := docBlocks("")["reproducibility"](&out, []string{reference}); err == nil {
		t.Error("reproducibility of one run: no error; want one asking for two")
	}
}

// TestCapacityRendersUnchanged renders the committed capacity run
// (results/capacity) again from its capacity.json (`rpcbed capacity render`)
// and compares capacity.md, capacity.csv and every plot with the committed ones.
func TestCapacityRendersUnchanged(t *testing.T) {
	const ref = "../../results/capacity"
	dir := t.TempDir()
	copyTree(t, filepath.Join(ref, "capacity.json"), filepath.Join(dir, "capacity.json"))
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"capacity", "render", dir}, stdio{nil, &stdout, &stderr}); code != 0 {
		t.Fatalf("rpcbed capacity render: exit %d\n%s", code, stderr.String())
	}
	sameRendered(t, dir, ref, []string{"capacity.md", "capacity.csv"}, true)
}
