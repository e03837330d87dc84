package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// session makes one caller's calls, carrying the token of each response into the
// next request. It is used by one goroutine at a time.
type session interface {
	call(ctx context.Context) outcome
	// verify is a call that also checks the whole response and returns the
	// server's name when the protocol carries one.
	verify(ctx context.Context) (outcome, string)
	close()
}

// transport owns the connections of a run.
type transport interface {
	session(caller int) session
	close()
}

// ExitError carries the exit code a failure maps to, and for a failed verify
// (or no connection) the error kind (docs/report-format.md).
type ExitError struct {
	Code int
	Kind string // "" unless Code is report.ExitVerify or report.ExitUnreachable
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Result is what a run measured, before it becomes a report.
type Result struct {
	Config         Config
	ServerSoftware string
	DocLength      int64

	TimeTaken   time.Duration // measured part only
	Complete    int64         // measured calls that ended, failed or not (ab's "Complete")
	Failed      int64
	ByKind      [numKinds]int64
	Non2xx      int64
	Bytes       int64 // response body bytes of measured calls
	WarmupCalls int64
	Hist        *hdrhistogram.Histogram // latency in µs of answered measured calls
	// RawLatency is every value recorded in Hist, unordered; kept only with
	// Config.LatencyDump (a test's check of the exact merge).
	RawLatency []int64

	// The measured window (docs/method.md): from the end of the warm-up to the
	// return of the last measured call. CPU is getrusage(RUSAGE_SELF) over it.
	WindowStart, WindowEnd time.Time
	CPUUser, CPUSystem     time.Duration
	WarmupTime             time.Duration // how long the warm-up took
	Settled                string        // report.SettledYes|No|Fixed
	// Opened, Handshakes and Resumed are the connections opened and the TLS
	// handshakes completed (and of them resumed) in the window.
	Opened, Handshakes, Resumed int64
	Aborted                     string // why the run ended early, if it did
}

// Errors returns the failures by kind name.
func (r *Result) Errors() map[string]int64 {
	m := map[string]int64{}
	for k := kindConnect; k < numKinds; k++ {
		if r.ByKind[k] > 0 {
			m[k.String()] = r.ByKind[k]
		}
	}
	return m
}

// Highest latency the histograms track (µs): open-loop latencies count from the
// intended start, so they can exceed the per-call timeout. Every client records
// with the one geometry of internal/stats, so the records merge exactly.
const histMax = stats.LatencyHighest

// stallAfter: a run in which calls keep failing and none has succeeded for this
// long ends early (the server died) and still prints its report.
const stallAfter = 3 * time.Second

// caller is one goroutine's private state: nothing here is shared on the hot path
// except ok, which only the monitor reads.
type caller struct {
	c       session
	hist    *hdrhistogram.Histogram
	raw     []int64 // every recorded latency, with Config.LatencyDump only
	byKind  [numKinds]int64
	bytes   int64
	warmup  int64
	ok      atomic.Int64
	failed  atomic.Int64
	keepRaw bool
	quota   int64 // open loop with -n: this caller's share
	offset  time.Duration
	lastErr error    // the last failure, for the log
	_       [64]byte // keep the atomics of neighbouring callers off one cache line
}

// Run verifies the server, then runs the load and returns what it measured. Its
// errors are *ExitError. Logs go to logw.
func Run(ctx context.Context, cfg Config, logw io.Writer) (*Result, error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, &ExitError{Code: report.ExitUsage, Err: err}
	}
	cfg.net = &netCounters{}
	t, err := dial(ctx, &cfg)
	if err != nil {
		if ce := certificateError(&cfg, err); ce != nil {
			return nil, ce
		}
		return nil, &ExitError{report.ExitUnreachable, kindConnect.String(), fmt.Errorf("cannot reach %s server at %s: %v", cfg.Proto, cfg.Addr, err)}
	}
	defer t.close()

	callers := make([]*caller, cfg.Concurrency)
	for i := range callers {
		callers[i] = &caller{c: t.session(i), hist: stats.NewLatency(), keepRaw: cfg.LatencyDump != ""}
	}
	defer func() {
		for _, w := range callers {
			w.c.close()
		}
	}()

	res := &Result{Config: cfg}
	if err := verify(ctx, &cfg, callers[0], res, logw); err != nil {
		return nil, err
	}
	var loops *httpLoops
	if cfg.eventLoop() {
		// The verify call went through net/http; the loops make their own
		// connections and prime them with its token.
		tok := callers[0].c.(*httpSession).token[0]
		t.close()
		loops, err = newHTTPLoops(&cfg, callers, res.DocLength, tok)
		if err != nil {
			return nil, &ExitError{report.ExitUnreachable, netKind(err).String(), fmt.Errorf("%s server at %s: %v", cfg.Proto, cfg.Addr, err)}
		}
		defer loops.close()
		fmt.Fprintf(logw, "go-client: load-generator mode: %d event loop(s) over %d connections, %s\n", len(loops.loops), cfg.Conns, loops.placement())
	} else {
		prime(ctx, callers[1:], res.DocLength, logw)
	}
	if cfg.CPUProfile != "" {
		stopProfile, err := startCPUProfile(cfg.CPUProfile)
		if err != nil {
			return nil, &ExitError{Code: report.ExitUsage, Err: err}
		}
		defer stopProfile()
	}
	measure(ctx, &cfg, callers, loops, res, logw)
	return res, nil
}

