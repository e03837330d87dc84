package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/render"
)

// TestReadme: every generated block of README.md and docs/*.md is what
// `rpcbed readme` prints from the committed run it names (README's results table
// from results/reference among them), and README stays a guide of at most 300
// lines.
func TestReadme(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"readme", "-check", "-root", "../.."}, stdio{nil, &stdout, &stderr}); code != 0 {
		t.Fatalf("rpcbed readme -check: exit %d (run `make readme` and commit)\n%s%s", code, stdout.String(), stderr.String())
	}
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n > 300 {
		t.Errorf("README.md has %d lines; want at most 300 (move the rest to docs/)", n)
	}
	if !bytes.Contains(b, []byte("<!-- rpcbed:begin results-table results/reference -->")) {
		t.Error("README.md has no results-table block of results/reference")
	}
}

// FillBlocks prints each block again, says which changed, and refuses an unknown
// block or a begin without its end.
func TestFillBlocks(t *testing.T) {
	gen := map[string]render.Block{
		"echo": func(w io.Writer, args []string) error {
			_, err := w.Write([]byte(strings.Join(args, "+") + "\n"))
			return err
		},
	}
	for _, tc := range []struct {
		name, in, want string
		changed        []string
		err            string
	}{
		{"stale", "a\n<!-- rpcbed:begin echo x y -->\nold\n<!-- rpcbed:end -->\nb\n", "a\n<!-- rpcbed:begin echo x y -->\nx+y\n<!-- rpcbed:end -->\nb\n", []string{"echo x y"}, ""},
		{"current", "<!-- rpcbed:begin echo z -->\nz\n<!-- rpcbed:end -->\n", "<!-- rpcbed:begin echo z -->\nz\n<!-- rpcbed:end -->\n", nil, ""},
		{"unknown", "<!-- rpcbed:begin nope -->\n<!-- rpcbed:end -->\n", "", nil, `line 1: no generated block "nope"`},
		{"no end", "x\n<!-- rpcbed:begin echo a -->\nold\n", "", nil, "line 2: block echo has no <!-- rpcbed:end -->"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, changed, err := render.FillBlocks([]byte(tc.in), gen)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got error %v; want %q", err, tc.err)
				}
				return
			}
			if err != nil || string(out) != tc.want || !slices.Equal(changed, tc.changed) {
				t.Errorf("got %q, %q, %v; want %q, %q", out, changed, err, tc.want, tc.changed)
			}
		})
	}
}

// TestLayering checks every package of the module against README's Layout: a
// package the Layout does not list, or an import of ours it does not name for
// that package, fails (go list -deps gives each package's imports).
func TestLayering(t *testing.T) {
	const module = "github.com/rpcbed/rpcbed/"
	allowed := layout(t)
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}|{{len .GoFiles}}|{{join .Imports \",\"}}", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, rest, _ := strings.Cut(line, "|")
		files, imports, _ := strings.Cut(rest, "|")
		pkg, ours := strings.CutPrefix(path, module)
		if !ours || files == "0" {
			continue
		}
		may, listed := lookup(allowed, pkg)
		if !listed {
			t.Errorf("%s: not in README's Layout: add its line (its one job, what it imports)", pkg)
			continue
		}
		for _, imp := range strings.Split(imports, ",") {
			dep, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			if !slices.ContainsFunc(may, func(m string) bool { return dep == m || strings.HasPrefix(dep, m+"/") }) {
				t.Errorf("%s imports %s; README's Layout lets it import only %v", pkg, dep, may)
			}
		}
	}
}

// layout reads README's Layout block: package path -> the packages it may import
// (as import paths below the module: "internal/results"; gen covers internal/gen/...).
func layout(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no ## Layout section")
	}
	_, block, _ := strings.Cut(sec, "```\n")
	block, _, _ = strings.Cut(block, "```")
	m := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(block))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		i := slices.Index(f, "imports")
		if len(f) == 0 || i < 0 {
			continue
		}
		pkg := strings.TrimSuffix(f[0], "/")
		var may []string
		if strings.Join(f[i+1:], " ") != "nothing of ours" {
			for _, n := range f[i+1:] {
				may = append(may, "internal/"+strings.TrimSuffix(n, ","))
			}
		}
		m[pkg] = may
	}
	if len(m) < 10 {
		t.Fatalf("README's Layout lists %d packages with their imports; the block is not read right", len(m))
	}
	return m
}

// lookup finds a package's Layout line: its own, or its parent's for
// internal/gen/pb and the like.
func lookup(allowed map[string][]string, pkg string) ([]string, bool) {
	for p := pkg; p != "." && p != ""; p = parent(p) {
		if may, ok := allowed[p]; ok {
			return may, true
		}
	}
	return nil, false
}

func parent(p string) string {
	i := strings.LastIndex(p, "/")
	if i < 0 {
		return ""
	}
	return p[:i]
}
