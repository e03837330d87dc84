package reproduce

import (
	"context"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/measure"
	"time"

	"github.com/rpcbed/rpcbed/internal/analysis/claims"
	"github.com/rpcbed/rpcbed/internal/plan"
)

// javaWarmupMax bounds each row's -warmup auto: both JVMs are primed (javaPrime)
// before the rows, so a row settles within a second on a quiet machine.
const javaWarmupMax = "2s"

// javaPrime is how long each un-recorded run lasts, one per published
// concurrency, after the first second from cold and before the rows: both JVMs
// (client worker and server) compile their hot paths under every concurrency's
// profile. Primed at c=20 alone, the first c=1 row still ran at 1474-1649 tps
// against 5716-6766 later, both sides 92-98 % busy and the server at 590-659 µs
// of CPU per call (its JIT recompiling for the new profile), and rows that
// followed the cold second directly: ice c=1 [2979..15963] tps.
const javaPrime = "2s"

// javaPrimeMax bounds the rounds of 1 s runs (one per published concurrency)
// that follow the prime while either JVM's JIT still compiles for more than
// results.JITQuiet of a round (the client's report, the server's /stats): on one
// core each JIT needs 15-20 s of load to rest.
const javaPrimeMax = 20 * time.Second

// java2015 is java-rpc-2015: the Java client against the Java baselines,
// ice/dubbo/thrift/grpc at 1..100 clients, tps at steady state;
// claims.Java2015 reads its published tps and judges it.
type java2015 struct {
	claims.Java2015
	jobTimer
	// live: each framework's server and client worker, kept for the
	// precision loop's rounds; stop ends them.
	live map[string]*javaLive
}

// javaLive is one framework's server and run path while the experiment lasts.
type javaLive struct {
	srv  *measure.ServerProc
	b    *measure.RunPath
	stop func()
}

// newJava2015 is java-rpc-2015 with this run's settings on the record.
func newJava2015() *java2015 {
	e := &java2015{}
	e.Settings = claims.JavaSettings{Prime: javaPrime, WarmupMax: javaWarmupMax, PrimeMax: javaPrimeMax,
		QuietBusy: javaQuietBusy, QuietStep: javaQuietStep}
	return e
}

func (e *java2015) run(ctx context.Context, o Options) error {
	e.configure(o.Quick)
	e.Runs, e.First, e.Versions, e.Quiet = map[claims.JKey][]claims.Run{}, map[string]claims.Run{}, map[string]string{}, map[string]claims.QuietAfter{}
	e.Rest = map[string]claims.JITRest{}
	e.live = map[string]*javaLive{}
	addrs := map[string]string{}
	for _, fw := range claims.JavaFrameworks {
		if err := e.startFramework(ctx, o, fw); err != nil {
			return err
		}
		addrs[fw] = e.live[fw].srv.Addrs[fw]
	}
	return e.runRows(ctx, o, javaRowJobs(e.Java2015, addrs, o.Quick))
}

// startFramework: one server and one client worker, left running for the
// rows; first one second from cold (JIT warm-up: the first second against
// steady state), then the prime until both JVMs' JIT is at rest and the
// server quiet. The rows then run in rounds across the frameworks.
func (e *java2015) startFramework(ctx context.Context, o Options, fw string) error {
	srv, err := measure.StartServerProc(ctx, o.Runner, "java-"+fw, measure.ServerProcConfig{
		Programs: o.Programs, Resources: plan.Resources{CPUSet: o.ServerCPUSet}, Store: "memory", Auth: true,
	})
	if err != nil {
		return err
	}
	b, stopWorkers := newRunPath(o)
	e.live[fw] = &javaLive{srv: srv, b: b, stop: func() {
		stopWorkers()
		srv.Svc.Stop(context.Background())
	}}
	addr := srv.Addrs[fw]
	first := javaFirstJob(fw, addr)
	fmt.Fprintf(o.Log, "  %s\n", first.Name)
	m, err := runJob(ctx, b, srv, first)
	if err == nil {
		e.First[fw] = m
	} else if err := recordFailure(ctx, &e.Failed, err); err != nil {
		return err
	}
	if !o.Quick {
		for _, j := range javaPrimeJobs(fw, addr, e.Levels) {
			fmt.Fprintf(o.Log, "  %s\n", j.Name)
			if _, err := runJob(ctx, b, srv, j); err != nil {
				if err := recordFailure(ctx, &e.Failed, err); err != nil {
					return err
				}
			}
		}
		rest, err := e.primeUntilRest(ctx, o, b, srv, fw)
		if err != nil {
			return err
		}
		e.Rest[fw] = rest
		q, err := waitQuiet(ctx, srv)
		if err != nil {
			return err
		}
		e.Quiet[fw] = q
	}
	return nil
}

