package capacity

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// Obs is one run at one offered rate: what the client and the server measured
// over the client's measured window.
type Obs struct {
	Offered  float64 `json:"offered"`  // calls/s asked (-rate)
	Achieved float64 `json:"achieved"` // calls/s as the client reports it: calls that ended / the window
	// WindowS is the measured window: from the first measured call's intended
	// start to the last one's end.
	WindowS float64 `json:"window_s"`
	Calls   int64   `json:"calls"` // measured calls that ended, failed or not
	Failed  int64   `json:"failed"`
	// P50Us and P99Us are the latency from each call's intended start (the open
	// loop's schedule: coordinated omission corrected, as wrk2).
	P50Us float64 `json:"p50_us"`
	P99Us float64 `json:"p99_us"`
	// CPU per call (µs) and busy cores over the window, each side; Cores is
	// what the side may use (0: unknown).
	ClientCPUUs float64 `json:"client_cpu_us"`
	ServerCPUUs float64 `json:"server_cpu_us"`
	ClientBusy  float64 `json:"client_busy"`
	ServerBusy  float64 `json:"server_busy"`
	ClientCores float64 `json:"client_cores"`
	ServerCores float64 `json:"server_cores"`
	// TLS is the version the client negotiated ("" in plaintext): checked
	// against the cell's security (a mismatch gives no figures).
	TLS string `json:"tls,omitempty"`
	// StealCores is the machine's steal over the window (/proc/stat), in cores:
	// time another guest took from this one's CPUs.
	StealCores float64 `json:"steal_cores,omitempty"`
	// Raw is the run's raw output file, relative to the run directory.
	Raw string `json:"raw,omitempty"`
	// Error says why the run gave no figures (a refused or crashed client).
	Error string `json:"error,omitempty"`
	// At is when the run ended, seconds since the search began (the plot's order).
	At float64 `json:"at"`
}

// ErrorShare is the share of the measured calls that failed.
func (o Obs) ErrorShare() float64 {
	if o.Calls <= 0 {
		return 0
	}
	return float64(o.Failed) / float64(o.Calls)
}

// Sustained is the rate the server kept up with: the calls over the window
// less a typical call's latency (p50). Each client's window ends when its last
// measured call returns (php's at a fixed end), so even a server that keeps
// up makes the window one latency longer than the calls' schedule (1.5 % at
// 100 calls/s over 1 s with a 15 ms call); a server that falls behind ends it
// later by its backlog. Without a window, Achieved.
func (o Obs) Sustained() float64 {
	span := o.WindowS - o.P50Us/1e6
	if o.Calls < 1 || span <= 0 {
		return o.Achieved
	}
	return float64(o.Calls) / span
}

// Held says the run's calls lie within acc of what the offer makes in the
// window less a typical latency, give or take one call: the clients open
// their windows half an interval (go), no interval (java) or exactly (php)
// before the first measured call is due, a difference of one call that a
// short run at a low rate must not take for a missed rate.
func (o Obs) Held(acc float64) bool {
	if o.Error != "" || o.Offered <= 0 {
		return false
	}
	span := o.WindowS - o.P50Us/1e6
	if o.Calls < 1 || span <= 0 {
		return math.Abs(o.Achieved/o.Offered-1) <= acc
	}
	want := o.Offered * span
	return math.Abs(float64(o.Calls)-want) <= acc*want+1
}

// share is busy cores over the cores a side may use (NaN: unknown).
func share(busy, cores float64) float64 {
	if cores <= 0 {
		return math.NaN()
	}
	return busy / cores
}

// Breaches of an SLO, as Verdict names them.
const (
	BreachRate   = "rate"   // the achieved rate missed the offer
	BreachP99    = "p99"    // p99 over the budget
	BreachErrors = "errors" // more failed calls than the budget
	BreachRun    = "run"    // the run gave no figures
)

// Judge lists what o breaches of slo (none: it passes), the achieved rate held
// within acc of the offer.
func Judge(o Obs, slo SLO, acc float64) []string {
	if o.Error != "" || o.Calls == 0 {
		return []string{BreachRun}
	}
	var b []string
	if !o.Held(acc) {
		b = append(b, BreachRate)
	}
	if o.P99Us > float64(slo.P99.D().Microseconds()) {
		b = append(b, BreachP99)
	}
	if o.ErrorShare() > float64(slo.Errors) {
		b = append(b, BreachErrors)
	}
	return b
}

