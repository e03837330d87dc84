// Package front is the Go HTTP front of the PHP-vs-Go write-up (`go-client
// front`): every GET /v1/datalist?n=N it receives becomes one DataList call to the
// server over gRPC, Thrift or HTTP, made with the load generator's client
// (load.DataListClient), and the answer goes back as go-server's JSON
// (service.DataListBody). php-client/front.php is its PHP counterpart.
package front

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/report"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rpcbed/rpcbed/internal/load"
	"github.com/rpcbed/rpcbed/internal/service"
)

// Front answers HTTP requests with DataList calls to one server.
type Front struct {
	proto   string
	timeout time.Duration
	client  load.DataListClient
	token   atomic.Pointer[string]
}

// New connects to the server. cfg needs Proto and Addr; Timeout, Conns (gRPC
// connections shared by all requests), ClientID and the Thrift settings take
// go-client's defaults when zero (load.NewDataListClient).
func New(ctx context.Context, cfg load.Config) (*Front, error) {
	if cfg.Timeout == 0 {
		cfg.Timeout = load.DefaultTimeout
	}
	c, err := load.NewDataListClient(ctx, cfg)
	if err != nil {
		return nil, err
	}
	f := &Front{proto: cfg.Proto, timeout: cfg.Timeout, client: c}
	empty := ""
	f.token.Store(&empty)
	return f, nil
}

// Close drops the connections to the server.
func (f *Front) Close() { f.client.Close() }

// Handler serves GET /v1/datalist and GET /healthz.
func (f *Front) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/datalist", f.serveDataList)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	// Without it the mux answers text/plain 404 and 405: every error is JSON, as
	// from go-server and the PHP front.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, 5, fmt.Sprintf("no route %s %s", r.Method, r.URL.Path))
	})
	return mux
}

func (f *Front) serveDataList(w http.ResponseWriter, r *http.Request) {
	q, err := url.ParseQuery(r.URL.RawQuery) // r.URL.Query() would drop a bad pair silently
	if err != nil {
		writeError(w, http.StatusBadRequest, 3, "bad query: "+err.Error())
		return
	}
	n, err := strconv.Atoi(q.Get("n"))
	if err != nil || n < 0 || n > service.MaxItems {
		writeError(w, http.StatusBadRequest, 3, fmt.Sprintf("n: want an integer in 0..%d", service.MaxItems))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), f.timeout)
	defer cancel()
	list, err := f.DataList(ctx, n)
	if err != nil {
		writeError(w, http.StatusBadGateway, 14, "upstream "+f.proto+": "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Token", list.Auth.Token)
	json.NewEncoder(w).Encode(list)
}

func writeError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg})
}

// DataList makes one call to the server, carrying the last token it gave, and
// returns its answer as go-server's JSON document.
func (f *Front) DataList(ctx context.Context, n int) (*service.DataListBody, error) {
	token, items, err := f.client.DataList(ctx, *f.token.Load(), n)
	if err != nil {
		return nil, err
	}
	if len(items) != n {
		return nil, fmt.Errorf("got %d items; want %d", len(items), n)
	}
	if token != "" {
		f.token.Store(&token)
	}
	return &service.DataListBody{Message: "ok", Auth: service.TokenBody{Token: token}, N: n, Items: items}, nil
}

// Serve runs the front on ln until ctx ends, then shuts down gracefully
// (in-flight requests get up to 10 s).
func Serve(ctx context.Context, ln net.Listener, f *Front) error {
	srv := httpServer(f.Handler())
	var wg sync.WaitGroup
	wg.Add(1)
	var shutErr error
	go func() {
		defer wg.Done()
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shutErr = srv.Shutdown(sctx)
	}()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		wg.Wait()
		return shutErr
	}
	return err
}

// httpServer is the front's http.Server, apart so tests can shorten its timeouts.
func httpServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
}

// Main is `go-client front`'s command line; it returns the exit code.
func Main(args []string, stderr io.Writer) int {
	cfg := load.Config{Timeout: load.DefaultTimeout}
	var listen string
	fs := flag.NewFlagSet("go-client front", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: go-client front -listen 127.0.0.1:8081 -proto grpc|thrift|http -addr HOST:PORT\n\n"+
			"Every GET /v1/datalist?n=N makes one DataList call to the server and returns go-server's JSON.\n"+
			"Exit codes: 0 shut down cleanly (SIGINT/SIGTERM), 1 serve error, 2 bad arguments, 4 server unreachable at start.\n\nflags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&listen, "listen", "127.0.0.1:8081", "HTTP listen address")
	fs.StringVar(&cfg.Proto, "proto", load.ProtoGRPC, "protocol to the server: grpc, thrift or http")
	fs.StringVar(&cfg.Addr, "addr", "", "server HOST:PORT")
	fs.Var(load.SecondsFlag(&cfg.Timeout), "timeout", "per-call deadline")
	fs.IntVar(&cfg.Conns, "conns", 1, "gRPC connections shared by all requests")
	fs.StringVar(&cfg.ClientID, "client-id", "go-front", "client id sent in every request's auth")
	load.ThriftFlags(fs, &cfg)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return report.ExitOK
		}
		return report.ExitUsage
	}
	if host, _, err := net.SplitHostPort(cfg.Addr); err != nil || host == "" || cfg.Conns < 1 || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "go-client front: -addr %q must be HOST:PORT, -conns at least 1, no extra arguments\n", cfg.Addr)
		return report.ExitUsage
	}
	switch cfg.Proto {
	case load.ProtoGRPC, load.ProtoThrift, load.ProtoHTTP:
	default:
		fmt.Fprintf(stderr, "go-client front: -proto %q: want grpc, thrift or http\n", cfg.Proto)
		return report.ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f, err := New(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "go-client front: cannot reach %s server at %s: %v\n", cfg.Proto, cfg.Addr, err)
		return report.ExitUnreachable
	}
	defer f.Close()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintf(stderr, "go-client front: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "go-client front: listening on http://%s, calling %s at %s\n", ln.Addr(), cfg.Proto, cfg.Addr)
	if err := Serve(ctx, ln, f); err != nil {
		fmt.Fprintf(stderr, "go-client front: %v\n", err)
		return 1
	}
	return report.ExitOK
}
