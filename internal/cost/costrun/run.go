// Package costrun is the cost engine: it runs every cell of a plan under
// valgrind's callgrind, a short and a long run per side, against a native peer,
// and records cost.json (Run). It never prints a table: costrender does.
package costrun

import (
	"github.com/rpcbed/rpcbed/internal/runner"
	"github.com/rpcbed/rpcbed/internal/tlsbed"

	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rpcbed/rpcbed/internal/cost"
	"github.com/rpcbed/rpcbed/internal/cost/costplan"
	"github.com/rpcbed/rpcbed/internal/report"
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

// ValgrindArgs are callgrind's options for every measured process (CodSpeed's
// instrumentation set, without --instr-atstart=no: rpcbed's marginal method
// needs no client request in the measured program).
func ValgrindArgs() []string {
	return []string{"--tool=callgrind", "--cache-sim=yes",
		"--I1=" + cost.Geometry.I1, "--D1=" + cost.Geometry.D1, "--LL=" + cost.Geometry.LL,
		"--collect-systime=nsec", "--trace-children=yes",
		// One file per thread, so the time-driven threads can be told apart (TimeDriven).
		"--separate-threads=yes"}
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
	if c.Client == "php-pure" {
		per *= 30
	}
	return float64(c.Calls.Short+c.Calls.Long)*per + 2*5
}

// valgrindCPU is the CPU the cell's process under callgrind runs on.
func (e *executor) valgrindCPU(c costplan.Cell) string {
	if c.Side == cost.SideServer {
		return e.o.ServerCPU
	}
	return e.o.ClientCPU
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
}

type proc struct {
	cmd   *exec.Cmd
	addrs map[string]string
	out   *bytes.Buffer
	pid   int
	done  chan struct{}
	file  string // callgrind's --callgrind-out-file (under callgrind)
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

// clientSide runs the client under callgrind twice against a native server.
func (e *executor) clientSide(ctx context.Context, c costplan.Cell) (short, long cost.Segment, allocs [2]float64, err error) {
	srv, err := e.nativeServer(ctx, serverKind(c))
	if err != nil {
		return short, long, allocs, err
	}
	addr, done, err := e.delayed(srv.addrs[c.Protocol], false)
	if err != nil {
		return short, long, allocs, err
	}
	defer done()
	for i, n := range []int64{c.Calls.Short, c.Calls.Long} {
		dir := filepath.Join(e.o.Dir, "raw", cost.RawName(c.ID()), strconv.FormatInt(n, 10))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return short, long, allocs, err
		}
		removeProfiles(dir, "callgrind.") // an interrupted earlier attempt's files
		before, err := readIO(srv.pid)
		if err != nil {
			return short, long, allocs, err
		}
		argv, env, err := e.clientCommand(ctx, c, addr, n)
		if err != nil {
			return short, long, allocs, err
		}
		vg := append([]string{"valgrind"}, ValgrindArgs()...)
		vg = append(vg, "--callgrind-out-file="+filepath.Join(dir, "callgrind.%p.out"))
		full := e.wrap(e.o.ClientCPU, true, append(vg, argv...))
		rep, err := runClient(ctx, full, env, dir, n, clientTimeout(c, n))
		if err != nil {
			return short, long, allocs, err
		}
		after, err := readIO(srv.pid)
		if err != nil {
			return short, long, allocs, err
		}
		profiles, err := e.readProfiles(dir, "callgrind.")
		if err != nil {
			return short, long, allocs, err
		}
		seg := e.segment(n+warmupCalls(rep), profiles, dir)
		seg.Seconds = rep.TimeTakenSeconds
		if !e.o.KeepRaw {
			removeProfiles(dir, "callgrind.")
		}
		// The native server read what the client wrote, and wrote what it read.
		seg.BytesIn = after.wchar - before.wchar
		seg.BytesOut = after.rchar - before.rchar
		allocs[i] = cost.Allocations(measured(profiles))
		saveSegment(dir, n, seg, allocs[i])
		if i == 0 {
			short = seg
		} else {
			long = seg
		}
	}
	return short, long, allocs, nil
}

// serverSide runs a native client twice against go-server under callgrind,
// dumping callgrind's counters after each run (callgrind_control -d).
func (e *executor) serverSide(ctx context.Context, c costplan.Cell) (short, long cost.Segment, allocs [2]float64, err error) {
	if c.Server != "go" {
		return short, long, allocs, &notMeasured{c.Unmeasurable()}
	}
	srv, err := e.serverUnderCallgrind(ctx, serverKind(c))
	if err != nil {
		return short, long, allocs, err
	}
	addr, done, err := e.delayed(srv.addrs[c.Protocol], true)
	if err != nil {
		return short, long, allocs, err
	}
	defer done()
	// One unmeasured call first: go-server serves every server-side cell, and
	// the first call of a size on a protocol grows that transport's table of
	// converted items (service.Table). Inside the short run it made
	// go-grpc-datalist-5000-c1's short run do work its long run did not (24,296
	// allocations in 2 calls, 1,202 in 12) and its per-call figures low.
	if err := e.firstCall(ctx, c, addr); err != nil {
		return short, long, allocs, err
	}
	for i, n := range []int64{c.Calls.Short, c.Calls.Long} {
		dir := filepath.Join(e.o.Dir, "raw", cost.RawName(c.ID()), strconv.FormatInt(n, 10))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return short, long, allocs, err
		}
		removeProfiles(dir, "callgrind.") // an interrupted earlier attempt's files
		argv, env, err := e.clientCommand(ctx, c, addr, n)
		if err != nil {
			return short, long, allocs, err
		}
		// Every run starts from a finished collection, its counters zeroed after
		// it: go-server's heap (the generated items, the converted answers, the
		// store) is marked whole by every GC cycle, and without this the cycles
		// land in one run or the other by what ran before.
		heap0, err := serverHeap(ctx, srv.addrs["http"], true, e.serverCerts(c))
		if err != nil {
			return short, long, allocs, err
		}
		if err := callgrindControl(ctx, "-z", srv.pid); err != nil {
			return short, long, allocs, err
		}
		before, err := readIO(srv.pid)
		if err != nil {
			return short, long, allocs, err
		}
		rep, err := runClient(ctx, e.wrap(e.o.ClientCPU, false, argv), env, dir, n, clientTimeout(c, n))
		if err != nil {
			return short, long, allocs, err
		}
		after, err := readIO(srv.pid)
		if err != nil {
			return short, long, allocs, err
		}
		// The dump is written after the second reading: its bytes are not the wire's.
		if err := callgrindControl(ctx, "-d", srv.pid); err != nil {
			return short, long, allocs, err
		}
		e.dumpSeq++
		files, err := filepath.Glob(fmt.Sprintf("%s.%d-*", srv.file, e.dumpSeq))
		if err == nil && len(files) == 0 {
			err = fmt.Errorf("callgrind dump %d of the server: no file", e.dumpSeq)
		}
		if err != nil {
			return short, long, allocs, err
		}
		for _, f := range files {
			if err := os.Rename(f, filepath.Join(dir, "callgrind.server."+strings.TrimPrefix(filepath.Ext(f), "."))); err != nil {
				return short, long, allocs, err
			}
		}
		// The runtime's own counts over the window, read after the dump (the
		// reading's cost is not in it; its allocations are the same in both runs).
		heap1, err := serverHeap(ctx, srv.addrs["http"], false, e.serverCerts(c))
		if err != nil {
			return short, long, allocs, err
		}
		profiles, err := e.readProfiles(dir, "callgrind.")
		if err != nil {
			return short, long, allocs, err
		}
		seg := e.segment(n+warmupCalls(rep), profiles, dir)
		seg.Seconds = rep.TimeTakenSeconds
		if !e.o.KeepRaw {
			removeProfiles(dir, "callgrind.")
		}
		seg.BytesIn = after.rchar - before.rchar
		seg.BytesOut = after.wchar - before.wchar
		// Go's own count of its collections (MemStats.NumGC), not callgrind's
		// calls to gcMarkTermination: Go's stack switches make those unreliable.
		seg.GCCycles = heap1.numGC - heap0.numGC
		seg.HeapBytes = heap1.totalAlloc - heap0.totalAlloc
		seg.HeapObjects = heap1.mallocs - heap0.mallocs
		seg.LiveHeap = heap0.heapAlloc
		allocs[i] = cost.Allocations(measured(profiles))
		saveSegment(dir, n, seg, allocs[i])
		if i == 0 {
			short = seg
		} else {
			long = seg
		}
	}
	return short, long, allocs, nil
}

