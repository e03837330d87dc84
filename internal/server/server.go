// Package server puts the service core on the wire: gRPC, Thrift and HTTP/JSON
// listeners in one process, each a thin adapter over internal/service.
package server

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"

	"github.com/rpcbed/rpcbed/internal/gen/pb"
	"github.com/rpcbed/rpcbed/internal/service"
)

// Limits on outside input (README: Limits); requests are tiny, so these are
// generous. Connection limits are in listen.go, Thrift's frame limit in thrift.go.
const (
	// MaxGRPCRecv bounds a gRPC request message.
	MaxGRPCRecv = 1 << 20
	// MaxHeaderBytes bounds HTTP request headers and a gRPC header list (grpc-go's
	// default is 16 MiB: 100 connections holding HEADERS+CONTINUATION took 2.2 GB).
	MaxHeaderBytes = 64 << 10
	// ReadHeaderTimeout bounds the time an HTTP request's headers may take, and a
	// gRPC connection's set-up.
	ReadHeaderTimeout = 5 * time.Second
)

// Config is one go-server process. An empty address disables that listener.
type Config struct {
	GRPCAddr, ThriftAddr, HTTPAddr string
	ThriftTransport                string        // framed|buffered
	ThriftProtocol                 string        // binary|compact
	Pprof                          bool          // serve /debug/pprof on the HTTP listener
	StoreKind                      string        // for /stats
	CheckAuth                      bool          // for /stats
	ReadHeaderTimeout              time.Duration // default ReadHeaderTimeout
	IdleTimeout                    time.Duration // default IdleTimeout
	KeepaliveTime                  time.Duration // default KeepaliveTime (grpc-go's minimum is 1 s)
	KeepaliveTimeout               time.Duration // default KeepaliveTimeout
	StallTimeout                   time.Duration // default StallTimeout
	AnswerBudget                   int64         // bytes; default AnswerBudget
	ConnAnswerBudget               int64         // bytes; default ConnAnswerBudget
	// TLS, when set, makes every listener serve TLS only (tls.go states each
	// listener's ALPN); a handshake must end within ReadHeaderTimeout.
	TLS *tls.Config
	Log *log.Logger
}

// Server is a running go-server.
type Server struct {
	cfg      Config
	svc      *service.Service
	started  time.Time
	versions map[string]string
	answers  *answers
	tlsCount tlsCounters

	grpc   *grpc.Server
	thrift *thrift.TSimpleServer
	http   *http.Server

	// Addresses actually bound (useful with port 0); nil when disabled.
	GRPCAddr, ThriftAddr, HTTPAddr net.Addr

	wg   sync.WaitGroup
	errs chan error
}

// Start binds every configured listener and serves in the background.
func Start(cfg Config, svc *service.Service) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = log.New(log.Writer(), "go-server: ", log.LstdFlags)
	}
	if cfg.ReadHeaderTimeout <= 0 {
		cfg.ReadHeaderTimeout = ReadHeaderTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = IdleTimeout
	}
	if cfg.KeepaliveTime <= 0 {
		cfg.KeepaliveTime = KeepaliveTime
	}
	if cfg.KeepaliveTimeout <= 0 {
		cfg.KeepaliveTimeout = KeepaliveTimeout
	}
	if cfg.StallTimeout <= 0 {
		cfg.StallTimeout = StallTimeout
	}
	if cfg.AnswerBudget <= 0 {
		cfg.AnswerBudget = AnswerBudget
	}
	if cfg.ConnAnswerBudget <= 0 {
		cfg.ConnAnswerBudget = ConnAnswerBudget
	}
	s := &Server{cfg: cfg, svc: svc, started: time.Now(), versions: Versions(), errs: make(chan error, 3),
		answers: newAnswers(cfg.AnswerBudget, cfg.ConnAnswerBudget)}
	for _, l := range []struct {
		addr  string
		start func() error
	}{{cfg.GRPCAddr, s.startGRPC}, {cfg.ThriftAddr, s.startThrift}, {cfg.HTTPAddr, s.startHTTP}} {
		if l.addr == "" {
			continue
		}
		if err := l.start(); err != nil {
			s.Close() // the listeners already bound
			return nil, err
		}
	}
	return s, nil
}

func (s *Server) serve(name string, f func() error) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := f(); err != nil {
			s.errs <- fmt.Errorf("%s: %w", name, err)
		}
	}()
}

// Err delivers the first listener that stopped serving on its own.
func (s *Server) Err() <-chan error { return s.errs }

