package analysis

import (
	"math"
	"slices"

	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// RepeatOrder is one worker's repeats in the order they ran: for each repeat
// index, the mean over the worker's cells of that repeat's req/s against its
// cell's mean (relative, -0.17: 17 % below). Repeats are interleaved, so repeat 1
// of every cell ran before repeat 2 of any: a worker still warming (a JIT still
// compiling) shows later repeats faster, which no single cell's spread can tell
// from noise.
type RepeatOrder struct {
	Worker string    // client-protocol, as the worker pool names it
	Cells  int       // cells with every repeat timed
	Dev    []float64 // by repeat index (Dev[0] is repeat 1)
	// Drift is the mean over the cells of last repeat / first repeat - 1. Drifts
	// tells whether it is over NoisySpread, over 2.5 standard errors of that mean,
	// and, in a run of at least OrderPeers workers, over OrderPeerFactor times the
	// median drift of all its workers: a worker's cells run back to back in each
	// pass, so a slow stretch of the machine moves them together and the standard
	// error over the cells alone understates the noise; the run's other workers
	// show how much passes move without a cause of the worker's own.
	Drift  float64
	Drifts bool
	JIT    int // repeats of these cells flagged jit-compiling
	All    int
}

// RepeatOrders are the workers with at least two cells whose repeats all timed,
// in the run's cell order.
func RepeatOrders(run *results.Run) []RepeatOrder {
	reps := run.Spec.Rounds
	if reps < 2 {
		return nil
	}
	byWorker := map[string]*RepeatOrder{}
	var order []string
	sums := map[string][]float64{}
	drifts := map[string][]float64{}
	for _, c := range run.Cells {
		w := c.Cell.Client + "-" + c.Cell.Protocol
		logs := make([]float64, reps)
		ok, jit := 0, 0
		for _, r := range c.Repeats {
			if slices.Contains(r.Flags, results.FlagJIT) {
				jit++
			}
			if r.Report == nil || r.Index < 1 || r.Index > reps || r.Metrics.RPS <= 0 {
				continue
			}
			logs[r.Index-1] = math.Log(r.Metrics.RPS)
			ok++
		}
		if ok != reps {
			continue
		}
		o, seen := byWorker[w]
		if !seen {
			o = &RepeatOrder{Worker: w}
			byWorker[w] = o
			order = append(order, w)
			sums[w] = make([]float64, reps)
		}
		mean := stats.Mean(logs)
		for i, l := range logs {
			sums[w][i] += l - mean
		}
		drifts[w] = append(drifts[w], logs[reps-1]-logs[0])
		o.Cells++
		o.JIT += jit
		o.All += len(c.Repeats)
	}
	var out []RepeatOrder
	for _, w := range order {
		o := byWorker[w]
		if o.Cells < 2 {
			continue
		}
		for _, s := range sums[w] {
			o.Dev = append(o.Dev, math.Expm1(s/float64(o.Cells)))
		}
		d := drifts[w]
		m, sd := stats.MeanSD(d)
		o.Drift = math.Expm1(m)
		o.Drifts = math.Abs(o.Drift) > results.NoisySpread && math.Abs(m) > 2.5*sd/math.Sqrt(float64(len(d)))
		out = append(out, *o)
	}
	if len(out) >= OrderPeers {
		var abs []float64
		for _, o := range out {
			abs = append(abs, math.Abs(math.Log1p(o.Drift)))
		}
		base := stats.Of(abs).Median
		for i := range out {
			if math.Abs(math.Log1p(out[i].Drift)) <= OrderPeerFactor*base {
				out[i].Drifts = false
			}
		}
	}
	return out
}

// A worker is named against its peers in runs of at least OrderPeers workers,
// when its drift is over OrderPeerFactor times their median.
const (
	OrderPeers      = 4
	OrderPeerFactor = 3
)