// firstCall makes one call of c from its native client, outside every
// measured window (its report and log in raw/CELL_SIDE/first).
func (e *executor) firstCall(ctx context.Context, c costplan.Cell, addr string) error {
	dir := filepath.Join(e.o.Dir, "raw", cost.RawName(c.ID()), "first")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	argv, env, err := e.clientCommand(ctx, c, addr, 1)
	if err != nil {
		return err
	}
	if _, err := runClient(ctx, e.wrap(e.o.ClientCPU, false, argv), env, dir, 1, clientTimeout(c, 1)); err != nil {
		return fmt.Errorf("the unmeasured first call: %w", err)
	}
	return nil
}

// warmupCalls are the calls a client made before its measured window with no
// warm-up asked for: php-client's caller calls until its parent's start command
// arrives, 0 to 3 of them in the runs measured (the report's "Warm-up: ..., N
// calls excluded"), as many as its timing allows. They are calls the measured
// side made or served like any other, so a run's calls are n plus these: counted
// as n alone, php-grpc-datalist-200-c1's server side served 62 DataList calls in
// one 60-call run and 61 in another, 2 % apart per call.
func warmupCalls(rep report.Report) int64 {
	if rep.Rpcbed == nil || rep.Rpcbed.WarmupCalls < 0 {
		return 0
	}
	return rep.Rpcbed.WarmupCalls
}

