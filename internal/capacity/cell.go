package capacity

import (
	"context"
	"math"
	"slices"

	"github.com/rpcbed/rpcbed/internal/plan"
)

// CellResult is one cell's search: its knee at each SLO and every run the
// searches took (shared between the SLOs at equal rates).
type CellResult struct {
	Name string    `json:"name"` // plan.Cell.Name(): conditions become dimensions by name
	Cell plan.Cell `json:"cell"`
	// Closed is the cell's closed-loop throughput at its concurrency (calls/s),
	// measured first when the spec gives no start; Start the first rate offered.
	Closed float64 `json:"closed,omitempty"`
	Start  float64 `json:"start"`
	Knees  []Knee  `json:"knees"`
	Runs   []Obs   `json:"runs"`
	// Error: the cell could not be searched at all (its server did not start,
	// its verify failed).
	Error string `json:"error,omitempty"`
	// Seconds is the search's wall time.
	Seconds float64 `json:"seconds"`
}

// StartFrom is the first offered rate for a closed-loop throughput: a quarter
// of it, to two significant figures, so that two runs start alike.
func StartFrom(closed float64) float64 {
	r := closed / 4
	if r < 10 {
		return roundRate(r)
	}
	p := math.Pow(10, math.Floor(math.Log10(r))-1)
	return math.Round(r/p) * p
}

// SearchCell searches one cell at every SLO, the tightest budget first, from
// start. The searches share their runs: a later SLO's steps at a rate already
// run reuse those runs.
func SearchCell(ctx context.Context, x *Searcher, slos []SLO, start float64) ([]Knee, error) {
	order := slices.Clone(slos)
	slices.SortStableFunc(order, func(a, b SLO) int { return int(a.P99 - b.P99) })
	var knees []Knee
	for _, slo := range order {
		k, err := x.Find(ctx, slo, start)
		if err != nil {
			return knees, err
		}
		knees = append(knees, k)
	}
	// Reported in the spec's order.
	out := make([]Knee, 0, len(knees))
	for _, slo := range slos {
		for _, k := range knees {
			if k.SLO == slo {
				out = append(out, k)
			}
		}
	}
	return out, nil
}