func (s *Server) startGRPC() error {
	ln, err := net.Listen("tcp", s.cfg.GRPCAddr)
	if err != nil {
		return fmt.Errorf("grpc listen %s: %w", s.cfg.GRPCAddr, err)
	}
	s.GRPCAddr = ln.Addr()
	conns := newConnBudgets(s.answers, s.cfg.StallTimeout)
	pending := &pendingAnswers{}
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(MaxGRPCRecv),
		grpc.MaxHeaderListSize(MaxHeaderBytes),
		// Connection set-up (preface and settings) gets what an HTTP request's
		// headers get; grpc-go's default is 120 s.
		grpc.ConnectionTimeout(s.cfg.ReadHeaderTimeout),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionIdle: s.cfg.IdleTimeout, Time: s.cfg.KeepaliveTime, Timeout: s.cfg.KeepaliveTimeout,
		}),
		// A client may ping every 10 s, idle or not; more often is a flood (GOAWAY).
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		grpc.ForceServerCodecV2(newUTF8Codec(pending)),
	}
	if cfg := s.tlsConfig("grpc"); cfg != nil {
		// The handshake runs in grpc-go's transport, within ConnectionTimeout.
		opts = append(opts, grpc.Creds(lingerCreds{credentials.NewTLS(cfg)}))
	}
	s.grpc = grpc.NewServer(opts...)
	pb.RegisterDataServer(s.grpc, newGRPCData(s.svc, s.answers, conns, pending))
	hs := health.NewServer()
	healthpb.RegisterHealthServer(s.grpc, hs)
	reflection.Register(s.grpc)
	watchDone := make(chan struct{})
	go conns.watch(min(time.Second, s.cfg.StallTimeout/4), watchDone)
	s.serve("grpc", func() error {
		defer close(watchDone)
		lis := stallListener{Listener: newRetryListener(ln, "grpc", s.cfg.Log), stall: s.cfg.StallTimeout, cuts: &s.answers.cuts, accepted: conns.add}
		if err := s.grpc.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			return err
		}
		return nil
	})
	return nil
}

func (s *Server) startThrift() error {
	conf := ThriftServerConfig()
	conf.SocketTimeout = s.cfg.IdleTimeout
	tf, pf, err := ThriftFactories(s.cfg.ThriftTransport, s.cfg.ThriftProtocol, conf)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.cfg.ThriftAddr)
	if err != nil {
		return fmt.Errorf("thrift listen %s: %w", s.cfg.ThriftAddr, err)
	}
	s.ThriftAddr = ln.Addr()
	framed := s.cfg.ThriftTransport != "buffered"
	sock := &thriftListener{ln: newRetryListener(ln, "thrift", s.cfg.Log), conf: conf, stall: s.cfg.StallTimeout, cuts: &s.answers.cuts, framed: framed,
		tls: s.tlsConfig("thrift"), handshake: s.cfg.ReadHeaderTimeout}
	procs := thriftProcessors{newThriftData(s.svc, s.answers, s.cfg.ThriftProtocol)}
	s.thrift = thrift.NewTSimpleServerFactory4(procs, sock, thriftTransports{lib: tf, framed: framed}, pf)
	// AcceptLoop, not Serve: Serve drops the loop's error, so a listener that
	// stopped accepting would look healthy (issue 18 #1).
	s.thrift.SetLogContext(context.Background())
	s.serve("thrift", s.thrift.AcceptLoop)
	return nil
}

func (s *Server) startHTTP() error {
	ln, err := net.Listen("tcp", s.cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("http listen %s: %w", s.cfg.HTTPAddr, err)
	}
	s.HTTPAddr = ln.Addr()
	s.http = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ErrorLog:          s.cfg.Log,
	}
	var lis net.Listener = stallListener{Listener: newRetryListener(ln, "http", s.cfg.Log), stall: s.cfg.StallTimeout, cuts: &s.answers.cuts}
	if cfg := s.tlsConfig("http"); cfg != nil {
		// The handshake runs on the connection's first read, within
		// ReadHeaderTimeout (tlsListener: net/http sees a plain connection, so a
		// failed handshake can end with lingerClose); ALPN offers http/1.1 only.
		lis = tlsListener{Listener: lis, cfg: cfg, timeout: s.cfg.ReadHeaderTimeout}
	}
	s.serve("http", func() error {
		if err := s.http.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	return nil
}

// Handler is the HTTP listener's routes.
func (s *Server) Handler() http.Handler {
	h := newHTTPData(s.svc, s.answers)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/datatype", h.dataType)
	mux.HandleFunc("GET /v1/datalist", h.dataList)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(s.stats())
	})
	if s.cfg.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no route %s %s", r.Method, r.URL.Path))
	})
	return mux
}

// Shutdown stops accepting, lets in-flight calls finish until ctx ends, then
// closes whatever is left.
func (s *Server) Shutdown(ctx context.Context) error {
	var (
		wg              sync.WaitGroup
		httpErr, thrErr error
	)
	if s.grpc != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done := make(chan struct{})
			go func() { s.grpc.GracefulStop(); close(done) }()
			select {
			case <-done:
			case <-ctx.Done():
				s.grpc.Stop()
			}
		}()
	}
	if s.http != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.http.Shutdown(ctx); err != nil {
				s.http.Close()
				httpErr = fmt.Errorf("http: %w", err)
			}
		}()
	}
	if s.thrift != nil {
		// TSimpleServer.Stop closes the listener and waits for open connections
		// (bounded by thrift.ServerStopTimeout, set by go-server).
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.thrift.Stop(); err != nil {
				thrErr = fmt.Errorf("thrift: %w", err)
			}
		}()
	}
	wg.Wait()
	s.wg.Wait()
	return errors.Join(httpErr, thrErr)
}

// Close stops everything at once.
func (s *Server) Close() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.Shutdown(ctx)
}
