package capacity

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// SLOQuantile is the share of calls an SLO's p99 lets exceed its budget.
const SLOQuantile = 0.01

// MaxLoad is the load a step records when a run gave no figures (its load is
// infinite).
const MaxLoad = 1e6

// overCount is how many of h's calls took longer than budgetUs: the calls in
// buckets whose highest equivalent value exceeds it (the value a p99 reads),
// so that a run's p99 exceeds the budget exactly when more than 1 % of its
// answered calls are over.
func overCount(h *hdrhistogram.Histogram, budgetUs int64) int64 {
	var n int64
	for _, b := range h.Distribution() {
		if b.To > budgetUs {
			n += b.Count
		}
	}
	return n
}

// pool is the calls of one or more runs summed: what a step judges and what
// the fit pools. A run's p99 is set by its slowest 1 % of calls, and on a
// shared machine one stall of a few tens of milliseconds holds enough of a 1 s
// window's calls to decide it; summed over runs, the calls over the budget
// count every stall once, in proportion to its length.
type pool struct {
	runs, bad int   // runs with figures, runs without
	calls     int64 // measured calls, failed or not
	failed    int64
	over      float64 // answered calls slower than the budget
	want      float64 // calls the offer makes over the runs' windows less p50
}

// overOf is o's calls over slo's budget: counted from its latency record, or,
// for a run without one, read off its p99 (2 % of its answered calls when the
// p99 is over the budget, none when within).
func overOf(o Obs, slo SLO) float64 {
	if v, ok := o.Over[slo.P99.String()]; ok {
		return float64(v)
	}
	if o.P99Us > float64(slo.P99.D().Microseconds()) {
		return 2 * SLOQuantile * float64(o.Calls-o.Failed)
	}
	return 0
}

// add counts o into p.
func (p *pool) add(o Obs, slo SLO) {
	if o.Error != "" || o.Calls == 0 {
		p.bad++
		return
	}
	p.runs++
	p.calls += o.Calls
	p.failed += o.Failed
	p.over += overOf(o, slo)
	span := o.WindowS - o.P50Us/1e6
	switch {
	case span > 0:
		p.want += o.Offered * span
	case o.Achieved > 0:
		p.want += float64(o.Calls) * o.Offered / o.Achieved
	default:
		p.want += float64(o.Calls)
	}
}

func (p pool) plus(q pool) pool {
	return pool{runs: p.runs + q.runs, bad: p.bad + q.bad, calls: p.calls + q.calls, failed: p.failed + q.failed,
		over: p.over + q.over, want: p.want + q.want}
}

// load is how far p lies from slo's limits by its tightest criterion, each
// scaled so that 1 is the limit (above 1: breached): the share of the answered
// calls over the budget against 1 %, the calls' miss of what the offer makes
// against the accuracy (one call a run allowed for the clients' window
// conventions, as Obs.Held), the failed share against the budget's (with a
// budget of 0, any failure is 2). A run without figures makes it +Inf. breach
// names the criteria above 1.
func (p pool) load(slo SLO, acc float64) (float64, []string) {
	if p.bad > 0 || p.runs == 0 {
		return math.Inf(1), []string{BreachRun}
	}
	answered := float64(p.calls - p.failed)
	lp := math.Inf(1)
	if answered > 0 {
		lp = p.over / answered / SLOQuantile
	}
	lr := math.Abs(float64(p.calls)-p.want) / (acc*p.want + float64(p.runs))
	le := 0.0
	switch {
	case slo.Errors > 0:
		le = float64(p.failed) / float64(p.calls) / float64(slo.Errors)
	case p.failed > 0:
		le = 2
	}
	var breach []string
	if lr > 1 {
		breach = append(breach, BreachRate)
	}
	if lp > 1 {
		breach = append(breach, BreachP99)
	}
	if le > 1 {
		breach = append(breach, BreachErrors)
	}
	return max(lp, lr, le), breach
}

// poolOf sums the runs ids at slo.
func (x *Searcher) poolOf(ids []int, slo SLO) pool {
	var p pool
	for _, id := range ids {
		p.add(x.Runs[id], slo)
	}
	return p
}

// group is every run of a cell at one offered rate.
type group struct {
	rate float64
	ids  []int
}

