package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/matrix"
)

// runProbe is `rpcbed probe`: how steady this machine is, in the figures that
// explain a matrix's spread. It times the compute probe (the one the matrix runs
// around every repeat) and a memory probe (a random walk past the caches) on each
// CPU, rounds times with a pause between, and prints min, median, max and spread.
func runProbe(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	fs.SetOutput(s.err)
	rounds := fs.Int("rounds", 25, "probes per CPU and kind (1..1000)")
	gap := fs.Duration("gap", 300*time.Millisecond, "pause between rounds (0..10s)")
	cpus := fs.String("cpus", "0,1", "CPUs to probe, comma-separated (-1: unpinned)")
	steps := fs.Int("mem-steps", matrix.ProbeMemSteps, "steps of one memory probe (1000..100000000)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: rpcbed probe [-rounds 25] [-gap 300ms] [-cpus 0,1] [-mem-steps N]\n\n"+
			"Times a fixed compute probe (2000 SHA-256 sums of 4 KiB, as the matrix does around\n"+
			"every repeat) and a memory probe (a dependent random walk over 32 MiB) on each CPU,\n"+
			"and prints min, median, max and (max-min)/median: how much the same work's time\n"+
			"moves on this machine while nothing else of rpcbed's runs.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 0 || *rounds < 1 || *rounds > 1000 || *gap < 0 || *gap > 10*time.Second || *steps < 1000 || *steps > 100_000_000 {
		fs.Usage()
		return 2
	}
	var list []int
	for _, f := range strings.Split(*cpus, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < -1 {
			fmt.Fprintf(s.err, "rpcbed probe: -cpus %q: want CPU numbers (or -1)\n", *cpus)
			return 2
		}
		list = append(list, n)
	}
	kinds := []struct {
		name string
		f    func(cpu int) (time.Duration, error)
	}{
		{"compute", matrix.ProbeCPU},
		{"memory", func(cpu int) (time.Duration, error) { return matrix.ProbeMemory(cpu, *steps) }},
	}
	for _, cpu := range list {
		for _, k := range kinds {
			var v []float64
			for r := 0; r < *rounds; r++ {
				if ctx.Err() != nil {
					return 1
				}
				d, err := k.f(cpu)
				if err != nil {
					fmt.Fprintf(s.err, "rpcbed probe: CPU %d: %v\n", cpu, err)
					return 1
				}
				v = append(v, float64(d.Microseconds())/1000)
				time.Sleep(*gap)
			}
			st := matrix.StatOf(v)
			fmt.Fprintf(s.out, "CPU %2d %-7s probe: min %.2f ms, median %.2f ms, max %.2f ms, spread %.0f %% over %d rounds\n",
				cpu, k.name, st.Min, st.Median, st.Max, (st.Max-st.Min)/st.Median*100, st.N)
		}
	}
	return 0
}
