// Package fakeserver is a server of the contract (docs/contract.md) that answers
// what a test tells it to, over gRPC, Thrift (framed, binary) and HTTP at once, on
// 127.0.0.1:0: wrong item counts, a wrong codeId, declared errors (a gRPC status,
// a Thrift DataError, an HTTP status). The load client tests and the cross-client
// conformance test (internal/conformance) drive clients against it.
package fakeserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rpcbed/rpcbed/internal/gen/pb"
	"github.com/rpcbed/rpcbed/internal/gen/thriftgen"
	"github.com/rpcbed/rpcbed/internal/service"
)

// Reply is the answer to one call.
type Reply struct {
	Items  int   // DataList: how many items to send
	CodeID int64 // DataType: the codeId to send
	// Code, when not 0, makes the call fail with this declared error: gRPC status
	// Code, Thrift DataError{Code}, HTTP HTTPStatus(Code). Token is then unused.
	Code  int32
	Token string // "" sends "fake-token"
	// Delay holds the answer back this long: latencies that span many buckets
	// of a latency record (the merge tests).
	Delay time.Duration
}

// Behaviour answers call number i (0-based, counted per protocol and call kind)
// of a DataList for n items (n is 0 for DataType).
type Behaviour func(i int64, n int) Reply

// Right answers every call as the contract says.
func Right(_ int64, n int) Reply { return Reply{Items: n, CodeID: 101} }

// WrongCount answers one item short and codeId 7: every verify must fail.
func WrongCount(_ int64, n int) Reply { return Reply{Items: max(n-1, 0), CodeID: 7} }

// Declare answers every call with the declared error code.
func Declare(code int32) Behaviour {
	return func(int64, int) Reply { return Reply{Code: code} }
}

// Slow answers as b does, each call held back by delay(i).
func Slow(b Behaviour, delay func(i int64) time.Duration) Behaviour {
	return func(i int64, n int) Reply {
		r := b(i, n)
		r.Delay = delay(i)
		return r
	}
}

// OneCore answers as b does, the calls served one at a time in arrival order
// as by one core, each for cost() (called in arrival order, so a seeded cost
// repeats): a call waits for the calls before it, then its own cost. The core
// is a clock, not a spinning CPU, so the queue is exact on a busy machine.
func OneCore(b Behaviour, cost func() time.Duration) Behaviour {
	var mu sync.Mutex
	var free time.Time
	return func(i int64, n int) Reply {
		r := b(i, n)
		mu.Lock()
		now := time.Now()
		if free.Before(now) {
			free = now
		}
		free = free.Add(cost())
		r.Delay = time.Until(free)
		mu.Unlock()
		return r
	}
}

// After answers the first n calls with first, the rest with then.
func After(n int64, first, then Behaviour) Behaviour {
	return func(i int64, items int) Reply {
		if i < n {
			return first(i, items)
		}
		return then(i, items)
	}
}