// groups are the cell's runs by offered rate, ascending.
func (x *Searcher) groups() []group {
	by := map[float64][]int{}
	for i, o := range x.Runs {
		by[o.Offered] = append(by[o.Offered], i)
	}
	gs := make([]group, 0, len(by))
	for r, ids := range by {
		gs = append(gs, group{r, ids})
	}
	slices.SortFunc(gs, func(a, b group) int { return cmp.Compare(a.rate, b.rate) })
	return gs
}

// Fit results: where the knee lies against the rates tried.
const (
	fitInside = iota // between a passing and a breaching rate
	fitBelow         // the lowest rate tried breached
	fitAbove         // no rate tried breached
)

// block is a run of adjacent rates pooled by the fit.
type block struct {
	lo, hi float64
	p      pool
	load   float64
}

// fitKnee is the knee the pooled runs place: the load at each rate tried
// (every run at it summed), made non-decreasing in the rate by pooling
// adjacent rates that violate it (the pool-adjacent-violators algorithm on
// the summed calls, so a stalled run at a low rate is averaged with its
// neighbours instead of deciding a step), and the rate where that load
// crosses 1, interpolated on a log scale between the highest rate of the last
// block within the SLO and the lowest of the first beyond it. where says
// whether the crossing lies among the rates tried (fitInside), below the
// lowest (rate is the lowest) or above the highest (rate is the highest).
func fitKnee(pools []pool, rates []float64, slo SLO, acc float64) (rate float64, where int) {
	blocks := make([]block, 0, len(pools))
	for i, p := range pools {
		l, _ := p.load(slo, acc)
		blocks = append(blocks, block{lo: rates[i], hi: rates[i], p: p, load: l})
		for n := len(blocks); n > 1 && blocks[n-2].load > blocks[n-1].load; n = len(blocks) {
			a, b := blocks[n-2], blocks[n-1]
			m := block{lo: a.lo, hi: b.hi, p: a.p.plus(b.p)}
			m.load, _ = m.p.load(slo, acc)
			blocks = append(blocks[:n-2], m)
		}
	}
	j := slices.IndexFunc(blocks, func(b block) bool { return b.load > 1 })
	switch j {
	case 0:
		return blocks[0].lo, fitBelow
	case -1:
		return blocks[len(blocks)-1].hi, fitAbove
	}
	a, b := blocks[j-1], blocks[j]
	if math.IsInf(b.load, 1) {
		return a.hi, fitInside
	}
	t := (1 - a.load) / (b.load - a.load)
	return math.Exp(math.Log(a.hi) + t*(math.Log(b.lo)-math.Log(a.hi))), fitInside
}

// Bootstraps is how many resamples the knee's interval takes.
const Bootstraps = 1000

// FitSpan is how far from the pooled knee the runs lie that the local fit
// takes: ±20 % of the rate, the bisection's rates and the rounds' with them.
const FitSpan = 1.2

// logLoad is a rate's summed runs' load (pool.load) on a log scale for the
// local fit, their calls over the budget counted half a call more (a rate with
// none is not minus infinity) and held within ±ln 20 (a rate whose client fell
// behind by seconds weighs no more than one well past the knee). Summed, not
// averaged on the log scale: the SLO is about the long run, where a stall's
// calls count by their number.
func logLoad(p pool, slo SLO, acc float64) float64 {
	p.over += 0.5
	p.calls++
	l, _ := p.load(slo, acc)
	return math.Max(-maxLogLoad, math.Min(maxLogLoad, math.Log(l)))
}

const maxLogLoad = 2.995732 // ln 20

// crossLine is where the weighted least-squares line of ys on xs (log rates)
// crosses 0, and whether it rises (a line that does not rise crosses
// nowhere).
func crossLine(xs, ys, ws []float64) (float64, bool) {
	mx, my, b, ok := line(xs, ys, ws)
	if !ok {
		return 0, false
	}
	return mx - my/b, true
}

