package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/measure"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/matrix"
	"github.com/rpcbed/rpcbed/internal/render"
	"github.com/rpcbed/rpcbed/internal/runner"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// runMatrix is `rpcbed matrix`: run a spec's cells, then render the run.
func runMatrix(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("matrix", flag.ContinueOnError)
	fs.SetOutput(s.err)
	specFile := fs.String("spec", defaultSpec(), "matrix spec (YAML); MATRIX=full selects matrix-full.yaml")
	out := fs.String("out", "", "run directory (default results/<UTC time>)")
	runnerName := fs.String("runner", "auto", "docker, local, or auto (docker when an engine answers, else local)")
	resume := fs.String("resume", "", "finish the run in this directory: only cells without a result run")
	renderOnly := fs.String("render", "", "only re-render the run in this directory (tables, plots, bench.txt)")
	quiet := fs.Bool("q", false, "no progress line")
	root := fs.String("root", ".", "repository root (local programs: bin/, php-client/, java-client/)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: rpcbed matrix [-spec FILE] [-out DIR] [-runner docker|local|auto] [-resume DIR] [-q]\n"+
			"       rpcbed matrix -render DIR\n\n"+
			"Runs every cell of the spec (client x protocol x call x items x concurrency) against\n"+
			"servers it starts once per server configuration, keeps each cell's raw output under\n"+
			"DIR/raw/, writes each cell's result atomically to DIR/cells/, then renders\n"+
			"matrix.csv, matrix.json, matrix.md, bench.txt, plots/ and index.html (one page with\n"+
			"all of it) and points results/latest at DIR.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(s.err, "rpcbed matrix: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *renderOnly != "" {
		if err := renderRun(*renderOnly, s.err); err != nil {
			fmt.Fprintf(s.err, "rpcbed matrix: %v\n", err)
			return 1
		}
		return 0
	}
	absRoot, err := filepath.Abs(*root)
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed matrix: %v\n", err)
		return 2
	}

	var spec plan.Spec
	dir := *out
	if *resume != "" {
		dir = *resume
		spec, err = plan.ReadSpec(filepath.Join(dir, results.SpecFile))
	} else {
		spec, err = plan.ReadSpec(*specFile)
	}
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed matrix: %v\n", err)
		return 2
	}
	if dir == "" {
		dir = filepath.Join("results", time.Now().UTC().Format("20060102T150405Z"))
	}
	r, name, err := chooseRunner(*runnerName, absRoot)
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed matrix: %v\n", err)
		return 2
	}
	// What an earlier run, killed outright, left behind: its servers, workers and
	// containers, found by their driver's pid and start time (a live run's are
	// never touched).
	d, _ := r.(*runner.Docker)
	if reaped, err := runner.Reap(ctx, d); err != nil {
		fmt.Fprintf(s.err, "rpcbed matrix: reaping an earlier run's leftovers: %v\n", err)
	} else if reaped.Processes+reaped.Containers > 0 {
		fmt.Fprintf(s.err, "rpcbed matrix: %v\n", reaped)
	}
	var progress io.Writer = s.err
	if *quiet {
		progress = nil
	} else {
		fmt.Fprintf(s.err, "rpcbed matrix: %d cells x %d repeats, runner %s, into %s\n", len(spec.Plan()), spec.Rounds, name, dir)
	}
	images := checkoutImages(ctx, r, absRoot)
	m := meta(ctx, absRoot, name)
	for k, v := range images {
		m.Versions["image "+k] = v
	}
	run, err := matrix.Execute(ctx, matrix.Options{
		Spec: spec, Dir: dir, Resume: *resume != "", Runner: r, RunnerName: name,
		Programs: measure.Programs{Docker: name == "docker", Root: absRoot, Images: images},
		Progress: progress, Meta: m,
	})
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed matrix: %v\n", err)
		if ctx.Err() != nil {
			fmt.Fprintf(s.err, "rpcbed matrix: interrupted; finish with: rpcbed matrix -resume %s\n", dir)
		}
		return 1
	}
	if err := render.All(dir, run); err != nil {
		fmt.Fprintf(s.err, "rpcbed matrix: render: %v\n", err)
		return 1
	}
	linkLatest(dir)
	failed := 0
	for _, c := range run.Cells {
		if c.Status != results.StatusOK {
			failed++
		}
	}
	fmt.Fprintf(s.out, "%s/matrix.md: %d cells, %d failed\n", dir, len(run.Cells), failed)
	return 0
}

