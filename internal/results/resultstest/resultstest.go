// Package resultstest makes synthetic runs for the tests of the packages that
// compute from or print a run (analysis, render): cells whose repeats follow a
// chosen noise, seeded so a test sees the same run every time.
package resultstest

import (
	"math"
	"math/rand/v2"
	"time"

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
