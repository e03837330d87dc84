// Package analysis computes what saved runs say beyond their own figures: each
// figure's 95 % interval and the paired ratios between cells (Uncertainty), the
// ratio tables and their verdicts (Ratios), the noise of one round (Slices), a
// cell's interval width (Width), the repeat order (RepeatOrders), and over two
// runs their agreement (Agree: calibration, verdict flips, the noise model) and
// their per-cell changes (Compare). Data in, data out: it prints nothing, and
// internal/render prints what it computes.
package analysis

import (
	"cmp"
	"maps"
	"math"
	"slices"

	"github.com/rpcbed/rpcbed/internal/plan"

	"github.com/rpcbed/rpcbed/internal/stats"

	"github.com/rpcbed/rpcbed/internal/results"
)

// NoiseOf is one figure's noise model over cells that share it: their
// within-cell variance pooled, and how much they share it (stats.Squeeze over
// the cells' own variances: a cell's interval leans on the pool as far as the
// cells' spread of variances allows). No run shift (the Uncertainty adds it).
func NoiseOf(cells []results.CellResult, f func(results.Metrics) float64) stats.Noise {
	var n stats.Noise
	var own []stats.Pool
	for _, c := range cells {
		// A forked cell's rounds deviate from their own fork's mean: the spread
		// between forks is Between's (BetweenOf).
		var p stats.Pool
		for _, v := range c.ValuesByFork(f) {
			p.Add(stats.Logs(v))
			n.Pool.Add(stats.Logs(v))
		}
		own = append(own, p)
	}
	n.Prior = stats.Squeeze(own)
	return n
}

// FallbackRunShift is the run shift of a run that recorded no probe times to
// measure its own from (runs before the probe): the root mean square of the
// shifts two back-to-back pairs of default runs measured (+5, -4, -5 and +8,
// -6, -6 %; docs/method.md, section 11).
const FallbackRunShift = 0.06

// RunShift is how far a whole run moves against a back-to-back rerun, measured
// from the run's own CPU probe (each repeat's probe before its run, on the
// client's and the server's core, in the order they ran): stats.Drift. measured
// is false for a run without enough probe times, which gets FallbackRunShift,
// taken as known.
func RunShift(r *results.Run) (sd float64, df int, measured bool) {
	type timed struct{ t, client, server float64 }
	var ps []timed
	for _, c := range r.Cells {
		for _, rep := range c.Repeats {
			if rep.Probe == nil || rep.Window == nil || rep.Probe.ClientUs[0] <= 0 || rep.Probe.ServerUs[0] <= 0 {
				continue
			}
			ps = append(ps, timed{rep.Window.StartUnix, rep.Probe.ClientUs[0], rep.Probe.ServerUs[0]})
		}
	}
	slices.SortStableFunc(ps, func(a, b timed) int { return cmp.Compare(a.t, b.t) })
	series := make([][]float64, 2)
	for _, p := range ps {
		series[0] = append(series[0], math.Log(p.client))
		series[1] = append(series[1], math.Log(p.server))
	}
	if sd, df, ok := stats.Drift(series, stats.DriftSegments); ok {
		return sd, df, true
	}
	return FallbackRunShift, 0, false
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
	run *results.Run
	// noise: per figure and pool (noiseKey), the cells' shared noise and the
	// run's shift.
	noise map[string]stats.Noise
	// between: per server group and figure, the spread between the group's
	// forks (Spec.Forks); absent for a group that did not fork.
	between map[string]stats.Between
	// ratios: per comparison kind and figure, the pooled variance of per-round
	// log ratios over the paired comparisons of that kind.
	ratios map[string]stats.Noise
	// Shift is the run's shift against a rerun (RunShift): its sd, degrees of
	// freedom, and whether this run's probe measured it.
	Shift         float64
	ShiftDF       int
	ShiftMeasured bool
}

// noiseKey is the pool a cell's figure shares its noise with: the cells of one
// client against one server implementation (a JVM's JIT makes java's cells
// noisier than go's, and a Java server's CPU noisier than go-server's; in one
// pool either would widen the other's intervals).
func noiseKey(f Figure, c results.CellResult) string {
	return f.Key + "/" + c.Client + "/" + c.ServerLang
}