// line is the weighted least-squares line of ys on xs: its weighted means
// and its slope, and whether it rises.
func line(xs, ys, ws []float64) (mx, my, slope float64, rises bool) {
	var sw float64
	for i := range xs {
		sw += ws[i]
		mx += ws[i] * xs[i]
		my += ws[i] * ys[i]
	}
	if sw == 0 {
		return 0, 0, 0, false
	}
	mx /= sw
	my /= sw
	var sxy, sxx float64
	for i := range xs {
		sxy += ws[i] * (xs[i] - mx) * (ys[i] - my)
		sxx += ws[i] * (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 || sxy <= 0 {
		return mx, my, 0, false
	}
	return mx, my, sxy / sxx, true
}

// span is the local fit's input at one SLO: the pooled knee (fitKnee) and
// where it lies, and the rates tried within FitSpan of it, each its runs
// summed: log rate, log load (logLoad) and weight (its runs), with the runs.
type span struct {
	pooled     float64
	where      int
	xs, ys, ws []float64
	ids        []int
}

// span gathers slo's local fit over every run of the cell.
func (x *Searcher) span(slo SLO) span {
	acc := float64(x.S.Accuracy)
	gs := x.groups()
	if len(gs) == 0 {
		return span{where: fitBelow}
	}
	rates := make([]float64, len(gs))
	pools := make([]pool, len(gs))
	for i, g := range gs {
		rates[i], pools[i] = g.rate, x.poolOf(g.ids, slo)
	}
	sp := span{}
	sp.pooled, sp.where = fitKnee(pools, rates, slo, acc)
	if sp.where != fitInside {
		return sp
	}
	for i, g := range gs {
		if g.rate >= sp.pooled/FitSpan && g.rate <= sp.pooled*FitSpan {
			sp.xs = append(sp.xs, math.Log(g.rate))
			sp.ys = append(sp.ys, logLoad(pools[i], slo, acc))
			sp.ws = append(sp.ws, float64(len(g.ids)))
			sp.ids = append(sp.ids, g.ids...)
		}
	}
	return sp
}

// fit places slo's knee and its 95 % interval on every run of the cell. The
// pooled knee (fitKnee) says where the knee lies; the rates tried within
// FitSpan of it, each its runs summed, then give a line of their log load
// (logLoad) on the log rate, weighted by their runs, and the knee is where
// that line crosses the limit (load 1). The interval: Bootstraps resamples,
// each drawing every rate's runs with replacement (runs, not calls: a stall
// delays many calls of one run together, so the run is the unit that varies),
// each line's crossing (a line that does not rise, or crosses outside the
// span, at the span's edge on its side); their 2.5th and 97.5th percentiles,
// widened for a rerun (rerun). Fewer than three rates or four runs in the
// span, or a line that does not rise, leave the pooled knee with the span as
// its interval. Seeded: a run's figures give one interval.
func (x *Searcher) fit(slo SLO) (rate, low, high float64, where int) {
	sp := x.span(slo)
	pooled, where := sp.pooled, sp.where
	if where != fitInside {
		return pooled, pooled, pooled, where
	}
	lo, hi := math.Log(pooled/FitSpan), math.Log(pooled*FitSpan)
	xs, ys, ws := sp.xs, sp.ys, sp.ws
	c, ok := crossLine(xs, ys, ws)
	if len(xs) < 3 || len(sp.ids) < 4 || !ok {
		return pooled, pooled / FitSpan, pooled * FitSpan, where
	}
	rate = math.Exp(max(lo, min(hi, c)))
	rng := rand.New(rand.NewPCG(1, uint64(slo.P99)))
	knees := make([]float64, Bootstraps)
	n := len(xs)
	bx, by, bw := make([]float64, n), make([]float64, n), make([]float64, n)
	for b := range knees {
		var my float64
		for i := range n {
			j := rng.IntN(n)
			bx[i], by[i], bw[i] = xs[j], ys[j], ws[j]
			my += by[i] * bw[i]
		}
		c, ok := crossLine(bx, by, bw)
		switch {
		case !ok && my > 0:
			c = lo // a flat or falling line over the limit: the knee lies below
		case !ok:
			c = hi
		default:
			c = max(lo, min(hi, c))
		}
		knees[b] = math.Exp(c)
	}
	slices.Sort(knees)
	low, high = rerun(rate, knees[int(0.025*Bootstraps)]), rerun(rate, knees[int(0.975*Bootstraps)-1])
	return rate, min(low, rate), max(high, rate), where
}

// rerun widens a bound of the knee's own 95 % interval to where another run's
// knee lands 95 times in 100: that knee carries the same noise as this one,
// so the difference of the two carries √2 times it (on the log scale). This
// is what the house rule asks of an interval (a rerun lands inside about 95 %
// of them), and what `rpcbed capacity agree` checks.
func rerun(rate, bound float64) float64 {
	return rate * math.Pow(bound/rate, math.Sqrt2)
}

// joinBreach is a step's breaches as Step.Breach writes them.
func joinBreach(b []string) string { return strings.Join(b, "+") }
