package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/rpcbed/rpcbed/internal/openloop"
)

// runVegeta is `rpcbed vegeta`: vegeta's results in go-client's open-loop
// figures, for make bench-loadgen.
func runVegeta(_ context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("vegeta", flag.ContinueOnError)
	fs.SetOutput(s.err)
	rate := fs.Float64("rate", 0, "the attack's -rate, calls per second")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: rpcbed vegeta -rate R [FILE.csv]   (vegeta encode -to csv; stdin without FILE)\n\n"+
			"Prints one line: requests failed seconds achieved/s p50_us p99_us p50_sent_us p99_sent_us.\n"+
			"Latency counts from each call's intended start (hit seq is due at the attack's start plus\n"+
			"(seq+1)/R, the start being the latest one no hit left before: coordinated omission\n"+
			"corrected, as go-client -rate), and from its send (vegeta's own).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 1 || *rate <= 0 {
		fs.Usage()
		return 2
	}
	in := s.in
	if fs.NArg() == 1 {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			fmt.Fprintf(s.err, "rpcbed vegeta: %v\n", err)
			return 1
		}
		defer f.Close()
		in = f
	}
	sum, err := openloop.ReadVegetaCSV(in, *rate)
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed vegeta: %v\n", err)
		return 1
	}
	fmt.Fprintf(s.out, "%d %d %.6f %.1f %d %d %d %d\n", sum.Requests, sum.Failed, sum.Seconds, sum.Achieved,
		sum.P50Us, sum.P99Us, sum.P50SentUs, sum.P99SentUs)
	return 0
}