// HTTPStatus is the HTTP status the contract gives a declared code (go-server's
// mapping: 3 -> 400, 16 -> 401, 4 -> 504, 14 -> 503, anything else 500).
func HTTPStatus(code int32) int {
	switch code {
	case 3:
		return http.StatusBadRequest
	case 16:
		return http.StatusUnauthorized
	case 4:
		return http.StatusGatewayTimeout
	case 14:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// Addrs are the listeners' HOST:PORT by protocol: "grpc", "thrift", "http".
type Addrs map[string]string

// counter counts calls per protocol x call.
type counter struct{ dataType, dataList atomic.Int64 }

func (c *counter) next(dataList bool) int64 {
	if dataList {
		return c.dataList.Add(1) - 1
	}
	return c.dataType.Add(1) - 1
}

// Start serves b on all three protocols until the test ends.
func Start(t testing.TB, b Behaviour) Addrs {
	t.Helper()
	addrs := Addrs{}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	pb.RegisterDataServer(gs, &grpcData{b: b})
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	addrs["grpc"] = ln.Addr().String()

	sock, err := thrift.NewTServerSocket("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := sock.Listen(); err != nil {
		t.Fatal(err)
	}
	ts := thrift.NewTSimpleServer4(thriftgen.NewDataProcessor(&thriftData{b: b}), sock,
		thrift.NewTFramedTransportFactoryConf(thrift.NewTTransportFactory(), nil), thrift.NewTBinaryProtocolFactoryConf(nil))
	go ts.Serve()
	t.Cleanup(func() { ts.Stop() })
	addrs["thrift"] = sock.Addr().String()

	hs := httptest.NewServer(&httpData{b: b})
	t.Cleanup(hs.Close)
	addrs["http"] = hs.Listener.Addr().String()
	return addrs
}

func token(r Reply) string {
	if r.Token == "" {
		return "fake-token"
	}
	return r.Token
}

type grpcData struct {
	pb.UnimplementedDataServer
	b Behaviour
	n counter
}

// cnName is the contract's cnName for enName (docs/contract.md).
func cnName(enName string) string { return "名称-" + enName }

func (s *grpcData) DataType(_ context.Context, q *pb.DataTypeRequest) (*pb.DataTypeResponse, error) {
	r := s.b(s.n.next(false), 0)
	time.Sleep(r.Delay)
	if r.Code != 0 {
		return nil, status.Error(codes.Code(r.Code), "fake server: declared error")
	}
	return &pb.DataTypeResponse{Auth: &pb.AuthReply{Token: token(r)}, CodeId: r.CodeID, CnName: cnName(q.EnName)}, nil
}

func (s *grpcData) DataList(_ context.Context, q *pb.DataListRequest) (*pb.DataListResponse, error) {
	r := s.b(s.n.next(true), int(q.N))
	time.Sleep(r.Delay)
	if r.Code != 0 {
		return nil, status.Error(codes.Code(r.Code), "fake server: declared error")
	}
	items := make([]*pb.Item, r.Items)
	for i := range items {
		it := service.NewItem(i)
		items[i] = &pb.Item{Id: it.ID, Name: it.Name, Score: it.Score, Enabled: it.Enabled}
	}
	return &pb.DataListResponse{Auth: &pb.AuthReply{Token: token(r)}, Items: items}, nil
}

type thriftData struct {
	b Behaviour
	n counter
}

func (s *thriftData) DataType(_ context.Context, q *thriftgen.DataTypeRequest) (*thriftgen.DataTypeResponse, error) {
	r := s.b(s.n.next(false), 0)
	time.Sleep(r.Delay)
	if r.Code != 0 {
		return nil, &thriftgen.DataError{Code: r.Code, Message: "fake server: declared error"}
	}
	return &thriftgen.DataTypeResponse{Auth: &thriftgen.AuthReply{Token: token(r)}, CodeId: r.CodeID, CnName: cnName(q.EnName)}, nil
}

func (s *thriftData) DataList(_ context.Context, q *thriftgen.DataListRequest) (*thriftgen.DataListResponse, error) {
	r := s.b(s.n.next(true), int(q.N))
	time.Sleep(r.Delay)
	if r.Code != 0 {
		return nil, &thriftgen.DataError{Code: r.Code, Message: "fake server: declared error"}
	}
	items := make([]*thriftgen.Item, r.Items)
	for i := range items {
		it := service.NewItem(i)
		items[i] = &thriftgen.Item{ID: it.ID, Name: it.Name, Score: it.Score, Enabled: it.Enabled, Tags: []string{}}
	}
	return &thriftgen.DataListResponse{Auth: &thriftgen.AuthReply{Token: token(r)}, Items: items}, nil
}

type httpData struct {
	b Behaviour
	n counter
}

func (s *httpData) ServeHTTP(w http.ResponseWriter, q *http.Request) {
	var r Reply
	var body any
	switch q.URL.Path {
	case "/healthz": // docs/contract.md: every HTTP listener answers it
		w.Write([]byte("ok\n"))
		return
	case "/v1/datalist":
		n, err := strconv.Atoi(q.URL.Query().Get("n"))
		if err != nil {
			r = Reply{Code: 3}
			break
		}
		r = s.b(s.n.next(true), n)
		time.Sleep(r.Delay)
		items := make([]service.Item, r.Items)
		for i := range items {
			items[i] = service.NewItem(i)
		}
		body = service.DataListBody{Message: "ok", Auth: service.TokenBody{Token: token(r)}, N: n, Items: items}
	case "/v1/datatype":
		r = s.b(s.n.next(false), 0)
		time.Sleep(r.Delay)
		body = service.DataTypeBody{Message: "ok", Auth: service.TokenBody{Token: token(r)}, CodeID: r.CodeID, CnName: cnName(q.URL.Query().Get("enName"))}
	default:
		http.NotFound(w, q)
		return
	}
	w.Header().Set("Server", "rpcbed-fake-server")
	w.Header().Set("Content-Type", "application/json")
	if r.Code != 0 {
		st := HTTPStatus(r.Code)
		w.WriteHeader(st)
		fmt.Fprintf(w, "{\"code\":%d,\"message\":\"fake server: declared error\"}\n", st)
		return
	}
	w.Header().Set("X-Token", token(r))
	json.NewEncoder(w).Encode(body)
}
