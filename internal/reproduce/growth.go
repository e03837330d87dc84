package reproduce

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rpcbed/rpcbed/internal/matrix"
	"github.com/rpcbed/rpcbed/internal/runner"

	"github.com/rpcbed/rpcbed/internal/plan"

	"github.com/rpcbed/rpcbed/internal/results"
)

// growthPath is one path ab drives: a front and the protocol it uses to reach
// go-server, and the front's environment beyond the published set-up.
type growthPath struct {
	name, front, proto string
	env                []string
	published          bool // a path of the published write-up
}

// variantSizes are the sizes a variant runs at: OPcache at the smallest,
// middle and largest published size; the pure-PHP runtime at the smallest and
// middle only (at 2000 items and more it outlasts the front's 10 s deadline under
// -c 200 on one core). Both keep make reproduce within its 10 minutes.
func variantSizes(p growthPath, items []int) []int {
	if p.published || len(items) <= 3 {
		return items
	}
	if p.name == "php-pure-grpc" {
		return []int{items[0], items[len(items)/2]}
	}
	return []int{items[0], items[len(items)/2], items[len(items)-1]}
}

// growthPaths: the three published paths (php -S, default ini, as published),
// then the variants measured beside them: the pure-PHP protobuf runtime (the
// message-object cost) and OPcache on (production).
var growthPaths = []growthPath{
	{name: "go-grpc", front: "go", proto: "grpc", published: true},
	{name: "php-grpc", front: "php", proto: "grpc", published: true},
	{name: "php-http", front: "php", proto: "http", published: true},
	{name: "php-pure-grpc", front: "php", proto: "grpc", env: []string{"RPCBED_FRONT_RUNTIME=pure"}},
	{name: "php-grpc-opcache", front: "php", proto: "grpc", env: []string{matrix.FrontOpcache}},
}

// growth is php-go-growth: `ab -c 200 -n 200 -k` against the Go and PHP fronts,
// items 2..5000, ab's mean time per request.
type growth struct {
	pub     map[gKey]float64 // published mean ms
	bytes   map[gKey]string  // published document bytes
	items   []int
	abN     int
	repeats int
	ms      map[gKey][]float64 // ab's mean time per request per burst
	size    map[string]map[int]int64
	front   map[gKey]int64
	conns   map[string]connTally // per PHP path: the front's channel tally
	failed  failures
}

type gKey struct {
	path  string
	items int
}

// connTally counts what the front's X-Rpcbed-Conn and X-Rpcbed-Pid headers said
// over a probe of requests: channels created (new) and reused, and the workers.
type connTally struct {
	requests, created, reused int
	workers                   int
}

// The rules of php-go-growth.
var (
	// PHP's message-object cost: the share of PHP-over-gRPC's gap to Go (pure-PHP
	// runtime) that the protobuf C extension closes at the largest size. "Most"
	// of the gap is yes (50 % or more), a fifth or more partly.
	ruleMessageObjects = Band{Yes: [2]float64{50, 150}, Partly: [2]float64{20, 150}, Unit: "%", Differs: at(0)}
)

func (e *growth) read(published string) error {
	rows, err := readCSV(filepath.Join(published, "php-go-growth_latency.csv"))
	if err != nil {
		return err
	}
	e.pub, e.bytes = map[gKey]float64{}, map[gKey]string{}
	for _, r := range rows {
		n, err1 := strconv.Atoi(r["items"])
		v, err2 := strconv.ParseFloat(r["mean_ms"], 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("php-go-growth_latency.csv: row %v: want integer items and a mean_ms", r)
		}
		e.pub[gKey{r["path"], n}], e.bytes[gKey{r["path"], n}] = v, r["document_bytes"]
		if !containsInt(e.items, n) {
			e.items = append(e.items, n)
		}
	}
	for _, n := range e.items {
		for _, p := range growthPaths {
			if _, ok := e.pub[gKey{p.name, n}]; p.published && !ok {
				return fmt.Errorf("php-go-growth_latency.csv: no %s at %d items", p.name, n)
			}
		}
	}
	return nil
}