// verify makes the one call that must be right before anything is timed.
func verify(ctx context.Context, cfg *Config, w *caller, res *Result, logw io.Writer) error {
	o, server := w.c.verify(ctx)
	hint := ""
	if cfg.Proto == ProtoThrift && (o.kind == kindReceive || o.kind == kindTimeout) {
		hint = fmt.Sprintf(" (does the server speak -thrift-transport %s -thrift-protocol %s?)", cfg.ThriftTransport, cfg.ThriftProtocol)
	}
	// The server did not answer (connect, timeout, receive: exit 4) or answered
	// wrongly (exit 3), as php-client and java-client do (internal/conformance).
	if o.kind != kindOK {
		if ce := certificateError(cfg, o.err); ce != nil {
			return ce
		}
	}
	switch o.kind {
	case kindOK:
	case kindConnect, kindTimeout:
		return &ExitError{report.ExitUnreachable, o.kind.String(), fmt.Errorf("cannot reach %s server at %s: %v%s", cfg.Proto, cfg.Addr, o.err, hint)}
	case kindReceive:
		return &ExitError{report.ExitUnreachable, o.kind.String(), fmt.Errorf("%s server at %s did not answer: %v%s", cfg.Proto, cfg.Addr, o.err, hint)}
	default:
		return &ExitError{report.ExitVerify, o.kind.String(), fmt.Errorf("%s %s at %s: %v%s", cfg.Proto, cfg.DocumentPath(), cfg.Addr, o.err, hint)}
	}
	res.ServerSoftware, res.DocLength = server, o.bytes
	fmt.Fprintf(logw, "go-client: verified %s %s at %s: %d bytes\n", cfg.Proto, cfg.DocumentPath(), cfg.Addr, o.bytes)
	return nil
}

// prime makes one call per other caller before timing (connection made, token in
// hand), so ab's Connect row is honestly zero. Its failures are only logged: the
// run counts what happens next.
func prime(ctx context.Context, callers []*caller, docLength int64, logw io.Writer) {
	var wg sync.WaitGroup
	errs := make([]error, len(callers))
	for i, w := range callers {
		if s, ok := w.c.(interface{ setWant(int64) }); ok {
			s.setWant(docLength)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if o := w.c.call(ctx); o.kind != kindOK {
				errs[i] = o.err
			}
		}()
	}
	wg.Wait()
	logDistinct(logw, "priming call failed", errs)
}