// Prober runs the cell at one offered rate and measures it. Its error ends the
// search (the context was cancelled); a run that failed is an Obs with Error.
type Prober interface {
	Probe(ctx context.Context, rate float64) (Obs, error)
}

// Step is one rate the search judged: its runs (the first and its repeat, a
// third when they disagreed) and the verdict of the majority.
type Step struct {
	Rate   float64 `json:"rate"`
	Phase  string  `json:"phase"` // exponential|downward|bisection
	Runs   []int   `json:"runs"`  // indexes into the cell's Runs
	Pass   bool    `json:"pass"`
	Breach string  `json:"breach,omitempty"` // a failing step's breaches, e.g. "p99+rate"
}

// Round is one paired round at the two bracketing rates and the knee it
// implies: where the SLO's margins, interpolated on a log-rate scale between
// the two runs, cross zero (Crossing).
type Round struct {
	LoRun    int     `json:"lo_run"`
	HiRun    int     `json:"hi_run"`
	Crossing float64 `json:"crossing"`
	// Clamped: the margins did not cross between the two rates and the crossing
	// was held to two bracket widths beyond them.
	Clamped bool `json:"clamped,omitempty"`
}

// Status of a cell's knee at one SLO.
const (
	StatusFound       = "found"       // bracketed to the precision, with its interval
	StatusBelow       = "below"       // the lowest rate tried already breached the SLO
	StatusAbove       = "above"       // still within the SLO at max_rate
	StatusUnconverged = "unconverged" // the deadline came before the precision (the rounds still ran at the bracket)
	StatusInaccurate  = "inaccurate"  // the client missed the offer where the server had room
	StatusFailed      = "failed"      // no run gave figures
)

// Limits: what gave at the knee.
const (
	LimitServer  = "server"  // the server's core saturated first
	LimitClient  = "client"  // the client's core saturated first: its capacity, not the stack's
	LimitLatency = "latency" // p99 reached the budget with neither side saturated
	LimitErrors  = "errors"
	LimitRate    = "rate" // the rate was missed with neither side saturated
)

// Saturated is the busy share of its cores at which a side counts as the
// limit: the matrix's client-bound and server-bound (docs/method.md, section 7).
const Saturated = 0.9

// Knee is one cell's capacity at one SLO.
type Knee struct {
	SLO    SLO    `json:"slo"`
	Status string `json:"status"`
	// Rate is the knee: the median of the rounds' crossings; Low and High its
	// 95 % interval. For a status other than found, Rate is the highest rate
	// that passed (0 when none did).
	Rate float64 `json:"rate"`
	Low  float64 `json:"low"`
	High float64 `json:"high"`
	// Lo is the highest rate that passed, Hi the lowest that breached.
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// Steps in the order the search took them; Rounds the interval's.
	Steps  []Step  `json:"steps"`
	Rounds []Round `json:"rounds,omitempty"`
	// Limit is what gave at the knee; ClientBound marks a cell whose client
	// saturated before the server.
	Limit       string `json:"limit,omitempty"`
	ClientBound bool   `json:"client_bound,omitempty"`
	// At is the median of the runs at Lo (the knee's side that passed): CPU per
	// call and busy shares at capacity.
	At   *Obs   `json:"at,omitempty"`
	Note string `json:"note,omitempty"`
	// StealCores is the largest steal of the runs that placed the knee (its
	// rounds and the steps at its bracket); over results.NoisyStealCores the
	// knee is noisy: another guest took CPU while it was measured.
	StealCores float64 `json:"steal_cores,omitempty"`
}

// Noisy says another guest stole more than results.NoisyStealCores of a core in
// a run that placed the knee.
func (k Knee) Noisy() bool { return k.StealCores > results.NoisyStealCores }

// Measured says the knee has a rate and a 95 % interval from its rounds:
// found, or not converged by the deadline with the rounds run at its bracket.
func (k Knee) Measured() bool {
	return (k.Status == StatusFound || k.Status == StatusUnconverged) && len(k.Rounds) >= 2 && k.Low > 0
}

// Searcher searches one cell: its runs, shared by every SLO's search (a rate
// run for one SLO's step counts for another's at the same rate).
type Searcher struct {
	P      Prober
	S      Search
	Runs   []Obs
	byRate map[float64][]int
	start  time.Time
	now    func() time.Time
}