// delayed gives the address the native peer should use: addr itself, or a
// delayProxy's in front of it when the spec sets a read delay (toServer: the
// server side is measured, so the client's bytes are delayed).
func (e *executor) delayed(addr string, toServer bool) (string, func(), error) {
	d := e.o.Spec.ReadDelayDuration()
	if d <= 0 {
		return addr, func() {}, nil
	}
	p, err := startDelayProxy(addr, d, toServer)
	if err != nil {
		return "", nil, err
	}
	return p.addr(), p.close, nil
}

// segment sums a run's profiles and keeps what was summed in segment.json
// (each process's totals, the layers) beside the run's report.
// measured are the profiles a segment's figures count: neither the time-driven
// threads nor php-client's driver process.
func measured(profiles []*cost.Profile) []*cost.Profile {
	counted, _ := cost.SplitTimeDriven(profiles)
	counted, _ = cost.SplitDriver(counted)
	return counted
}

func (e *executor) segment(n int64, profiles []*cost.Profile, dir string) cost.Segment {
	counted, timed := cost.SplitTimeDriven(profiles)
	counted, driver := cost.SplitDriver(counted)
	seg := cost.Segment{Calls: n, Layers: e.layers.Split(counted)}
	type threadTotals struct {
		PID        int         `json:"pid"`
		Thread     int         `json:"thread"`
		Cmd        string      `json:"cmd"`
		Counts     cost.Counts `json:"counts"`
		Allocs     float64     `json:"allocs"`
		TimeDriven bool        `json:"time_driven,omitempty"`
		Driver     bool        `json:"driver,omitempty"`
	}
	var threads []threadTotals
	seg.Counts, seg.GC, seg.Bookkeeping = e.layers.Counted(counted)
	delete(seg.Layers, cost.LayerBookkeeping)
	for _, p := range counted {
		threads = append(threads, threadTotals{p.PID, p.Thread, p.Cmd, cost.CountsOf(p), cost.Allocations([]*cost.Profile{p}), false, false})
	}
	for _, p := range driver {
		// php-client's driver: bookkeeping, left out like Go's latency histogram.
		seg.Bookkeeping += float64(p.Event("Ir"))
		threads = append(threads, threadTotals{p.PID, p.Thread, p.Cmd, cost.CountsOf(p), cost.Allocations([]*cost.Profile{p}), false, true})
	}
	for _, p := range timed {
		seg.TimeDriven += float64(p.Event("Ir"))
		threads = append(threads, threadTotals{p.PID, p.Thread, p.Cmd, cost.CountsOf(p), cost.Allocations([]*cost.Profile{p}), true, false})
	}
	seg.Threads = threads
	seg.GCCycles = cost.GCCycles(counted)
	return seg
}

