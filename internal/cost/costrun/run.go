// Package costrun is the cost engine: it runs every cell of a plan under
// valgrind's callgrind, a short and a long run per side, against a native peer,
// and records cost.json (Run). It never prints a table: costrender does.
package costrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rpcbed/rpcbed/internal/cost"
	"github.com/rpcbed/rpcbed/internal/cost/costplan"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/runner"
	"github.com/rpcbed/rpcbed/internal/tlsbed"
)

// Options is one cost run.
type Options struct {
	Spec costplan.Spec
	// Root is the checkout: bin/go-client, bin/go-server, php-client/bin/client.php,
	// java-client/target/java-client.jar.
	Root string
	// Dir is the run directory: cost.json, cost.csv, cost.md and raw/ (every
	// callgrind file, client report and log).
	Dir string
	Log io.Writer
	// ClientCPU and ServerCPU pin the two sides (taskset); "" = not pinned.
	ClientCPU, ServerCPU string
	// Only, when set, keeps the cells whose ID contains one of these strings.
	Only []string
	// KeepRaw keeps the callgrind files (they are large; by default only the
	// summed segment files are kept).
	KeepRaw bool
	// Parallel 2 measures two cells at once, one process under callgrind on
	// each of the two CPUs (ClientCPU and ServerCPU), its native peer on the
	// other (docs/cost.md, "Time"): the server-side cells in order on
	// ServerCPU, the client-side ones on ClientCPU and, once the server side is
	// done, on ServerCPU too. 0 or 1: one cell at a time.
	Parallel int
	// Expected are the seconds each cell took in an earlier run (by ID, e.g.
	// the reference's), to take the longest first when Parallel; a cell it
	// lacks is estimated from its calls and items.
	Expected map[string]float64

	// certs are the run's throwaway CA and leaves when a cell runs over TLS.
	certs *tlsbed.Files
}

// parallel tells whether the run measures two cells at once.
func (o Options) parallel() bool {
	return o.Parallel > 1 && o.ClientCPU != "" && o.ServerCPU != "" && o.ClientCPU != o.ServerCPU
}

// The environment every measured Go process runs with: no asynchronous
// preemption (a signal-driven preemption lands on a timer, not on the work),
// one P (the side is pinned to one CPU anyway).
func (o Options) goEnv() []string {
	gogc := o.Spec.GOGC
	if gogc == "" {
		gogc = "100"
	}
	return []string{"GODEBUG=asyncpreemptoff=1", "GOGC=" + gogc, "GOMAXPROCS=1"}
}