// NewSearcher is a cell's searcher; now is the clock the deadline reads (nil:
// time.Now).
func NewSearcher(p Prober, s Search, now func() time.Time) *Searcher {
	if now == nil {
		now = time.Now
	}
	return &Searcher{P: p, S: s, byRate: map[float64][]int{}, now: now, start: now()}
}

// run is the i-th run at rate (0-based): a kept one, or a new one.
func (x *Searcher) run(ctx context.Context, rate float64, i int) (int, error) {
	if ids := x.byRate[rate]; i < len(ids) {
		return ids[i], nil
	}
	id, err := x.probe(ctx, rate)
	if err != nil {
		return 0, err
	}
	x.byRate[rate] = append(x.byRate[rate], id)
	return id, nil
}

// probe runs rate once more, kept apart from the steps' runs (a round's).
func (x *Searcher) probe(ctx context.Context, rate float64) (int, error) {
	o, err := x.P.Probe(ctx, rate)
	if err != nil {
		return 0, err
	}
	o.Offered = rate
	o.At = x.now().Sub(x.start).Seconds()
	x.Runs = append(x.Runs, o)
	if c := x.S.Cooldown.D(); c > 0 {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(c):
		}
	}
	return len(x.Runs) - 1, nil
}

// step judges rate: a run and its repeat; when they disagree, a third decides.
func (x *Searcher) step(ctx context.Context, rate float64, phase string, slo SLO) (Step, error) {
	st := Step{Rate: rate, Phase: phase}
	passes, fails := 0, 0
	var breach []string
	for i := 0; passes < 2 && fails < 2; i++ {
		id, err := x.run(ctx, rate, i)
		if err != nil {
			return st, err
		}
		st.Runs = append(st.Runs, id)
		if b := Judge(x.Runs[id], slo, float64(x.S.Accuracy)); len(b) > 0 {
			fails++
			for _, s := range b {
				if !slices.Contains(breach, s) {
					breach = append(breach, s)
				}
			}
		} else {
			passes++
		}
	}
	st.Pass = passes == 2
	if !st.Pass {
		st.Breach = strings.Join(breach, "+")
	}
	return st, nil
}

// Find searches the knee at slo from start (calls/s): exponential steps up to
// the first breach, then bisection on a log scale until the bracket is within
// the precision (or the deadline passes), then the interval's rounds.
func (x *Searcher) Find(ctx context.Context, slo SLO, start float64) (Knee, error) {
	k := Knee{SLO: slo}
	deadline := x.now().Add(x.S.Deadline.D())
	rate := roundRate(start)
	var last Step
	for {
		st, err := x.step(ctx, rate, "exponential", slo)
		if err != nil {
			return k, err
		}
		k.Steps = append(k.Steps, st)
		if !st.Pass {
			last = st
			k.Hi = rate
			break
		}
		k.Lo = rate
		if rate >= x.S.MaxRate {
			k.Status, k.Rate = StatusAbove, rate
			k.Note = fmt.Sprintf("within the SLO at max_rate %g/s: the knee lies above it", x.S.MaxRate)
			x.atKnee(&k)
			return k, nil
		}
		if x.now().After(deadline) {
			k.Status, k.Rate = StatusUnconverged, k.Lo
			k.Note = fmt.Sprintf("deadline %v passed in the exponential phase at %g/s", x.S.Deadline, rate)
			x.atKnee(&k)
			return k, nil
		}
		rate = min(roundRate(rate*x.S.Factor), x.S.MaxRate)
	}
	if k.Lo == 0 {
		var below bool
		var err error
		if k, last, below, err = x.down(ctx, k, last, slo, deadline); err != nil || below {
			return k, err
		}
	}
	for k.Hi/k.Lo-1 > float64(x.S.Precision) {
		if x.now().After(deadline) {
			k.Note = fmt.Sprintf("deadline %v passed with the bracket at %g-%g/s, wider than %v: the rounds ran there", x.S.Deadline, k.Lo, k.Hi, x.S.Precision)
			break
		}
		mid := roundRate(math.Sqrt(k.Lo * k.Hi))
		if mid <= k.Lo || mid >= k.Hi {
			break // whole calls/s: the bracket cannot narrow further
		}
		st, err := x.step(ctx, mid, "bisection", slo)
		if err != nil {
			return k, err
		}
		k.Steps = append(k.Steps, st)
		if st.Pass {
			k.Lo = mid
		} else {
			k.Hi, last = mid, st
		}
	}
	if err := x.rounds(ctx, &k); err != nil {
		return k, err
	}
	if k.Note != "" {
		k.Status = StatusUnconverged
	}
	x.limit(&k, last)
	return k, nil
}

