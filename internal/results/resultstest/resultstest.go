// Package resultstest makes synthetic runs for the tests of the packages that
// compute from or print a run (analysis, render): cells whose repeats follow a
// chosen noise, seeded so a test sees the same run every time.
package resultstest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/results"
)

// Run is a run of cells whose repeats are base × value, one value per repeat;
// it started at 12:00 and took 9 minutes.
func Run(cells int, values func(cell, rep int) float64, reps int) *results.Run {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	run := &results.Run{Started: t0, Finished: t0.Add(9 * time.Minute)}
	for c := range cells {
		res := results.CellResult{Name: "go-grpc-datalist-" + string(rune('a'+c%26)) + string(rune('a'+c/26)), Status: results.StatusOK}
		base := 100 * float64(c+1)
		for r := range reps {
			v := base * values(c, r)
			res.Repeats = append(res.Repeats, results.Repeat{Index: r + 1, Report: &report.Report{},
				Metrics: results.Metrics{RPS: v, ClientCPUUs: 1e6 / v, ServerCPUUs: 2e6 / v}})
		}
		run.Cells = append(run.Cells, res)
	}
	return run
}

// CellOffsets: each cell one factor (sd cellSD in logs), each repeat noise sd.
func CellOffsets(seed uint64, cellSD, sd float64) func(int, int) float64 {
	r := rand.New(rand.NewPCG(seed, 9))
	off := map[int]float64{}
	return func(c, _ int) float64 {
		if _, ok := off[c]; !ok {
			off[c] = cellSD * r.NormFloat64()
		}
		return math.Exp(off[c] + sd*r.NormFloat64())
	}
}

// Gaussian is log-normal noise of sd per repeat.
func Gaussian(seed uint64, sd float64) func(int, int) float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	return func(int, int) float64 { return math.Exp(sd * r.NormFloat64()) }
}