// Run measures every cell of the spec and writes cost.json (costrender writes
// the rest: cost.csv, cost.md, the plots).
func Run(ctx context.Context, o Options) (*cost.Result, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	for _, tool := range []string{"valgrind", "callgrind_control"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s not found: apt-get install valgrind", tool)
		}
	}
	layers, err := cost.NewLayers(cost.Rules)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, "raw"), 0o755); err != nil {
		return nil, err
	}
	start := time.Now()
	res := &cost.Result{Version: cost.ResultVersion, Started: start.UTC().Format(time.RFC3339)}
	res.Setup = setup(ctx, o)
	res.Setup.Rules = len(cost.Rules)
	cells, skipped := o.Spec.Plan()
	for _, s := range skipped {
		res.Cells = append(res.Cells, cellRun(s.Cell, cost.StatusNotMeasured, s.Reason))
	}
	var keep []costplan.Cell
	for _, c := range cells {
		if len(o.Only) == 0 || containsAny(c.ID(), o.Only) {
			keep = append(keep, c)
			if c.Security != "" && o.certs == nil {
				// One CA and server leaf for the run, never kept beyond it.
				if o.certs, err = tlsbed.Generate(filepath.Join(o.Dir, "tls"), tlsbed.ECDSA, []string{"127.0.0.1", "localhost"}); err != nil {
					return nil, fmt.Errorf("TLS certificates: %w", err)
				}
				res.Setup.TLS = "TLS cells: go-server's TLS 1.3 (crypto/tls) with an ECDSA P-256 leaf of a throwaway CA made for the run (tls/ in the run directory: not for committing), the client's -security tls -cacert; one connection per run (persistent)"
			}
		}
	}
	var mu sync.Mutex
	done := 0
	measure := func(e *executor, c costplan.Cell) {
		t0 := time.Now()
		cr := e.cell(ctx, c)
		cr.Seconds = round(time.Since(t0).Seconds(), 1)
		mu.Lock()
		defer mu.Unlock()
		done++
		where := ""
		if o.parallel() {
			where = fmt.Sprintf(" (CPU %s)", e.valgrindCPU(c))
		}
		fmt.Fprintf(o.Log, "cost: [%d/%d] %s%s: %s\n", done, len(keep), c.ID(), where, summary(cr))
		res.Cells = append(res.Cells, cr)
		// Every cell on disk at once: an interrupted run keeps what it measured,
		// and the same -out resumes it (loadSaved).
		_ = res.WriteJSON(filepath.Join(o.Dir, cost.JSONFile))
	}
	if o.parallel() {
		runParallel(ctx, o, layers, keep, measure)
	} else {
		e := &executor{o: o, layers: layers}
		for _, c := range keep {
			if ctx.Err() != nil {
				break
			}
			measure(e, c)
		}
		e.stopAll()
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	res.Setup.LoadAfter = loadavg()
	res.Finished = time.Now().UTC().Format(time.RFC3339)
	res.Seconds = round(time.Since(start).Seconds(), 1)
	cost.SortCells(res.Cells)
	// cost.json only: cost.csv, cost.md and the plots are costrender's.
	if err := res.WriteJSON(filepath.Join(o.Dir, cost.JSONFile)); err != nil {
		return res, err
	}
	return res, nil
}

// runParallel measures two cells at once, one process under callgrind per CPU.
// The server-side cells run in order on ServerCPU against one go-server under
// callgrind (each warms the next, as in a sequential run), their native
// clients on ClientCPU; the client-side cells run on ClientCPU, their native
// servers on ServerCPU, and once the server side is done on ServerCPU too,
// with the CPUs swapped and native servers of their own. The client-side cells
// are taken longest first (calls times items, php-pure's runtime the slowest),
// so the two CPUs end together.
func runParallel(ctx context.Context, o Options, layers *cost.Layers, cells []costplan.Cell, measure func(*executor, costplan.Cell)) {
	var server, client []costplan.Cell
	for _, c := range cells {
		if c.Side == cost.SideServer {
			server = append(server, c)
		} else {
			client = append(client, c)
		}
	}
	sort.SliceStable(client, func(i, j int) bool { return o.expected(client[i]) > o.expected(client[j]) })
	var mu sync.Mutex
	take := func() (costplan.Cell, bool) {
		mu.Lock()
		defer mu.Unlock()
		if len(client) == 0 || ctx.Err() != nil {
			return costplan.Cell{}, false
		}
		c := client[0]
		client = client[1:]
		return c, true
	}
	swapped := o
	swapped.ClientCPU, swapped.ServerCPU = o.ServerCPU, o.ClientCPU
	// Each executor its own layer table: Layers memoises, not safe to share.
	own := func() *cost.Layers {
		l, err := cost.NewLayers(cost.Rules)
		if err != nil {
			return layers // compiled once already, so it does not fail here
		}
		return l
	}
	onServerCPU := &executor{o: o, layers: layers}        // the server side: go-server under callgrind on ServerCPU
	swappedClient := &executor{o: swapped, layers: own()} // then client-side cells under callgrind on ServerCPU
	onClientCPU := &executor{o: o, layers: own()}         // client-side cells under callgrind on ClientCPU
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for _, c := range server {
			if ctx.Err() != nil {
				break
			}
			measure(onServerCPU, c)
		}
		onServerCPU.stopAll()
		for c, ok := take(); ok; c, ok = take() {
			measure(swappedClient, c)
		}
		swappedClient.stopAll()
	}()
	go func() {
		defer wg.Done()
		for c, ok := take(); ok; c, ok = take() {
			measure(onClientCPU, c)
		}
		onClientCPU.stopAll()
	}()
	wg.Wait()
}