// logDistinct logs each distinct error once, with how many callers had it.
func logDistinct(logw io.Writer, what string, errs []error) {
	seen := map[string]int{}
	var order []string
	for _, err := range errs {
		if err == nil {
			continue
		}
		if seen[err.Error()] == 0 {
			order = append(order, err.Error())
		}
		seen[err.Error()]++
	}
	for _, msg := range order {
		fmt.Fprintf(logw, "go-client: %s (%d caller(s)): %s\n", what, seen[msg], msg)
	}
}

// window is the measured window as the callers see it, in monotonic time since
// base. start is notYet while warming up; the monitor marks it (markStart).
type window struct {
	base     time.Time
	start    atomic.Int64  // nanoseconds since base
	duration time.Duration // -t; 0 = no time limit
}

const notYet = math.MaxInt64

// at tells whether a call starting (or, open loop, due) at t is measured, and
// whether t is past the end of a -t run.
func (w *window) at(t time.Time) (measured, over bool) {
	s := w.start.Load()
	if s == notYet {
		return false, false
	}
	off := int64(t.Sub(w.base))
	if off < s {
		return false, false
	}
	return true, w.duration > 0 && off >= s+int64(w.duration)
}

// measure runs the warm-up and the measured part, then fills res.
// With loops (load-generator mode on HTTP) the event loops make the calls
// instead of one goroutine per caller.
func measure(ctx context.Context, cfg *Config, callers []*caller, loops *httpLoops, res *Result, logw io.Writer) {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stop atomic.Bool
	go func() { <-runCtx.Done(); stop.Store(true) }()

	win := &window{base: time.Now(), duration: cfg.Duration}
	win.start.Store(notYet)
	shareRequests(cfg, callers)
	m := newMonitor(runCtx, cfg, callers, win, cancel)
	done := launch(runCtx, cfg, callers, loops, win, &stop, logw)
	m.run(done)
	end := time.Now()
	cpu1, net1 := getrusage(), cfg.net.snapshot()
	if m.started.IsZero() { // the run ended inside the warm-up
		m.started, m.cpu0, m.net0 = end, cpu1, net1
		if m.auto {
			m.settled = report.SettledNo
		}
	}
	sumCallers(res, callers, logw)
	res.WindowStart, res.WindowEnd = m.started, end
	res.TimeTaken = end.Sub(m.started)
	res.WarmupTime = m.started.Sub(win.base)
	res.Settled = m.settled
	res.CPUUser, res.CPUSystem = cpu1.user-m.cpu0.user, cpu1.sys-m.cpu0.sys
	res.Opened, res.Handshakes, res.Resumed = net1.opened-m.net0.opened, net1.handshakes-m.net0.handshakes, net1.resumed-m.net0.resumed
	logRun(ctx, cfg, m, res, logw)
}

// shareRequests gives each caller of an open loop its share of -n and its
// offset in the schedule.
func shareRequests(cfg *Config, callers []*caller) {
	for i, w := range callers {
		if cfg.Rate > 0 && cfg.Requests > 0 {
			w.quota = cfg.Requests / int64(cfg.Concurrency)
			if int64(i) < cfg.Requests%int64(cfg.Concurrency) {
				w.quota++
			}
		}
		if cfg.Rate > 0 {
			w.offset = time.Duration(float64(i) * float64(time.Second) / float64(cfg.Rate))
		}
	}
}

