package load

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/rpcbed/rpcbed/internal/gen/pb"
)

const maxMsgSize = 64 << 20

// grpcTransport is K connections (-conns, default one per caller); caller w uses
// connection w mod K, so with K < c the callers share them round-robin.
type grpcTransport struct {
	cfg    *Config
	conns  []*grpc.ClientConn
	health []*connHealth // one per connection
}

func dialGRPC(ctx context.Context, cfg *Config) (*grpcTransport, error) {
	t := &grpcTransport{cfg: cfg}
	if cfg.perCall() {
		return t, nil // every call makes its own (grpcSession.doWith)
	}
	for i := 0; i < cfg.Conns; i++ {
		cc, h, err := grpcConnFor(cfg)
		if err != nil {
			t.close()
			return nil, err
		}
		t.conns, t.health = append(t.conns, cc), append(t.health, h)
		if err := waitReady(ctx, cc, cfg.Timeout); err != nil {
			t.close()
			return nil, err
		}
	}
	return t, nil
}

// grpcConnFor is one connection of a run: counted by the run's net counters,
// over TLS when the run asks it (grpc-go's credentials: ALPN h2).
func grpcConnFor(cfg *Config) (*grpc.ClientConn, *connHealth, error) {
	h := &connHealth{}
	opts := []grpc.DialOption{grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		nc, err := h.dial(ctx, addr)
		if err == nil && cfg.net != nil {
			cfg.net.opened.Add(1)
		}
		return nc, err
	})}
	if cfg.secure() {
		opts = append(opts, grpc.WithTransportCredentials(newGRPCCreds(cfg)))
	}
	cc, err := newGRPCConn(cfg.Addr, opts...)
	return cc, h, err
}

// newGRPCConn is a client connection to addr: plaintext unless opts give
// transport credentials (the last given wins).
func newGRPCConn(addr string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	return grpc.NewClient("passthrough:///"+addr, append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsgSize)),
		grpc.WithDisableRetry(),
		// Loopback runs move up to a few MB per call: larger windows than the
		// 64 KiB default keep a 5000-item DataList from stalling on flow control.
		grpc.WithInitialWindowSize(1 << 20),
		grpc.WithInitialConnWindowSize(8 << 20),
	}, opts...)...)
}

// connHealth tells a status UNAVAILABLE the server declared (the server answered:
// an "exceptions" failure, docs/report-format.md) from one grpc-go made up because
// the transport failed (a "connect" failure). grpc-go marks neither, so the
// connection's dialer counts every failed dial and every failed read or write:
// grpc-go fails a call on a broken transport only after its reader or writer saw
// the error, and fails a call while no connection is up after a dial failed.
type connHealth struct {
	faults atomic.Int64 // failed dials, connections that failed or closed
	live   atomic.Int64 // connections up
}

func (h *connHealth) dial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		h.faults.Add(1)
		return nil, err
	}
	h.live.Add(1)
	return &healthConn{Conn: nc, h: h}, nil
}

// transportFailed tells whether the connection failed since faults0 was read, or
// none is up.
func (h *connHealth) transportFailed(faults0 int64) bool {
	return h.faults.Load() != faults0 || h.live.Load() <= 0
}

type healthConn struct {
	net.Conn
	h    *connHealth
	down atomic.Bool
}

func (c *healthConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.fail()
	}
	return n, err
}

func (c *healthConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if err != nil {
		c.fail()
	}
	return n, err
}

func (c *healthConn) Close() error {
	c.fail()
	return c.Conn.Close()
}

func (c *healthConn) fail() {
	if c.down.CompareAndSwap(false, true) {
		c.h.faults.Add(1)
		c.h.live.Add(-1)
	}
}

// waitReady connects cc now (so no connection is made during timing) and fails
// fast on a refused connection instead of waiting for the deadline.
func waitReady(ctx context.Context, cc *grpc.ClientConn, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cc.Connect()
	for {
		s := cc.GetState()
		switch s {
		case connectivity.Ready:
			return nil
		case connectivity.TransientFailure, connectivity.Shutdown:
			return fmt.Errorf("grpc connection to %s: %v", cc.CanonicalTarget(), s)
		}
		if !cc.WaitForStateChange(ctx, s) {
			return fmt.Errorf("grpc connection to %s: not ready after %v", cc.CanonicalTarget(), timeout)
		}
	}
}

