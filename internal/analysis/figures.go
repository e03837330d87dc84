package analysis

import (
	"slices"

	"github.com/rpcbed/rpcbed/internal/results"
)

// FigureIndex names a timed figure (as grpc-go's benchmark/stats names its
// features with FeatureIndex): Figures[FigP99] is p99, never Figures[2].
type FigureIndex int

// The timed figures every cell carries with its 95 % interval, in matrix.csv's
// order.
const (
	FigRPS FigureIndex = iota
	FigP50
	FigP99
	FigClientCPU
	FigServerCPU
	figureCount
)

// Figure is the figure i names.
func (i FigureIndex) Figure() Figure { return Figures[i] }

// Figure is a timed figure every cell carries with its 95 % interval.
type Figure struct {
	Index FigureIndex
	Name  string // req/s
	Key   string // rps: the figure in compare, agree and the noise model
	// Column is the figure's stem in matrix.csv and ratios.csv, its unit named
	// in it (p99_ms: p99_ms_ci_low, p99_ms_ci_high); Unit is that unit and
	// Scale what a value of F is multiplied by to be in it (latency is recorded
	// in µs and printed in ms everywhere).
	Column string
	Unit   string
	Scale  float64
	F      func(results.Metrics) float64
	// HigherBetter: more is faster (req/s); less is faster for latency and CPU.
	HigherBetter bool
}

// Figures are the timed figures with intervals, indexed by FigureIndex.
var Figures = []Figure{
	FigRPS:       {FigRPS, "req/s", "rps", "rps", "req/s", 1, results.RPS, true},
	FigP50:       {FigP50, "p50", "p50_us", "p50_ms", "ms", 1e-3, results.P50, false},
	FigP99:       {FigP99, "p99", "p99_us", "p99_ms", "ms", 1e-3, results.P99, false},
	FigClientCPU: {FigClientCPU, "client CPU/call", "client_cpu_us_per_call", "client_cpu_us_per_call", "µs", 1, results.ClientCPU, false},
	FigServerCPU: {FigServerCPU, "server CPU/call", "server_cpu_us_per_call", "server_cpu_us_per_call", "µs", 1, results.ServerCPU, false},
}

// FigureByKey is the Figure of key (rps ...); ok false for an unknown key.
func FigureByKey(key string) (Figure, bool) {
	i := slices.IndexFunc(Figures, func(f Figure) bool { return f.Key == key })
	if i < 0 {
		return Figure{}, false
	}
	return Figures[i], true
}
