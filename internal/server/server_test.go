package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/rpcbed/rpcbed/internal/auth"
	"github.com/rpcbed/rpcbed/internal/gen/pb"
	"github.com/rpcbed/rpcbed/internal/gen/thriftgen"
	"github.com/rpcbed/rpcbed/internal/server"
	"github.com/rpcbed/rpcbed/internal/service"
	"github.com/rpcbed/rpcbed/internal/store"
)

const (
	group = "USER_EVENT"
	en    = "app_call_connect_success"
)

type testServer struct {
	*server.Server
	auth *auth.Authority
}

// start runs a go-server with every listener on a free loopback port.
func start(t testing.TB, checkAuth bool) *testServer {
	t.Helper()
	a, err := auth.New([]byte("test-secret"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: store.NewMemory(), Auth: a, CheckAuth: checkAuth})
	s, err := server.Start(server.Config{
		GRPCAddr: "127.0.0.1:0", ThriftAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0",
		StoreKind: "memory", CheckAuth: checkAuth, ReadHeaderTimeout: 300 * time.Millisecond,
		Log: discardLog(t),
	}, svc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return &testServer{s, a}
}

// result is what every protocol's call gives back, so the tables can compare.
type result struct {
	token  string
	codeID int64
	cnName string
	items  int
	code   service.Code // 0 when the call succeeded
}

// caller makes one call over one protocol.
type caller interface {
	dataType(clientID, token, group, en string) result
	dataList(clientID, token string, n int) result
}

// --- gRPC ---

type grpcCaller struct{ c pb.DataClient }

func dialGRPC(t testing.TB, addr net.Addr) *grpcCaller {
	t.Helper()
	cc, err := grpc.NewClient(addr.String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return &grpcCaller{pb.NewDataClient(cc)}
}

func grpcResult(err error) result {
	return result{code: service.Code(status.Code(err))}
}

func (g *grpcCaller) dataType(id, tok, group, en string) result {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := g.c.DataType(ctx, &pb.DataTypeRequest{Auth: &pb.Auth{ClientId: id, Token: tok}, GroupName: group, EnName: en})
	if err != nil {
		return grpcResult(err)
	}
	return result{token: r.GetAuth().GetToken(), codeID: r.CodeId, cnName: r.CnName}
}

func (g *grpcCaller) dataList(id, tok string, n int) result {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := g.c.DataList(ctx, &pb.DataListRequest{Auth: &pb.Auth{ClientId: id, Token: tok}, N: int32(n)})
	if err != nil {
		return grpcResult(err)
	}
	return result{token: r.GetAuth().GetToken(), items: len(r.Items)}
}

// --- Thrift ---

type thriftCaller struct {
	t testing.TB
	c *thriftgen.DataClient
}

func dialThrift(t testing.TB, addr net.Addr) *thriftCaller {
	t.Helper()
	conf := server.ThriftConfig()
	conf.ConnectTimeout, conf.SocketTimeout = 5*time.Second, 5*time.Second
	sock := thrift.NewTSocketConf(addr.String(), conf)
	tr := thrift.NewTFramedTransportConf(sock, conf)
	if err := tr.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	pf := thrift.NewTBinaryProtocolFactoryConf(conf)
	return &thriftCaller{t, thriftgen.NewDataClientFactory(tr, pf)}
}

func thriftResult(t testing.TB, err error) result {
	var de *thriftgen.DataError
	if errors.As(err, &de) {
		return result{code: service.Code(de.Code)}
	}
	t.Fatalf("thrift call failed outside the contract: %v", err)
	return result{}
}

func (c *thriftCaller) dataType(id, tok, group, en string) result {
	r, err := c.c.DataType(context.Background(), &thriftgen.DataTypeRequest{Auth: &thriftgen.Auth{ClientId: id, Token: tok}, GroupName: group, EnName: en})
	if err != nil {
		return thriftResult(c.t, err)
	}
	return result{token: r.Auth.Token, codeID: r.CodeId, cnName: r.CnName}
}

func (c *thriftCaller) dataList(id, tok string, n int) result {
	r, err := c.c.DataList(context.Background(), &thriftgen.DataListRequest{Auth: &thriftgen.Auth{ClientId: id, Token: tok}, N: int32(n)})
	if err != nil {
		return thriftResult(c.t, err)
	}
	return result{token: r.Auth.Token, items: len(r.Items)}
}

// --- HTTP ---

type httpCaller struct {
	t    testing.TB
	base string
	c    *http.Client
}

func dialHTTP(t testing.TB, addr net.Addr) *httpCaller {
	return &httpCaller{t, "http://" + addr.String(), &http.Client{Timeout: 5 * time.Second}}
}

var httpCodes = map[int]service.Code{400: service.InvalidArgument, 401: service.Unauthenticated}

func (h *httpCaller) get(path, id, tok string, body any) result {
	req, _ := http.NewRequest("GET", h.base+path, nil)
	req.Header.Set("X-Client-Id", id)
	req.Header.Set("X-Token", tok)
	resp, err := h.c.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		var e service.ErrorBody
		if err := json.Unmarshal(b, &e); err != nil || e.Code != resp.StatusCode {
			h.t.Fatalf("GET %s: status %d with body %q; want a JSON error naming the status", path, resp.StatusCode, b)
		}
		return result{code: httpCodes[resp.StatusCode]}
	}
	if err := json.Unmarshal(b, body); err != nil {
		h.t.Fatalf("GET %s: %v", path, err)
	}
	return result{token: resp.Header.Get("X-Token")}
}

func (h *httpCaller) dataType(id, tok, group, en string) result {
	var b service.DataTypeBody
	r := h.get("/v1/datatype?"+url.Values{"groupName": {group}, "enName": {en}}.Encode(), id, tok, &b)
	if r.code == 0 && b.Auth.Token != r.token {
		h.t.Fatalf("token in body %q, in header %q", b.Auth.Token, r.token)
	}
	r.codeID, r.cnName = b.CodeID, b.CnName
	return r
}

func (h *httpCaller) dataList(id, tok string, n int) result {
	var b service.DataListBody
	r := h.get(fmt.Sprintf("/v1/datalist?n=%d", n), id, tok, &b)
	r.items = len(b.Items)
	return r
}

func callers(t testing.TB, s *testServer) map[string]caller {
	return map[string]caller{
		"grpc":   dialGRPC(t, s.GRPCAddr),
		"thrift": dialThrift(t, s.ThriftAddr),
		"http":   dialHTTP(t, s.HTTPAddr),
	}
}

var protos = []string{"grpc", "thrift", "http"}

func TestRoundTrip(t *testing.T) {
	s := start(t, true)
	cs := callers(t, s)
	for _, p := range protos {
		c := cs[p]
		t.Run(p+"/datatype", func(t *testing.T) {
			r := c.dataType("client-"+p, "", group, en)
			if r.code != 0 || r.codeID != service.CodeID || r.cnName != "名称-"+en || r.token == "" {
				t.Fatalf("DataType = %+v; want codeId 101, cnName %q and a token", r, "名称-"+en)
			}
			// The token carried into the next call is accepted and refreshed.
			r2 := c.dataType("client-"+p, r.token, group, en)
			if r2.code != 0 || r2.token == "" {
				t.Fatalf("DataType with carried token = %+v; want success", r2)
			}
		})
		for _, n := range []int{0, 2, 200, 5000} {
			t.Run(fmt.Sprintf("%s/datalist-%d", p, n), func(t *testing.T) {
				r := c.dataList("client-"+p, "", n)
				if r.code != 0 || r.items != n || r.token == "" {
					t.Fatalf("DataList(%d) = code %d, %d items, token %q; want %d items and a token", n, r.code, r.items, r.token, n)
				}
			})
		}
	}
}

func TestErrors(t *testing.T) {
	s := start(t, true)
	cs := callers(t, s)
	other, _ := auth.New([]byte("another secret"), time.Minute)
	expired, _ := auth.New([]byte("test-secret"), time.Minute)
	expired.SetClock(func() time.Time { return time.Now().Add(-time.Hour) })
	valid := s.auth.Issue("me")
	tests := []struct {
		name string
		call func(c caller) result
		want service.Code
	}{
		{"valid token", func(c caller) result { return c.dataList("me", valid, 2) }, 0},
		{"forged token", func(c caller) result { return c.dataList("me", other.Issue("me"), 2) }, service.Unauthenticated},
		{"token of another client", func(c caller) result { return c.dataList("you", valid, 2) }, service.Unauthenticated},
		{"expired token", func(c caller) result { return c.dataType("me", expired.Issue("me"), group, en) }, service.Unauthenticated},
		{"garbage token", func(c caller) result { return c.dataType("me", "not-a-token", group, en) }, service.Unauthenticated},
		{"n too large", func(c caller) result { return c.dataList("me", "", service.MaxItems+1) }, service.InvalidArgument},
		{"n negative", func(c caller) result { return c.dataList("me", "", -1) }, service.InvalidArgument},
		{"empty group", func(c caller) result { return c.dataType("me", "", "", en) }, service.InvalidArgument},
	}
	for _, p := range protos {
		for _, tc := range tests {
			t.Run(p+"/"+tc.name, func(t *testing.T) {
				if got := tc.call(cs[p]).code; got != tc.want {
					t.Errorf("code = %d; want %d", got, tc.want)
				}
			})
		}
	}
}

func TestAuthOff(t *testing.T) {
	s := start(t, false)
	for p, c := range callers(t, s) {
		t.Run(p, func(t *testing.T) {
			r := c.dataList("me", "forged", 2)
			if r.code != 0 || r.token == "" {
				t.Errorf("with -auth=false a forged token gave %+v; want success and a fresh token", r)
			}
		})
	}
}

func TestStats(t *testing.T) {
	s := start(t, true)
	cs := callers(t, s)
	for _, p := range protos {
		cs[p].dataList("me", "", 2)
		cs[p].dataList("me", "", -1)
	}
	resp, err := http.Get("http://" + s.HTTPAddr.String() + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st server.Stats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	for _, p := range protos {
		if got := st.Calls[p]["datalist"]; got != (service.Count{Requests: 2, Errors: 1}) {
			t.Errorf("stats %s datalist = %+v; want 2 requests, 1 error", p, got)
		}
	}
	if st.Versions["grpc"] == "" && st.Versions["go"] == "" {
		t.Errorf("stats carry no versions: %+v", st.Versions)
	}
	if st.CPUUserS <= 0 || st.Goroutines <= 0 {
		t.Errorf("stats cpu %v goroutines %d; want both > 0", st.CPUUserS, st.Goroutines)
	}
}

func discardLog(testing.TB) *log.Logger { return log.New(io.Discard, "", 0) }