func (t *grpcTransport) session(w int) session {
	c := &grpcSession{
		cfg:      t.cfg,
		perCall:  t.cfg.perCall(),
		full:     t.cfg.Check == CheckFull,
		want:     -1,
		timeout:  t.cfg.Timeout,
		dataList: t.cfg.Call == CallDataList,
		items:    t.cfg.Items,
		auth:     &pb.Auth{ClientId: t.cfg.ClientID},
		codec:    &sizeCodec{base: encoding.GetCodecV2(proto.Name)},
	}
	if len(t.conns) > 0 {
		c.cc, c.health = t.conns[w%len(t.conns)], t.health[w%len(t.conns)]
	}
	c.watch.timeout = t.cfg.Timeout
	c.dtReq = &pb.DataTypeRequest{Auth: c.auth, GroupName: GroupName, EnName: EnName}
	c.dlReq = &pb.DataListRequest{Auth: c.auth, N: int32(t.cfg.Items)}
	c.dtResp = &pb.DataTypeResponse{}
	c.dlResp = &pb.DataListResponse{}
	c.opts = []grpc.CallOption{grpc.ForceCodecV2(c.codec)}
	return c
}

func (t *grpcTransport) close() {
	for _, cc := range t.conns {
		cc.Close()
	}
}

// grpcSession makes one caller's calls, reusing its request and response messages.
// Every response is decoded whole (the token is inside it); -check full checks
// its item count or codeId, -check length its size against the verified one.
type grpcSession struct {
	cfg      *Config
	perCall  bool // a connection of its own for every call, closed after it
	cc       *grpc.ClientConn
	health   *connHealth
	full     bool
	want     int64 // -check length: the verified response's size; -1 before
	timeout  time.Duration
	dataList bool
	items    int
	auth     *pb.Auth
	dtReq    *pb.DataTypeRequest
	dtResp   *pb.DataTypeResponse
	dlReq    *pb.DataListRequest
	dlResp   *pb.DataListResponse
	codec    *sizeCodec
	opts     []grpc.CallOption
	watch    watchCall
}

// call makes one call. Before the run (priming) the deadline is a per-call
// timer; during the run it is the monitor's (see watch), because a context with a
// deadline per call cost 6-18 % of the client's CPU per small gRPC call in A/B
// runs: the timer, the grpc-timeout header and its cancellation.
func (c *grpcSession) call(ctx context.Context) outcome {
	w := c.watch.current.Load()
	if w == nil {
		return c.do(ctx, c.opts, c.full)
	}
	start := c.watch.begin(w)
	o := c.doWith(w.ctx, c.opts, c.full)
	if !c.watch.end(start) && o.kind != kindOK {
		o.kind = kindTimeout
	}
	return o
}

// watchCall implements the monitor-kept deadline of one caller's calls.
type watchCall struct {
	timeout time.Duration
	base    context.Context
	current atomic.Pointer[watchCtx]
	started atomic.Int64 // nanoseconds since base time of the call in flight; 0 idle, -1 expired
	epoch   time.Time
}

type watchCtx struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func (w *watchCall) arm(ctx context.Context) {
	w.base, w.epoch = ctx, time.Now()
	c, cancel := context.WithCancel(ctx)
	w.current.Store(&watchCtx{c, cancel})
}

// begin marks a call in flight; a context cancelled by an expired call is
// replaced first.
func (w *watchCall) begin(cur *watchCtx) int64 {
	if cur.ctx.Err() != nil && w.base.Err() == nil {
		c, cancel := context.WithCancel(w.base)
		w.current.Store(&watchCtx{c, cancel})
	}
	start := int64(time.Since(w.epoch)) + 1 // never 0 or -1
	w.started.Store(start)
	return start
}

// end reports whether the call ended before the monitor expired it.
func (w *watchCall) end(start int64) bool {
	if w.started.CompareAndSwap(start, 0) {
		return true
	}
	w.started.Store(0)
	// The monitor cancels (or has cancelled) the context: the next begin
	// replaces it.
	cur := w.current.Load()
	cur.cancel()
	return false
}