// savedSegment is segment.json: one run's sums, kept beside its report so a run
// can resume and a figure can be re-derived without the callgrind files.
type savedSegment struct {
	Version     int                `json:"version"`
	Calls       int64              `json:"calls"` // n and the warm-up calls
	WarmupCalls int64              `json:"warmup_calls"`
	Counts      cost.Counts        `json:"counts"`
	Layers      map[string]float64 `json:"layers"`
	TimeDriven  float64            `json:"time_driven_ir"`
	Bookkeeping float64            `json:"bookkeeping_ir"`
	GC          cost.Counts        `json:"gc"`
	BytesIn     float64            `json:"bytes_in"`
	BytesOut    float64            `json:"bytes_out"`
	Seconds     float64            `json:"seconds"`
	Allocs      float64            `json:"allocs"`
	GCCycles    float64            `json:"gc_cycles"`
	HeapBytes   float64            `json:"heap_bytes,omitempty"`
	HeapObjects float64            `json:"heap_objects,omitempty"`
	LiveHeap    float64            `json:"live_heap,omitempty"`
	Threads     any                `json:"threads"`
}

const segmentVersion = 5

func saveSegment(dir string, n int64, seg cost.Segment, allocs float64) {
	b, _ := json.MarshalIndent(savedSegment{segmentVersion, seg.Calls, seg.Calls - n, seg.Counts, seg.Layers, seg.TimeDriven, seg.Bookkeeping, seg.GC,
		seg.BytesIn, seg.BytesOut, seg.Seconds, allocs, seg.GCCycles, seg.HeapBytes, seg.HeapObjects, seg.LiveHeap, seg.Threads}, "", "  ")
	_ = os.WriteFile(filepath.Join(dir, "segment.json"), append(b, '\n'), 0o644)
}

// loadSaved gives a cell's two segments from an earlier, interrupted run of the
// same directory, when both were saved.
func (e *executor) loadSaved(c costplan.Cell) (short, long cost.Segment, allocs [2]float64, ok bool) {
	for i, n := range []int64{c.Calls.Short, c.Calls.Long} {
		b, err := os.ReadFile(filepath.Join(e.o.Dir, "raw", cost.RawName(c.ID()), strconv.FormatInt(n, 10), "segment.json"))
		if err != nil {
			return short, long, allocs, false
		}
		var sv savedSegment
		if json.Unmarshal(b, &sv) != nil || sv.Version != segmentVersion || sv.Calls-sv.WarmupCalls != n {
			return short, long, allocs, false
		}
		seg := cost.Segment{Calls: sv.Calls, Counts: sv.Counts, Layers: sv.Layers, TimeDriven: sv.TimeDriven, Bookkeeping: sv.Bookkeeping, GC: sv.GC,
			BytesIn: sv.BytesIn, BytesOut: sv.BytesOut, Seconds: sv.Seconds, GCCycles: sv.GCCycles,
			HeapBytes: sv.HeapBytes, HeapObjects: sv.HeapObjects, LiveHeap: sv.LiveHeap}
		allocs[i] = sv.Allocs
		if i == 0 {
			short = seg
		} else {
			long = seg
		}
	}
	return short, long, allocs, true
}

