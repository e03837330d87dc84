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

// TestLayering checks every package of the module against docs/layout.md: a
// package the Layout does not list, or an import of ours it does not name for
// that package, fails (go list -deps gives each package's imports). A package
// whose job is plan, results, statistics, analysis, rendering or data must not
// reach one whose job is execution, directly or through the packages it imports.
func TestLayering(t *testing.T) {
	const module = "github.com/rpcbed/rpcbed/"
	allowed := layout(t)
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}|{{len .GoFiles}}|{{join .Imports \",\"}}", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{} // our package -> our packages it imports
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, rest, _ := strings.Cut(line, "|")
		files, imports, _ := strings.Cut(rest, "|")
		pkg, ours := strings.CutPrefix(path, module)
		if !ours || files == "0" {
			continue
		}
		l, listed := lookup(allowed, pkg)
		if !listed {
			t.Errorf("%s: not in docs/layout.md: add its line (its one job, what it imports)", pkg)
			continue
		}
		deps[pkg] = nil
		for _, imp := range strings.Split(imports, ",") {
			dep, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			deps[pkg] = append(deps[pkg], dep)
			if !slices.ContainsFunc(l.may, func(m string) bool { return dep == m || strings.HasPrefix(dep, m+"/") }) {
				t.Errorf("%s imports %s; docs/layout.md lets it import only %v", pkg, dep, l.may)
			}
		}
	}
	executors := 0
	for pkg := range deps {
		l, _ := lookup(allowed, pkg)
		if l.job == "execution" {
			executors++
		}
		if !slices.Contains(executionFree, l.job) {
			continue
		}
		for _, via := range reach(deps, pkg) {
			if e, _ := lookup(allowed, via[len(via)-1]); e.job == "execution" {
				t.Errorf("%s (%s) depends on execution: %s", pkg, l.job, strings.Join(via, " -> "))
			}
		}
	}
	if executors == 0 {
		t.Error("docs/layout.md names no package's job \"execution:\": the rule that the data model depends on no execution checks nothing")
	}
}

// executionFree are the Layout's jobs whose packages must not depend on execution.
var executionFree = []string{"plan", "results", "statistics", "analysis", "rendering", "data"}

// reach lists every package pkg depends on through deps, each with the path
// that reaches it (pkg first).
func reach(deps map[string][]string, pkg string) [][]string {
	var out [][]string
	seen := map[string]bool{pkg: true}
	queue := [][]string{{pkg}}
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		for _, d := range deps[path[len(path)-1]] {
			if seen[d] {
				continue
			}
			seen[d] = true
			p := append(slices.Clone(path), d)
			out = append(out, p)
			queue = append(queue, p)
		}
	}
	return out
}

// layoutLine is one package's Layout line: its job (the word before a colon
// that starts its description: plan, execution, results, ...; "" for none) and
// the packages it may import (as import paths below the module:
// "internal/results"; gen covers internal/gen/...).
type layoutLine struct {
	job string
	may []string
}

// layout reads docs/layout.md block: package path -> its line.
func layout(t *testing.T) map[string]layoutLine {
	t.Helper()
	b, err := os.ReadFile("../../docs/layout.md")
	if err != nil {
		t.Fatal(err)
	}
	sec := string(b)
	_, block, _ := strings.Cut(sec, "```\n")
	block, _, _ = strings.Cut(block, "```")
	m := map[string]layoutLine{}
	sc := bufio.NewScanner(strings.NewReader(block))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		i := slices.Index(f, "imports")
		if len(f) == 0 || i < 0 {
			continue
		}
		pkg := strings.TrimSuffix(f[0], "/")
		var l layoutLine
		if job, ok := strings.CutSuffix(f[1], ":"); ok {
			l.job = job
		}
		if strings.Join(f[i+1:], " ") != "nothing of ours" {
			for _, n := range f[i+1:] {
				l.may = append(l.may, "internal/"+strings.TrimSuffix(n, ","))
			}
		}
		m[pkg] = l
	}
	if len(m) < 10 {
		t.Fatalf("docs/layout.md lists %d packages with their imports; the block is not read right", len(m))
	}
	return m
}

// lookup finds a package's Layout line: its own, or its parent's for
// internal/gen/pb and the like.
func lookup(allowed map[string]layoutLine, pkg string) (layoutLine, bool) {
	for p := pkg; p != "." && p != ""; p = parent(p) {
		if l, ok := allowed[p]; ok {
			return l, true
		}
	}
	return layoutLine{}, false
}

func parent(p string) string {
	i := strings.LastIndex(p, "/")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// TestSelectAnswers: the answers block keeps the answers only: names, leaves out
// those skip: names, prints the tables of the bare IDs, and refuses an ID no
// answer has, or an unknown selector, naming the argument.
func TestSelectAnswers(t *testing.T) {
	all := []render.Answer{{ID: "language"}, {ID: "protocol"}, {ID: "tls"}}
	ids := func(as []render.Answer) []string {
		var out []string
		for _, a := range as {
			out = append(out, a.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name        string
		args        []string
		want, grids []string
		err         string
	}{
		{"every answer", nil, []string{"language", "protocol", "tls"}, nil, ""},
		{"tables", []string{"language"}, []string{"language", "protocol", "tls"}, []string{"language"}, ""},
		{"only", []string{"only:tls", "tls"}, []string{"tls"}, []string{"tls"}, ""},
		{"skip", []string{"skip:tls,protocol"}, []string{"language"}, nil, ""},
		{"only and skip", []string{"only:tls,protocol", "skip:protocol"}, []string{"tls"}, nil, ""},
		{"unknown ID", []string{"only:tsl"}, nil, nil, `argument "only:tsl": no answer has the ID "tsl"`},
		{"unknown table", []string{"lang"}, nil, nil, `no answer has the ID "lang"`},
		{"unknown selector", []string{"just:tls"}, nil, nil, `argument "just:tls": want ID, only:ID,... or skip:ID,...`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, grids, err := selectAnswers(all, tc.args)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got error %v; want %q", err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(ids(got), tc.want) || !slices.Equal(grids, tc.grids) {
				t.Errorf("got %v, %v, %v; want %v, %v", ids(got), grids, err, tc.want, tc.grids)
			}
		})
	}
}