// defaultSpec is matrix.yaml, or matrix-full.yaml when MATRIX=full.
func defaultSpec() string {
	if os.Getenv("MATRIX") == "full" {
		return "matrix-full.yaml"
	}
	return "matrix.yaml"
}

func renderRun(dir string, stderr io.Writer) error {
	run, err := results.LoadRun(dir)
	if err != nil {
		return err
	}
	if err := render.All(dir, run); err != nil {
		return err
	}
	ok, failed, partial := run.Tally()
	miss := run.Missing()
	fmt.Fprintf(stderr, "rendered %s: %d cells of the plan: %d ok, %d failed, %d partial, %d not run\n",
		dir, len(run.Cells)+len(miss), ok, failed, partial, len(miss))
	for _, c := range miss {
		fmt.Fprintf(stderr, "  not run: %s\n", c.Name())
	}
	if len(miss) > 0 || partial > 0 {
		fmt.Fprintf(stderr, "finish it with: rpcbed matrix -resume %s\n", dir)
	}
	return nil
}

// chooseRunner returns the runner a -runner value names.
func chooseRunner(name, root string) (runner.Runner, string, error) {
	switch name {
	case "docker":
		d, err := runner.NewDocker()
		if err != nil {
			return nil, "", err
		}
		return d, "docker", nil
	case "local":
		return &runner.Local{Dir: root}, "local", nil
	case "auto":
		if d, err := runner.NewDocker(); err == nil {
			return d, "docker", nil
		}
		return &runner.Local{Dir: root}, "local", nil
	}
	return nil, "", fmt.Errorf("-runner %q: want docker, local or auto", name)
}

// linkLatest points results/latest (beside dir) at dir.
func linkLatest(dir string) {
	link := filepath.Join(filepath.Dir(dir), "latest")
	if fi, err := os.Lstat(link); err == nil && fi.Mode()&os.ModeSymlink == 0 {
		return // something that is not our link: leave it
	}
	tmp := link + ".tmp"
	os.Remove(tmp)
	if os.Symlink(filepath.Base(dir), tmp) == nil {
		os.Rename(tmp, link)
	}
}

// meta describes the machine, the toolchain and the checkout a run is made on.
func meta(ctx context.Context, root, runnerName string) results.Run {
	m := results.Run{Machine: machine(), Versions: map[string]string{"rpcbed go": runtime.Version()}}
	// The checkout rpcbed runs in, which is root unless -root points at a copy.
	if m.Commit = gitCommit(ctx, "."); m.Commit == "" {
		m.Commit = gitCommit(ctx, root)
	}
	if runnerName == "docker" {
		if v, err := exec.CommandContext(ctx, "docker", "version", "--format", "{{.Server.Version}}").Output(); err == nil {
			m.Versions["docker engine"] = strings.TrimSpace(string(v))
		}
	}
	return m
}

func machine() results.Machine {
	m := results.Machine{Cores: runtime.NumCPU()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
				m.OS = strings.Trim(v, `"`)
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
				kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
				m.MemMB = kb / 1024
			}
		}
	}
	return m
}

// gitCommit is the checkout's short commit, with -dirty when files changed.
func gitCommit(ctx context.Context, root string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.CommandContext(ctx, "git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		c += "-dirty"
	}
	return c
}

// checkoutImages pins each runtime's image to the tag of this checkout's inputs
// (docker/images.sh tags), when the engine has it: :latest is whatever was built
// last on this engine, maybe from another checkout. Runtimes without a built tag
// of their own keep :latest.
func checkoutImages(ctx context.Context, r runner.Runner, root string) map[string]string {
	d, ok := r.(*runner.Docker)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(root, "docker", "images.sh"), "tags").Output()
	if err != nil {
		return nil
	}
	images := map[string]string{}
	for _, l := range strings.Fields(string(out)) {
		repo, _, ok := strings.Cut(l, ":")
		name, isOurs := strings.CutPrefix(repo, "rpcbed/")
		if ok && isOurs && d.HasImage(l) {
			images[name] = l
		}
	}
	return images
}