func removeProfiles(dir, prefix string) {
	ents, _ := os.ReadDir(dir)
	for _, de := range ents {
		if strings.HasPrefix(de.Name(), prefix) {
			_ = os.Remove(filepath.Join(dir, de.Name()))
		}
	}
}

// clientCommand is the client's command line for n calls, no warm-up (the
// short run's calls are the warm-up the marginal cost cancels), c=1.
func (e *executor) clientCommand(ctx context.Context, c costplan.Cell, addr string, n int64) (argv, env []string, err error) {
	args := []string{"-proto", c.Protocol, "-call", "datalist", "-items", strconv.Itoa(c.Items),
		"-c", "1", "-n", strconv.FormatInt(n, 10), "-conns", "1", "-timeout", "120s"}
	if c.Protocol == "http" {
		args = append(args, "-k")
	}
	args = append(args, "-addr", addr)
	if c.Security != "" {
		args = append(args, "-security", c.Security, "-cacert", e.o.certs.CA)
	}
	switch c.Client {
	case "go":
		bin := filepath.Join(e.o.Root, "bin", "go-client")
		if _, err := os.Stat(bin); err != nil {
			return nil, nil, &notMeasured{"bin/go-client not built (make build)"}
		}
		return append([]string{bin}, args...), e.o.goEnv(), nil
	case "php", "php-pure":
		script := filepath.Join(e.o.Root, "php-client", "bin", "client.php")
		if _, err := os.Stat(script); err != nil {
			return nil, nil, &notMeasured{"php-client/bin/client.php not found"}
		}
		if c.Client == "php-pure" {
			args = append([]string{"-runtime", "pure"}, args...)
		}
		// client.php restarts PHP with the protocol's extensions: that restart's
		// command line, asked of client.php's own code natively, is what runs
		// under callgrind (one PHP start-up under valgrind instead of two).
		host, err := e.phpHost(ctx, script, args)
		if err != nil {
			return nil, nil, err
		}
		return append(append(host, script), args...), []string{"RPCBED_PHP_CLIENT_HOST=1"}, nil
	}
	return nil, nil, &notMeasured{c.Client + "-" + c.Protocol + "'s client: rpcbed cost starts go and php callers only"}
}

// phpHost is the PHP command line client.php restarts itself with for args
// (Extensions::phpArgs).
func (e *executor) phpHost(ctx context.Context, script string, args []string) ([]string, error) {
	code := `require getenv('RPCBED_AUTOLOAD'); $cfg = Rpcbed\Client\Config::parse(array_slice($argv, 1)); echo json_encode([PHP_BINARY, ...Rpcbed\Client\Extensions::phpArgs($cfg)]);`
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "php", append([]string{"-n", "-r", code, "--"}, args...)...)
	cmd.Env = append(os.Environ(), "RPCBED_AUTOLOAD="+filepath.Join(filepath.Dir(filepath.Dir(script)), "autoload.php"))
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("php-client's command line: %v", err)
	}
	var argv []string
	if err := json.Unmarshal(out, &argv); err != nil || len(argv) < 2 {
		return nil, fmt.Errorf("php-client's command line: %q", out)
	}
	return argv, nil
}

func clientTimeout(c costplan.Cell, n int64) time.Duration {
	// Under callgrind a 5000-item pure-PHP call takes tens of seconds.
	return 10*time.Minute + time.Duration(n)*time.Second
}

// wrap pins argv to cpu (taskset) and, for a process under callgrind, turns
// address-space randomisation off (setarch -R), as CodSpeed does.
func (e *executor) wrap(cpu string, noASLR bool, argv []string) []string {
	if noASLR {
		if p, err := exec.LookPath("setarch"); err == nil {
			argv = append([]string{p, "-R"}, argv...)
		}
	}
	if cpu != "" {
		if p, err := exec.LookPath("taskset"); err == nil {
			argv = append([]string{p, "-c", cpu}, argv...)
		}
	}
	return argv
}