// runRows runs rows, each on its framework's live server and worker, filing
// each run's figures under its key with its round.
func (e *java2015) runRows(ctx context.Context, o Options, rows []javaRow) error {
	for _, j := range rows {
		l, ok := e.live[j.Key.FW]
		if !ok {
			continue
		}
		fmt.Fprintf(o.Log, "  %s\n", j.Job.Name)
		m, err := e.jobTimer.run(ctx, l.b, l.srv, j.Job)
		if err != nil {
			if err := recordFailure(ctx, &e.Failed, err); err != nil {
				return err
			}
			continue
		}
		m.Round = j.Round
		e.Runs[j.Key] = append(e.Runs[j.Key], m)
		if m.Report.Rpcbed != nil {
			for k, v := range m.Report.Rpcbed.Versions {
				e.Versions[k] = v
			}
		}
	}
	return nil
}

func (e *java2015) setLooks(n int) float64 {
	e.Looks = n
	return e.Confidence()
}

func (e *java2015) undecided() []claims.Need { return e.Undecided() }

// addRound is one paired round at level c: each framework's row once, in
// order, on the server and worker its base rows ran on.
func (e *java2015) addRound(ctx context.Context, o Options, c int, fws []string, n int) error {
	logRound(o, "java-rpc-2015", c, fws, n)
	var rows []javaRow
	for _, fw := range fws {
		if l, ok := e.live[fw]; ok {
			rows = append(rows, javaRowJob(e.Java2015, fw, l.srv.Addrs[fw], c, e.Repeats+n, o.Quick))
		}
	}
	return e.runRows(ctx, o, rows)
}

func (e *java2015) stop() {
	for fw, l := range e.live {
		l.stop()
		delete(e.live, fw)
	}
}

// primeUntilRest runs rounds of 1 s un-recorded runs, one per published
// concurrency, while either JVM's JIT compiled for more than results.JITQuiet
// of the round's windows, at most javaPrimeMax (measure.UntilRest, the matrix's
// prime); the first round always runs.
func (e *java2015) primeUntilRest(ctx context.Context, o Options, b *measure.RunPath, srv *measure.ServerProc, fw string) (claims.JITRest, error) {
	last, rounds, spent, atRest, err := measure.UntilRest(javaPrimeMax, 1, func(round int) (measure.JITRound, error) {
		j := measure.JITRound{ServerKnown: true}
		for _, job := range javaRestJobs(fw, srv.Addrs[fw], e.Levels, round) {
			fmt.Fprintf(o.Log, "  %s\n", job.Name)
			m, err := runJob(ctx, b, srv, job)
			if err != nil {
				if err := recordFailure(ctx, &e.Failed, err); err != nil {
					return j, err
				}
				j.ServerKnown = false
				continue
			}
			j.ClientS += m.Wall
			if m.ClientJITMs != nil {
				j.ClientMs += *m.ClientJITMs
				j.ClientKnown = true
			}
			if m.ServerJITMs != nil {
				j.ServerMs += *m.ServerJITMs
			} else {
				j.ServerKnown = false
			}
		}
		j.ServerS = j.ClientS
		return j, nil
	})
	r := claims.JITRest{Rounds: rounds, Seconds: spent.Seconds(), ClientMs: last.ClientMs, ServerMs: last.ServerMs,
		Window: last.ClientS, ServerKnown: last.ServerKnown, AtRest: atRest}
	return r, err
}

// A server is quiet when it uses under javaQuietBusy of a core over javaQuietStep
// with no calls; waitQuiet gives up after javaQuietMax.
const (
	javaQuietBusy = 0.10
	javaQuietStep = 500 * time.Millisecond
	javaQuietMax  = 20 * time.Second
)

// waitQuiet waits, after the prime, until the server's own counters (/stats) say
// it stopped working: right after a load stops, a JVM's JIT compiles what the
// load queued and its collector runs, on the one core the next row needs (the
// first c=1 row after the prime once ran at 1649 tps against 5716-6766, the
// server at 97 % busy and 590 µs of CPU per call).
func waitQuiet(ctx context.Context, srv *measure.ServerProc) (claims.QuietAfter, error) {
	var q claims.QuietAfter
	if srv.StatsURL == "" {
		return q, nil
	}
	prev, err := srv.Snapshot(ctx, "", "")
	if err != nil {
		return q, ctx.Err()
	}
	start := time.Now()
	for time.Since(start) < javaQuietMax {
		select {
		case <-ctx.Done():
			return q, ctx.Err()
		case <-time.After(javaQuietStep):
		}
		cur, err := srv.Snapshot(ctx, "", "")
		if err != nil {
			return q, ctx.Err()
		}
		busy := (cur.CPU - prev.CPU) / javaQuietStep.Seconds()
		if q.After == 0 {
			q.FirstBusy = busy
		}
		q.After = time.Since(start)
		prev = cur
		if busy < javaQuietBusy {
			q.Quiet = true
			return q, nil
		}
	}
	return q, nil
}
