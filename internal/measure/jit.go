package measure

import (
	"fmt"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/results"
)

// A JIT at rest: prime rounds until no side's JIT compiles for more than
// results.JITQuiet of its time.

// JITRound is one prime round's JIT compile time on each side that has a JIT
// (ms), over the time it is judged against (s): the client's measured windows,
// the server's round.
type JITRound struct {
	ClientMs, ClientS float64
	ClientKnown       bool
	ServerMs, ServerS float64
	ServerKnown       bool
}

// Quiet says every side with a JIT compiled at most results.JITQuiet of its
// time, and one side at least has one.
func (j JITRound) Quiet() bool {
	return (j.ClientKnown || j.ServerKnown) &&
		(!j.ClientKnown || !results.JITBusy(j.ClientMs, j.ClientS)) &&
		(!j.ServerKnown || !results.JITBusy(j.ServerMs, j.ServerS))
}

func (j JITRound) String() string {
	var parts []string
	if j.ClientKnown {
		parts = append(parts, fmt.Sprintf("client JIT %.0f ms of %.1f s measured", j.ClientMs, j.ClientS))
	}
	if j.ServerKnown {
		parts = append(parts, fmt.Sprintf("server JIT %.0f ms of %.1f s", j.ServerMs, j.ServerS))
	}
	return strings.Join(parts, ", ")
}

// UntilRest runs prime rounds (round(1), round(2) ...) until one from round
// minRounds on is Quiet, or another round as long as the last would pass
// budget. The first round always runs; it is the only one when budget is 0 or
// no side has a JIT. It returns the last round, the rounds run, the time spent
// and whether the JIT came to rest. `rpcbed matrix` and `rpcbed reproduce`
// prime with it.
func UntilRest(budget time.Duration, minRounds int, round func(r int) (JITRound, error)) (last JITRound, rounds int, spent time.Duration, atRest bool, err error) {
	for rounds = 1; ; rounds++ {
		t0 := time.Now()
		last, err = round(rounds)
		wall := time.Since(t0)
		spent += wall
		if err != nil {
			return last, rounds, spent, false, err
		}
		if budget <= 0 || (!last.ClientKnown && !last.ServerKnown) {
			return last, rounds, spent, false, nil
		}
		if last.Quiet() && rounds >= minRounds {
			return last, rounds, spent, true, nil
		}
		if spent+wall > budget {
			return last, rounds, spent, false, nil
		}
	}
}