// UncertaintyOf computes the run's noise model: each figure's within-cell
// variance per pool (noiseKey), shared as far as its cells' spread of variances
// says (NoiseOf), the spread between forks of the groups that forked, and the
// run's shift from its own probe (RunShift).
func UncertaintyOf(r *results.Run) *Uncertainty {
	u := &Uncertainty{run: r, noise: map[string]stats.Noise{}, between: map[string]stats.Between{}, ratios: map[string]stats.Noise{}}
	u.Shift, u.ShiftDF, u.ShiftMeasured = RunShift(r)
	byGroup := map[string][]results.CellResult{}
	for _, c := range r.Cells {
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
	for _, f := range Figures {
		pools := map[string][]results.CellResult{}
		for _, c := range r.Cells {
			pools[noiseKey(f, c)] = append(pools[noiseKey(f, c)], c)
		}
		for k, cells := range pools {
			n := NoiseOf(cells, f.F)
			n.RunShift, n.ShiftDF = u.Shift, u.ShiftDF
			u.noise[k] = n
		}
	}
	own := map[string][]stats.Pool{}
	for _, p := range pairs(r) {
		for _, f := range p.figures {
			k := p.kind + "/" + f.Key
			var o stats.Pool
			o.Add(stats.PairedLogRatios(p.a.ByRound(f.F), p.b.ByRound(f.F)))
			n := u.ratios[k]
			n.Pool.Add(stats.PairedLogRatios(p.a.ByRound(f.F), p.b.ByRound(f.F)))
			u.ratios[k] = n
			own[k] = append(own[k], o)
		}
	}
	for k, n := range u.ratios {
		n.Prior = stats.Squeeze(own[k])
		u.ratios[k] = n
	}
	return u
}

// Spec is the spec of the run u models.
func (u *Uncertainty) Spec() plan.Spec { return u.run.Spec }

// Noise is the noise model of figure f for c's pool (noiseKey).
func (u *Uncertainty) Noise(f Figure, c results.CellResult) stats.Noise {
	return u.noise[noiseKey(f, c)]
}

// Interval is where a rerun's median of c's figure will land, at 95 %; for a
// cell of a group that forks, over the forks of the rerun's own.
func (u *Uncertainty) Interval(c results.CellResult, f Figure) stats.Interval {
	if b, ok := u.between[f.Key+"/"+c.Cell.GroupKey()]; ok {
		n := u.Noise(f, c)
		n.Between = b
		return n.MedianForks(c.ValuesByFork(f.F))
	}
	return u.Noise(f, c).Median(c.Values(f.F))
}

// Between is the spread between the forks of c's group for figure f (zero
// when the group did not fork).
func (u *Uncertainty) Between(c results.CellResult, f Figure) stats.Between {
	return u.between[f.Key+"/"+c.Cell.GroupKey()]
}

// InRun is the 95 % interval of this run's median of c's figure alone.
func (u *Uncertainty) InRun(c results.CellResult, f Figure) stats.Interval {
	return u.Noise(f, c).InRun(c.Values(f.F))
}

// Comparison kinds: a client against go-client on the same protocol, call, items
// and concurrency; a protocol against gRPC from the same client; a TLS cell
// against its plaintext cell (what TLS costs: everything else the same, the
// connection mode too, timed in the same rounds).
const (
	VsGo           = "client-vs-go"
	VsGRPC         = "protocol-vs-grpc"
	TLSVsPlaintext = "tls-vs-plaintext"
	// VsLoopback: a cell over a link against the same cell with no link at all
	// (its client beside its server): what a slower, lossier link does.
	VsLoopback = "link-vs-loopback"
	// PerCallVsPersistent: a cell that opens a connection per call against
	// the same cell keeping its connections, timed in the same rounds: what a
	// connection (with TLS, its handshake) costs each side (Handshakes).
	PerCallVsPersistent = "percall-vs-persistent"
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
		if c.Status == results.StatusOK && !dropped(c) {
			byName[c.Name] = c
		}
	}
	rps, ccpu, scpu := FigRPS.Figure(), FigClientCPU.Figure(), FigServerCPU.Figure()
	p50, p99 := FigP50.Figure(), FigP99.Figure()
	var out []pair
	for _, c := range r.Cells {
		if _, ok := byName[c.Name]; !ok {
			continue
		}
		if c.ConnectMode() == plan.PerCall {
			p := c.Cell
			p.Connect = ""
			if b, ok := byName[p.Name()]; ok {
				out = append(out, pair{PerCallVsPersistent, c, b, []Figure{ccpu, scpu, p50, rps}})
			}
		}
		if c.Sec().IsTLS() {
			if b, ok := byName[c.Cell.Plaintext().Name()]; ok {
				out = append(out, pair{TLSVsPlaintext, c, b, []Figure{ccpu, scpu, p50, rps}})
			}
		}
		if c.Client != "go" {
			g := c.Cell
			g.Client = "go"
			if b, ok := byName[g.Name()]; ok {
				out = append(out, pair{VsGo, c, b, []Figure{rps, ccpu}})
			}
		}
		if c.Link != "" && c.Link != plan.LinkLoopback {
			l := c.Cell
			l.Link = plan.LinkLoopback
			if b, ok := byName[l.Name()]; ok {
				out = append(out, pair{VsLoopback, c, b, []Figure{rps, p50, p99}})
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

// dropped says whether c carries a flag that leaves it out of every
// comparison (results.DropsComparisons: it ran another condition than its name
// says).
func dropped(c results.CellResult) bool {
	return slices.ContainsFunc(c.Summarized().Flags, results.DropsComparisons)
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
				rt = d.PairedRatio(p.a.ByRound(f.F), p.b.ByRound(f.F), u.Noise(f, p.a), u.Noise(f, p.b))
			} else {
				na, nb := u.Noise(f, p.a), u.Noise(f, p.b)
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
		hw := NoiseOf(cells, f.F).InRun(c.Values(f.F)).HalfWidth()
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
