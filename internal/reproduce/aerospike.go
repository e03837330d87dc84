package reproduce

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/rpcbed/rpcbed/internal/analysis/claims"
	"github.com/rpcbed/rpcbed/internal/matrix"
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
	e.Dur, e.Repeats = 3*time.Second, 3
	if o.Quick {
		e.Dur, e.Repeats = 300*time.Millisecond, 2
	}
	srv, err := matrix.StartServerProc(ctx, o.Runner, "go-server", matrix.ServerProcConfig{
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
	// Repeats interleave the protocols, so drift hits both alike.
	for r := 1; r <= e.Repeats; r++ {
		for _, c := range e.Levels {
			for _, proto := range []string{"grpc", "thrift"} {
				name := fmt.Sprintf("aerospike-go-%s-datatype-c%d-r%d", proto, c, r)
				fmt.Fprintf(o.Log, "  %s\n", name)
				args := []string{"-proto", proto, "-call", "datatype", "-c", strconv.Itoa(c), "-t", matrix.Seconds(e.Dur), "-addr", srv.Addrs[proto]}
				if !o.Quick {
					args = append(args, "-warmup", "auto", "-warmup-max", "2s")
				}
				m, err := once(ctx, b, srv, matrix.Job{Name: name, Client: "go", Args: args, Proto: proto, Call: "datatype",
					Worker: true, Timeout: e.Dur + 2*time.Minute})
				if err != nil {
					if err := keep(ctx, &e.Failed, err); err != nil {
						return err
					}
					continue
				}
				e.Runs[claims.GTKey{Proto: proto, C: c}] = append(e.Runs[claims.GTKey{Proto: proto, C: c}], m)
			}
		}
	}
	return nil
}
