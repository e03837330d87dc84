package matrix

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/runner"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// Priming: un-recorded runs through each worker until its JIT rests.

// prime runs, for each client the spec primes, un-recorded runs through each of
// its workers these cells use (Spec.Prime): rounds of one run per call and item
// count of the worker's cells (a 5000-item answer runs other code than a 2-item
// one), with no warm-up, each round at the next of its cells' concurrencies
// (largest first). A JVM's JIT takes tens of seconds on the one core it shares with
// the load (docs/method.md, section 5), so with prime_max the rounds go on until
// one after every concurrency was primed shows the JIT at rest on both sides
// (client and server compile time each at most JITQuiet of the round), or
// prime_max is spent. Without prime_max, or without a JIT on either side, it is
// one round at the largest concurrency. A failed prime is noted and changes
// nothing else: the timed repeats judge themselves.
func (e *executor) prime(ctx context.Context, g *groupRun) error {
	srv, cells := g.srv, g.cells
	type shapes struct {
		shapes []plan.Cell // one per call and item count
		concs  []int       // its cells' concurrencies, largest first
	}
	plans := map[string]*shapes{}
	var workers []string
	seen := map[string]bool{}
	for _, c := range cells {
		if e.run.Spec.Prime[c.Client] <= 0 {
			continue
		}
		if v, ok := e.verified[c.Pair()]; ok && v.Status != results.StatusOK {
			continue
		}
		worker := c.Client + "-" + c.Protocol
		p := plans[worker]
		if p == nil {
			p = &shapes{}
			plans[worker] = p
			workers = append(workers, worker)
		}
		key := primeKey(c)
		if !seen[key] {
			seen[key] = true
			p.shapes = append(p.shapes, c)
		}
		if !slices.Contains(p.concs, c.Concurrency) {
			p.concs = append(p.concs, c.Concurrency)
		}
	}
	for _, worker := range workers {
		p := plans[worker]
		slices.SortFunc(p.concs, func(a, b int) int { return b - a })
		client := p.shapes[0].Client
		d := e.run.Spec.Prime[client]
		budget := e.run.Spec.PrimeBudget(client, p.shapes[0].Protocol)
		var spent time.Duration
		for round := 1; ; round++ {
			conc := p.concs[(round-1)%len(p.concs)]
			j0, sok0 := e.serverJIT(ctx, srv)
			t0 := time.Now()
			var clientJIT, windows float64
			clientKnown := false
			for _, c := range p.shapes {
				c.Concurrency = conc
				key := primeKey(c)
				name := "prime-" + key
				if round > 1 {
					name += "-r" + strconv.Itoa(round)
				}
				if round == 1 {
					e.prog.note(fmt.Sprintf("prime %s: %v at c=%d, not recorded", key, d.D(), c.Concurrency))
				}
				l := plan.Load{Duration: d, Conns: c.Load.Conns}
				outs, err := e.pl.untimed(ctx, g, untimedRun{name: name, c: c, l: l, timeout: runTimeout(l)})
				if err != nil {
					return err
				}
				for _, o := range outs {
					if jit, window, ok := e.primeOutcome(name, o); ok {
						clientKnown = true
						clientJIT += jit
						windows += window
					}
				}
			}
			wall := time.Since(t0)
			spent += wall
			j1, sok1 := e.serverJIT(ctx, srv)
			serverKnown := sok0 && sok1
			pr := results.Prime{Worker: worker, Rounds: round, Seconds: spent.Seconds(), LastRoundS: wall.Seconds()}
			if clientKnown {
				pr.LastClientJITMs, pr.LastWindowS = &clientJIT, windows
			}
			if serverKnown {
				ms := j1 - j0
				pr.LastServerJITMs = &ms
			}
			if budget <= 0 || (!clientKnown && !serverKnown) {
				e.run.Primes = append(e.run.Primes, pr)
				break // no JIT to wait for, or no budget to wait with: one round
			}
			quiet := true
			var parts []string
			if clientKnown {
				quiet = quiet && !results.JITBusy(clientJIT, windows)
				parts = append(parts, fmt.Sprintf("client JIT %.0f ms of %.1f s measured", clientJIT, windows))
			}
			if serverKnown {
				quiet = quiet && !results.JITBusy(j1-j0, wall.Seconds())
				parts = append(parts, fmt.Sprintf("server JIT %.0f ms of %.1f s", j1-j0, wall.Seconds()))
			}
			e.prog.note(fmt.Sprintf("prime %s round %d at c=%d: %s", worker, round, conc, strings.Join(parts, ", ")))
			if quiet && round >= len(p.concs) {
				pr.AtRest = true
				e.run.Primes = append(e.run.Primes, pr)
				e.prog.note(fmt.Sprintf("prime %s: JIT at rest after %d rounds, %.1f s", worker, round, spent.Seconds()))
				break
			}
			if spent+wall > budget {
				e.run.Primes = append(e.run.Primes, pr)
				e.prog.note(fmt.Sprintf("prime %s: JIT not at rest after %d rounds, %.1f s (prime_max %v): its first repeats may show %s", worker, round, spent.Seconds(), budget, results.FlagJIT))
				break
			}
		}
	}
	return results.WriteJSON(filepath.Join(e.o.Dir, results.RunFile), e.run)
}

// primeOutcome notes a failed prime run; of one that ran it reads the client's
// JIT compile time (ms) and its measured window (s), when its report has them.
func (e *executor) primeOutcome(name string, o taskOutcome) (jit, window float64, ok bool) {
	err := o.err
	if err == nil && o.res.ExitCode != 0 {
		err = fmt.Errorf("exit code %d%s", o.res.ExitCode, exitMeaning(o.res.ExitCode))
	}
	if err != nil {
		where := name
		if o.where != "" {
			where += " on " + o.where
		}
		e.prog.note("prime " + where + " failed (the timed repeats go on): " + runner.OneLine(err.Error()))
		return 0, 0, false
	}
	r, perr := report.ParseClient(bytes.NewReader(o.res.Stdout))
	if perr != nil || r.Rpcbed.JITCompileMs == nil {
		return 0, 0, false
	}
	return float64(*r.Rpcbed.JITCompileMs), math.Max(0, r.Rpcbed.WindowEnd-r.Rpcbed.WindowStart), true
}

// primeKey names a prime run: the cell's pair and, for datalist, its item count.
func primeKey(c plan.Cell) string {
	key := c.Pair()
	if c.Call == "datalist" {
		key += "-" + strconv.Itoa(c.Items)
	}
	return key
}

// serverJIT is a JVM server's accumulated JIT compile time (ms) from /stats; ok is
// false for a server without one (go-server) or one that did not answer.
func (e *executor) serverJIT(ctx context.Context, srv *ServerProc) (float64, bool) {
	if srv == nil || srv.StatsURL == "" {
		return 0, false
	}
	st, _, err := srv.readStats(ctx)
	if err != nil || st.JITCompileMs == nil {
		return 0, false
	}
	return float64(*st.JITCompileMs), true
}