// DownFloor is how far below its start the downward phase goes: a cell whose
// start breached is offered start/Factor, start/Factor², ... until a rate passes,
// down to start/DownFloor, and never to a rate whose measured window holds fewer
// than DownCalls calls (a p99 and the accuracy check need them: at 13 calls/s a
// 600 ms window held 8 calls and the client "missed" its rate). A start is a
// quarter of the cell's closed-loop throughput, so a pass this far down means a
// p99 far from the closed loop's; below it the answer is "below the lowest rate
// tried".
const (
	DownFloor = 64
	DownCalls = 50
)

// down is the downward phase, when the first step breached: the rate divided by
// Factor each step until one passes (the bracket is then that rate and the one
// above it) or the floor, the deadline or a failed run ends it with the knee
// below the lowest rate tried (below is true).
func (x *Searcher) down(ctx context.Context, k Knee, last Step, slo SLO, deadline time.Time) (Knee, Step, bool, error) {
	floor := math.Max(k.Hi/DownFloor, DownCalls/x.S.Measure.D().Seconds())
	for last.Breach != BreachRun && !x.inaccurate(last) {
		rate := roundRate(k.Hi / x.S.Factor)
		if rate < floor || rate >= k.Hi || x.now().After(deadline) {
			break
		}
		st, err := x.step(ctx, rate, "downward", slo)
		if err != nil {
			return k, last, true, err
		}
		k.Steps = append(k.Steps, st)
		if st.Pass {
			k.Lo = rate
			return k, last, false, nil
		}
		k.Hi, last = rate, st
	}
	return x.belowStart(k, last), last, true, nil
}

// inaccurate says a breached step's client missed an offer the server had room
// for (belowStart's inaccurate case): offering less measures the client, not
// the stack.
func (x *Searcher) inaccurate(st Step) bool {
	o := x.median(st.Runs)
	clientFull := share(o.ClientBusy, o.ClientCores) >= Saturated
	return strings.Contains(st.Breach, BreachRate) && !(share(o.ServerBusy, o.ServerCores) >= Saturated) &&
		(!strings.Contains(st.Breach, BreachP99) || clientFull)
}

// belowStart is the result when the first step breached: the client missed
// an offer the server had room for, its calls answered within the budget or
// its own core saturated (inaccurate: the client is reported, not used), or
// the SLO is below the lowest rate tried.
func (x *Searcher) belowStart(k Knee, st Step) Knee {
	o := x.median(st.Runs)
	k.At = &o
	clientFull := share(o.ClientBusy, o.ClientCores) >= Saturated
	switch {
	case st.Breach == BreachRun:
		k.Status = StatusFailed
		k.Note = "no run gave figures at " + fmtRate(st.Rate)
		if o.Error != "" {
			k.Note += ": " + o.Error
		}
	case x.inaccurate(st):
		k.Status = StatusInaccurate
		k.Note = fmt.Sprintf("the client did not hold the lowest rate tried: %.1f of %s with the server %s busy: reported, not used",
			o.Sustained(), fmtRate(st.Rate), pct(share(o.ServerBusy, o.ServerCores)))
		if clientFull {
			k.Limit, k.ClientBound = LimitClient, true
		}
	default:
		k.Status = StatusBelow
		k.Note = fmt.Sprintf("below the lowest rate tried (%s breached %s)", fmtRate(st.Rate), st.Breach)
	}
	return k
}

