package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/rpcbed/rpcbed/internal/results"

	"github.com/rpcbed/rpcbed/internal/analysis"
)

// runSlices is `rpcbed slices RUN...`: the slice-length trade-off from runs of one
// spec at different durations (make bench-slices). It prints figures and never
// fails on them.
func runSlices(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("slices", flag.ContinueOnError)
	fs.SetOutput(s.err)
	per := fs.Float64("t", 6, "seconds of rounds per cell the half-widths are given for")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: rpcbed slices [-t 6] RUN...\n\n"+
			"For runs of one spec at different slice lengths (durations), prints per run the sd\n"+
			"of a round's req/s and CPU per call about its cell's mean (pooled over the cells),\n"+
			"the wall time a run takes (the slice plus its switching cost), and the in-run 95 %\n"+
			"half-width a cell reaches in -t seconds of rounds, and the time ±5 % would need.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	tw := tabwriter.NewWriter(s.out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "slice\trounds\tcells\trun wall\tswitching\tsd req/s\tsd client CPU\tsd server CPU\thalf-width in %gs: req/s\tclient CPU\tserver CPU\tfor ±5 %%: req/s\tclient CPU\tserver CPU\n", *per)
	for _, dir := range fs.Args() {
		run, err := results.LoadRun(dir)
		if err != nil {
			fmt.Fprintf(s.err, "rpcbed slices: %v\n", err)
			return 1
		}
		sl := analysis.Slices(run)
		fmt.Fprintf(tw, "%gs\t%d\t%d\t%.2f s\t%.2f s", sl.Length, sl.Rounds, sl.Cells, sl.RunWallS, sl.SwitchS)
		for _, f := range sl.SigmaFigures {
			fmt.Fprintf(tw, "\t%.1f %%", sl.Sigma[f.Key]*100)
		}
		for _, f := range sl.SigmaFigures {
			fmt.Fprintf(tw, "\t±%.1f %%", sl.HalfWidth(f.Key, *per)*100)
		}
		for _, f := range sl.SigmaFigures {
			fmt.Fprintf(tw, "\t%.0f s", sl.TimeFor(f.Key, 0.05))
		}
		fmt.Fprintln(tw)
	}
	return errCode(tw.Flush())
}

func errCode(err error) int {
	if err != nil {
		return 1
	}
	return 0
}