// Synthetic builds a small run: go and php over grpc and http, datalist 2 and 200,
// c 1 and 50, with a failed cell and a cell with one failed repeat. shift scales
// every rps (to make a second run for compare).
func Synthetic(id string, shift float64) *results.Run {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	yes := true
	spec, _ := plan.ParseSpec([]byte("clients: {go: [grpc, http], php: [grpc, http]}\nitems: [2, 200]\nconcurrency: [1, 50]\nload: {duration: 1s, warmup: 0.5s}\n"))
	spec.Auth = &yes
	run := &results.Run{
		ID: id, Started: t0, Finished: t0.Add(5 * time.Minute), Runner: "local", Commit: "abc1234",
		Machine:  results.Machine{CPU: "Test CPU", Cores: 2, Kernel: "6.1.0", OS: "Debian GNU/Linux 12 (bookworm)", MemMB: 4096},
		Versions: map[string]string{"go-client grpc": "1.85.0", "php-client php": "8.2.36"},
		Spec:     spec,
		Verify: []results.Verify{
			{Pair: "go-grpc-datalist", Status: results.StatusOK, Raw: "raw/verify-go-grpc-datalist.txt"},
			{Pair: "php-http-datalist", Status: results.StatusFailed, ExitCode: 3, Error: "exit code 3 (wrong response): got 3 items; want 2", Raw: "raw/verify-php-http-datalist.txt"},
		},
	}
	for k, c := range spec.Plan() {
		res := results.CellResult{Name: c.Name(), Cell: c, Load: c.Load, Status: results.StatusOK, Started: t0, Finished: t0.Add(5 * time.Second)}
		if c.Client == "php" && c.Protocol == "http" {
			res.Status, res.Error = results.StatusFailed, "verify failed, not timed: exit code 3 (wrong response): got 3 items; want 2"
			run.Cells = append(run.Cells, res)
			continue
		}
		base := 1000.0 * float64(k+1)
		if c.Client == "php" {
			base /= 4
		}
		for i := 1; i <= 3; i++ {
			rps := (base + float64(i*10)) * shift
			rep := results.Repeat{Index: i, Raw: "raw/" + c.Name() + "-r" + string(rune('0'+i)) + ".txt", WallS: 1.6, ClientCPUS: 0.5, ServerCPUS: 0.4, ServerCalls: int64(rps)}
			if c.Name() == "go-http-datalist-200-c50" && i == 2 {
				rep.ExitCode, rep.Error = 1, "exit code 1: boom"
				res.Repeats = append(res.Repeats, rep)
				res.Error = "r2: exit code 1: boom"
				continue
			}
			r := &report.Report{DocumentLength: int64(28*c.Items + 29), Concurrency: c.Concurrency, TimeTakenSeconds: 1, Complete: int64(rps), RequestsPerSecond: rps,
				Rpcbed: &report.Extra{Client: c.Client, Protocol: c.Protocol, Call: c.Call, Items: c.Items, P50Us: int64(500 + 100*k), P99Us: int64(2000 + 300*k + 10*i),
					WarmupCalls: int64(rps / 2), CPUUserSeconds: 0.3, CPUSystemSeconds: 0.1}}
			rep.Report = r
			rep.Metrics = results.Metrics{RPS: rps, P50Us: float64(r.Rpcbed.P50Us), P99Us: float64(r.Rpcbed.P99Us),
				ClientCPUUs: 0.4e6 / rps, ServerCPUUs: 0.4e6 / rps, ClientCPUProcessUs: 0.5e6 / (rps * 1.5),
				ClientCallsPerCPUS: rps / 0.4, ServerCallsPerCPUS: rps / 0.4, ClientBusy: 0.4, ServerBusy: 0.4,
				BytesPerResponse: r.DocumentLength, Complete: r.Complete}
			rep.Window = &results.Window{Seconds: 1, Source: "report", ClientCPUS: 0.4, ServerCPUS: 0.4, ServerKnown: true,
				ClientCores: 1, ServerCores: 1, ClientBusy: 0.4, ServerBusy: 0.4, MachineKnown: true, MachineBusy: 0.9, OutsideCores: 0.1}
			switch {
			case c.Name() == "go-grpc-datalist-200-c50":
				// The server's core is saturated.
				rep.Metrics.ServerBusy, rep.Window.ServerBusy = 0.97, 0.97
			case c.Name() == "php-grpc-datalist-2-c50":
				// The client's core is saturated; one repeat claims more than a core.
				rep.Metrics.ClientBusy, rep.Window.ClientBusy = 0.95, 0.95
				if i == 3 {
					rep.Metrics.ClientBusy, rep.Window.ClientBusy, rep.Metrics.CPUNotUsed = 1.3, 1.3, true
					rep.Flags = []string{results.FlagCPUInvariant}
					rep.Notes = []string{results.FlagCPUInvariant + ": client busy 1.30 cores over the 1.000 s window; it may use 1"}
				}
			case c.Name() == "go-http-datalist-2-c1":
				// A noisy neighbour: the repeats spread and one saw steal.
				rep.Metrics.RPS *= 1 + 0.1*float64(i)
				if i == 2 {
					rep.Window.StealCores = 0.05
				}
			}
			res.Repeats = append(res.Repeats, rep)
		}
		if c.Name() != "go-http-datalist-2-c50" { // a run without a summary saved: computed when rendered
			res.Summary = res.Summarize()
		}
		run.Cells = append(run.Cells, res)
	}
	return run
}

// FiveRepeats gives the first cell of each run 5 repeats, enough for the U test
// to find a difference at alpha 0.05.
func FiveRepeats(runs ...*results.Run) {
	for _, run := range runs {
		c := &run.Cells[0]
		for i := 0; i < 2; i++ {
			r := c.Repeats[i]
			r.Metrics.RPS += 1
			c.Repeats = append(c.Repeats, r)
		}
	}
}

// Drifting: cells of two workers, 3 repeats; go-grpc's repeats faster each time
// by factor step, go-http's noisy around a flat level.
func Drifting(step float64, jitFlags bool) *results.Run {
	run := Run(0, nil, 3)
	run.Spec.Rounds = 3
	r := rand.New(rand.NewPCG(30, 31))
	for _, w := range []string{"grpc", "http"} {
		for k := range 6 {
			c := results.CellResult{Name: fmt.Sprintf("go-%s-datalist-%d-c1", w, k), Cell: plan.Cell{Client: "go", Protocol: w}, Status: results.StatusOK}
			for i := range 3 {
				v := 1000 * float64(k+1) * math.Exp(0.03*r.NormFloat64())
				if w == "grpc" {
					v *= math.Pow(step, float64(i))
				}
				rep := results.Repeat{Index: i + 1, Report: &report.Report{}, Metrics: results.Metrics{RPS: v}}
				if jitFlags && w == "grpc" && i == 0 {
					rep.Flags = []string{results.FlagJIT}
				}
				c.Repeats = append(c.Repeats, rep)
			}
			run.Cells = append(run.Cells, c)
		}
	}
	return run
}