// runClient runs a client to its end, keeps its report and log in dir, and
// checks that it made exactly n calls, none failed.
func runClient(ctx context.Context, argv, env []string, dir string, n int64, timeout time.Duration) (report.Report, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	_ = os.WriteFile(filepath.Join(dir, "report.txt"), stdout.Bytes(), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "stderr.txt"), stderr.Bytes(), 0o644)
	if err != nil {
		return report.Report{}, fmt.Errorf("%s: %v: %s", filepath.Base(argv[0]), err, lastProgramLine(stderr.String()))
	}
	rep, err := report.Parse(bytes.NewReader(stdout.Bytes()))
	if err != nil {
		return rep, fmt.Errorf("client report: %v", err)
	}
	if rep.Complete != n || rep.Failed != 0 {
		return rep, fmt.Errorf("client made %d calls, %d failed: want %d, none failed", rep.Complete, rep.Failed, n)
	}
	return rep, nil
}

// lastProgramLine is the program's own last line of output under valgrind: the
// last non-empty line that is not valgrind's (==PID== and -- lines), cut at 300
// characters. runner.LastLine would return valgrind's summary instead.
func lastProgramLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l != "" && !strings.HasPrefix(l, "==") && !strings.HasPrefix(l, "--") {
			if len(l) > 300 {
				l = l[:300] + "..."
			}
			return l
		}
	}
	return "(no stderr)"
}

// readProfiles parses every callgrind file in dir whose name starts with prefix.
func (e *executor) readProfiles(dir, prefix string) ([]*cost.Profile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []*cost.Profile
	for _, de := range ents {
		if !strings.HasPrefix(de.Name(), prefix) {
			continue
		}
		if info, err := de.Info(); err == nil && info.Size() == 0 {
			continue // with --separate-threads=yes the file without a thread suffix stays empty
		}
		p, err := cost.ParseFile(filepath.Join(dir, de.Name()))
		if err != nil {
			return nil, err
		}
		if err := cost.CheckGeometry(p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no callgrind file", dir)
	}
	return out, nil
}

// heapStats are go-server's runtime.MemStats figures rpcbed reads around a
// server-side run.
type heapStats struct{ numGC, totalAlloc, mallocs, heapAlloc float64 }

// serverHeap reads go-server's runtime.MemStats through net/http/pprof's heap
// handler (go-server runs with -pprof on the server side; debug=1 prints the
// MemStats after the profile). With gc the handler first runs a whole
// collection and finishes its sweep (runtime.GC): every server-side run starts
// from one, so the figures read are the live heap's.
func serverHeap(ctx context.Context, httpAddr string, gc bool, certs *tlsbed.Files) (heapStats, error) {
	ctx, cancel := context.WithTimeout(ctx, 120*time.Second)
	defer cancel()
	q := "debug=1"
	what := "the server's heap figures after a run"
	if gc {
		q = "gc=1&debug=1"
		what = "the server's GC before a run"
	}
	scheme, client := "http", http.DefaultClient
	if certs != nil { // go-server serving TLS only: its pprof too
		cfg, err := tlsbed.Client{CACert: certs.CA}.Config("127.0.0.1")
		if err != nil {
			return heapStats{}, err
		}
		scheme, client = "https", &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
		defer client.CloseIdleConnections()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+httpAddr+"/debug/pprof/heap?"+q, nil)
	if err != nil {
		return heapStats{}, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return heapStats{}, fmt.Errorf("%s: %v", what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return heapStats{}, fmt.Errorf("%s: %s", what, resp.Status)
	}
	h, err := parseMemStats(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return heapStats{}, fmt.Errorf("%s: %v", what, err)
	}
	return h, nil
}

// parseMemStats reads the "# Name = value" lines of a debug=1 heap profile.
func parseMemStats(r io.Reader) (heapStats, error) {
	var h heapStats
	want := map[string]*float64{"NumGC": &h.numGC, "TotalAlloc": &h.totalAlloc, "Mallocs": &h.mallocs, "HeapAlloc": &h.heapAlloc}
	seen := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "# "), " = ")
		if p, hit := want[k]; ok && hit {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return h, fmt.Errorf("MemStats %s: %q", k, v)
			}
			*p = n
			seen++
		}
	}
	if err := sc.Err(); err != nil {
		return h, err
	}
	if seen < len(want) {
		return h, errors.New("no runtime.MemStats in the heap profile")
	}
	return h, nil
}

