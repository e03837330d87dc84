package load

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
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

	"google.golang.org/grpc"

	"github.com/rpcbed/rpcbed/internal/gen/pb"
	"github.com/rpcbed/rpcbed/internal/gen/thriftgen"
)

// Front is the Go HTTP front of the PHP-vs-Go write-up: every GET /v1/datalist?n=..
// it receives becomes one DataList call to the server over the chosen protocol,
// and the answer goes back as go-server's JSON.
type Front struct {
	cfg   Config // Proto, Addr, Timeout, Conns, ClientID, Thrift*
	token atomic.Pointer[string]

	grpcConns []*grpc.ClientConn
	grpcNext  atomic.Uint32

	thriftIdle chan *thriftConn

	httpClient *http.Client
}

// FrontItem and FrontList are go-server's /v1/datalist JSON (docs/contract.md).
type FrontItem struct {
	ID        int64    `json:"id"`
	Name      string   `json:"name"`
	CreatedAt int64    `json:"createdAt"`
	Score     float64  `json:"score"`
	Enabled   bool     `json:"enabled"`
	ParentID  int64    `json:"parentId"`
	Note      string   `json:"note"`
	Tags      []string `json:"tags"`
}

type FrontList struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Auth    struct {
		Token string `json:"token"`
	} `json:"auth"`
	N     int         `json:"n"`
	Items []FrontItem `json:"items"`
}

// NewFront connects to the server. cfg needs Proto and Addr; the rest defaults.
func NewFront(ctx context.Context, cfg Config) (*Front, error) {
	cfg.Call, cfg.Concurrency = CallDataList, 1
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	cfg.defaults()
	if cfg.Conns == 0 {
		cfg.Conns = 1
	}
	f := &Front{cfg: cfg}
	empty := ""
	f.token.Store(&empty)
	switch cfg.Proto {
	case ProtoGRPC:
		for i := 0; i < cfg.Conns; i++ {
			cc, err := newGRPCConn(cfg.Addr)
			if err != nil {
				f.Close()
				return nil, err
			}
			f.grpcConns = append(f.grpcConns, cc)
			if err := waitReady(ctx, cc, cfg.Timeout); err != nil {
				f.Close()
				return nil, err
			}
		}
	case ProtoThrift:
		f.thriftIdle = make(chan *thriftConn, 1024)
		c := &thriftConn{cfg: &f.cfg}
		if err := c.open(); err != nil {
			return nil, err
		}
		f.thriftIdle <- c
	case ProtoHTTP:
		d := &net.Dialer{Timeout: cfg.Timeout}
		nc, err := d.DialContext(ctx, "tcp", cfg.Addr) // reachable now, as the RPC fronts check
		if err != nil {
			return nil, err
		}
		nc.Close()
		f.httpClient = &http.Client{
			Timeout: cfg.Timeout,
			Transport: &http.Transport{
				DialContext:         d.DialContext,
				DisableCompression:  true,
				MaxIdleConns:        1024,
				MaxIdleConnsPerHost: 1024,
			},
		}
	default:
		return nil, fmt.Errorf("-proto %q: want grpc, thrift or http", cfg.Proto)
	}
	return f, nil
}

// Close drops the connections to the server.
func (f *Front) Close() {
	for _, cc := range f.grpcConns {
		cc.Close()
	}
	if f.thriftIdle != nil {
		for {
			select {
			case c := <-f.thriftIdle:
				c.close()
			default:
				return
			}
		}
	}
	if f.httpClient != nil {
		f.httpClient.CloseIdleConnections()
	}
}

// Handler serves GET /v1/datalist and GET /healthz.
func (f *Front) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/datalist", f.serveDataList)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	// Without it the mux answers text/plain 404 and 405: every error is JSON, as
	// from go-server and the PHP front.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeFrontError(w, http.StatusNotFound, 5, fmt.Sprintf("no route %s %s", r.Method, r.URL.Path))
	})
	return mux
}

func (f *Front) serveDataList(w http.ResponseWriter, r *http.Request) {
	q, err := url.ParseQuery(r.URL.RawQuery) // r.URL.Query() would drop a bad pair silently
	if err != nil {
		writeFrontError(w, http.StatusBadRequest, 3, "bad query: "+err.Error())
		return
	}
	n, err := strconv.Atoi(q.Get("n"))
	if err != nil || n < 0 || n > maxItems {
		writeFrontError(w, http.StatusBadRequest, 3, fmt.Sprintf("n: want an integer in 0..%d", maxItems))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), f.cfg.Timeout)
	defer cancel()
	list, err := f.DataList(ctx, n)
	if err != nil {
		writeFrontError(w, http.StatusBadGateway, 14, "upstream "+f.cfg.Proto+": "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Token", list.Auth.Token)
	json.NewEncoder(w).Encode(list)
}

func writeFrontError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg})
}

// DataList makes one call to the server and returns its answer as the JSON value.
func (f *Front) DataList(ctx context.Context, n int) (*FrontList, error) {
	var list *FrontList
	var err error
	switch f.cfg.Proto {
	case ProtoGRPC:
		list, err = f.grpcDataList(ctx, n)
	case ProtoThrift:
		list, err = f.thriftDataList(n)
	default:
		list, err = f.httpDataList(ctx, n)
	}
	if err != nil {
		return nil, err
	}
	if len(list.Items) != n {
		return nil, fmt.Errorf("got %d items; want %d", len(list.Items), n)
	}
	list.Message, list.N = "ok", n
	if list.Auth.Token != "" {
		t := list.Auth.Token
		f.token.Store(&t)
	}
	return list, nil
}

