package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// tinySpec: the Go client over every go-server protocol, two concurrencies, two
// repeats of 200 calls: a few seconds end to end.
const tinySpec = `
clients: {go: [grpc, thrift, http]}
items: [2]
concurrency: [1, 2]
load: {n: 200}
repeats: 2
client: {cpuset: ""}
server: {cpuset: ""}
`

// buildGo builds go-server and go-client into root/bin, as `make build` does.
func buildGo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	cmd := exec.Command("go", "build", "-o", filepath.Join(root, "bin")+"/", "./go-server", "./go-client")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return root
}

func TestMatrixEndToEndLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs go-server and go-client")
	}
	root := buildGo(t)
	endToEnd(t, root, "local")
}

func TestMatrixEndToEndDocker(t *testing.T) {
	if testing.Short() {
		t.Skip("runs containers")
	}
	needDockerImages(t)
	endToEnd(t, t.TempDir(), "docker")
}

func endToEnd(t *testing.T, root, runnerName string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	specFile := filepath.Join(t.TempDir(), "tiny.yaml")
	if err := os.WriteFile(specFile, []byte(tinySpec), 0o644); err != nil {
		t.Fatal(err)
	}
	resultsDir := t.TempDir()
	dir := filepath.Join(resultsDir, "run1")
	var out, errb bytes.Buffer
	code := run(ctx, []string{"matrix", "-spec", specFile, "-out", dir, "-runner", runnerName, "-root", root}, stdio{nil, &out, &errb})
	if code != 0 {
		t.Fatalf("rpcbed matrix: exit code %d\nstderr:\n%s", code, errb.String())
	}
	// Rounds run in a random order: the last run is some cell's second repeat.
	if !regexp.MustCompile(`\[ 12/12\] go-\S+ r2/2 `).MatchString(errb.String()) || !strings.Contains(errb.String(), "ETA") {
		t.Errorf("progress lines missing from stderr:\n%s", errb.String())
	}

	spec, _ := plan.ParseSpec([]byte(tinySpec))
	plan := spec.Plan()
	r, err := results.LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Cells) != len(plan) {
		t.Fatalf("got %d cells; want %d", len(r.Cells), len(plan))
	}
	for _, c := range r.Cells {
		if c.Status != results.StatusOK || len(c.Repeats) != 2 {
			t.Errorf("%s: got status %s (%s), %d repeats; want ok, 2", c.Name, c.Status, c.Error, len(c.Repeats))
			continue
		}
		m := c.Repeats[0].Metrics
		if m.RPS <= 0 || m.ServerCPUUs <= 0 || m.ClientCPUUs <= 0 || m.BytesPerResponse <= 0 || m.Complete != 200 {
			t.Errorf("%s: figures missing: %+v", c.Name, m)
		}
		for _, rep := range c.Repeats {
			raw, err := os.ReadFile(filepath.Join(dir, rep.Raw)) // the report, then the client's stderr
			if err != nil || !bytes.Contains(raw, []byte("Requests per second:")) {
				t.Errorf("%s: raw report %s: %v", c.Name, rep.Raw, err)
			}
		}
	}
	if len(r.Verify) != 3 {
		t.Errorf("verify pass: got %d pairs; want 3", len(r.Verify))
	}
	if r.Runner != runnerName || r.Machine.Cores == 0 || r.Versions["go-server grpc"] == "" {
		t.Errorf("run facts: runner %q, machine %+v, versions %v", r.Runner, r.Machine, r.Versions)
	}

	// Every output exists and parses.
	f, err := os.Open(filepath.Join(dir, "matrix.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(recs) != len(plan)+1 {
		t.Errorf("matrix.csv: %d rows, %v; want %d", len(recs), err, len(plan)+1)
	}
	md, err := os.ReadFile(filepath.Join(dir, "matrix.md"))
	// A flagged cell's row carries ⚑ after its name.
	if err != nil || !(bytes.Contains(md, []byte("| go-grpc-datalist-2-c1 |")) || bytes.Contains(md, []byte("| go-grpc-datalist-2-c1 ⚑ |"))) {
		t.Errorf("matrix.md: %v\n%s", err, md)
	}
	bf, err := os.Open(filepath.Join(dir, "bench.txt"))
	if err != nil {
		t.Fatal(err)
	}
	br := benchfmt.NewReader(bf, "bench.txt")
	results2 := 0
	for br.Scan() {
		if _, ok := br.Result().(*benchfmt.Result); ok {
			results2++
		}
	}
	bf.Close()
	if results2 != 2*len(plan) {
		t.Errorf("bench.txt: got %d results; want %d", results2, 2*len(plan))
	}
	pngs, _ := filepath.Glob(filepath.Join(dir, "plots", "*.png"))
	svgs, _ := filepath.Glob(filepath.Join(dir, "plots", "*.svg"))
	if len(pngs) == 0 || len(pngs) != len(svgs) {
		t.Errorf("plots: %d PNG, %d SVG", len(pngs), len(svgs))
	}
	for _, p := range pngs {
		b, _ := os.ReadFile(p)
		if _, err := png.Decode(bytes.NewReader(b)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if page, err := os.ReadFile(filepath.Join(dir, "index.html")); err != nil || !bytes.Contains(page, []byte(`data-cell="go-grpc-datalist-2-c1"`)) {
		t.Errorf("index.html: %v; want a page with every cell", err)
	}
	if target, err := os.Readlink(filepath.Join(resultsDir, "latest")); err != nil || target != "run1" {
		t.Errorf("results/latest: got %q, %v; want run1", target, err)
	}

	// A finished run resumes to nothing new; re-rendering and comparing work on it.
	out.Reset()
	errb.Reset()
	if code := run(ctx, []string{"matrix", "-resume", dir, "-runner", runnerName, "-root", root, "-q"}, stdio{nil, &out, &errb}); code != 0 {
		t.Errorf("resume of a finished run: exit code %d: %s", code, errb.String())
	}
	if code := run(ctx, []string{"matrix", "-render", dir}, stdio{nil, &out, &errb}); code != 0 {
		t.Errorf("render: exit code %d: %s", code, errb.String())
	}
	out.Reset()
	page := filepath.Join(t.TempDir(), "compare.html")
	if code := run(ctx, []string{"compare", dir, dir, "-html", page}, stdio{nil, &out, &errb}); code != 0 || !strings.Contains(out.String(), "go-thrift-datalist-2-c2") {
		t.Errorf("compare: exit code %d, output:\n%s\n%s", code, out.String(), errb.String())
	}
	if b, err := os.ReadFile(page); err != nil || !bytes.Contains(b, []byte(`data-cell="go-thrift-datalist-2-c2"`)) {
		t.Errorf("compare -html: %v; want a page with every cell", err)
	}

	// A run missing a cell of its plan says which when rendered.
	if err := os.Remove(filepath.Join(dir, results.CellsDir, "go-thrift-datalist-2-c2.json")); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	if code := run(ctx, []string{"matrix", "-render", dir}, stdio{nil, &out, &errb}); code != 0 ||
		!strings.Contains(errb.String(), "6 cells of the plan: 5 ok, 0 failed, 0 partial, 1 not run") ||
		!strings.Contains(errb.String(), "not run: go-thrift-datalist-2-c2") {
		t.Errorf("render of an unfinished run: exit code %d, stderr:\n%s", code, errb.String())
	}
}

func TestMatrixBadSpecNamesTheField(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(spec, []byte("clients: {go: [dubbo]}\n"), 0o644)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"matrix", "-spec", spec, "-runner", "local"}, stdio{nil, &out, &errb})
	if code != 2 || !strings.Contains(errb.String(), "clients.go") {
		t.Errorf("got exit code %d, stderr %q; want 2 and an error naming clients.go", code, errb.String())
	}
}

