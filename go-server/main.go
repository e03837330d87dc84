// go-server serves the rpcbed contract over gRPC, Thrift and HTTP/JSON from one
// process (docs/contract.md).
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/rpcbed/rpcbed/internal/auth"
	"github.com/rpcbed/rpcbed/internal/server"
	"github.com/rpcbed/rpcbed/internal/service"
	"github.com/rpcbed/rpcbed/internal/store"
	"github.com/rpcbed/rpcbed/internal/tlsbed"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr, nil))
}

// run is main with its arguments and a ready callback, so tests can drive it.
func run(args []string, stderr io.Writer, ready func(*server.Server)) int {
	fs := flag.NewFlagSet("go-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		grpcAddr     = fs.String("grpc", "127.0.0.1:50051", "gRPC listen address (empty disables)")
		thriftAddr   = fs.String("thrift", "127.0.0.1:9090", "Thrift listen address (empty disables)")
		httpAddr     = fs.String("http", "127.0.0.1:8080", "HTTP/JSON listen address, also /stats and /healthz (empty disables)")
		thriftTrans  = fs.String("thrift-transport", "framed", "Thrift transport: framed|buffered")
		thriftProto  = fs.String("thrift-protocol", "binary", "Thrift protocol: binary|compact")
		connCheck    = fs.Duration("thrift-conncheck", 0, "Thrift's per-call connectivity check interval (library default 5ms; 0 = off: handlers never block, and the check costs a goroutine and a ticker per call)")
		storeKind    = fs.String("store", "memory", "record store: memory|redis|aerospike")
		redisAddr    = fs.String("redis-addr", "127.0.0.1:6379", "Redis address for -store redis")
		asHosts      = fs.String("aerospike-hosts", "", "Aerospike seeds host:port[,host:port] for -store aerospike")
		asNamespace  = fs.String("aerospike-namespace", "test", "Aerospike namespace")
		checkAuth    = fs.Bool("auth", true, "reject forged or expired tokens (off: any token is accepted, a fresh one still returned)")
		secret       = fs.String("auth-secret", "", "HMAC secret for tokens (default: random at start; also $RPCBED_AUTH_SECRET)")
		tokenTTL     = fs.Duration("token-ttl", auth.DefaultTTL, "lifetime of issued tokens")
		pprofOn      = fs.Bool("pprof", false, "serve /debug/pprof on the HTTP listener")
		drainTimeout = fs.Duration("drain", 10*time.Second, "on SIGINT/SIGTERM, how long in-flight calls may take to finish")
		setupTimeout = fs.Duration("setup-timeout", server.ReadHeaderTimeout, "how long a gRPC connection's set-up (preface, settings) and an HTTP request's head may take (rpcbed cost raises it: a client under callgrind runs 50-100 times slower)")
		stall        = fs.Duration("stall-timeout", server.StallTimeout, "cut a connection whose answer write made no progress this long (the caller stopped reading)")
		budgetMB     = fs.Int64("answer-budget-mb", server.AnswerBudget>>20, "MiB of answers in flight in the whole server; a large answer is built only once it fits")
		connBudgetMB = fs.Int64("conn-answer-budget-mb", server.ConnAnswerBudget>>20, "MiB of answers in flight per connection (gRPC streams)")
		tlsCert      = fs.String("tls-cert", "", "serve TLS only, on every listener, with this certificate (PEM; with -tls-key)")
		tlsKey       = fs.String("tls-key", "", "the private key of -tls-cert (PEM)")
		tlsClientCA  = fs.String("tls-client-ca", "", "require a client certificate signed by this CA (PEM): mtls")
		tlsMin       = fs.String("tls-min", "1.3", "lowest TLS version accepted: 1.3 or 1.2")
	)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go-server [flags]\n\nServes rpcbed's Data service over gRPC, Thrift and HTTP/JSON.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "go-server: unexpected arguments %q\n", fs.Args())
		return 2
	}
	logger := log.New(stderr, "go-server: ", log.LstdFlags|log.Lmicroseconds)
	var tlsCfg *tls.Config
	if *tlsCert != "" || *tlsKey != "" || *tlsClientCA != "" {
		if *tlsCert == "" || *tlsKey == "" {
			fmt.Fprintln(stderr, "go-server: -tls-cert and -tls-key: give both")
			return 2
		}
		var err error
		if tlsCfg, err = tlsbed.ServerConfig(*tlsCert, *tlsKey, *tlsClientCA, *tlsMin); err != nil {
			fmt.Fprintf(stderr, "go-server: %v\n", err)
			return 2
		}
	}

	if *secret == "" {
		*secret = os.Getenv("RPCBED_AUTH_SECRET")
	}
	authority, err := auth.New([]byte(*secret), *tokenTTL)
	if err != nil {
		logger.Print(err)
		return 1
	}
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{Kind: *storeKind, RedisAddr: *redisAddr, AerospikeHosts: *asHosts, Namespace: *asNamespace})
	if err != nil {
		logger.Print(err)
		return 2
	}
	defer st.Close()

	thrift.ServerConnectivityCheckInterval = *connCheck
	thrift.ServerStopTimeout = *drainTimeout
	svc := service.New(service.Config{Store: st, Auth: authority, CheckAuth: *checkAuth})
	srv, err := server.Start(server.Config{
		GRPCAddr: *grpcAddr, ThriftAddr: *thriftAddr, HTTPAddr: *httpAddr,
		ThriftTransport: *thriftTrans, ThriftProtocol: *thriftProto,
		Pprof: *pprofOn, StoreKind: *storeKind, CheckAuth: *checkAuth, Log: logger, ReadHeaderTimeout: *setupTimeout,
		StallTimeout: *stall, AnswerBudget: *budgetMB << 20, ConnAnswerBudget: *connBudgetMB << 20,
		TLS: tlsCfg,
	}, svc)
	if err != nil {
		logger.Print(err)
		return 1
	}
	for _, l := range []struct {
		name string
		addr net.Addr
	}{{"grpc", srv.GRPCAddr}, {"thrift", srv.ThriftAddr}, {"http", srv.HTTPAddr}} {
		if l.addr != nil {
			logger.Printf("listening proto=%s addr=%s", l.name, l.addr)
		}
	}
	logger.Printf("store=%s auth=%v thrift=%s/%s", *storeKind, *checkAuth, *thriftTrans, *thriftProto)
	if tlsCfg != nil {
		logger.Printf("tls: every listener, min %s, client certificates %s, ALPN grpc=h2 http=http/1.1 thrift=none",
			tlsbed.VersionName(tlsCfg.MinVersion), map[bool]string{true: "required", false: "not asked"}[tlsCfg.ClientCAs != nil])
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if ready != nil {
		ready(srv)
	}
	code := 0
	select {
	case sig := <-sigs:
		logger.Printf("%v: draining (up to %v)", sig, *drainTimeout)
	case err := <-srv.Err():
		logger.Print(err)
		code = 1
	}
	sctx, cancel := context.WithTimeout(context.Background(), *drainTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		logger.Printf("shutdown: %v", err)
	}
	logger.Print("stopped")
	return code
}
