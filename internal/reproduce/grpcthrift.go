package reproduce

import (
	"context"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/measure"
	"net"
	"time"

	"github.com/rpcbed/rpcbed/internal/analysis/claims"
	"github.com/rpcbed/rpcbed/internal/plan"
)

// grpcThrift is go-grpc-thrift-aerospike: the Go client against go-server, gRPC
// against Thrift, DataType through the store, at the published 50 and 800
// clients; claims.GRPCThrift reads its claims and judges it.
type grpcThrift struct {
	claims.GRPCThrift
	jobTimer
	// srv and b are kept for the precision loop's rounds; end stops them.
	srv *measure.ServerProc
	b   *measure.RunPath
	end []func()
}

func (e *grpcThrift) run(ctx context.Context, o Options) error {
	e.Store = "memory"
	switch {
	case o.AerospikeHosts != "":
		e.Store = "aerospike"
	case o.RedisAddr != "":
		if c, err := net.DialTimeout("tcp", o.RedisAddr, time.Second); err == nil {
			c.Close()
			e.Store = "redis"
		}
	}
	e.configure(o.Quick)
	cfg := measure.ServerProcConfig{
		Programs: o.Programs, Resources: plan.Resources{CPUSet: o.ServerCPUSet}, Store: e.Store,
		RedisAddr: o.RedisAddr, AerospikeHosts: o.AerospikeHosts, Auth: true,
	}
	r := o.Runner
	if o.Net != nil {
		refused, err := o.Net.Enter(ctx, o.Link)
		if err != nil {
			return err
		}
		if refused != "" {
			return fmt.Errorf("%s", refused)
		}
		o.Net.PlaceServer(&cfg, "go-server", "go")
		r = o.Net.Runner("go-server")
	}
	srv, err := measure.StartServerProc(ctx, r, "go-server", cfg)
	if err != nil {
		return err
	}
	b, stopWorkers := newRunPath(o)
	e.srv, e.b, e.end = srv, b, []func(){stopWorkers, func() { srv.Svc.Stop(context.Background()) }}
	e.Runs = map[claims.GTKey][]claims.Run{}
	return e.runJobs(ctx, o, grpcThriftJobs(e.GRPCThrift, o.Quick, srv.Addrs))
}

// runJobs runs jobs and files each run's figures under its key.
func (e *grpcThrift) runJobs(ctx context.Context, o Options, jobs []gtJob) error {
	for _, j := range jobs {
		fmt.Fprintf(o.Log, "  %s\n", j.Job.Name)
		m, err := e.jobTimer.run(ctx, e.b, e.srv, j.Job)
		if err != nil {
			if err := recordFailure(ctx, &e.Failed, err); err != nil {
				return err
			}
			continue
		}
		m.Round = j.Round
		e.Runs[j.Key] = append(e.Runs[j.Key], m)
	}
	return nil
}

func (e *grpcThrift) setLooks(n int) float64 {
	e.Looks = n
	return e.Confidence()
}

func (e *grpcThrift) undecided() []claims.Need { return e.Undecided() }

// addRound is one paired round at level c: each protocol once, in order.
func (e *grpcThrift) addRound(ctx context.Context, o Options, c int, protos []string, n int) error {
	logRound(o, "go-grpc-thrift-aerospike", c, protos, n)
	var jobs []gtJob
	for _, p := range protos {
		jobs = append(jobs, gtRoundJob(e.GRPCThrift, p, c, e.Repeats+n, o.Quick, e.srv.Addrs))
	}
	return e.runJobs(ctx, o, jobs)
}

func (e *grpcThrift) stop() {
	for _, f := range e.end {
		f()
	}
	e.end = nil
}
