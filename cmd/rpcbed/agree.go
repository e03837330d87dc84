package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/render"
	"github.com/rpcbed/rpcbed/internal/results"
)

// runAgree is `rpcbed agree A B`: how well two runs of one spec reproduce each
// other (make bench-reproducibility). It prints figures and never fails on them.
func runAgree(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("agree", flag.ContinueOnError)
	fs.SetOutput(s.err)
	tol := fs.Float64("tol", 0.10, "agreement tolerance (0.10 = medians within ±10 %)")
	share := fs.Float64("goal", 0.90, "share of cells the goal asks to agree")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: rpcbed agree [-tol 0.10] [-goal 0.90] RUN_A RUN_B [RUN_A2 RUN_B2 ...]\n\n"+
			"Prints, for req/s and for client and server CPU per call, the share of cells whose\n"+
			"medians agree within the tolerance between two runs and the cells outside; the\n"+
			"calibration (cells whose other run's median lies in their 95 % interval, both\n"+
			"ways) and the ratio verdicts that flipped; and the noise model of the two runs.\n"+
			"Given several pairs, it pools their calibration instead: a line a pair, then per\n"+
			"figure the share held over the pairs with its 95 % interval, a pair one cluster.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() < 2 || fs.NArg()%2 != 0 {
		fs.Usage()
		return 2
	}
	if fs.NArg() > 2 {
		return agreePooled(fs.Args(), *share, s)
	}
	a, b, err := loadPair(fs.Arg(0), fs.Arg(1))
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed agree: %v\n", err)
		return 1
	}
	fmt.Fprintf(s.out, "A = %s (%d cells), B = %s (%d cells)\n", fs.Arg(0), len(a.Cells), fs.Arg(1), len(b.Cells))
	ag := analysis.Agree(a, b, *tol, *share)
	if ra, rb, ok := ratioFiles(fs.Arg(0), fs.Arg(1)); ok {
		// The verdicts as each run's page printed them (ratios.csv).
		ag.Flips = analysis.FlipsOf(ra, rb)
	}
	if err := render.AgreeText(s.out, ag, *share); err != nil {
		fmt.Fprintf(s.err, "rpcbed agree: %v\n", err)
		return 1
	}
	return 0
}

// agreePooled is `rpcbed agree` over several pairs (dirs: A, B, A2, B2, ...):
// each pair's calibration and flips, pooled (render.PooledText).
func agreePooled(dirs []string, share float64, s stdio) int {
	var pairs []analysis.PairCalibration
	for i := 0; i+1 < len(dirs); i += 2 {
		a, b, err := loadPair(dirs[i], dirs[i+1])
		if err != nil {
			fmt.Fprintf(s.err, "rpcbed agree: pair %d: %v\n", i/2+1, err)
			return 1
		}
		p := analysis.PairCalibration{A: dirs[i], B: dirs[i+1]}
		p.Calibration, p.Flips = analysis.Calibrate(a, b)
		if ra, rb, ok := ratioFiles(dirs[i], dirs[i+1]); ok {
			p.Flips = analysis.FlipsOf(ra, rb)
		}
		pairs = append(pairs, p)
	}
	if err := render.PooledText(s.out, pairs, share); err != nil {
		fmt.Fprintf(s.err, "rpcbed agree: %v\n", err)
		return 1
	}
	return 0
}

// loadPair loads the two runs of a pair.
func loadPair(dirA, dirB string) (a, b *results.Run, err error) {
	if a, err = results.LoadRun(dirA); err != nil {
		return nil, nil, err
	}
	if b, err = results.LoadRun(dirB); err != nil {
		return nil, nil, err
	}
	return a, b, nil
}

// ratioFiles reads both runs' ratios.csv; ok is false when either has none or
// does not read (the verdicts are then computed from the runs).
func ratioFiles(a, b string) (ra, rb []analysis.RatioRecord, ok bool) {
	read := func(dir string) ([]analysis.RatioRecord, bool) {
		f, err := os.Open(filepath.Join(dir, render.RatiosFile))
		if err != nil {
			return nil, false
		}
		defer f.Close()
		recs, err := analysis.ReadRatiosCSV(f)
		return recs, err == nil
	}
	ra, oka := read(a)
	rb, okb := read(b)
	return ra, rb, oka && okb
}
