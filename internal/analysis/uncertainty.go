// Package analysis computes what saved runs say beyond their own figures: each
// figure's 95 % interval and the paired ratios between cells (Uncertainty), the
// ratio tables and their verdicts (Ratios), the noise of one round (Slices), a
// cell's interval width (Width), the repeat order (RepeatOrders), and over two
// runs their agreement (Agree: calibration, verdict flips, the noise model) and
// their per-cell changes (Compare). Data in, data out: it prints nothing, and
// internal/render prints what it computes.
package analysis

import (
	"github.com/rpcbed/rpcbed/internal/plan"
	"maps"
	"math"
	"slices"

	"github.com/rpcbed/rpcbed/internal/stats"

	"github.com/rpcbed/rpcbed/internal/results"
)

// NoiseOf is one figure's noise model over cells: its within-cell variance
// pooled over them, and the run shift a rerun adds (docs/method.md, section 11).
func NoiseOf(cells []results.CellResult, f func(results.Metrics) float64, shift float64) stats.Noise {
	n := stats.Noise{RunShift: shift}
	for _, c := range cells {
		// A forked cell's rounds deviate from their own fork's mean: the spread
		// between forks is Between's (BetweenOf).
		for _, v := range c.ValuesByFork(f) {
			n.Pool.Add(stats.Logs(v))
		}
	}
	return n
}

// BetweenOf is one figure's spread between forks over the cells of a group that
// forks (Spec.Forks): none for a group that did not.
func BetweenOf(cells []results.CellResult, f func(results.Metrics) float64, forks int) stats.Between {
	var logs [][][]float64
	for _, c := range cells {
		var lf [][]float64
		for _, v := range c.ValuesByFork(f) {
			lf = append(lf, stats.Logs(v))
		}
		logs = append(logs, lf)
	}
	return stats.BetweenForks(logs, forks)
}

// Uncertainty is a run's noise model, per figure: what every interval of the
// run's tables comes from.
type Uncertainty struct {
	run   *results.Run
	noise map[string]stats.Noise
	// between: per server group and figure, the spread between the group's
	// forks (Spec.Forks); absent for a group that did not fork.
	between map[string]stats.Between
	// ratios: per comparison kind and figure, the pooled variance of per-round
	// log ratios over the paired comparisons of that kind.
	ratios map[string]stats.Noise
}

