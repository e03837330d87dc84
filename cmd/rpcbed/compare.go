package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/render"
	"github.com/rpcbed/rpcbed/internal/results"
)

// runCompare is `rpcbed compare A B`: per cell, B against A.
func runCompare(_ context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(s.err)
	out := fs.String("o", "", "also write the comparison (Markdown) to this file")
	htmlOut := fs.String("html", "", "also write the comparison as a self-contained HTML page to this file")
	format := fs.String("format", "md", "what stdout gets: md (the table), csv or json (ratios.csv's columns, kind b-vs-a: each cell's figure in B over A, docs/reports.md)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: rpcbed compare [-o FILE] [-html FILE] RUN_A RUN_B\n\n"+
			"Compares two matrix runs (results/<run> directories) cell by cell: the change in\n"+
			"requests/s, p99, client and server CPU per call from A to B, with its 95 % interval\n"+
			"(B's median over A's; both runs' noise and the shift a whole run makes,\n"+
			"docs/method.md) and its verdict: faster or slower when the interval excludes no\n"+
			"change, ~ (indistinguishable) when it holds it. The interval is the verdict's only\n"+
			"ground. Each run also has bench.txt, so `benchstat A/bench.txt B/bench.txt` works\n"+
			"too (its own test, Mann-Whitney U). -html writes a page colouring each change\n"+
			"improved, regressed or indistinguishable. Flags may follow the runs.")
		fs.PrintDefaults()
	}
	runArgs, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(runArgs) != 2 {
		fmt.Fprintf(s.err, "rpcbed compare: %s\n", missingRuns(runArgs))
		return 2
	}
	if *format != "md" && *format != "csv" && *format != "json" {
		fmt.Fprintf(s.err, "rpcbed compare: -format %q: want md, csv or json\n", *format)
		return 2
	}
	runs := make([]*results.Run, 2)
	for i, dir := range runArgs {
		r, err := results.LoadRun(dir)
		if err != nil {
			fmt.Fprintf(s.err, "rpcbed compare: %v\n", err)
			return 1
		}
		runs[i] = r
	}
	changes := analysis.Compare(runs[0], runs[1])
	if len(changes) == 0 {
		fmt.Fprintln(s.err, "rpcbed compare: the two runs have no successful cell in common")
		return 1
	}
	write := render.CompareMarkdown
	switch *format {
	case "csv":
		write = func(w io.Writer, _, _ *results.Run, ch []analysis.CellChange) error {
			return analysis.WriteRatiosCSV(w, analysis.ChangeRecords(ch))
		}
	case "json":
		write = func(w io.Writer, _, _ *results.Run, ch []analysis.CellChange) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			recs := analysis.ChangeRecords(ch)
			if recs == nil {
				recs = []analysis.RatioRecord{}
			}
			return enc.Encode(recs)
		}
	}
	if err := write(s.out, runs[0], runs[1], changes); err != nil {
		fmt.Fprintf(s.err, "rpcbed compare: %v\n", err)
		return 1
	}
	for _, o := range []struct {
		file  string
		write func(io.Writer, *results.Run, *results.Run, []analysis.CellChange) error
	}{{*out, render.CompareMarkdown}, {*htmlOut, render.CompareHTML}} {
		if o.file == "" {
			continue
		}
		var b bytes.Buffer
		err := o.write(&b, runs[0], runs[1], changes)
		if err == nil {
			err = os.WriteFile(o.file, b.Bytes(), 0o644)
		}
		if err != nil {
			fmt.Fprintf(s.err, "rpcbed compare: %v\n", err)
			return 1
		}
	}
	return 0
}

// missingRuns says what is wrong with the runs given when they are not two.
func missingRuns(runs []string) string {
	switch len(runs) {
	case 0:
		return "no runs given: want two, RUN_A and RUN_B (e.g. rpcbed compare results/reference results/<run>); rpcbed compare -h for more"
	case 1:
		return fmt.Sprintf("one run given (%s): want a second, RUN_B, to compare it with (e.g. rpcbed compare %s results/<run>)", runs[0], runs[0])
	}
	return fmt.Sprintf("%d runs given (%s): want two, RUN_A and RUN_B", len(runs), strings.Join(runs, ", "))
}

// parseInterspersed parses flags wherever they stand among the arguments
// (`compare A B -html FILE`) and returns the other arguments in order.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return rest, nil
		}
		rest = append(rest, args[0])
		args = args[1:]
	}
}