func (e *growth) run(ctx context.Context, o Options) error {
	e.abN, e.repeats = 200, 3
	if o.Quick {
		e.abN, e.repeats, e.items = 20, 2, e.items[:2]
	}
	srv, err := matrix.StartServerProc(ctx, o.Runner, "go-server", matrix.ServerProcConfig{
		Programs: o.Programs, Resources: plan.Resources{CPUSet: o.ServerCPUSet}, Store: "memory", Auth: true,
	})
	if err != nil {
		return err
	}
	defer srv.Svc.Stop(context.Background())
	b, stop := newRunPath(o)
	defer stop()

	// The backend message sizes, from one verified call per protocol and size.
	e.size = map[string]map[int]int64{"grpc": {}, "http": {}}
	for _, proto := range []string{"grpc", "http"} {
		for _, n := range e.items {
			m, err := once(ctx, b, nil, matrix.Job{Name: fmt.Sprintf("growth-size-%s-%d", proto, n), Client: "go", Timeout: time.Minute,
				Args: []string{"-proto", proto, "-call", "datalist", "-items", strconv.Itoa(n), "-c", "1", "-n", "1", "-k", "-addr", srv.Addrs[proto]}})
			if err != nil {
				return err
			}
			e.size[proto][n] = m.Report.DocumentLength
		}
	}
	e.ms, e.front, e.conns = map[gKey][]float64{}, map[gKey]int64{}, map[string]connTally{}
	for _, p := range growthPaths {
		if err := e.runPath(ctx, o, b, srv, p); err != nil {
			return err
		}
	}
	return nil
}

// runPath runs every size on one front: an untimed burst of 20, then the bursts;
// on a PHP front, a probe of its channel headers last.
func (e *growth) runPath(ctx context.Context, o Options, b *matrix.RunPath, srv *matrix.ServerProc, p growthPath) error {
	front, url, err := startFront(ctx, o, srv, p)
	if err != nil {
		return err
	}
	defer front.Stop(context.Background())
	for _, n := range variantSizes(p, e.items) {
		u := fmt.Sprintf("%s?n=%d", url, n)
		if p.front == "php" {
			u += "&proto=" + p.proto
		}
		if _, err := once(ctx, b, nil, abJob(o, fmt.Sprintf("growth-%s-%d-warmup", p.name, n), "-q", "-c", "10", "-n", "20", "-k", u)); err != nil {
			return err
		}
		for r := 1; r <= e.repeats; r++ {
			name := fmt.Sprintf("growth-%s-%d-r%d", p.name, n, r)
			fmt.Fprintf(o.Log, "  %s\n", name)
			m, err := once(ctx, b, nil, abJob(o, name, "-c", strconv.Itoa(e.abN), "-n", strconv.Itoa(e.abN), "-k", u))
			if err == nil && (m.Report.Failed > 0 || m.Report.Non2xx > 0) {
				err = fmt.Errorf("%s: %d failed, %d non-2xx of %d (raw/%s.txt)", name, m.Report.Failed, m.Report.Non2xx, m.Report.Complete, name)
			}
			if err != nil {
				if err := e.failed.keep(ctx, err); err != nil {
					return err
				}
				continue
			}
			k := gKey{p.name, n}
			e.ms[k] = append(e.ms[k], m.Report.TimePerRequestMs)
			e.front[k] = m.Report.DocumentLength
		}
	}
	if p.front == "php" {
		t, err := countConns(ctx, fmt.Sprintf("%s?n=%d&proto=%s", url, e.items[0], p.proto), 40, 8)
		if err != nil {
			return e.failed.keep(ctx, fmt.Errorf("%s: channel probe: %w", p.name, err))
		}
		e.conns[p.name] = t
	}
	return nil
}

// countConns makes n requests, c at a time, and tallies the front's
// X-Rpcbed-Conn (new: a channel created for this request; reused) and
// X-Rpcbed-Pid headers: the channel creations the front made per request.
func countConns(ctx context.Context, url string, n, c int) (connTally, error) {
	var mu sync.Mutex
	var t connTally
	pids := map[string]bool{}
	var firstErr error
	cl := &http.Client{Timeout: 30 * time.Second}
	jobs := make(chan struct{}, n)
	for range n {
		jobs <- struct{}{}
	}
	close(jobs)
	var wg sync.WaitGroup
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				resp, err := cl.Do(req)
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				t.requests++
				switch resp.Header.Get("X-Rpcbed-Conn") {
				case "new":
					t.created++
				case "reused":
					t.reused++
				}
				pids[resp.Header.Get("X-Rpcbed-Pid")] = true
				mu.Unlock()
				io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	t.workers = len(pids)
	if t.requests == 0 {
		return t, firstErr
	}
	return t, nil
}

func (e *growth) fig(path string, n int) Figure { return Fig(e.ms[gKey{path, n}]) }

