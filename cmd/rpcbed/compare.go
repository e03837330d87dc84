package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/rpcbed/rpcbed/internal/matrix"
	"github.com/rpcbed/rpcbed/internal/render"
)

// runCompare is `rpcbed compare A B`: per cell, B against A.
func runCompare(_ context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(s.err)
	out := fs.String("o", "", "also write the comparison to this file")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: rpcbed compare [-o FILE] RUN_A RUN_B\n\n"+
			"Compares two matrix runs (results/<run> directories) cell by cell: the change in\n"+
			"requests/s, p99, client and server CPU per call from A to B, and whether it is\n"+
			"significant over the repeats (Mann-Whitney U, as benchstat). Each run also has\n"+
			"bench.txt, so `benchstat A/bench.txt B/bench.txt` works too.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return 2
	}
	runs := make([]*matrix.Run, 2)
	for i, dir := range fs.Args() {
		r, err := matrix.LoadRun(dir)
		if err != nil {
			fmt.Fprintf(s.err, "rpcbed compare: %v\n", err)
			return 1
		}
		runs[i] = r
	}
	changes := render.Compare(runs[0], runs[1])
	if len(changes) == 0 {
		fmt.Fprintln(s.err, "rpcbed compare: the two runs have no successful cell in common")
		return 1
	}
	if err := render.CompareMarkdown(s.out, runs[0], runs[1], changes); err != nil {
		fmt.Fprintf(s.err, "rpcbed compare: %v\n", err)
		return 1
	}
	if *out != "" {
		f, err := os.Create(*out)
		if err == nil {
			err = render.CompareMarkdown(f, runs[0], runs[1], changes)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(s.err, "rpcbed compare: %v\n", err)
			return 1
		}
	}
	return 0
}
