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
type grpcThrift struct{ claims.GRPCThrift }

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
	srv, err := measure.StartServerProc(ctx, o.Runner, "go-server", measure.ServerProcConfig{
		Programs: o.Programs, Resources: plan.Resources{CPUSet: o.ServerCPUSet}, Store: e.Store,
		RedisAddr: o.RedisAddr, AerospikeHosts: o.AerospikeHosts, Auth: true,
	})
	if err != nil {
		return err
	}
	defer srv.Svc.Stop(context.Background())
	b, stop := newRunPath(o)
	defer stop()
	e.Runs = map[claims.GTKey][]claims.Run{}
	for _, j := range grpcThriftJobs(e.GRPCThrift, o.Quick, srv.Addrs) {
		fmt.Fprintf(o.Log, "  %s\n", j.Job.Name)
		m, err := runJob(ctx, b, srv, j.Job)
		if err != nil {
			if err := recordFailure(ctx, &e.Failed, err); err != nil {
				return err
			}
			continue
		}
		e.Runs[j.Key] = append(e.Runs[j.Key], m)
	}
	return nil
}