// A 15 MB spec took 6.2 s and 1574 MB to be refused, a 400 000
// entry exclude list was accepted, and servers: {grpc: nginx} was refused as
// "the spec has no cell". rpcbed (built without -race, so its peak RSS is its
// own) must refuse each naming the field, within 100 MB of peak RSS.
func TestMatrixHostileSpecsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds rpcbed")
	}
	dir := t.TempDir()
	_, bin := buildRpcbed(t)
	list := func(key, v string, bytes int) string {
		var b strings.Builder
		b.WriteString(key + ": [")
		for b.Len() < bytes {
			b.WriteString(v + ", ")
		}
		b.WriteString(v + "]\n")
		return b.String()
	}
	block := func(key, v string, n int) string {
		return key + ":\n" + strings.Repeat("  - "+v+"\n", n)
	}
	tests := []struct {
		name, spec, want string
	}{
		{"15 MB items list", "clients: {go: [grpc]}\n" + list("items", "1", 15<<20), "spec: items: the spec is"},
		{"400 k entry exclude list", "clients: {go: [grpc]}\n" + block("exclude", "go-grpc-datalist-1-c1", 400000), "spec: exclude: the spec is"},
		{"exclude just under the size limit", list("exclude", "a", plan.MaxSpecBytes-64), "spec: exclude: 87358 entries; want at most 1000"},
		{"a server that cannot serve", "servers: {grpc: nginx}\n", "spec: servers.grpc: \"nginx\" cannot serve grpc"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := filepath.Join(dir, "spec.yaml")
			if err := os.WriteFile(spec, []byte(tc.spec), 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			code, stderr, peak := launched(t, bin, "matrix", "-spec", spec, "-runner", "local", "-out", filepath.Join(dir, "run"))
			wall := time.Since(start) // the launcher's start included
			t.Logf("%d bytes: refused within %v, peak RSS %.1f MB: %s", len(tc.spec), wall.Round(time.Millisecond), float64(peak)/(1<<20), strings.TrimSpace(stderr))
			if code != 2 {
				t.Errorf("exit code %d; want 2", code)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q; want %q", stderr, tc.want)
			}
			if peak > 100<<20 {
				t.Errorf("peak RSS %d MB; want under 100 MB", peak>>20)
			}
			if wall > 10*time.Second { // 1 s is the goal; this only catches a hang
				t.Errorf("refused after %v", wall)
			}
		})
	}
}

