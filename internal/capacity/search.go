package capacity

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

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
	// ClientJITMs and ServerJITMs are a JVM side's JIT compile time over the
	// window (nil: not a JVM, or not known): a run that compiled for more than
	// results.JITQuiet of it measured code still being compiled.
	ClientJITMs *float64 `json:"client_jit_ms,omitempty"`
	ServerJITMs *float64 `json:"server_jit_ms,omitempty"`
	// Raw is the run's raw output file, relative to the run directory.
	Raw string `json:"raw,omitempty"`
	// Over is the answered calls slower than each SLO's p99 budget (keyed by
	// the budget, "10ms"), counted from the client's latency record: what a
	// step and the fit sum over runs.
	Over map[string]int64 `json:"over,omitempty"`
	// Error says why the run gave no figures (a refused or crashed client).
	Error string `json:"error,omitempty"`
	// At is when the run ended, seconds since the search began (the plot's order).
	At float64 `json:"at"`
	// Visit is the visit of the cell the run belongs to: 0 the search and its
	// rounds, 2 and on the later visits' searches (Searcher.Revisit).
	Visit int `json:"visit,omitempty"`
	// hist is the run's latency record until the searcher has counted Over.
	hist *hdrhistogram.Histogram
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
// third when their own verdicts disagreed) and the verdict on their calls
// summed (pool.load).
type Step struct {
	Rate  float64 `json:"rate"`
	Phase string  `json:"phase"` // exponential|downward|bisection
	Runs  []int   `json:"runs"`  // indexes into the cell's Runs
	Pass  bool    `json:"pass"`
	// Load is the summed runs' tightest criterion, 1 at the SLO's limit
	// (MaxLoad: a run gave no figures).
	Load   float64 `json:"load"`
	Breach string  `json:"breach,omitempty"` // a failing step's breaches, e.g. "p99+rate"
}

