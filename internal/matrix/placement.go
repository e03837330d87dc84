package matrix

import (
	"context"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/measure"
	"path/filepath"
	"time"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/runner"
)

// placement is where a server group's server and client runs go. The group loop
// (groupSteps) is one for every placement; a placement only starts servers and
// runs clients:
//   - engines: one engine for everything (-runner local or docker), or one
//     engine per host (Spec.Hosts), clients as workers kept for the group;
//   - swarm: a server service on a server-pool node, each client run split
//     over a gang of tasks on client-pool nodes (Spec.Cluster).
//
// A new condition of a cell (a link, a security mode, a connection mode, an
// offered rate) reaches both through the cell and its client's arguments
// (plan.Cell.ClientArgs), never through a placement's own loop.
type placement interface {
	// startServer starts server key for cells.
	startServer(ctx context.Context, key string, cells []plan.Cell) (*measure.ServerProc, error)
	// untimed runs u (a verify call, a prime run) from every client task that
	// times u's cell and keeps each task's raw output. Only ctx's cancellation
	// is an error.
	untimed(ctx context.Context, g *groupRun, u untimedRun) ([]taskOutcome, error)
	// timed runs repeat r of st's cell; warm: the worker that times it timed
	// the cell's previous repeat. final says no later repeat of the cell can
	// run either (a client pool too small). Only ctx's cancellation is an error.
	timed(ctx context.Context, g *groupRun, st *cellState, r int, warm bool) (rep results.Repeat, final bool, err error)
	// workerID is the live worker (or gang of tasks) that times c, "" when none.
	workerID(g *groupRun, c plan.Cell) string
	// endClients ends the group's client workers or tasks (at a fork, and at
	// the group's end).
	endClients(g *groupRun)
}

// untimedRun is one client run that is not recorded as a repeat: the verify
// call (one call at c=1, Verify) or a prime run of the cell's shape.
type untimedRun struct {
	name    string // the job's name and its raw file's stem
	c       plan.Cell
	l       plan.Load
	verify  bool
	timeout time.Duration
}

// taskOutcome is one client task's part of an untimed run: where it ran ("" on
// an engine), its raw file, its result, and why it did not run.
type taskOutcome struct {
	where string
	raw   string
	res   runner.Result
	err   error
}

// engines is the placement on one engine, or on one engine per host: the
// server through the server's runner, each client run through the group's run
// path and its workers.
type engines struct{ e *executor }

func (p engines) startServer(ctx context.Context, key string, cells []plan.Cell) (*measure.ServerProc, error) {
	return p.e.startServers(ctx, key, cells)
}

func (p engines) untimed(ctx context.Context, g *groupRun, u untimedRun) ([]taskOutcome, error) {
	e, c := p.e, u.c
	cr := e.clientRun(g.srv, c, u.l)
	if u.verify {
		cr.Callers = 1
	}
	args := c.ClientArgs(cr)
	var rep results.Repeat
	res, err := g.runPath.Run(ctx, &rep, measure.Job{Name: u.name, Client: c.Client, Args: args, Proto: c.Protocol, Call: c.Call,
		Timeout: u.timeout, Worker: true, Runner: e.clientRunner(c)})
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	raw := filepath.Join(results.RawDir, u.name+".txt")
	if werr := measure.WriteRaw(filepath.Join(e.o.Dir, raw), res.Stdout, res.Stderr); werr != nil && err == nil {
		err = fmt.Errorf("raw file: %w", werr)
	}
	return []taskOutcome{{raw: raw, res: res, err: err}}, nil
}

func (p engines) timed(ctx context.Context, g *groupRun, st *cellState, r int, warm bool) (results.Repeat, bool, error) {
	srv := g.srv.For(st.c)
	rep, err := g.runPath.Measure(ctx, srv, p.e.job(srv, st.c, r, warm))
	return rep, false, err
}

func (p engines) workerID(g *groupRun, c plan.Cell) string {
	return g.runPath.Workers.Current(c.Client + "-" + c.Protocol)
}

func (p engines) endClients(g *groupRun) { g.runPath.Workers.Close() }
