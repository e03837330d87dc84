package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rpcbed/rpcbed/internal/probe"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// runProbe is `rpcbed probe`: how steady this machine is, in the figures that
// explain a matrix's spread. It times the compute and the cache probe (the ones
// the matrix runs around every repeat) and a memory probe (a random walk past the
// caches) on each CPU, rounds times with a pause between, and prints min, median, max and spread.
func runProbe(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	fs.SetOutput(s.err)
	rounds := fs.Int("rounds", 25, "probes per CPU and kind (1..1000)")
	gap := fs.Duration("gap", 300*time.Millisecond, "pause between rounds (0..10s)")
	cpus := fs.String("cpus", "0,1", "CPUs to probe, comma-separated (-1: unpinned)")
	steps := fs.Int("mem-steps", probe.MemSteps, "steps of one memory probe (1000..100000000)")
	sustained := fs.Duration("sustained", 0, "also decode a 5000-item DataList back to back for this long on every CPU at once (4s..10m; 0: off) and print how much its rate moves over 0.25, 1, 4 and 16 s windows, and how the CPUs' rates move together")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: rpcbed probe [-rounds 25] [-gap 300ms] [-cpus 0,1] [-mem-steps N] [-sustained 64s]\n\n"+
			"Times a fixed compute probe (2000 SHA-256 sums of 4 KiB, as the matrix does around\n"+
			"every repeat), a memory probe (a dependent random walk over 32 MiB) and the cache\n"+
			"probe the matrix also times (the same walk over 2 MiB) on each CPU,\n"+
			"and prints min, median, max and (max-min)/median: how much the same work's time\n"+
			"moves on this machine while nothing else of rpcbed's runs. With -sustained it also\n"+
			"keeps each CPU busy decoding the matrix's 5000-item protobuf answer, as a loaded\n"+
			"client does, and prints the standard deviation of its rate over windows of 0.25, 1,\n"+
			"4 and 16 s beside what independent slots would give: how much a repeat of a given\n"+
			"length moves on this machine, how much longer windows help, and whether the CPUs\n"+
			"(all loaded at once) slow down together.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 0 || *rounds < 1 || *rounds > 1000 || *gap < 0 || *gap > 10*time.Second || *steps < 1000 || *steps > 100_000_000 ||
		(*sustained != 0 && (*sustained < 4*time.Second || *sustained > 10*time.Minute)) {
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
		{"compute", probe.CPU},
		{"memory", func(cpu int) (time.Duration, error) { return probe.Memory(cpu, *steps) }},
		{"cache", probe.Cache},
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
			st := stats.Of(v)
			fmt.Fprintf(s.out, "CPU %2d %-7s probe: min %.2f ms, median %.2f ms, max %.2f ms, spread %.0f %% over %d rounds\n",
				cpu, k.name, st.Min, st.Median, st.Max, (st.Max-st.Min)/st.Median*100, st.N)
		}
	}
	if *sustained == 0 {
		return 0
	}
	work, err := probe.DecodeWork(5000)
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed probe: %v\n", err)
		return 1
	}
	// Every CPU at once, as a matrix loads client and server together.
	rates := make([][]float64, len(list))
	errs := make([]error, len(list))
	var wg sync.WaitGroup
	for i, cpu := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rates[i], errs[i] = probe.Sustained(ctx, cpu, *sustained, sustainedSlot, work)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return 1
	}
	for i, cpu := range list {
		if errs[i] != nil {
			fmt.Fprintf(s.err, "rpcbed probe: CPU %d: %v\n", cpu, errs[i])
			return 1
		}
		fmt.Fprintln(s.out, sustainedLine(cpu, *sustained, rates[i]))
	}
	for i := range list {
		for j := i + 1; j < len(list); j++ {
			if r := probe.WindowCorrelation(rates[i], rates[j], 4); !math.IsNaN(r) {
				fmt.Fprintf(s.out, "CPU %2d and CPU %2d at the same time: correlation of their 1s windows' rates %.2f (1: they slow down together; 0: each on its own)\n", list[i], list[j], r)
			}
		}
	}
	return 0
}

// sustainedSlot is the sustained probe's counting slot; sustainedWidths its
// windows in slots: 0.25, 1, 4 and 16 s.
const sustainedSlot = 250 * time.Millisecond

var sustainedWidths = []int{1, 4, 16, 64}

// sustainedLine is one CPU's sustained probe: the median rate, then per window
// length the sd of the rate and, in brackets, what independent slots would give.
func sustainedLine(cpu int, took time.Duration, rates []float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CPU %2d sustained decode (5000-item DataList, protobuf) for %s: median %.0f decodes/s; sd of the rate over", cpu, took, stats.Of(rates).Median)
	ws := probe.WindowNoise(rates, sustainedWidths)
	if len(ws) == 0 {
		b.WriteString(" no window: too few slots")
		return b.String()
	}
	for i, w := range ws {
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(&b, "%s %s windows %.0f %%", sep, (time.Duration(w.Slots) * sustainedSlot).String(), w.SD*100)
		if i > 0 && !math.IsNaN(w.White) {
			fmt.Fprintf(&b, " (independent slots: %.0f %%)", w.White*100)
		}
	}
	return b.String()
}