// expire runs on the monitor: a call in flight for longer than the timeout is
// cancelled. started is read before current, and a call only replaces current
// after its end, so the context cancelled is the late call's own.
func (w *watchCall) expire(now time.Time) {
	s := w.started.Load()
	if s <= 0 || now.Sub(w.epoch)-time.Duration(s) < w.timeout {
		return
	}
	cur := w.current.Load()
	if w.started.CompareAndSwap(s, -1) {
		cur.cancel()
	}
}

func (c *grpcSession) watched() *watchCall { return &c.watch }

func (c *grpcSession) verify(ctx context.Context) (outcome, string) {
	var md metadata.MD
	o := c.do(ctx, append(c.opts[:len(c.opts):len(c.opts)], grpc.Header(&md)), true)
	if o.kind == kindOK {
		c.want = o.bytes
	}
	return o, strings.Join(md.Get("server"), " ")
}

// setWant gives a caller other than the verifier the verified response size.
func (c *grpcSession) setWant(n int64) { c.want = n }

func (c *grpcSession) do(ctx context.Context, opts []grpc.CallOption, full bool) outcome {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	return c.doWith(ctx, opts, full)
}

func (c *grpcSession) doWith(ctx context.Context, opts []grpc.CallOption, full bool) outcome {
	if c.perCall {
		cc, h, err := grpcConnFor(c.cfg)
		if err != nil {
			return fail(kindConnect, err)
		}
		defer cc.Close()
		c.cc, c.health = cc, h
	}
	var token string
	faults0 := c.health.faults.Load()
	if c.dataList {
		if err := c.cc.Invoke(ctx, pb.Data_DataList_FullMethodName, c.dlReq, c.dlResp, opts...); err != nil {
			return c.failed(ctx, err, faults0)
		}
		if got := len(c.dlResp.Items); full && got != c.items {
			return fail(kindLength, fmt.Errorf("got %d items; want %d", got, c.items))
		}
		token = c.dlResp.GetAuth().GetToken()
	} else {
		if err := c.cc.Invoke(ctx, pb.Data_DataType_FullMethodName, c.dtReq, c.dtResp, opts...); err != nil {
			return c.failed(ctx, err, faults0)
		}
		if got := c.dtResp.CodeId; full && got != WantCode {
			return fail(kindLength, fmt.Errorf("got codeId %d; want %d", got, WantCode))
		}
		token = c.dtResp.GetAuth().GetToken()
	}
	if token == "" {
		return fail(kindLength, errNoToken)
	}
	if !full && c.want >= 0 && c.codec.last != c.want {
		return fail(kindLength, fmt.Errorf("got a %d-byte response; want %d", c.codec.last, c.want))
	}
	c.auth.Token = token
	return ok(c.codec.last)
}

// failed maps a failed call to its kind. A status the server declared is never
// connect or timeout (docs/report-format.md): UNAVAILABLE is connect only when
// the transport failed (connHealth), DEADLINE_EXCEEDED timeout only when the
// call's own deadline passed (during a run the monitor expires calls by
// cancelling them, so a DEADLINE_EXCEEDED then is the server's).
func (c *grpcSession) failed(ctx context.Context, err error, faults0 int64) outcome {
	switch status.Code(err) {
	case codes.Unavailable:
		if c.health.transportFailed(faults0) {
			return fail(kindConnect, err)
		}
		return fail(kindExceptions, err)
	case codes.DeadlineExceeded:
		if ctx.Err() != nil {
			return fail(kindTimeout, err)
		}
		return fail(kindExceptions, err)
	case codes.Canceled:
		return fail(kindReceive, err)
	case codes.Unauthenticated:
		c.auth.Token = "" // ask for a fresh token next time
		return fail(kindUnauthenticated, err)
	case codes.InvalidArgument:
		return fail(kindInvalidArgument, err)
	default:
		return fail(kindExceptions, err)
	}
}

func (c *grpcSession) close() {}

// sizeCodec is the proto codec that remembers the size of the last response it
// decoded: the body bytes ab would count, at no extra cost. One per caller.
type sizeCodec struct {
	base encoding.CodecV2
	last int64
}

func (s *sizeCodec) Marshal(v any) (mem.BufferSlice, error) { return s.base.Marshal(v) }

func (s *sizeCodec) Unmarshal(data mem.BufferSlice, v any) error {
	s.last = int64(data.Len())
	return s.base.Unmarshal(data, v)
}

func (s *sizeCodec) Name() string { return s.base.Name() }