// TestMatrixTLSDocker runs plaintext and TLS cells through the matrix in
// containers: the TLS servers read the run's certificates through a bind mount,
// and the clients too. Every TLS repeat negotiated TLS 1.3 (no tls-mismatch) and
// no cell failed. (A relative certificate directory failed every TLS server
// start here: TestCertsDirIsAbsolute.)
func TestMatrixTLSDocker(t *testing.T) {
	if testing.Short() {
		t.Skip("runs containers")
	}
	needDockerImages(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	spec := filepath.Join(t.TempDir(), "tls.yaml")
	os.WriteFile(spec, []byte("clients: {go: [grpc, http]}\nitems: [2]\nconcurrency: [1]\nload: {n: 100}\nrepeats: 1\n"+
		"security: [plaintext, tls]\nclient: {cpuset: \"\"}\nserver: {cpuset: \"\"}\n"), 0o644)
	// -out relative, as a user types it (results/x): the certificates' bind
	// mount must still be absolute.
	dir := filepath.Join(t.TempDir(), "run")
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, dir)
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"matrix", "-spec", spec, "-out", rel, "-runner", "docker", "-q"}, stdio{nil, &out, &errb}); code != 0 {
		t.Fatalf("rpcbed matrix: exit %d\n%s", code, errb.String())
	}
	r, err := results.LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Runner != "docker" {
		t.Errorf("runner %q; want docker", r.Runner)
	}
	tlsCells := 0
	for _, c := range r.Cells {
		if c.Status != results.StatusOK {
			t.Errorf("%s: %s (%s)", c.Name, c.Status, c.Error)
			continue
		}
		if s := c.Summarized(); s != nil && slices.Contains(s.Flags, results.FlagTLSMismatch) {
			t.Errorf("%s: tls-mismatch: %v", c.Name, s.Reasons)
		}
		if !strings.HasSuffix(c.Name, "@tls") {
			continue
		}
		tlsCells++
		for _, rep := range c.Repeats {
			if rep.Report == nil || rep.Report.Rpcbed == nil || rep.Report.Rpcbed.TLS == nil || rep.Report.Rpcbed.TLS.Version != "TLSv1.3" {
				t.Errorf("%s: a repeat without TLS 1.3 on its report", c.Name)
			}
		}
	}
	if tlsCells != 2 {
		t.Errorf("%d TLS cells ran; want 2 (go-grpc, go-http)", tlsCells)
	}
}