func callgrindControl(ctx context.Context, flag string, pid int) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "callgrind_control", flag, strconv.Itoa(pid)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "OK") {
		return fmt.Errorf("callgrind_control %s %d: %v: %s", flag, pid, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// ioCounts are /proc/PID/io's rchar and wchar: bytes read and written by
// read/write-family system calls (sockets included), before any page cache.
type ioCounts struct{ rchar, wchar float64 }

func readIO(pid int) (ioCounts, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		return ioCounts{}, fmt.Errorf("the server's byte counters: %v", err)
	}
	var c ioCounts
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
		switch k {
		case "rchar":
			c.rchar = n
		case "wchar":
			c.wchar = n
		}
	}
	return c, nil
}

// nativeServer starts (once) the native server of a kind: go-server with the
// matrix's flags (memory store, auth on), or the Java baseline for ice.
func (e *executor) nativeServer(ctx context.Context, kind string) (*proc, error) {
	if e.native == nil {
		e.native, e.failed = map[string]*proc{}, map[string]error{}
	}
	if p, ok := e.native[kind]; ok {
		if err := p.alive(); err != nil {
			return nil, err
		}
		return p, nil
	}
	if err, ok := e.failed[kind]; ok {
		return nil, err // the same error, not measured or failed, for every cell
	}
	p, err := e.startServer(ctx, kind, false)
	if err != nil {
		e.failed[kind] = err
		return nil, err
	}
	e.native[kind] = p
	return p, nil
}

// serverCerts are the run's certificates when c's server serves TLS, else nil.
func (e *executor) serverCerts(c costplan.Cell) *tlsbed.Files {
	if c.Security != "" {
		return e.o.certs
	}
	return nil
}

// serverKind is the server a cell needs: go, java, or go@tls (go-server serving
// TLS only).
func serverKind(c costplan.Cell) string {
	if c.Security != "" {
		return c.Server + "@" + c.Security
	}
	return c.Server
}

// serverUnderCallgrind starts (once per kind) go-server under callgrind; a
// cell of another kind (plaintext, TLS) stops the one running first: one
// process under callgrind at a time, its dumps numbered from 1.
func (e *executor) serverUnderCallgrind(ctx context.Context, kind string) (*proc, error) {
	if e.under != nil && e.underKind != kind {
		e.stopUnder()
	}
	if e.under != nil {
		if err := e.under.alive(); err != nil {
			return nil, err
		}
		return e.under, nil
	}
	if e.failed == nil {
		e.failed = map[string]error{}
	}
	if err, ok := e.failed["callgrind "+kind]; ok {
		return nil, err
	}
	p, err := e.startServer(ctx, kind, true)
	if err != nil {
		e.failed["callgrind "+kind] = err
		return nil, err
	}
	e.under, e.underKind, e.dumpSeq = p, kind, 0
	return p, nil
}

func (p *proc) alive() error {
	select {
	case <-p.done:
		return fmt.Errorf("the server exited: %s", lastProgramLine(p.out.String()))
	default:
		return nil
	}
}

