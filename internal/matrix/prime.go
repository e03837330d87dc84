package matrix

import (
	"bytes"
	"context"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/measure"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/runner"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// Priming: un-recorded runs through each worker until its JIT rests.

// prime runs, for each client the spec primes, un-recorded runs through each of
// its workers these cells use (Spec.Prime): rounds of one run per call, item
// count and TLS security of the worker's cells (a 5000-item answer runs other code
// than a 2-item one, a TLS run other code than a plaintext one), with no warm-up, each round at the next of its cells' concurrencies
// (largest first). A JVM's JIT takes tens of seconds on the one core it shares with
// the load (docs/method.md, section 5), so with prime_max the rounds go on until
// one after every concurrency was primed shows the JIT at rest on both sides
// (client and server compile time each at most JITQuiet of the round), or
// prime_max is spent. Without prime_max, or without a JIT on either side, it is
// one round at the largest concurrency. A failed prime is noted and changes
// nothing else: the timed repeats judge themselves.
func (e *executor) prime(ctx context.Context, g *groupRun) error {
	for _, p := range e.primePlan(g.cells) {
		if err := e.primeWorker(ctx, g, p); err != nil {
			return err
		}
	}
	return results.WriteJSON(filepath.Join(e.o.Dir, results.RunFile), e.run)
}

// primeShapes is one worker's prime: one cell per call, item count and security, and its
// cells' concurrencies, largest first.
type primeShapes struct {
	worker string
	shapes []plan.Cell
	concs  []int
}

// primePlan is the prime of each worker of cells whose client the spec primes
// (and whose pair did not fail its verify), in the cells' order.
func (e *executor) primePlan(cells []plan.Cell) []*primeShapes {
	var plans []*primeShapes
	by := map[string]*primeShapes{}
	seen := map[string]bool{}
	for _, c := range cells {
		if e.run.Spec.Prime[c.Client] <= 0 {
			continue
		}
		if v, ok := e.verified[c.Pair()]; ok && v.Status != results.StatusOK {
			continue
		}
		worker := c.Client + "-" + c.Protocol
		p := by[worker]
		if p == nil {
			p = &primeShapes{worker: worker}
			by[worker] = p
			plans = append(plans, p)
		}
		if key := primeKey(c); !seen[key] {
			seen[key] = true
			p.shapes = append(p.shapes, c)
		}
		if !slices.Contains(p.concs, c.Concurrency) {
			p.concs = append(p.concs, c.Concurrency)
		}
	}
	for _, p := range plans {
		slices.SortFunc(p.concs, func(a, b int) int { return b - a })
	}
	return plans
}

// primeWorker runs p's rounds (measure.UntilRest), each at the next concurrency, and
// records the prime in run.json's primes.
func (e *executor) primeWorker(ctx context.Context, g *groupRun, p *primeShapes) error {
	client := p.shapes[0].Client
	d := e.run.Spec.Prime[client]
	budget := e.run.Spec.PrimeBudget(client, p.shapes[0].Protocol)
	var lastWall time.Duration
	last, rounds, spent, atRest, err := measure.UntilRest(budget, len(p.concs), func(round int) (measure.JITRound, error) {
		conc := p.concs[(round-1)%len(p.concs)]
		t0 := time.Now()
		j, err := e.primeRound(ctx, g, p, round, conc, d)
		lastWall = time.Since(t0)
		if err == nil && budget > 0 && (j.ClientKnown || j.ServerKnown) {
			e.prog.Note(fmt.Sprintf("prime %s round %d at c=%d: %s", p.worker, round, conc, j))
		}
		return j, err
	})
	if err != nil {
		return err
	}
	pr := results.Prime{Worker: p.worker, Rounds: rounds, Seconds: spent.Seconds(), LastRoundS: lastWall.Seconds(), AtRest: atRest}
	if last.ClientKnown {
		pr.LastClientJITMs, pr.LastWindowS = &last.ClientMs, last.ClientS
	}
	if last.ServerKnown {
		pr.LastServerJITMs = &last.ServerMs
	}
	e.run.Primes = append(e.run.Primes, pr)
	switch {
	case budget <= 0 || (!last.ClientKnown && !last.ServerKnown):
	case atRest:
		e.prog.Note(fmt.Sprintf("prime %s: JIT at rest after %d rounds, %.1f s", p.worker, rounds, spent.Seconds()))
	default:
		e.prog.Note(fmt.Sprintf("prime %s: JIT not at rest after %d rounds, %.1f s (prime_max %v): its first repeats may show %s", p.worker, rounds, spent.Seconds(), budget, results.FlagJIT))
	}
	return nil
}

// primeRound runs one round of p's prime at concurrency conc: one run of d per
// shape, not recorded, with the server's JIT read around it.
func (e *executor) primeRound(ctx context.Context, g *groupRun, p *primeShapes, round, conc int, d plan.Duration) (measure.JITRound, error) {
	var j measure.JITRound
	j0, sok0 := g.srv.JITMs(ctx)
	t0 := time.Now()
	for _, c := range p.shapes {
		c.Concurrency = conc
		key := primeKey(c)
		name := "prime-" + key
		if g.fork > 1 {
			name += "-f" + strconv.Itoa(g.fork) // the first fork's prime keeps its files
		}
		if round > 1 {
			name += "-r" + strconv.Itoa(round)
		}
		if round == 1 {
			e.prog.Note(fmt.Sprintf("prime %s: %v at c=%d, not recorded", key, d.D(), c.Concurrency))
		}
		l := plan.Load{Duration: d, Conns: c.Load.Conns}
		outs, err := e.pl.untimed(ctx, g, untimedRun{name: name, c: c, l: l, timeout: l.RunTimeout()})
		if err != nil {
			return j, err
		}
		for _, o := range outs {
			if jit, window, ok := e.primeOutcome(name, o); ok {
				j.ClientKnown = true
				j.ClientMs += jit
				j.ClientS += window
			}
		}
	}
	j1, sok1 := g.srv.JITMs(ctx)
	if sok0 && sok1 {
		j.ServerKnown, j.ServerMs, j.ServerS = true, j1-j0, time.Since(t0).Seconds()
	}
	return j, nil
}

// primeOutcome notes a failed prime run; of one that ran it reads the client's
// JIT compile time (ms) and its measured window (s), when its report has them.
func (e *executor) primeOutcome(name string, o taskOutcome) (jit, window float64, ok bool) {
	err := o.err
	if err == nil && o.res.ExitCode != 0 {
		err = fmt.Errorf("exit code %d%s", o.res.ExitCode, measure.ExitMeaning(o.res.ExitCode))
	}
	if err != nil {
		where := name
		if o.where != "" {
			where += " on " + o.where
		}
		e.prog.Note("prime " + where + " failed (the timed repeats go on): " + runner.OneLine(err.Error()))
		return 0, 0, false
	}
	r, perr := report.ParseClient(bytes.NewReader(o.res.Stdout))
	if perr != nil || r.Rpcbed.JITCompileMs == nil {
		return 0, 0, false
	}
	return float64(*r.Rpcbed.JITCompileMs), math.Max(0, r.Rpcbed.WindowEnd-r.Rpcbed.WindowStart), true
}

// primeKey names a prime run's shape: the cell's pair, for datalist its item
// count, and over TLS its security (the record layer and its ciphers are other
// code for the JIT to compile: a default run's java-thrift 200-item c=50 TLS
// cell, primed in plaintext only, made 1,742 req/s in its first repeat,
// compiling, and 8,224-10,636 in its later four).
func primeKey(c plan.Cell) string {
	key := c.Pair()
	if c.Call == "datalist" {
		key += "-" + strconv.Itoa(c.Items)
	}
	if s := c.Sec(); s.IsTLS() {
		key += "@" + s.String()
	}
	return key
}
