package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/cost"
	"github.com/rpcbed/rpcbed/internal/cost/costplan"
	"github.com/rpcbed/rpcbed/internal/cost/costrender"
	"github.com/rpcbed/rpcbed/internal/cost/costrun"
	"github.com/rpcbed/rpcbed/internal/cost/coststats"
)

// runCost is `rpcbed cost`: the cost cells under callgrind (docs/cost.md).
func runCost(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("rpcbed cost", flag.ContinueOnError)
	fs.SetOutput(s.err)
	specFile := fs.String("spec", "cost.yaml", "cost spec: cells and calls per run")
	out := fs.String("out", "", "run directory (default results/cost-<UTC time>)")
	root := fs.String("root", ".", "the checkout: bin/, php-client/, java-client/")
	matrixRun := fs.String("matrix", "results/reference", "a matrix run (its matrix.csv) to set the estimated cycles against the measured CPU per call in cost.md; \"\" = none")
	only := fs.String("only", "", "comma-separated substrings: measure only the cells whose name/side contains one")
	clientCPU := fs.String("client-cpu", "1", "CPU for the client (taskset); \"\" = not pinned")
	serverCPU := fs.String("server-cpu", "0", "CPU for the server (taskset); \"\" = not pinned")
	keep := fs.Bool("keep-raw", false, "keep every callgrind file under raw/ (large)")
	parallel := fs.Int("parallel", 2, "cells measured at once: 2 = one process under callgrind on each of -client-cpu and -server-cpu (docs/cost.md, Time); 1 = one at a time")
	render := fs.String("render", "", "re-render cost.md of an existing run directory (with -matrix) instead of measuring; its cells not measured take -spec's reasons")
	merge := fs.String("merge", "", "with -render: comma-separated run directories whose cells are added to the rendered run's (cells it lacks)")
	fs.Usage = func() {
		fmt.Fprintln(s.err, "usage: rpcbed cost [-spec cost.yaml] [-out DIR] [-only CELLS] [-matrix RUN]\n       rpcbed cost -render DIR [-matrix RUN]\n\nRuns every cost cell twice under valgrind's callgrind (a short and a long run) and\nwrites the marginal cost per call: cost.json, cost.csv, cost.md (docs/cost.md).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(s.err, "rpcbed cost: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	var timed cost.Timed
	if *matrixRun != "" {
		t, err := cost.LoadTimed(*matrixRun)
		if err != nil {
			fmt.Fprintf(s.err, "rpcbed cost: -matrix: %v (the comparison with CPU per call is left out)\n", err)
		} else {
			timed = t
		}
	}
	if *render != "" {
		res, err := cost.LoadResult(*render)
		if err != nil {
			fmt.Fprintf(s.err, "rpcbed cost: %v\n", err)
			return 1
		}
		cost.FillSpeed(*render, res)
		// A cell not measured carries the plan's reason, not a measurement:
		// rendered again, it gets the spec's current words.
		if spec, err := costplan.LoadSpec(*specFile); err == nil {
			reasons := spec.Reasons()
			for i, c := range res.Cells {
				if why, ok := reasons[c.ID()]; ok && c.Status == cost.StatusNotMeasured {
					res.Cells[i].Error = why
				}
			}
		}
		if *merge != "" {
			for _, d := range strings.Split(*merge, ",") {
				other, err := cost.LoadResult(d)
				if err != nil {
					fmt.Fprintf(s.err, "rpcbed cost: -merge: %v\n", err)
					return 1
				}
				cost.FillSpeed(d, other)
				res.Merge(other)
			}
		}
		if err := costrender.WriteAll(*render, res); err != nil {
			fmt.Fprintf(s.err, "rpcbed cost: %v\n", err)
			return 1
		}
		return writeCostMD(*render, res, timed, s)
	}
	spec, err := costplan.LoadSpec(*specFile)
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed cost: %v\n", err)
		return 2
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("results", "cost-"+time.Now().UTC().Format("20060102-150405"))
	}
	o := costrun.Options{Spec: spec, Root: *root, Dir: dir, Log: s.err, ClientCPU: *clientCPU, ServerCPU: *serverCPU, KeepRaw: *keep, Parallel: *parallel}
	if *only != "" {
		o.Only = strings.Split(*only, ",")
	}
	// The reference run's seconds per cell order the parallel run's queue
	// (longest first); without it costrun estimates.
	if ref, err := cost.LoadResult(filepath.Join(*root, "results", "reference", "cost")); err == nil {
		o.Expected = map[string]float64{}
		for _, c := range ref.Cells {
			o.Expected[c.ID()] = c.Seconds
		}
	}
	res, err := costrun.Run(ctx, o)
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed cost: %v\n", err)
		return 1
	}
	if err := costrender.WriteAll(dir, res); err != nil {
		fmt.Fprintf(s.err, "rpcbed cost: %v\n", err)
		return 1
	}
	if code := writeCostMD(dir, res, timed, s); code != 0 {
		return code
	}
	failed := 0
	for _, c := range res.Cells {
		if c.Status == cost.StatusFailed {
			failed++
		}
	}
	fmt.Fprintf(s.out, "%s: %d cells and sides in %.0f s, %d failed (cost.md, cost.csv, cost.json)\n", dir, len(res.Cells), res.Seconds, failed)
	if failed > 0 {
		return 1
	}
	return 0
}

func writeCostMD(dir string, res *cost.Result, timed cost.Timed, s stdio) int {
	f, err := os.Create(filepath.Join(dir, costrender.MDFile))
	if err == nil {
		err = costrender.WriteMD(f, res, timed)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = costrender.WritePlots(dir, res, timed)
	}
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed cost: %v\n", err)
		return 1
	}
	return 0
}

// runGate is `rpcbed gate BASE NEW`: exit 1 when a cell's instructions or
// estimated cycles per call grew beyond -max.
func runGate(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("rpcbed gate", flag.ContinueOnError)
	fs.SetOutput(s.err)
	max := fs.Float64("max", 100*coststats.DefaultMax, "largest growth allowed, in percent, of instructions and of estimated cycles per call")
	share := fs.Float64("within", 0, "also print the share of go and php cells within ±WITHIN % on instructions (the reproducibility goal: 1)")
	fs.Usage = func() {
		fmt.Fprintln(s.err, "usage: rpcbed gate [-max 2] BASE NEW\n\nBASE and NEW are cost runs (a directory with cost.json, or the file). Exit 0: no cell\ngrew beyond -max; 1: some did (printed), or a cell of BASE is missing from NEW; 2: bad usage.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return 2
	}
	if *max < 0 {
		fmt.Fprintln(s.err, "rpcbed gate: -max must be 0 or more")
		return 2
	}
	base, err := cost.LoadResult(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed gate: %v\n", err)
		return 2
	}
	nw, err := cost.LoadResult(fs.Arg(1))
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed gate: %v\n", err)
		return 2
	}
	g := coststats.Gate(base, nw, *max/100)
	costrender.PrintGate(s.out, g)
	if *share > 0 {
		costrender.PrintReproducibility(s.out, g, *share/100)
	}
	if !g.Pass() {
		return 1
	}
	return 0
}