// newMonitor is the run's monitor: its tick, its warm-up (auto, fixed or none)
// and the callers' calls it watches for a deadline.
func newMonitor(runCtx context.Context, cfg *Config, callers []*caller, win *window, cancel context.CancelFunc) *monitor {
	m := &monitor{callers: callers, win: win, cancel: cancel, tick: 50 * time.Millisecond, net: cfg.net}
	if cfg.Timeout < 500*time.Millisecond {
		m.tick = max(cfg.Timeout/10, time.Millisecond)
	}
	m.startAt = cfg.StartAt
	switch {
	case cfg.WarmupAuto:
		m.auto, m.warmupMax = true, cfg.WarmupMax
	case cfg.Warmup > 0 || !cfg.StartAt.IsZero():
		// A fixed warm-up, and -start-at: calls before it are warm-up too.
		m.openAt = win.base.Add(cfg.Warmup)
		if cfg.StartAt.After(m.openAt) {
			m.openAt = cfg.StartAt
		}
	default:
		m.markStart(win.base) // no warm-up: the window opens with the first call
	}
	for _, w := range callers {
		if wc, ok := w.c.(interface{ watched() *watchCall }); ok {
			wc.watched().arm(runCtx)
			m.watches = append(m.watches, wc.watched())
		}
	}
	return m
}