func (f *Front) grpcDataList(ctx context.Context, n int) (*FrontList, error) {
	cc := f.grpcConns[int(f.grpcNext.Add(1))%len(f.grpcConns)]
	resp, err := pb.NewDataClient(cc).DataList(ctx, &pb.DataListRequest{
		Auth: &pb.Auth{ClientId: f.cfg.ClientID, Token: *f.token.Load()}, N: int32(n)})
	if err != nil {
		return nil, err
	}
	list := &FrontList{Items: make([]FrontItem, len(resp.Items))}
	list.Auth.Token = resp.GetAuth().GetToken()
	for i, it := range resp.Items {
		list.Items[i] = FrontItem{ID: it.Id, Name: it.Name, CreatedAt: it.CreatedAt, Score: it.Score,
			Enabled: it.Enabled, ParentID: it.ParentId, Note: it.Note, Tags: nonNil(it.Tags)}
	}
	return list, nil
}

// thriftDataList borrows an idle connection (or opens one): a Thrift client
// serves one call at a time.
func (f *Front) thriftDataList(n int) (*FrontList, error) {
	var c *thriftConn
	select {
	case c = <-f.thriftIdle:
	default:
		c = &thriftConn{cfg: &f.cfg}
		if err := c.open(); err != nil {
			return nil, err
		}
	}
	resp, err := c.client.DataList(context.Background(), &thriftgen.DataListRequest{
		Auth: &thriftgen.Auth{ClientId: f.cfg.ClientID, Token: *f.token.Load()}, N: int32(n)})
	var de *thriftgen.DataError
	var ae interface{ TypeId() int32 }
	if err != nil && !errors.As(err, &de) && !errors.As(err, &ae) {
		c.close() // transport error: the connection cannot be trusted
	} else {
		select {
		case f.thriftIdle <- c:
		default:
			c.close()
		}
	}
	if err != nil {
		return nil, err
	}
	list := &FrontList{Items: make([]FrontItem, len(resp.Items))}
	list.Auth.Token = resp.GetAuth().GetToken()
	for i, it := range resp.Items {
		list.Items[i] = FrontItem{ID: it.ID, Name: it.Name, CreatedAt: it.CreatedAt, Score: it.Score,
			Enabled: it.Enabled, ParentID: it.ParentId, Note: it.Note, Tags: nonNil(it.Tags)}
	}
	return list, nil
}

func (f *Front) httpDataList(ctx context.Context, n int) (*FrontList, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+f.cfg.Addr+"/v1/datalist?n="+strconv.Itoa(n), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Client-Id", f.cfg.ClientID)
	req.Header.Set("X-Token", *f.token.Load())
	resp, err := f.httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("HTTP %s: %s", resp.Status, b)
	}
	list := &FrontList{}
	if err := json.NewDecoder(resp.Body).Decode(list); err != nil {
		return nil, err
	}
	for i := range list.Items {
		list.Items[i].Tags = nonNil(list.Items[i].Tags)
	}
	return list, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ServeFront runs the front on ln until ctx ends, then shuts down gracefully
// (in-flight requests get up to 10 s).
func ServeFront(ctx context.Context, ln net.Listener, f *Front) error {
	srv := frontServer(f.Handler())
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

// frontServer is the front's http.Server, apart so tests can shorten its timeouts.
func frontServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
}

func frontMain(args []string, stderr io.Writer) int {
	var cfg Config
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
	fs.StringVar(&cfg.Proto, "proto", "grpc", "protocol to the server: grpc, thrift or http")
	fs.StringVar(&cfg.Addr, "addr", "", "server HOST:PORT")
	cfg.Timeout = 10 * time.Second
	fs.Var((*seconds)(&cfg.Timeout), "timeout", "per-call deadline")
	fs.IntVar(&cfg.Conns, "conns", 1, "gRPC connections shared by all requests")
	fs.StringVar(&cfg.ClientID, "client-id", "go-front", "client id sent in every request's auth")
	fs.StringVar(&cfg.ThriftTransport, "thrift-transport", "framed", "thrift transport: framed or buffered")
	fs.StringVar(&cfg.ThriftProtocol, "thrift-protocol", "binary", "thrift protocol: binary or compact")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	if _, _, err := splitHostPort(cfg.Addr); err != nil || cfg.Conns < 1 || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "go-client front: -addr %q must be HOST:PORT, -conns at least 1, no extra arguments\n", cfg.Addr)
		return ExitUsage
	}
	switch cfg.Proto {
	case ProtoGRPC, ProtoThrift, ProtoHTTP:
	default:
		fmt.Fprintf(stderr, "go-client front: -proto %q: want grpc, thrift or http\n", cfg.Proto)
		return ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f, err := NewFront(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "go-client front: cannot reach %s server at %s: %v\n", cfg.Proto, cfg.Addr, err)
		return ExitUnreachable
	}
	defer f.Close()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintf(stderr, "go-client front: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "go-client front: listening on http://%s, calling %s at %s\n", ln.Addr(), cfg.Proto, cfg.Addr)
	if err := ServeFront(ctx, ln, f); err != nil {
		fmt.Fprintf(stderr, "go-client front: %v\n", err)
		return 1
	}
	return ExitOK
}