func (e *growth) judge(o Options) results.Section {
	sec := results.Section{
		Setup: []string{
			"Published: one 6-core laptop, macOS; ab, the fronts and the Go server on it.",
			fmt.Sprintf("Here: go-server pinned to CPU %s; the fronts and ab share CPU %s. Real Apache Bench: `ab -c %d -n %d -k` against `go-client front` (Go front, gRPC to go-server) and php-client/bin/php-front (`php -S`, default ini, as published; PHP_CLI_SERVER_WORKERS=8; gRPC with the official extension and the protobuf C extension, or HTTP/JSON to go-server's net/http endpoint).",
				orAny(o.ServerCPUSet), orAny(o.ClientCPUSet), e.abN, e.abN),
			"Beside the published paths, two variants: php-pure-grpc (the pure-PHP protobuf runtime, RPCBED_FRONT_RUNTIME=pure: what building message objects costs in PHP) and php-grpc-opcache (OPcache on, as PHP runs in production). The verdicts use the published paths; the variants only measure the reasons (php-pure-grpc at " + strings.Trim(fmt.Sprint(variantSizes(growthPaths[3], e.items)), "[]") + " items, php-grpc-opcache at " + strings.Trim(fmt.Sprint(variantSizes(growthPaths[4], e.items)), "[]") + ").",
			fmt.Sprintf("Each figure: ab's mean Time per request (ms), median of %d bursts [their range] after one untimed burst of 20 requests. Sizes: the backend message (gRPC protobuf or HTTP JSON, from one go-client call) and the front's JSON (ab's Document Length). Channel creations: %d requests after the bursts, tallied from the PHP front's X-Rpcbed-Conn and X-Rpcbed-Pid headers.", e.repeats, 40),
		},
		Scaled: fmt.Sprintf("The published laptop had 6 cores for ab, the fronts and the server; here the server has one core and ab with the front the other, so every time per request is longer and the fronts compete with ab. Sizes, the %d-request bursts at -c %d and the three paths are as published.", e.abN, e.abN),
	}
	sec.Setup = append(sec.Setup, e.failed.setup()...)
	sec.Table = [][]string{{"items", "path", "published ms", "measured ms", "published / go-grpc", "measured / go-grpc", "published bytes", "measured backend bytes", "front JSON bytes"}}
	for _, n := range e.items {
		for _, p := range growthPaths {
			k := gKey{p.name, n}
			if !containsInt(variantSizes(p, e.items), n) {
				continue
			}
			pubMs, pubRatio, pubBytes := "-", "-", "-"
			if p.published {
				pubMs, pubRatio, pubBytes = strconv.FormatFloat(e.pub[k], 'f', -1, 64), ratio(e.pub[k], e.pub[gKey{"go-grpc", n}]), e.bytes[k]
			}
			proto := p.proto
			sec.Table = append(sec.Table, []string{strconv.Itoa(n), p.name, pubMs, e.fig(p.name, n).Show("", 1),
				pubRatio, Ratio(e.fig(p.name, n), e.fig("go-grpc", n)).Show("x", 2),
				pubBytes, strconv.FormatInt(e.size[proto][n], 10), strconv.FormatInt(e.front[k], 10)})
		}
	}
	sec.Findings = append(sec.Findings, e.judgeOrder(), e.judgeMessageObjects())
	return sec
}

// judgeOrder: php-grpc slowest at every size, php-http second, go-grpc fastest,
// each step beyond the bursts' spread.
func (e *growth) judgeOrder() results.Finding {
	f := results.Finding{Rule: "php-go-order", Claim: "PHP over gRPC is the slowest path at every size, PHP over HTTP second, Go over gRPC fastest",
		Published: "go-grpc < php-http < php-grpc at all 5 sizes", Tolerance: LevelsBand}
	var held, failed, unclear, missing int
	var per []string
	for _, n := range e.items {
		g, h, p := e.fig("go-grpc", n), e.fig("php-http", n), e.fig("php-grpc", n)
		a, b := Order(g, h), Order(h, p)
		state := "inside the spread"
		switch {
		case !g.Known || !h.Known || !p.Known:
			state = "not measured"
			missing++
		case a == 1 && b == 1:
			state = "held"
			held++
		case a == -1 || b == -1:
			state = "reversed"
			failed++
		default:
			unclear++
		}
		per = append(per, fmt.Sprintf("%d items %s (go-grpc %s, php-http %s, php-grpc %s ms)", n, state, g.Show("", 1), h.Show("", 1), p.Show("", 1)))
	}
	f.Holds = Levels(held, failed, unclear, missing)
	f.Measured = fmt.Sprintf("held at %d of %d sizes", held, len(e.items))
	f.Detail = strings.Join(per, "; ") + "."
	f.Reason = e.phpCosts(variantSizes(growthPaths[4], e.items)...)
	return f
}