// UncertaintyOf computes the run's noise model: each figure's within-cell variance
// pooled over the cells of each client (a JVM's JIT makes java's cells noisier
// than go's, and would widen go's intervals in one pool), and the spec's run
// shift.
func UncertaintyOf(r *results.Run) *Uncertainty {
	u := &Uncertainty{run: r, noise: map[string]stats.Noise{}, between: map[string]stats.Between{}, ratios: map[string]stats.Noise{}}
	byClient := map[string][]results.CellResult{}
	byGroup := map[string][]results.CellResult{}
	for _, c := range r.Cells {
		byClient[c.Client] = append(byClient[c.Client], c)
		if r.Spec.ForksFor(c.Cell) > 1 {
			byGroup[c.Cell.GroupKey()] = append(byGroup[c.Cell.GroupKey()], c)
		}
	}
	for g, cells := range byGroup {
		for _, f := range Figures {
			if b := BetweenOf(cells, f.F, r.Spec.ForksFor(cells[0].Cell)); b.DF > 0 {
				u.between[f.Key+"/"+g] = b
			}
		}
	}
	for client, cells := range byClient {
		for _, f := range Figures {
			u.noise[f.Key+"/"+client] = NoiseOf(cells, f.F, r.Spec.Shift())
		}
	}
	for _, p := range pairs(r) {
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
func (u *Uncertainty) Spec() plan.Spec { return u.run.Spec }

// Noise is the noise model of figure f for client's cells.
func (u *Uncertainty) Noise(f Figure, client string) stats.Noise { return u.noise[f.Key+"/"+client] }

// Interval is where a rerun's median of c's figure will land, at 95 %; for a
// cell of a group that forks, over the forks of the rerun's own.
func (u *Uncertainty) Interval(c results.CellResult, f Figure) stats.Interval {
	if b, ok := u.between[f.Key+"/"+c.Cell.GroupKey()]; ok {
		n := u.Noise(f, c.Client)
		n.Between = b
		return n.MedianForks(c.ValuesByFork(f.F))
	}
	return u.Noise(f, c.Client).Median(c.Values(f.F))
}

// Between is the spread between the forks of c's group for figure f (zero
// when the group did not fork).
func (u *Uncertainty) Between(c results.CellResult, f Figure) stats.Between {
	return u.between[f.Key+"/"+c.Cell.GroupKey()]
}

// InRun is the 95 % interval of this run's median of c's figure alone.
func (u *Uncertainty) InRun(c results.CellResult, f Figure) stats.Interval {
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
	a, b    results.CellResult
	figures []Figure
}

// pairs lists the run's comparisons: every client's cell against go's (req/s,
// client CPU per call: what the caller's language costs), and every protocol's
// cell against grpc's from the same client (req/s, server CPU per call).
func pairs(r *results.Run) []pair {
	byName := map[string]results.CellResult{}
	for _, c := range r.Cells {
		if c.Status == results.StatusOK {
			byName[c.Name] = c
		}
	}
	rps, ccpu, scpu := FigRPS.Figure(), FigClientCPU.Figure(), FigServerCPU.Figure()
	var out []pair
	for _, c := range r.Cells {
		if c.Status != results.StatusOK {
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
	for _, p := range pairs(u.run) {
		for _, f := range p.figures {
			d := u.ratios[p.kind+"/"+f.Key]
			var rt stats.Ratio
			if p.a.GroupKey() == p.b.GroupKey() {
				rt = d.PairedRatio(p.a.ByRound(f.F), p.b.ByRound(f.F), u.Noise(f, p.a.Client), u.Noise(f, p.b.Client))
			} else {
				na, nb := u.Noise(f, p.a.Client), u.Noise(f, p.b.Client)
				na.Between, nb.Between = u.Between(p.a, f), u.Between(p.b, f)
				rt = stats.UnpairedRatio(p.a.Values(f.F), p.b.Values(f.F), na, nb)
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
func (u *Uncertainty) Width(c results.CellResult) float64 {
	w := math.NaN()
	for _, f := range PrecisionFigures {
		hw := u.InRun(c, f).HalfWidth()
		if !math.IsNaN(hw) && (math.IsNaN(w) || hw > w) {
			w = hw
		}
	}
	return w
}

// PrecisionFigures are the figures Spec.Precision holds cells to: req/s and
// each side's CPU per call.
var PrecisionFigures = []Figure{FigRPS.Figure(), FigClientCPU.Figure(), FigServerCPU.Figure()}

// Width is a cell's widest in-run 95 % half-width over the precision figures,
// with the noise pooled over cells (the cell among them); NaN when it has none.
func Width(c results.CellResult, cells []results.CellResult) float64 {
	w := math.NaN()
	for _, f := range PrecisionFigures {
		hw := NoiseOf(cells, f.F, 0).InRun(c.Values(f.F)).HalfWidth()
		if !math.IsNaN(hw) && (math.IsNaN(w) || hw > w) {
			w = hw
		}
	}
	return w
}

// DefaultPrecision is the half-width the report holds a cell's in-run interval
// to when the spec sets no precision: past it, the cell's note gives its width.
const DefaultPrecision = 0.05

// PrecisionOf is the in-run half-width a spec holds its cells to: its
// Precision, or DefaultPrecision.
func PrecisionOf(s plan.Spec) float64 {
	if s.Precision > 0 {
		return float64(s.Precision)
	}
	return DefaultPrecision
}

// ForkSpread is one figure's spread between the server starts of a group that
// forked (Spec.Forks): SD on the log scale (0.2: a start lies about 20 % from the
// next beyond its rounds' noise), on DF degrees of freedom.
type ForkSpread struct {
	Group  string
	Forks  int
	Figure Figure
	SD     float64
	DF     int
}

// ForkSpreads lists the spread between forks of every group that forked, by
// group, in Figures' order.
func (u *Uncertainty) ForkSpreads() []ForkSpread {
	var out []ForkSpread
	groups := map[string]bool{}
	for _, c := range u.run.Cells {
		groups[c.Cell.GroupKey()] = true
	}
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		for _, f := range Figures {
			if b, ok := u.between[f.Key+"/"+g]; ok {
				out = append(out, ForkSpread{Group: g, Forks: b.Forks, Figure: f, SD: math.Sqrt(b.Var), DF: b.DF})
			}
		}
	}
	return out
}