// rounds runs the interval's paired rounds at the bracket (Lo, Hi), the order
// alternating, and sets the knee to the median of the rounds' crossings with
// its 95 % interval (a t interval on their logs), never narrower than the
// bracket.
func (x *Searcher) rounds(ctx context.Context, k *Knee) error {
	var pairs [][2]int
	c := math.Sqrt(k.Lo * k.Hi)
	r1, r2 := min(k.Lo, roundRate(c/(1+RoundSpread))), max(k.Hi, roundRate(c*(1+RoundSpread)))
	for r := range x.S.Rounds {
		rates := []float64{r1, r2}
		if r%2 == 1 {
			rates = []float64{r2, r1}
		}
		var ids [2]int
		for i, rate := range rates {
			id, err := x.probe(ctx, rate)
			if err != nil {
				return err
			}
			ids[i] = id
		}
		if r%2 == 1 {
			ids[0], ids[1] = ids[1], ids[0]
		}
		pairs = append(pairs, ids)
	}
	slope := x.slope(k.SLO, r1, r2)
	for _, ids := range pairs {
		c, clamped := crossing(x.Runs[ids[0]], x.Runs[ids[1]], k.SLO, float64(x.S.Accuracy), slope)
		k.Rounds = append(k.Rounds, Round{LoRun: ids[0], HiRun: ids[1], Crossing: c, Clamped: clamped})
	}
	cs := make([]float64, len(k.Rounds))
	ones := make([]float64, len(k.Rounds))
	for i, r := range k.Rounds {
		cs[i], ones[i] = r.Crossing, 1
	}
	iv := stats.PairedRounds(cs, ones)
	k.Status = StatusFound
	k.Rate, k.Low, k.High = iv.Center, iv.Low, iv.High
	if !iv.Valid() {
		k.Rate, k.Low, k.High = stats.Median(cs), min(stats.Median(cs), k.Lo), max(stats.Median(cs), k.Hi)
	}
	k.Low, k.High = min(k.Low, k.Lo), max(k.High, k.Hi)
	return nil
}

// Near is how far from the round's rates the runs lie that give the margin's
// slope when the rounds' own runs give none, and how far from them a round's
// crossing may lie.
const Near = 1.25

// RoundSpread places the rounds' two rates around the bracket's centre (and
// never inside the bracket): ±5 %, so that a round's two runs straddle the
// knee and the margin's slope between them stands out of the runs' noise
// (between rates 2 % apart a 1 s window's p99 noise swamps it).
const RoundSpread = 0.05

// margin is how far o lies inside slo (negative: outside), by its tightest
// criterion, each scaled so that 0 is its limit and 1 is comfortably inside,
// and near linear in the rate at the knee: p99 as budget/p99 - 1 (a queue's
// latency grows as 1/(1-utilisation), so its inverse falls linearly with the
// rate), the rate held as the sustained rate's miss against the accuracy
// (1 - |sustained/offer - 1| / accuracy), errors as 1 - failed share / the
// budget's (with a budget of 0, any failure is -1). A run without figures
// is -1.
func margin(o Obs, slo SLO, acc float64) float64 {
	if o.Error != "" || o.Calls == 0 {
		return -1
	}
	p := float64(slo.P99.D().Microseconds())/math.Max(o.P99Us, 1) - 1
	r := 1 - math.Abs(o.Sustained()/o.Offered-1)/acc
	e := 1.0
	switch {
	case slo.Errors > 0:
		e = 1 - o.ErrorShare()/float64(slo.Errors)
	case o.Failed > 0:
		e = -1
	}
	return min(p, r, e)
}

// slope is how the margin falls with the rate at the bracket [lo, hi]: the
// difference of the mean margins of every run at hi and at lo (the steps' and
// the rounds') over the bracket's width. The hockey stick bends, so the
// bracket's own runs say it best; when their means do not fall (noise, a
// bracket of equal rates), the least-squares slope of every run within Near
// of the bracket. NaN: neither falls.
func (x *Searcher) slope(slo SLO, lo, hi float64) float64 {
	acc := float64(x.S.Accuracy)
	var ml, mh []float64
	var xs, ys []float64
	for _, o := range x.Runs {
		if o.Error != "" {
			continue
		}
		m := margin(o, slo, acc)
		switch o.Offered {
		case lo:
			ml = append(ml, m)
		case hi:
			mh = append(mh, m)
		}
		if o.Offered >= lo/Near && o.Offered <= hi*Near {
			xs = append(xs, o.Offered)
			ys = append(ys, m)
		}
	}
	if hi > lo && len(ml) > 0 && len(mh) > 0 {
		if d := (stats.Mean(mh) - stats.Mean(ml)) / (hi - lo); d < 0 {
			return d
		}
	}
	if len(xs) < 2 {
		return math.NaN()
	}
	mx, my := stats.Mean(xs), stats.Mean(ys)
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 || sxy >= 0 {
		return math.NaN()
	}
	return sxy / sxx
}