// expected is how many seconds a cell is expected to take under callgrind:
// Expected's figure, or else a rough estimate from the calls of both runs
// times the items with a start-up per run (php-pure's runtimes about 30 times
// slower per item than the others, as in the reference run).
func (o Options) expected(c costplan.Cell) float64 {
	if s, ok := o.Expected[c.ID()]; ok && s > 0 {
		return s
	}
	per := float64(c.Items+20) / 5000 // ~ms per call under callgrind, roughly
	if cl, _ := plan.ClientOf(c.Client); cl.Base != "" {
		per *= 30 // a variant: php-pure's pure-PHP runtimes
	}
	return float64(c.Calls.Short+c.Calls.Long)*per + 2*5
}

func summary(c cost.CellRun) string {
	if c.Status != cost.StatusOK {
		return c.Status + ": " + c.Error
	}
	// A negative marginal is the two runs' noise, not a figure: "—".
	f := func(format string, v float64) string {
		if v < 0 {
			return "—"
		}
		return fmt.Sprintf(format, v)
	}
	return fmt.Sprintf("%s instructions, %s est. cycles, %s syscalls, %s/%s bytes in/out per call (%.0f s)",
		f("%.0f", c.PerCall.Ir), f("%.0f", c.PerCall.Cycles), f("%.1f", c.PerCall.Syscalls), f("%.0f", c.PerCall.BytesIn), f("%.0f", c.PerCall.BytesOut), c.Seconds)
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

func cellRun(c costplan.Cell, status, why string) cost.CellRun {
	return cost.CellRun{Cell: c.Name(), Client: c.Client, Protocol: c.Protocol, Items: c.Items, Side: c.Side,
		Server: c.Server, Security: c.Security, Status: status, Error: why, ShortCalls: c.Calls.Short, LongCalls: c.Calls.Long}
}

// executor keeps the servers a run needs: a native one per server kind for the
// client side, go-server under callgrind for the server side.
type executor struct {
	o      Options
	layers *cost.Layers
	native map[string]*proc // go, java
	under  *proc            // go-server under callgrind
	// underKind is under's kind (go, go@tls).
	underKind string
	seq       int
	failed    map[string]error // server kind -> why it could not start
	dumpSeq   int
	// local starts the servers, native or under callgrind.
	local *runner.Local
}

func (e *executor) cell(ctx context.Context, c costplan.Cell) cost.CellRun {
	cr := cellRun(c, cost.StatusOK, "")
	var short, long cost.Segment
	var allocs [2]float64
	var err error
	if sh, lo, al, ok := e.loadSaved(c); ok {
		short, long, allocs = sh, lo, al
	} else if c.Side == cost.SideClient {
		short, long, allocs, err = e.clientSide(ctx, c)
	} else {
		short, long, allocs, err = e.serverSide(ctx, c)
	}
	if err != nil {
		var nm *notMeasured
		if errors.As(err, &nm) {
			cr.Status = cost.StatusNotMeasured
		} else {
			cr.Status = cost.StatusFailed
		}
		cr.Error = err.Error()
		return cr
	}
	pc, err := cost.Marginal(short, long)
	if err != nil {
		cr.Status, cr.Error = cost.StatusFailed, err.Error()
		return cr
	}
	cr.PerCall = pc
	cr.PerRun = cost.PerRunLayers(short, long)
	cr.Allocs = (allocs[1] - allocs[0]) / float64(long.Calls-short.Calls)
	cr.GCCycles = [2]float64{short.GCCycles, long.GCCycles}
	cr.LiveHeap = long.LiveHeap
	cr.WarmupCalls = [2]int64{short.Calls - c.Calls.Short, long.Calls - c.Calls.Long}
	return cr
}

// notMeasured is a cell that cannot be measured here (a missing program), not a
// failed measurement.
type notMeasured struct{ why string }

func (n *notMeasured) Error() string { return n.why }

func round(v float64, digits int) float64 {
	p := 1.0
	for i := 0; i < digits; i++ {
		p *= 10
	}
	return float64(int64(v*p+0.5)) / p
}
