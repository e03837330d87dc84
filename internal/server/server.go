// Package server puts the service core on the wire: gRPC, Thrift and HTTP/JSON
// listeners in one process, each a thin adapter over internal/service.
package server

import (
	"context"
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
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/rpcbed/rpcbed/internal/gen/pb"
	"github.com/rpcbed/rpcbed/internal/gen/thriftgen"
	"github.com/rpcbed/rpcbed/internal/service"
)

// Limits on outside input; requests are tiny, so these are generous.
const (
	MaxGRPCRecv       = 1 << 20
	MaxHeaderBytes    = 64 << 10
	ReadHeaderTimeout = 5 * time.Second
	IdleTimeout       = 120 * time.Second
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
	Log                            *log.Logger
}

// Server is a running go-server.
type Server struct {
	cfg      Config
	svc      *service.Service
	started  time.Time
	versions map[string]string

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
	s := &Server{cfg: cfg, svc: svc, started: time.Now(), versions: Versions(), errs: make(chan error, 3)}
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
	s.grpc = grpc.NewServer(grpc.MaxRecvMsgSize(MaxGRPCRecv))
	pb.RegisterDataServer(s.grpc, newGRPCData(s.svc))
	hs := health.NewServer()
	healthpb.RegisterHealthServer(s.grpc, hs)
	reflection.Register(s.grpc)
	s.serve("grpc", func() error {
		if err := s.grpc.Serve(ln); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			return err
		}
		return nil
	})
	return nil
}

func (s *Server) startThrift() error {
	tf, pf, err := ThriftFactories(s.cfg.ThriftTransport, s.cfg.ThriftProtocol)
	if err != nil {
		return err
	}
	sock, err := thrift.NewTServerSocket(s.cfg.ThriftAddr)
	if err != nil {
		return fmt.Errorf("thrift listen %s: %w", s.cfg.ThriftAddr, err)
	}
	if err := sock.Listen(); err != nil {
		return fmt.Errorf("thrift listen %s: %w", s.cfg.ThriftAddr, err)
	}
	s.ThriftAddr = sock.Addr()
	s.thrift = thrift.NewTSimpleServer4(thriftgen.NewDataProcessor(newThriftData(s.svc)), sock, tf, pf)
	s.serve("thrift", s.thrift.Serve)
	return nil
}

func (s *Server) startHTTP() error {
	ln, err := net.Listen("tcp", s.cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("http listen %s: %w", s.cfg.HTTPAddr, err)
	}
	s.HTTPAddr = ln.Addr()
	rht := s.cfg.ReadHeaderTimeout
	if rht <= 0 {
		rht = ReadHeaderTimeout
	}
	s.http = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: rht,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ErrorLog:          s.cfg.Log,
	}
	s.serve("http", func() error {
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	return nil
}

// Handler is the HTTP listener's routes.
func (s *Server) Handler() http.Handler {
	h := newHTTPData(s.svc)
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