// judgeMessageObjects: the write-up's own explanation, measured. Message
// objects cost per item, so the rule looks at how each path's time grows from
// the smallest size to the largest the pure-PHP runtime ran at (a fixed
// per-request cost cancels out): the share of php-pure-grpc's growth beyond
// go-grpc's that the protobuf C extension removes, bursts paired by index.
func (e *growth) judgeMessageObjects() results.Finding {
	sz := variantSizes(growthPaths[3], e.items)
	lo, hi := sz[0], sz[len(sz)-1]
	r := Rule{Name: "php-message-objects", Prec: 0, Band: ruleMessageObjects,
		Claim:     fmt.Sprintf("the PHP-over-gRPC gap is the cost of building PHP message objects (share of the pure-PHP runtime's extra time growth from %d to %d items that the protobuf C extension removes)", lo, hi),
		Published: "the write-up's explanation (no figure)"}
	grow := func(path string) []float64 {
		a, b := e.ms[gKey{path, lo}], e.ms[gKey{path, hi}]
		var v []float64
		for i := range min(len(a), len(b)) {
			v = append(v, b[i]-a[i])
		}
		return v
	}
	pure, c, g := grow("php-pure-grpc"), grow("php-grpc"), grow("go-grpc")
	var share []float64
	for i := range min(len(pure), len(c), len(g)) {
		if gap := pure[i] - g[i]; gap > 0 {
			share = append(share, (pure[i]-c[i])/gap*100)
		} else {
			share = append(share, 0)
		}
	}
	gr := func(v []float64) string { return Fig(v).Show("", 1) }
	return r.Verdict(Fig(share), fmt.Sprintf("Time growth from %d to %d items: php-pure-grpc %s ms, php-grpc (C extension) %s ms, go-grpc %s ms.", lo, hi,
		gr(pure), gr(c), gr(g)), e.phpCosts(lo, hi))
}

// phpCosts is the measured reason for PHP's times at the given sizes: the
// message-object cost (pure-PHP against C runtime, side by side), the
// production variant (OPcache), and channel creations (the front's headers).
func (e *growth) phpCosts(sizes ...int) string {
	var s []string
	for _, n := range sizes {
		p, c := e.fig("php-pure-grpc", n), e.fig("php-grpc", n)
		if p.Known && c.Known {
			s = append(s, fmt.Sprintf("%d items: pure-PHP protobuf %s ms, C extension %s ms (runtimes side by side: the message-object cost)", n, p.Show("", 1), c.Show("", 1)))
		}
		if oc, c := e.fig("php-grpc-opcache", n), e.fig("php-grpc", n); oc.Known && c.Known {
			s = append(s, fmt.Sprintf("OPcache on %s ms against php -S default ini %s ms", oc.Show("", 1), c.Show("", 1)))
		}
	}
	names := make([]string, 0, len(e.conns))
	for k := range e.conns {
		names = append(names, k)
	}
	sort.Strings(names)
	var ch []string
	for _, k := range names {
		t := e.conns[k]
		ch = append(ch, fmt.Sprintf("%s %d of %d", k, t.created, t.requests))
	}
	if len(ch) > 0 {
		s = append(s, "channels created per request (X-Rpcbed-Conn headers over "+strconv.Itoa(e.conns[names[0]].workers)+" php -S workers): "+strings.Join(ch, ", "))
	}
	if len(s) == 0 {
		return ""
	}
	return strings.Join(s, "; ") + "."
}

// startFront starts the Go or PHP front in front of go-server and returns the
// service and its /v1/datalist URL.
func startFront(ctx context.Context, o Options, srv *matrix.ServerProc, p growthPath) (runner.Service, string, error) {
	port, err := matrix.FreePort()
	if err != nil {
		return nil, "", err
	}
	listen := "127.0.0.1:" + strconv.Itoa(port)
	var prog matrix.Program
	if p.front == "go" {
		prog = o.Programs.GoFront("-listen", listen, "-proto", p.proto, "-addr", srv.Addrs[p.proto])
	} else {
		prog = o.Programs.PHPFront(append([]string{"LISTEN=" + listen, "PHP_CLI_SERVER_WORKERS=8",
			"RPCBED_GRPC_ADDR=" + srv.Addrs["grpc"], "RPCBED_HTTP_ADDR=" + srv.Addrs["http"], "RPCBED_THRIFT_ADDR=" + srv.Addrs["thrift"]}, p.env...)...)
	}
	svc, err := o.Runner.Start(ctx, runner.Task{
		Name: "front-" + p.name, Image: prog.Image, Args: prog.Args, Env: prog.Env,
		CPUSet: o.ClientCPUSet, Timeout: time.Minute, Ready: runner.HTTPCheck("http://" + listen + "/healthz"),
	})
	if err != nil {
		return nil, "", err
	}
	return svc, "http://" + listen + "/v1/datalist", nil
}

func containsInt(v []int, x int) bool {
	for _, y := range v {
		if y == x {
			return true
		}
	}
	return false
}
