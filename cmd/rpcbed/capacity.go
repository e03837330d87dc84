package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/measure"
	"io"
	"path/filepath"
	"time"

	"github.com/rpcbed/rpcbed/internal/capacity"
	"github.com/rpcbed/rpcbed/internal/runner"
)

// runCapacity is `rpcbed capacity`: search each cell's knee at the spec's SLOs
// (capacity.yaml), `rpcbed capacity render DIR` to print a run's files again,
// or `rpcbed capacity agree A B` to check two runs against each other.
func runCapacity(ctx context.Context, args []string, s stdio) int {
	if len(args) > 0 {
		switch args[0] {
		case "agree":
			return capacityAgree(args[1:], s)
		case "render":
			return capacityRender(args[1:], s)
		}
	}
	fs := flag.NewFlagSet("capacity", flag.ContinueOnError)
	fs.SetOutput(s.err)
	specFile := fs.String("spec", "capacity.yaml", "capacity spec: a matrix spec with slo: and capacity: (docs/spec.md)")
	out := fs.String("out", "", "run directory (default results/<UTC time>-capacity)")
	runnerName := fs.String("runner", "auto", "docker, local, or auto (docker when an engine answers, else local)")
	root := fs.String("root", ".", "repository root (local programs: bin/, php-client/, java-client/)")
	quiet := fs.Bool("q", false, "no progress lines")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: rpcbed capacity [flags]\n"+
			"       rpcbed capacity render DIR\n"+
			"       rpcbed capacity agree DIR_A DIR_B\n\n"+
			"Finds, per cell, the highest offered rate at which the achieved rate stays within 1 % of the\n"+
			"offer and p99 (from each call's intended start) and the failed share within each SLO:\n"+
			"exponential steps to the first breach, then bisection, each step confirmed by a repeat, the\n"+
			"knee's 95 % interval from paired rounds at the bracketing rates (docs/method.md). Writes\n"+
			"DIR/capacity.json, capacity.csv, capacity.md and plots/CELL.png. agree exits 1 unless each run's\n"+
			"knee lies inside the other's interval for at least 90 % of cells and no paired ranking flips.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(s.err, "rpcbed capacity: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	absRoot, err := filepath.Abs(*root)
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed capacity: %v\n", err)
		return 2
	}
	spec, err := capacity.ReadSpec(*specFile)
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed capacity: %v\n", err)
		return 2
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("results", time.Now().UTC().Format("20060102T150405Z")+"-capacity")
	}
	r, name, err := chooseRunner(*runnerName, absRoot)
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed capacity: %v\n", err)
		return 2
	}
	defer r.Close()
	d, _ := r.(*runner.Docker)
	if reaped, err := runner.Reap(ctx, d); err == nil && reaped.Processes+reaped.Containers > 0 {
		fmt.Fprintf(s.err, "rpcbed capacity: %v\n", reaped)
	}
	var log io.Writer = s.err
	if *quiet {
		log = nil
	} else {
		fmt.Fprintf(s.err, "rpcbed capacity: %d cells x %d SLO, runner %s, into %s\n", len(spec.Matrix.Plan()), len(spec.SLOs), name, dir)
	}
	images := checkoutImages(ctx, r, absRoot)
	m := meta(ctx, absRoot, name)
	run, err := capacity.Execute(ctx, capacity.Options{Spec: spec, Dir: dir, Runner: r, RunnerName: name,
		Programs: measure.Programs{Docker: name == "docker", Root: absRoot, Images: images}, Log: log,
		Commit: m.Commit, Machine: &m.Machine})
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed capacity: %v\n", err)
		return 1
	}
	failed, noKnee := 0, 0
	for _, c := range run.Cells {
		if c.Error != "" {
			failed++
		}
		for _, k := range c.Knees {
			if k.Status != capacity.StatusFound {
				noKnee++
			}
		}
	}
	fmt.Fprintf(s.out, "%s/capacity.md: %d cells, %d failed, %d knees not found, %s\n", dir, len(run.Cells), failed, noKnee,
		run.Finished.Sub(run.Started).Round(time.Second))
	if failed > 0 {
		return 1
	}
	return 0
}

func capacityRender(args []string, s stdio) int {
	if len(args) != 1 {
		fmt.Fprintln(s.err, "usage: rpcbed capacity render DIR")
		return 2
	}
	run, err := capacity.Load(args[0])
	if err == nil {
		err = capacity.Write(args[0], run)
	}
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed capacity render: %v\n", err)
		return 1
	}
	fmt.Fprintf(s.out, "%s/capacity.md\n", args[0])
	return 0
}

func capacityAgree(args []string, s stdio) int {
	if len(args) != 2 {
		fmt.Fprintln(s.err, "usage: rpcbed capacity agree DIR_A DIR_B")
		return 2
	}
	var runs [2]*capacity.Run
	for i, d := range args {
		r, err := capacity.Load(d)
		if err != nil {
			fmt.Fprintf(s.err, "rpcbed capacity agree: %v\n", err)
			return 2
		}
		runs[i] = r
	}
	g := capacity.Agree(runs[0], runs[1])
	g.Print(s.out, args[0], args[1])
	if !g.Met() {
		return 1
	}
	return 0
}
