package costrun

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/cost"
	"github.com/rpcbed/rpcbed/internal/cost/costplan"
	"github.com/rpcbed/rpcbed/internal/runner"
	"github.com/rpcbed/rpcbed/internal/tlsbed"
)

// proc is a server the cost run started (runner.Local): its addresses and,
// under callgrind, its --callgrind-out-file.
type proc struct {
	svc   runner.LocalProcess
	addrs map[string]string
	file  string
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
		if err := callgrindControl(ctx, "-z", srv.svc.PID()); err != nil {
			return short, long, allocs, err
		}
		before, err := readIO(srv.svc.PID())
		if err != nil {
			return short, long, allocs, err
		}
		rep, err := runClient(ctx, e.wrap(e.o.ClientCPU, false, argv), env, dir, n, clientTimeout(c, n))
		if err != nil {
			return short, long, allocs, err
		}
		after, err := readIO(srv.svc.PID())
		if err != nil {
			return short, long, allocs, err
		}
		// The dump is written after the second reading: its bytes are not the wire's.
		if err := callgrindControl(ctx, "-d", srv.svc.PID()); err != nil {
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
		seg, profiles, err := e.runSegment(dir, n, rep)
		if err != nil {
			return short, long, allocs, err
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
// matrix's flags (memory store, auth on), or the Java baseline for ice (over
// IceSSL for java@tls).
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

// serverKind is the server a cell needs: go, java, go@tls or java@tls (serving
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
	case <-p.svc.Exited():
		r, _ := p.svc.Stop(context.Background())
		return fmt.Errorf("the server exited: %s", lastProgramLine(string(r.Stdout)+string(r.Stderr)))
	default:
		return nil
	}
}

func (e *executor) startServer(ctx context.Context, kind string, underCallgrind bool) (*proc, error) {
	p := &proc{addrs: map[string]string{}}
	var argv, env, listens []string
	switch kind {
	case "go", "go@tls":
		free, err := runner.FreePorts(3)
		if err != nil {
			return nil, err
		}
		for i, proto := range []string{"grpc", "thrift", "http"} {
			p.addrs[proto] = "127.0.0.1:" + strconv.Itoa(free[i])
			listens = append(listens, p.addrs[proto])
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
	case "java", "java@tls":
		jar := filepath.Join(e.o.Root, "java-client", "target", "java-client.jar")
		if _, err := os.Stat(jar); err != nil {
			return nil, &notMeasured{"java-client/target/java-client.jar not built (make setup-java)"}
		}
		free, err := runner.FreePorts(1)
		if err != nil {
			return nil, err
		}
		port := strconv.Itoa(free[0])
		p.addrs["ice"] = "127.0.0.1:" + port
		listens = []string{p.addrs["ice"]}
		argv = []string{"java", "-jar", jar, "serve", "-proto", "ice", "-port", port, "-auth=true"}
		if kind == "java@tls" {
			if e.o.certs == nil {
				return nil, errors.New("a TLS server without the run's certificates")
			}
			// IceSSL only: php-ice's TLS cells (its server side is not measured).
			argv = append(argv, "-tls-cert", e.o.certs.ServerCert, "-tls-key", e.o.certs.ServerKey)
		}
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
	// taskset, setarch and valgrind exec or become the program: the pid stays.
	if e.local == nil {
		e.local = &runner.Local{}
	}
	svc, err := e.local.Start(ctx, runner.Task{Name: kind + " server", Args: e.wrap(e.o.ServerCPU, underCallgrind, argv), Env: env,
		Timeout: wait, Ready: runner.TCPCheck(listens...)})
	if err != nil {
		return nil, err
	}
	p.svc = svc.(runner.LocalProcess)
	return p, nil
}

func (p *proc) stop() {
	if p != nil && p.svc != nil {
		_, _ = p.svc.Stop(context.Background())
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
