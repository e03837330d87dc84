package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// runParse prints the report in each file as JSON: one object for one file, an
// array for several, in argument order, with null for a file that did not parse.
// A file that does not parse is named on stderr with its line (FILE:LINE: ...),
// the others are still printed, and the exit code is 1.
func runParse(_ context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("parse", flag.ContinueOnError)
	fs.SetOutput(s.err)
	merge := fs.Bool("merge", false, "print the latency of all the files' clients together instead: their latency records\n"+
		"merged exactly, the merged record and its percentiles (us) as one JSON object")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: rpcbed parse [-merge] FILE...  (- reads stdin)\n\n"+
			"Reads Apache Bench 2.3 output or an rpcbed client's report and prints it as\n"+
			"JSON: one object for one file, an array for several (null for a file that\n"+
			"does not parse). Exit code 1 when any file does not parse (with -merge, or\n"+
			"has no latency record: \"Latency histogram:\", docs/report-format.md).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	files := fs.Args()
	if len(files) == 0 {
		fs.Usage()
		return 2
	}

	code := 0
	reports := make([]*report.Report, len(files))
	for i, name := range files {
		r, err := parseFile(name, s.in)
		if err != nil {
			fmt.Fprintf(s.err, "rpcbed parse: %v\n", err)
			code = 1
			continue
		}
		reports[i] = &r
	}

	var v any = reports
	if *merge {
		if code != 0 {
			return code
		}
		recs := make([]string, len(reports))
		for i, r := range reports {
			if r.Rpcbed == nil || r.Rpcbed.LatencyHistogram == "" {
				fmt.Fprintf(s.err, "rpcbed parse -merge: %s: no latency record (\"Latency histogram:\"): ab, or a report older than the record\n", files[i])
				return 1
			}
			recs[i] = r.Rpcbed.LatencyHistogram
		}
		lat, err := stats.LatencyOf(recs...)
		if err != nil {
			fmt.Fprintf(s.err, "rpcbed parse -merge: %v\n", err)
			return 1
		}
		v = lat
	} else if len(files) == 1 {
		if reports[0] == nil {
			return code
		}
		v = reports[0]
	}
	enc := json.NewEncoder(s.out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(s.err, "rpcbed parse: %v\n", err)
		return 1
	}
	return code
}

// parseFile parses one file ("-" is stdin); its error starts with FILE:LINE when
// a line is to blame, with FILE otherwise.
func parseFile(name string, stdin io.Reader) (report.Report, error) {
	var in io.Reader = stdin
	label := "<stdin>"
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return report.Report{}, err
		}
		defer f.Close()
		in, label = f, name
	}
	r, err := report.Parse(in)
	var pe *report.ParseError
	switch {
	case errors.As(err, &pe) && pe.Line > 0:
		return r, fmt.Errorf("%s:%d: %q: %s", label, pe.Line, pe.Text, pe.Msg)
	case err != nil:
		return r, fmt.Errorf("%s: %w", label, err)
	}
	return r, nil
}
