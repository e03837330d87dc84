package matrix

import (
	"math"
	"slices"

	"github.com/rpcbed/rpcbed/internal/stats"
)

// Figure is a timed figure every cell carries with its 95 % interval.
type Figure struct {
	Name string // req/s
	Key  string // rps: matrix.csv's rps_ci_low, rps_ci_high
	F    func(Metrics) float64
	// HigherBetter: more is faster (req/s); less is faster for latency and CPU.
	HigherBetter bool
}

// Figures are the timed figures with intervals, in matrix.csv's order.
var Figures = []Figure{
	{"req/s", "rps", RPS, true},
	{"p50", "p50_us", P50, false},
	{"p99", "p99_us", P99, false},
	{"client CPU/call", "client_cpu_us_per_call", ClientCPU, false},
	{"server CPU/call", "server_cpu_us_per_call", ServerCPU, false},
}

// FigureByKey is the Figure of key (rps ...); ok false for an unknown key.
func FigureByKey(key string) (Figure, bool) {
	i := slices.IndexFunc(Figures, func(f Figure) bool { return f.Key == key })
	if i < 0 {
		return Figure{}, false
	}
	return Figures[i], true
}

// ByRound is one figure of a cell's good repeats by round (Repeat.Index).
func (c CellResult) ByRound(f func(Metrics) float64) map[int]float64 {
	m := map[int]float64{}
	for _, r := range c.Repeats {
		if r.Report != nil {
			if x := f(r.Metrics); !math.IsNaN(x) && x > 0 {
				m[r.Index] = x
			}
		}
	}
	return m
}

// NoiseOf is one figure's noise model over cells: its within-cell variance
// pooled over them, and the run shift a rerun adds (docs/method.md, section 11).
func NoiseOf(cells []CellResult, f func(Metrics) float64, shift float64) stats.Noise {
	n := stats.Noise{RunShift: shift}
	for _, c := range cells {
		n.Pool.Add(stats.Logs(c.Values(f)))
	}
	return n
}

// Uncertainty is a run's noise model, per figure: what every interval of the
// run's tables comes from.
type Uncertainty struct {
	run   *Run
	noise map[string]stats.Noise
	// ratios: per comparison kind and figure, the pooled variance of per-round
	// log ratios over the paired comparisons of that kind.
	ratios map[string]stats.Noise
}

// Uncertainty computes the run's noise model: each figure's within-cell variance
// pooled over the cells of each client (a JVM's JIT makes java's cells noisier
// than go's, and would widen go's intervals in one pool), and the spec's run
// shift.
func (r *Run) Uncertainty() *Uncertainty {
	u := &Uncertainty{run: r, noise: map[string]stats.Noise{}, ratios: map[string]stats.Noise{}}
	byClient := map[string][]CellResult{}
	for _, c := range r.Cells {
		byClient[c.Client] = append(byClient[c.Client], c)
	}
	for client, cells := range byClient {
		for _, f := range Figures {
			u.noise[f.Key+"/"+client] = NoiseOf(cells, f.F, r.Spec.Shift())
		}
	}
	for _, p := range r.pairs() {
		for _, f := range p.figures {
			k := p.kind + "/" + f.Key
			n := u.ratios[k]
			n.Pool.Add(stats.PairedLogRatios(p.a.ByRound(f.F), p.b.ByRound(f.F)))
			u.ratios[k] = n
		}
	}
	return u
}

// Spec is the spec of the run u models.
func (u *Uncertainty) Spec() Spec { return u.run.Spec }

// Noise is the noise model of figure f for client's cells.
func (u *Uncertainty) Noise(f Figure, client string) stats.Noise { return u.noise[f.Key+"/"+client] }

// Interval is where a rerun's median of c's figure will land, at 95 %.
func (u *Uncertainty) Interval(c CellResult, f Figure) stats.Interval {
	return u.Noise(f, c.Client).Median(c.Values(f.F))
}

// InRun is the 95 % interval of this run's median of c's figure alone.
func (u *Uncertainty) InRun(c CellResult, f Figure) stats.Interval {
	return u.Noise(f, c.Client).InRun(c.Values(f.F))
}

// Comparison kinds: a client against go-client on the same protocol, call, items
// and concurrency; a protocol against gRPC from the same client.
const (
	VsGo   = "client-vs-go"
	VsGRPC = "protocol-vs-grpc"
)

// Comparison is one ratio the report makes: figure of cell A over cell B, with
// its 95 % interval and verdict (A faster, slower, or indistinguishable from B).
type Comparison struct {
	Kind    string
	A, B    string // cell names
	Figure  Figure
	Ratio   stats.Ratio
	Verdict string
}

// pair is two cells a comparison puts side by side.
type pair struct {
	kind    string
	a, b    CellResult
	figures []Figure
}

// pairs lists the run's comparisons: every client's cell against go's (req/s,
// client CPU per call: what the caller's language costs), and every protocol's
// cell against grpc's from the same client (req/s, server CPU per call).
func (r *Run) pairs() []pair {
	byName := map[string]CellResult{}
	for _, c := range r.Cells {
		if c.Status == StatusOK {
			byName[c.Name] = c
		}
	}
	rps, ccpu, scpu := Figures[0], Figures[3], Figures[4]
	var out []pair
	for _, c := range r.Cells {
		if c.Status != StatusOK {
			continue
		}
		if c.Client != "go" {
			g := c.Cell
			g.Client = "go"
			if b, ok := byName[g.Name()]; ok {
				out = append(out, pair{VsGo, c, b, []Figure{rps, ccpu}})
			}
		}
		if c.Protocol != "grpc" {
			g := c.Cell
			g.Protocol = "grpc"
			g.ServerLang = r.Spec.Servers["grpc"]
			if b, ok := byName[g.Name()]; ok {
				out = append(out, pair{VsGRPC, c, b, []Figure{rps, scpu}})
			}
		}
	}
	return out
}

// Comparisons are the run's ratios with their intervals and verdicts. Cells that
// ran in the same rounds of one server group are paired by round (the machine's
// drift cancels in a per-round ratio); others (ice and dubbo against grpc, on
// two servers) are not, and carry both cells' noise and the run shift.
func (u *Uncertainty) Comparisons() []Comparison {
	var out []Comparison
	for _, p := range u.run.pairs() {
		for _, f := range p.figures {
			d := u.ratios[p.kind+"/"+f.Key]
			var rt stats.Ratio
			if p.a.groupKey() == p.b.groupKey() {
				rt = d.PairedRatio(p.a.ByRound(f.F), p.b.ByRound(f.F), u.Noise(f, p.a.Client), u.Noise(f, p.b.Client))
			} else {
				rt = stats.UnpairedRatio(p.a.Values(f.F), p.b.Values(f.F), u.Noise(f, p.a.Client), u.Noise(f, p.b.Client))
			}
			if rt.N == 0 {
				continue
			}
			out = append(out, Comparison{Kind: p.kind, A: p.a.Name, B: p.b.Name, Figure: f, Ratio: rt, Verdict: rt.Verdict(f.HigherBetter)})
		}
	}
	return out
}

// Width is c's widest in-run 95 % half-width over req/s and each side's CPU per
// call, with the run's pooled noise (what Spec.Precision holds cells to); NaN
// for a cell without rounds.
func (u *Uncertainty) Width(c CellResult) float64 {
	w := math.NaN()
	for _, f := range precisionFigures {
		hw := u.InRun(c, f).HalfWidth()
		if !math.IsNaN(hw) && (math.IsNaN(w) || hw > w) {
			w = hw
		}
	}
	return w
}