// crossing is the rate at which the SLO's margin crosses zero, from one
// round's two runs (lo at the lower rate, hi at the higher): interpolated
// between them when they straddle it, else the round's mean margin carried
// to zero along slope (the margin's fall per call/s over the rounds; without
// one, the line through the two runs). A crossing past Near of the two rates
// is held there (clamped).
func crossing(lo, hi Obs, slo SLO, acc, slope float64) (float64, bool) {
	xl, xh := lo.Offered, hi.Offered
	ml, mh := margin(lo, slo, acc), margin(hi, slo, acc)
	var x float64
	switch {
	case ml >= 0 && mh < 0 && xh > xl:
		x = xl + (xh-xl)*ml/(ml-mh)
	case !math.IsNaN(slope) && slope < 0:
		x = (xl+xh)/2 - (ml+mh)/2/slope
	case ml > mh && xh > xl:
		x = xl + (xh-xl)*ml/(ml-mh)
	case ml >= 0 && mh >= 0:
		x = math.Inf(1)
	default:
		x = math.Inf(-1)
	}
	switch {
	case x > xh*Near:
		return xh * Near, true
	case x < xl/Near:
		return xl / Near, true
	}
	return x, false
}

// limit names what gave at the knee from the step that breached just above it:
// a side whose busy share reached Saturated (the busier one), else the
// breach itself (latency, errors or the rate).
func (x *Searcher) limit(k *Knee, st Step) {
	x.atKnee(k)
	o := x.median(st.Runs)
	cs, ss := share(o.ClientBusy, o.ClientCores), share(o.ServerBusy, o.ServerCores)
	switch {
	case cs >= Saturated && !(ss > cs):
		k.Limit, k.ClientBound = LimitClient, true
	case ss >= Saturated:
		k.Limit = LimitServer
	case strings.Contains(st.Breach, BreachP99):
		k.Limit = LimitLatency
	case strings.Contains(st.Breach, BreachErrors):
		k.Limit = LimitErrors
	default:
		k.Limit = LimitRate
	}
}

// atKnee sets k.At: the median of the runs at Lo, and k.StealCores: the
// largest steal of the runs at its bracket and in its rounds.
func (x *Searcher) atKnee(k *Knee) {
	ids := append(slices.Clone(x.byRate[k.Lo]), x.byRate[k.Hi]...)
	for _, r := range k.Rounds {
		ids = append(ids, r.LoRun, r.HiRun)
	}
	for _, id := range ids {
		k.StealCores = math.Max(k.StealCores, x.Runs[id].StealCores)
	}
	if ids := x.byRate[k.Lo]; len(ids) > 0 {
		o := x.median(ids)
		k.At = &o
	}
}

// median is the run-by-run median of each figure of the runs ids.
func (x *Searcher) median(ids []int) Obs {
	if len(ids) == 0 {
		return Obs{}
	}
	var ok []Obs
	for _, id := range ids {
		if x.Runs[id].Error == "" {
			ok = append(ok, x.Runs[id])
		}
	}
	if len(ok) == 0 {
		return x.Runs[ids[0]]
	}
	med := func(f func(Obs) float64) float64 {
		v := make([]float64, len(ok))
		for i, o := range ok {
			v[i] = f(o)
		}
		return stats.Median(v)
	}
	o := ok[0]
	o.Achieved = med(func(o Obs) float64 { return o.Achieved })
	o.WindowS = med(func(o Obs) float64 { return o.WindowS })
	o.P50Us = med(func(o Obs) float64 { return o.P50Us })
	o.P99Us = med(func(o Obs) float64 { return o.P99Us })
	o.ClientCPUUs = med(func(o Obs) float64 { return o.ClientCPUUs })
	o.ServerCPUUs = med(func(o Obs) float64 { return o.ServerCPUUs })
	o.ClientBusy = med(func(o Obs) float64 { return o.ClientBusy })
	o.ServerBusy = med(func(o Obs) float64 { return o.ServerBusy })
	o.Calls = int64(med(func(o Obs) float64 { return float64(o.Calls) }))
	o.Failed = int64(med(func(o Obs) float64 { return float64(o.Failed) }))
	o.Raw, o.At = "", 0
	return o
}

// roundRate is a rate as the clients take it: whole calls/s, at least 1.
func roundRate(r float64) float64 { return math.Max(1, math.Round(r)) }

func fmtRate(r float64) string { return fmt.Sprintf("%.0f/s", r) }

func pct(f float64) string {
	if math.IsNaN(f) {
		return "?"
	}
	return fmt.Sprintf("%.0f %%", f*100)
}
