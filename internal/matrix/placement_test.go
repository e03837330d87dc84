package matrix

import (
	"context"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/measure"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rpcbed/rpcbed/internal/matrix/matrixtest"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/results"
)

// steps hears the group loop: each step's name and each call it makes on the
// placement, in order.
type steps struct {
	mu  sync.Mutex
	log []string
}

func (s *steps) add(f string, a ...any) {
	s.mu.Lock()
	s.log = append(s.log, fmt.Sprintf(f, a...))
	s.mu.Unlock()
}

// heard is a placement that tells steps what the loop asked of it.
type heard struct {
	placement
	s *steps
}

func (h heard) startServer(ctx context.Context, key string, cells []plan.Cell) (*measure.ServerProc, error) {
	h.s.add("startServer %s", key)
	return h.placement.startServer(ctx, key, cells)
}

func (h heard) untimed(ctx context.Context, g *groupRun, u untimedRun) ([]taskOutcome, error) {
	h.s.add("untimed %s", u.name)
	return h.placement.untimed(ctx, g, u)
}

func (h heard) timed(ctx context.Context, g *groupRun, st *cellState, r int, warm bool) (results.Repeat, bool, error) {
	h.s.add("timed %s r%d", st.c.Name(), r)
	return h.placement.timed(ctx, g, st, r, warm)
}

func (h heard) endClients(g *groupRun) {
	h.s.add("endClients %s", g.key)
	h.placement.endClients(g)
}

// fakeSwarm stands for the swarm placement: its server runs on the scripted
// engine, and every client run is split over two "tasks" (two runs of the
// engine's), the timed one merged as the swarm's is (merge).
type fakeSwarm struct {
	sp *swarmPlace
	en engines
}

func (f fakeSwarm) startServer(ctx context.Context, key string, cells []plan.Cell) (*measure.ServerProc, error) {
	return f.en.startServer(ctx, key, cells)
}

func (f fakeSwarm) untimed(ctx context.Context, g *groupRun, u untimedRun) ([]taskOutcome, error) {
	var outs []taskOutcome
	for i := 1; i <= 2; i++ {
		v := u
		v.name = fmt.Sprintf("%s-t%d", u.name, i)
		o, err := f.en.untimed(ctx, g, v)
		if err != nil {
			return nil, err
		}
		o[0].where = fmt.Sprintf("node %d", i)
		outs = append(outs, o...)
	}
	return outs, nil
}

func (f fakeSwarm) timed(ctx context.Context, g *groupRun, st *cellState, r int, warm bool) (results.Repeat, bool, error) {
	var runs []*taskRun
	var reports []*report.Report
	var rep results.Repeat
	for i := 1; i <= 2; i++ {
		one, _, err := f.en.timed(ctx, g, st, r, warm)
		if err != nil || one.Report == nil {
			return one, false, err
		}
		w := one.Report.Rpcbed
		runs = append(runs, &taskRun{share: plan.Share{Concurrency: st.c.Concurrency}, rec: results.TaskRecord{Task: fmt.Sprint(i), WindowStartUnix: w.WindowStart, WindowEndUnix: w.WindowEnd}})
		reports = append(reports, one.Report)
		rep.Raw, rep.WorkerID, rep.Worker = one.Raw, one.WorkerID, true
	}
	f.sp.merge(&rep, st.c, runs, reports, nil, nil)
	return rep, false, nil
}

func (f fakeSwarm) workerID(g *groupRun, c plan.Cell) string { return f.en.workerID(g, c) }
func (f fakeSwarm) endClients(g *groupRun)                   { f.en.endClients(g) }

// TestPlacementsRunTheSameSteps: one spec (three clients, a primed one) through the engines placement and through a
// swarm's (a fake cluster backend) runs the same group steps and asks the
// same of its placement, in the same order.
func TestPlacementsRunTheSameSteps(t *testing.T) {
	spec, err := plan.ParseSpec([]byte(`
clients: {go: [grpc, http], java: [grpc]}
items: [2]
concurrency: [1, 4]
load: {n: 100}
repeats: 2
prime: {java: 0.2s}
seed: 7
`))
	if err != nil {
		t.Fatal(err)
	}
	trace := func(place func(e *executor) placement) []string {
		s := &steps{}
		o := Options{Spec: spec, Dir: t.TempDir(), Runner: matrixtest.New(), RunnerName: "fake",
			placed: func(e *executor) placement {
				e.trace = func(step string) { s.add("step %s", step) }
				return heard{place(e), s}
			}}
		run, err := Execute(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range run.Cells {
			if c.Status != results.StatusOK {
				t.Errorf("%s: %s %s", c.Name, c.Status, c.Error)
			}
		}
		return s.log
	}
	local := trace(func(e *executor) placement { return engines{e} })
	swarm := trace(func(e *executor) placement { return fakeSwarm{&swarmPlace{e: e}, engines{e}} })
	if !slices.Equal(local, swarm) {
		t.Errorf("steps differ:\nengines: %s\nswarm:   %s", strings.Join(local, "; "), strings.Join(swarm, "; "))
	}
	for _, want := range []string{"step start go-server", "startServer go-server", "step verify go-server", "untimed verify-go-grpc-datalist",
		"step prime go-server", "untimed prime-java-grpc-datalist-2", "step rounds go-server", "timed java-grpc-datalist-2-c4 r2",
		"step add rounds go-server", "endClients go-server"} {
		if !slices.Contains(local, want) {
			t.Errorf("no %q in the steps: %s", want, strings.Join(local, "; "))
		}
	}
}
