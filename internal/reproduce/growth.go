package reproduce

import (
	"context"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/measure"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/rpcbed/rpcbed/internal/analysis/claims"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/runner"
)

// growthPath is one path ab drives: claims' path and its front's environment
// beyond the published set-up.
type growthPath struct {
	claims.GrowthPath
	env []string
}

// growthEnv is each variant's front environment: the pure-PHP protobuf
// runtime, and OPcache on.
var growthEnv = map[string][]string{
	"php-pure-grpc":    {"RPCBED_FRONT_RUNTIME=pure"},
	"php-grpc-opcache": {measure.FrontOpcache},
}

// growth is php-go-growth: `ab -c 200 -n 200 -k` against the Go and PHP fronts,
// items 2..5000, ab's mean time per request; claims.Growth reads its published
// figures and judges it.
type growth struct{ claims.Growth }

// stop: growth stops its servers and fronts as it goes (no added rounds).
func (e *growth) stop() {}

func (e *growth) run(ctx context.Context, o Options) error {
	e.configure(o.Quick)
	srv, err := measure.StartServerProc(ctx, o.Runner, "go-server", measure.ServerProcConfig{
		Programs: o.Programs, Resources: plan.Resources{CPUSet: o.ServerCPUSet}, Store: "memory", Auth: true,
	})
	if err != nil {
		return err
	}
	defer srv.Svc.Stop(context.Background())
	b, stop := newRunPath(o)
	defer stop()

	// The backend message sizes, from one verified call per protocol and size.
	e.Size = map[string]map[int]int64{"grpc": {}, "http": {}}
	for _, j := range growthSizeJobs(e.Items, srv.Addrs) {
		m, err := runJob(ctx, b, nil, j.Job)
		if err != nil {
			return err
		}
		e.Size[j.Proto][j.Items] = m.Report.DocumentLength
	}
	e.Ms, e.Rounds, e.Front, e.Conns = map[claims.GKey][]float64{}, map[claims.GKey][]int{}, map[claims.GKey]int64{}, map[string]claims.ConnTally{}
	urls, stopFronts, err := e.startFronts(ctx, o, b, srv)
	defer stopFronts()
	if err != nil {
		return err
	}
	for _, j := range growthRoundJobs(e.Growth, urls, o.Local) {
		if err := e.burst(ctx, o, b, j); err != nil {
			return err
		}
	}
	for _, p := range claims.GrowthPaths {
		if p.Front != "php" {
			continue
		}
		t, err := countConns(ctx, fmt.Sprintf("%s?n=%d&proto=%s", urls[p.Name], e.Items[0], p.Proto), 40, 8)
		if err != nil {
			if err := recordFailure(ctx, &e.Failed, fmt.Errorf("%s: channel probe: %w", p.Name, err)); err != nil {
				return err
			}
			continue
		}
		e.Conns[p.Name] = t
	}
	return nil
}

// startFronts starts every path's front, all up together for the rounds, and
// warms each at its sizes (an untimed burst of 20); it returns each path's
// url and what stops them all (call it on every path, error or not).
func (e *growth) startFronts(ctx context.Context, o Options, b *measure.RunPath, srv *measure.ServerProc) (map[string]string, func(), error) {
	urls := map[string]string{}
	var fronts []runner.Service
	stop := func() {
		for _, f := range fronts {
			f.Stop(context.Background())
		}
	}
	for _, p := range claims.GrowthPaths {
		front, url, err := startFront(ctx, o, srv, growthPath{p, growthEnv[p.Name]})
		if err != nil {
			return nil, stop, err
		}
		fronts = append(fronts, front)
		urls[p.Name] = url
		for _, j := range growthWarmupJobs(p, e.Items, url, o.Local) {
			if _, err := runJob(ctx, b, nil, j.Job); err != nil {
				return nil, stop, err
			}
		}
	}
	return urls, stop, nil
}

// burst runs one timed burst and files its time per request under its key
// and round; a failed burst (or one with failed or non-2xx requests) is
// recorded and left out.
func (e *growth) burst(ctx context.Context, o Options, b *measure.RunPath, j burstJob) error {
	name := j.Job.Name
	fmt.Fprintf(o.Log, "  %s\n", name)
	m, err := runJob(ctx, b, nil, j.Job)
	if err == nil && (m.Report.Failed > 0 || m.Report.Non2xx > 0) {
		err = fmt.Errorf("%s: %d failed, %d non-2xx of %d (raw/%s.txt)", name, m.Report.Failed, m.Report.Non2xx, m.Report.Complete, name)
	}
	if err != nil {
		return recordFailure(ctx, &e.Failed, err)
	}
	e.Ms[j.Key] = append(e.Ms[j.Key], m.Report.TimePerRequestMs)
	e.Rounds[j.Key] = append(e.Rounds[j.Key], j.Round)
	e.Front[j.Key] = m.Report.DocumentLength
	return nil
}

// countConns makes n requests, c at a time, and tallies the front's
// X-Rpcbed-Conn (new: a channel created for this request; reused) and
// X-Rpcbed-Pid headers: the channel creations the front made per request.
func countConns(ctx context.Context, url string, n, c int) (claims.ConnTally, error) {
	var mu sync.Mutex
	var t claims.ConnTally
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
				t.Requests++
				switch resp.Header.Get("X-Rpcbed-Conn") {
				case "new":
					t.Created++
				case "reused":
					t.Reused++
				}
				pids[resp.Header.Get("X-Rpcbed-Pid")] = true
				mu.Unlock()
				io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	t.Workers = len(pids)
	if t.Requests == 0 {
		return t, firstErr
	}
	return t, nil
}

// startFront starts the Go or PHP front in front of go-server and returns the
// service and its /v1/datalist URL.
func startFront(ctx context.Context, o Options, srv *measure.ServerProc, p growthPath) (runner.Service, string, error) {
	ports, err := runner.FreePorts(1)
	if err != nil {
		return nil, "", err
	}
	listen := "127.0.0.1:" + strconv.Itoa(ports[0])
	var prog measure.Program
	if p.Front == "go" {
		prog = o.Programs.GoFront("-listen", listen, "-proto", p.Proto, "-addr", srv.Addrs[p.Proto])
	} else {
		prog = o.Programs.PHPFront(append([]string{"LISTEN=" + listen, "PHP_CLI_SERVER_WORKERS=8",
			"RPCBED_GRPC_ADDR=" + srv.Addrs["grpc"], "RPCBED_HTTP_ADDR=" + srv.Addrs["http"], "RPCBED_THRIFT_ADDR=" + srv.Addrs["thrift"]}, p.env...)...)
	}
	svc, err := o.Runner.Start(ctx, runner.Task{
		Name: "front-" + p.Name, Image: prog.Image, Args: prog.Args, Env: prog.Env,
		CPUSet: o.ClientCPUSet, Timeout: time.Minute, Ready: runner.HTTPCheck("http://" + listen + "/healthz"),
	})
	if err != nil {
		return nil, "", err
	}
	return svc, "http://" + listen + "/v1/datalist", nil
}