func (e *executor) startServer(ctx context.Context, kind string, underCallgrind bool) (*proc, error) {
	p := &proc{addrs: map[string]string{}, out: &bytes.Buffer{}, done: make(chan struct{})}
	var argv, env []string
	var ports []string
	switch kind {
	case "go", "go@tls":
		free, err := freePorts(3)
		if err != nil {
			return nil, err
		}
		for i, proto := range []string{"grpc", "thrift", "http"} {
			p.addrs[proto] = "127.0.0.1:" + free[i]
			ports = append(ports, p.addrs[proto])
		}
		bin := filepath.Join(e.o.Root, "bin", "go-server")
		if _, err := os.Stat(bin); err != nil {
			return nil, &notMeasured{"bin/go-server not built (make build)"}
		}
		argv = []string{bin, "-grpc", p.addrs["grpc"], "-thrift", p.addrs["thrift"], "-http", p.addrs["http"], "-store", "memory", "-auth=true",
			// A client under callgrind takes seconds to send gRPC's preface or an HTTP head.
			"-setup-timeout", "120s"}
		if underCallgrind {
			// fullGC before each server-side run.
			argv = append(argv, "-pprof")
		}
		if kind == "go@tls" {
			if e.o.certs == nil {
				return nil, errors.New("a TLS server without the run's certificates")
			}
			// Every listener TLS only, -pprof's too: serverHeap reads it over TLS.
			argv = append(argv, "-tls-cert", e.o.certs.ServerCert, "-tls-key", e.o.certs.ServerKey)
		}
		env = e.o.goEnv()
	case "java":
		jar := filepath.Join(e.o.Root, "java-client", "target", "java-client.jar")
		if _, err := os.Stat(jar); err != nil {
			return nil, &notMeasured{"java-client/target/java-client.jar not built (make setup-java)"}
		}
		free, err := freePorts(1)
		if err != nil {
			return nil, err
		}
		port := free[0]
		p.addrs["ice"] = "127.0.0.1:" + port
		ports = []string{p.addrs["ice"]}
		argv = []string{"java", "-jar", jar, "serve", "-proto", "ice", "-port", port, "-auth=true"}
	default:
		return nil, fmt.Errorf("no server %q", kind)
	}
	wait := 30 * time.Second
	if underCallgrind {
		e.seq++
		dir := filepath.Join(e.o.Dir, "raw", "server")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		p.file = filepath.Join(dir, fmt.Sprintf("callgrind.go-server.%d.out", e.seq))
		vg := append([]string{"valgrind"}, ValgrindArgs()...)
		argv = append(append(vg, "--callgrind-out-file="+p.file), argv...)
		wait = 120 * time.Second
	}
	argv = e.wrap(e.o.ServerCPU, underCallgrind, argv)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// taskset, setarch and valgrind exec or become the program: the pid stays.
	p.cmd, p.pid = cmd, cmd.Process.Pid
	go func() { _ = cmd.Wait(); close(p.done) }()
	deadline := time.Now().Add(wait)
	for _, a := range ports {
		for {
			c, err := net.DialTimeout("tcp", a, time.Second)
			if err == nil {
				c.Close()
				break
			}
			if err := p.alive(); err != nil {
				return nil, fmt.Errorf("start %s server: %v", kind, err)
			}
			if time.Now().After(deadline) {
				p.stop()
				return nil, fmt.Errorf("start %s server: %s did not answer within %v", kind, a, wait)
			}
			select {
			case <-ctx.Done():
				p.stop()
				return nil, ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return p, nil
}

func (p *proc) stop() {
	if p == nil || p.cmd == nil || p.cmd.Process == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (e *executor) stopAll() {
	for k, p := range e.native {
		p.stop()
		delete(e.native, k)
	}
	e.stopUnder()
}

func (e *executor) stopUnder() {
	if e.under != nil {
		e.under.stop()
		if !e.o.KeepRaw {
			// The exit dump holds what ran between cells: not a figure.
			_ = os.Remove(e.under.file)
		}
		e.under = nil
	}
}

// freePorts is runner.FreePorts as strings.
func freePorts(n int) ([]string, error) {
	ports, err := runner.FreePorts(n)
	var s []string
	for _, p := range ports {
		s = append(s, strconv.Itoa(p))
	}
	return s, err
}

func round(v float64, digits int) float64 {
	p := 1.0
	for i := 0; i < digits; i++ {
		p *= 10
	}
	return float64(int64(v*p+0.5)) / p
}