// Round is one paired round at the two rates around the bracket: two more
// runs where the knee lies, for the fit.
type Round struct {
	LoRun int `json:"lo_run"`
	HiRun int `json:"hi_run"`
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
	// Rate is the knee: where the load of every run of the cell, summed by
	// rate and made non-decreasing, crosses the SLO's limit (fit); Low and
	// High the interval a rerun's knee lands in 95 times in 100. For a status
	// other than found, Rate is the highest rate that passed (0 when none did).
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
	// VisitShift is the second visit's knee over the first's, on the log
	// scale (Searcher.Revisit); nil with one visit, or where the second
	// search found no knee.
	VisitShift *float64 `json:"visit_shift,omitempty"`
	// VisitShare is the share of the runs the fit took that later visits
	// ran (their weight in the knee).
	VisitShare float64 `json:"visit_share,omitempty"`
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
	// slos are the budgets each run's calls over are counted for (Obs.Over).
	slos  []SLO
	start time.Time
	now   func() time.Time
	// visit is the visit the next runs belong to (Obs.Visit).
	visit int
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
	o.Visit = x.visit
	if o.hist != nil {
		o.Over = map[string]int64{}
		for _, slo := range x.slos {
			o.Over[slo.P99.String()] = overCount(o.hist, slo.P99.D().Microseconds())
		}
		o.hist = nil
	}
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

// step judges rate on its runs' calls summed (pool.load): a run and its
// repeat, and a third when the two runs' own verdicts disagree.
func (x *Searcher) step(ctx context.Context, rate float64, phase string, slo SLO) (Step, error) {
	st := Step{Rate: rate, Phase: phase}
	acc := float64(x.S.Accuracy)
	for i := 0; ; i++ {
		id, err := x.run(ctx, rate, i)
		if err != nil {
			return st, err
		}
		st.Runs = append(st.Runs, id)
		if len(st.Runs) < 2 {
			continue
		}
		a, b := Judge(x.Runs[st.Runs[0]], slo, acc), Judge(x.Runs[st.Runs[1]], slo, acc)
		if len(st.Runs) > 2 || (len(a) == 0) == (len(b) == 0) {
			break
		}
	}
	var breach []string
	st.Load, breach = x.poolOf(st.Runs, slo).load(slo, acc)
	st.Pass = st.Load <= 1
	st.Load = min(st.Load, MaxLoad) // JSON has no infinity
	if !st.Pass {
		st.Breach = joinBreach(breach)
	}
	return st, nil
}

// watch adds slo to the budgets the runs' calls over are counted for.
func (x *Searcher) watch(slo SLO) {
	if !slices.Contains(x.slos, slo) {
		x.slos = append(x.slos, slo)
	}
}

// Find searches the knee at slo from start (calls/s): exponential steps up to
// the first breach, then bisection on a log scale until the bracket is within
// the precision (or the deadline passes), then the interval's rounds and the
// fit over every run. When the fit finds the SLO held at every rate tried (a
// first breach the later runs at and around it outweigh: a client still
// warming up, a stall), the search goes on once from the fitted rate x factor.
func (x *Searcher) Find(ctx context.Context, slo SLO, start float64) (Knee, error) {
	k := Knee{SLO: slo}
	x.watch(slo)
	deadline := x.now().Add(x.S.Deadline.D())
	rate := roundRate(start)
	for resumed := false; ; resumed = true {
		last, done, err := x.exponential(ctx, &k, rate, slo, deadline)
		if err != nil || done {
			return k, err
		}
		if k.Lo == 0 {
			var below bool
			if k, last, below, err = x.down(ctx, k, last, slo, deadline); err != nil || below {
				return k, err
			}
		}
		var late bool
		if last, late, err = x.bisect(ctx, &k, last, slo, deadline); err != nil {
			return k, err
		}
		where, err := x.rounds(ctx, &k)
		if err != nil {
			return k, err
		}
		if late && k.Status == StatusFound {
			k.Status = StatusUnconverged
		}
		if where == fitAbove && !resumed && !x.now().After(deadline) && k.Rate < x.S.MaxRate {
			k.Note = addNote("", "the runs summed by rate held the SLO up to %s, above the first breach at %s: searched on from there", fmtRate(k.Rate), fmtRate(k.Hi))
			k.Lo, k.Hi, k.Rounds = k.Rate, 0, nil
			rate = min(roundRate(k.Rate*x.S.Factor), x.S.MaxRate)
			continue
		}
		x.limit(&k, last)
		return k, nil
	}
}

// exponential is the exponential phase from rate: steps x factor until one
// breaches (k.Hi, and the step, returned). done: the search ended in it, at
// max_rate or the deadline, with k's status set.
func (x *Searcher) exponential(ctx context.Context, k *Knee, rate float64, slo SLO, deadline time.Time) (Step, bool, error) {
	for {
		st, err := x.step(ctx, rate, "exponential", slo)
		if err != nil {
			return st, true, err
		}
		k.Steps = append(k.Steps, st)
		if !st.Pass {
			k.Hi = rate
			return st, false, nil
		}
		k.Lo = rate
		if rate >= x.S.MaxRate {
			k.Status, k.Rate = StatusAbove, rate
			k.Note = addNote(k.Note, "within the SLO at max_rate %g/s: the knee lies above it", x.S.MaxRate)
			x.atKnee(k)
			return st, true, nil
		}
		if x.now().After(deadline) {
			k.Status, k.Rate = StatusUnconverged, k.Lo
			k.Note = addNote(k.Note, "deadline %v passed in the exponential phase at %g/s", x.S.Deadline, rate)
			x.atKnee(k)
			return st, true, nil
		}
		rate = min(roundRate(rate*x.S.Factor), x.S.MaxRate)
	}
}

// bisect narrows the bracket (k.Lo, k.Hi) on a log scale to the precision or
// the deadline (noted, and late: the rounds then run at the wider bracket);
// it returns the last step that breached.
func (x *Searcher) bisect(ctx context.Context, k *Knee, last Step, slo SLO, deadline time.Time) (Step, bool, error) {
	for k.Hi/k.Lo-1 > float64(x.S.Precision) {
		if x.now().After(deadline) {
			k.Note = addNote(k.Note, "deadline %v passed with the bracket at %g-%g/s, wider than %v: the rounds ran there", x.S.Deadline, k.Lo, k.Hi, x.S.Precision)
			return last, true, nil
		}
		mid := roundRate(math.Sqrt(k.Lo * k.Hi))
		if mid <= k.Lo || mid >= k.Hi {
			break // whole calls/s: the bracket cannot narrow further
		}
		st, err := x.step(ctx, mid, "bisection", slo)
		if err != nil {
			return last, false, err
		}
		k.Steps = append(k.Steps, st)
		if st.Pass {
			k.Lo = mid
		} else {
			k.Hi, last = mid, st
		}
	}
	return last, false, nil
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

// rounds runs the paired rounds around the bracket (Lo, Hi), then places the
// knee and its 95 % interval on every run of the cell (place): the rounds add
// runs where the knee lies, on both sides of it.
func (x *Searcher) rounds(ctx context.Context, k *Knee) (int, error) {
	c := math.Sqrt(k.Lo * k.Hi)
	r1, r2 := min(k.Lo, roundRate(c/(1+RoundSpread))), max(k.Hi, roundRate(c*(1+RoundSpread)))
	if err := x.pairedRounds(ctx, k, r1, r2); err != nil {
		return 0, err
	}
	k.Status = StatusFound
	return x.place(k), nil
}

// pairedRounds runs the spec's rounds at r1 and r2, the order alternating,
// as the current visit's.
func (x *Searcher) pairedRounds(ctx context.Context, k *Knee, r1, r2 float64) error {
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
		k.Rounds = append(k.Rounds, Round{LoRun: ids[0], HiRun: ids[1]})
	}
	return nil
}

// place places k's knee and its 95 % interval on every run of the cell
// (fit); a fit below or above every rate tried sets the status that says so.
func (x *Searcher) place(k *Knee) int {
	var where int
	k.Rate, k.Low, k.High, where = x.fit(k.SLO)
	switch where {
	case fitBelow:
		k.Status = StatusBelow
		k.Note = addNote(k.Note, "below the lowest rate tried: the runs summed by rate breach the SLO at every rate, %s the lowest", fmtRate(k.Rate))
		k.Rate, k.Low, k.High = 0, 0, 0
	case fitAbove:
		k.Status = StatusAbove
		k.Note = addNote(k.Note, "the runs summed by rate hold the SLO at every rate tried: the knee lies at or above %s", fmtRate(k.Rate))
	}
	return where
}

func addNote(note, format string, a ...any) string {
	if note != "" {
		note += "; "
	}
	return note + fmt.Sprintf(format, a...)
}

// RoundSpread places the rounds' two rates around the bracket's centre (and
// never inside the bracket): ±5 %, so that a round's two runs lie on either
// side of the knee and the fit has runs beyond the bracket's edges.
const RoundSpread = 0.05

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
// largest steal of the runs at its bracket, in its rounds and in the later
// visits' searches (Revisit: all of them near the knee).
func (x *Searcher) atKnee(k *Knee) {
	ids := append(slices.Clone(x.byRate[k.Lo]), x.byRate[k.Hi]...)
	for _, r := range k.Rounds {
		ids = append(ids, r.LoRun, r.HiRun)
	}
	for id, o := range x.Runs {
		if o.Visit > 0 {
			ids = append(ids, id)
		}
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