// launch starts the load: the event loops, or one goroutine per caller (open
// or closed loop); done closes when every one has ended.
func launch(runCtx context.Context, cfg *Config, callers []*caller, loops *httpLoops, win *window, stop *atomic.Bool, logw io.Writer) <-chan struct{} {
	var remaining atomic.Int64
	remaining.Store(cfg.Requests)
	var wg sync.WaitGroup
	if loops != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &loopRun{stop: stop, win: win, counted: cfg.Requests > 0, remaining: &remaining, open: cfg.Rate > 0}
			if r.open {
				r.interval = time.Duration(float64(cfg.Concurrency) * float64(time.Second) / float64(cfg.Rate))
			}
			loops.run(r)
			if err := loops.pinErr(); err != nil {
				fmt.Fprintf(logw, "go-client: event loops not pinned: %v\n", err)
			}
		}()
	}
	for _, w := range callers {
		if loops != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if cfg.Rate > 0 {
				w.openLoop(runCtx, cfg, stop, win)
			} else {
				w.closedLoop(runCtx, stop, win, cfg.Requests > 0, &remaining)
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}

// sumCallers adds up what the callers counted (latency, calls by outcome,
// bytes, warm-up calls) and logs each distinct last failure and how evenly the
// callers were served.
func sumCallers(res *Result, callers []*caller, logw io.Writer) {
	res.Hist = stats.NewLatency()
	lastErrs := make([]error, len(callers))
	merged := map[*hdrhistogram.Histogram]bool{} // callers may share one (the event loops)
	for i, w := range callers {
		if !merged[w.hist] {
			merged[w.hist] = true
			res.Hist.Merge(w.hist)
		}
		res.RawLatency = append(res.RawLatency, w.raw...)
		for k := kindConnect; k < numKinds; k++ {
			res.ByKind[k] += w.byKind[k]
			res.Failed += w.byKind[k]
			if k.statusError() {
				res.Non2xx += w.byKind[k]
			}
		}
		res.Complete += w.byKind[kindOK]
		res.Bytes += w.bytes
		res.WarmupCalls += w.warmup
		lastErrs[i] = w.lastErr
	}
	logDistinct(logw, "last failure", lastErrs)
	if len(callers) > 1 {
		// How evenly the server served the callers: a server may serve a
		// connection whose next request is already there back to back while others
		// wait (docs/loadgen.md, "A run's figures").
		calls := make([]float64, len(callers))
		for i, w := range callers {
			for k := range w.byKind {
				calls[i] += float64(w.byKind[k])
			}
		}
		st := stats.Of(calls)
		fmt.Fprintf(logw, "go-client: measured calls per caller: min %.0f, median %.0f, max %.0f (%d callers)\n", st.Min, st.Median, st.Max, st.N)
	}
	res.Complete += res.Failed
}

// logRun logs how the warm-up ended, the open loop's achieved rate, and why a
// run was cut short (recorded in res.Aborted).
func logRun(ctx context.Context, cfg *Config, m *monitor, res *Result, logw io.Writer) {
	if m.auto {
		fmt.Fprintf(logw, "go-client: warm-up auto: %s after %.3f s (%d calls)\n",
			map[string]string{report.SettledYes: "settled", report.SettledNo: "not settled"}[m.settled],
			res.WarmupTime.Seconds(), res.WarmupCalls)
	}
	if cfg.Rate > 0 && res.TimeTaken > 0 {
		fmt.Fprintf(logw, "go-client: open loop: target %d calls/s, achieved %.1f\n", cfg.Rate, float64(res.Complete)/res.TimeTaken.Seconds())
	}
	switch {
	case m.aborted != "":
		res.Aborted = m.aborted
		fmt.Fprintf(logw, "go-client: %s\n", m.aborted)
	case ctx.Err() != nil:
		res.Aborted = "interrupted"
		fmt.Fprintln(logw, "go-client: interrupted: printing what was measured")
	}
}

// loopRun is what the loops share with measure: the stop flag, the window and
// the count of measured calls left (-n).
type loopRun struct {
	stop      *atomic.Bool
	win       *window
	counted   bool
	remaining *atomic.Int64
	open      bool
	interval  time.Duration
}

// monitor watches a run from its own goroutine: it ends the warm-up (and takes
// the CPU reading) when the measured window opens, expires gRPC calls past their
// deadline, and ends a run whose server has gone.
type monitor struct {
	callers []*caller
	watches []*watchCall
	win     *window
	cancel  context.CancelFunc
	tick    time.Duration

	openAt    time.Time // when a fixed warm-up (or the wait for startAt) ends; zero = none
	startAt   time.Time // -start-at: the window opens no earlier; zero = none
	auto      bool      // -warmup auto
	warmupMax time.Duration
	rates     []float64 // auto: calls/s of each settle window

	started time.Time // when the measured window opened; zero before
	cpu0    rusage
	net     *netCounters
	net0    netSnapshot // connections and handshakes when the window opened
	settled string
	aborted string
}

// markStart opens the measured window at now: from here on calls are measured and
// CPU is counted.
func (m *monitor) markStart(now time.Time) {
	m.started, m.cpu0, m.net0 = now, getrusage(), m.net.snapshot()
	if m.settled == "" {
		m.settled = report.SettledFixed
	}
	m.win.start.Store(int64(now.Sub(m.win.base)))
}

// warmEnded ends an auto warm-up at now: the window opens now, or at startAt
// when that is later (the channel then fires at startAt; calls go on as warm-up).
func (m *monitor) warmEnded(now time.Time) <-chan time.Time {
	if !m.startAt.After(now) {
		m.markStart(now)
		return nil
	}
	m.openAt = m.startAt
	return time.After(time.Until(m.startAt))
}

func (m *monitor) okCalls() int64 {
	var n int64
	for _, w := range m.callers {
		n += w.ok.Load()
	}
	return n
}

// run returns when done closes. Its fields are read after it returns.
func (m *monitor) run(done <-chan struct{}) {
	tick := time.NewTicker(m.tick)
	defer tick.Stop()
	var warm, warmMax <-chan time.Time
	switch {
	case !m.openAt.IsZero():
		t := time.NewTimer(time.Until(m.openAt))
		defer t.Stop()
		warm = t.C
	case m.auto:
		t := time.NewTicker(settleWindow)
		defer t.Stop()
		warm = t.C
		tm := time.NewTimer(time.Until(m.win.base.Add(m.warmupMax)))
		defer tm.Stop()
		warmMax = tm.C
	}
	lastWindow, lastWindowOK := m.win.base, int64(0)
	var lastOK, failedAtProgress int64
	lastProgress := time.Now()
	for {
		select {
		case <-done:
			return
		case <-warm:
			now := time.Now()
			if !m.openAt.IsZero() {
				m.markStart(now)
				warm = nil
				continue
			}
			okN := m.okCalls()
			m.rates = append(m.rates, float64(okN-lastWindowOK)/now.Sub(lastWindow).Seconds())
			lastWindow, lastWindowOK = now, okN
			if settled(m.rates) {
				m.settled = report.SettledYes
				warm, warmMax = m.warmEnded(now), nil
			}
		case <-warmMax:
			m.settled = report.SettledNo
			warm, warmMax = m.warmEnded(time.Now()), nil // the CPU reading is taken then
		case now := <-tick.C:
			for _, wc := range m.watches {
				wc.expire(now)
			}
			var failN int64
			for _, w := range m.callers {
				failN += w.failed.Load()
			}
			okN := m.okCalls()
			if okN != lastOK {
				lastOK, lastProgress, failedAtProgress = okN, now, failN
			}
			// Slow calls that have not ended are no reason to stop (the per-call
			// deadline bounds them); failures with no success are.
			if m.aborted == "" && now.Sub(lastProgress) > stallAfter && failN > failedAtProgress {
				m.aborted = fmt.Sprintf("no call succeeded for %v while calls kept failing: ending the run", stallAfter)
				m.cancel()
			}
		}
	}
}

func dial(ctx context.Context, cfg *Config) (transport, error) {
	switch cfg.Proto {
	case ProtoGRPC:
		return dialGRPC(ctx, cfg)
	case ProtoThrift:
		return dialThrift(ctx, cfg)
	case ProtoHTTP:
		return newHTTPTransport(cfg), nil
	}
	return nil, errors.New("unknown protocol " + cfg.Proto)
}

// record books one ended call: a warm-up call or a measured one (its start, or
// open loop its due time, in the measured window).
func (w *caller) record(o outcome, start, end time.Time, measured bool) {
	if o.kind == kindOK {
		w.ok.Add(1)
	} else {
		w.failed.Add(1)
		w.lastErr = o.err
	}
	if !measured {
		w.warmup++
		return
	}
	w.byKind[o.kind]++
	if o.kind.answered() {
		w.bytes += o.bytes
		us := int64(end.Sub(start) / time.Microsecond)
		if us > histMax {
			us = histMax
		}
		w.hist.RecordValue(us)
		if w.keepRaw {
			w.raw = append(w.raw, us)
		}
	}
}

// closedLoop: call, record, repeat (ab). With -n the callers draw from one shared
// count of measured calls.
func (w *caller) closedLoop(ctx context.Context, stop *atomic.Bool, win *window, counted bool, remaining *atomic.Int64) {
	for !stop.Load() {
		start := time.Now()
		measured, over := win.at(start)
		if over {
			return
		}
		if counted && measured && remaining.Add(-1) < 0 {
			return
		}
		o := w.c.call(ctx)
		if padRounds > 0 {
			pad(padRounds)
		}
		w.record(o, start, time.Now(), measured)
		if o.kind == kindConnect {
			// Nothing listens: do not spin (ab would have given up already).
			time.Sleep(connectPause)
		}
	}
}

// connectPause is how long a closed-loop caller waits after a refused connection.
const connectPause = 10 * time.Millisecond

// openLoop: calls are due at fixed intervals whatever happened to the previous
// ones (wrk2). Latency counts from the due time, so a stalled server shows up in
// the percentiles instead of silently slowing the load (coordinated omission).
func (w *caller) openLoop(ctx context.Context, cfg *Config, stop *atomic.Bool, win *window) {
	interval := time.Duration(float64(cfg.Concurrency) * float64(time.Second) / float64(cfg.Rate))
	due := win.base.Add(w.offset)
	var timer *time.Timer
	var measured int64
	for !stop.Load() {
		if _, over := win.at(due); over {
			return
		}
		if w.quota > 0 && measured >= w.quota {
			return
		}
		if d := time.Until(due); d > 0 {
			if timer == nil {
				timer = time.NewTimer(d)
			} else {
				timer.Reset(d)
			}
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				return
			}
		}
		in, over := win.at(due)
		if over {
			return
		}
		o := w.c.call(ctx)
		w.record(o, due, time.Now(), in)
		if in {
			measured++
		}
		due = due.Add(interval)
	}
}
