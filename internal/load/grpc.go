package load

import (
	"context"
	"fmt"
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

// grpcTransport is K shared connections; worker w uses connection w mod K.
type grpcTransport struct {
	cfg   *Config
	conns []*grpc.ClientConn
}

func dialGRPC(ctx context.Context, cfg *Config) (*grpcTransport, error) {
	t := &grpcTransport{cfg: cfg}
	for i := 0; i < cfg.Conns; i++ {
		cc, err := newGRPCConn(cfg.Addr)
		if err != nil {
			t.close()
			return nil, err
		}
		t.conns = append(t.conns, cc)
		if err := waitReady(ctx, cc, cfg.Timeout); err != nil {
			t.close()
			return nil, err
		}
	}
	return t, nil
}

func newGRPCConn(addr string) (*grpc.ClientConn, error) {
	return grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsgSize)),
		// Loopback runs move up to a few MB per call: larger windows than the
		// 64 KiB default keep a 5000-item DataList from stalling on flow control.
		grpc.WithDisableRetry(),
		grpc.WithInitialWindowSize(1<<20),
		grpc.WithInitialConnWindowSize(8<<20),
	)
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

func (t *grpcTransport) caller(w int) caller {
	c := &grpcCaller{
		cc:       t.conns[w%len(t.conns)],
		timeout:  t.cfg.Timeout,
		dataList: t.cfg.Call == CallDataList,
		items:    t.cfg.Items,
		auth:     &pb.Auth{ClientId: t.cfg.ClientID},
		codec:    &sizeCodec{base: encoding.GetCodecV2(proto.Name)},
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

// grpcCaller makes one worker's calls, reusing its request and response messages.
type grpcCaller struct {
	cc       *grpc.ClientConn
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
func (c *grpcCaller) call(ctx context.Context) outcome {
	w := c.watch.current.Load()
	if w == nil {
		return c.do(ctx, c.opts)
	}
	start := c.watch.begin(w)
	o := c.doWith(w.ctx, c.opts)
	if !c.watch.end(start) && o.kind != kindOK {
		o.kind = kindTimeout
	}
	return o
}

// watchCall implements the monitor-kept deadline of one worker's calls.
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

func (c *grpcCaller) watched() *watchCall { return &c.watch }

func (c *grpcCaller) verify(ctx context.Context) (outcome, string) {
	var md metadata.MD
	o := c.do(ctx, append(c.opts[:len(c.opts):len(c.opts)], grpc.Header(&md)))
	return o, strings.Join(md.Get("server"), " ")
}

func (c *grpcCaller) do(ctx context.Context, opts []grpc.CallOption) outcome {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	return c.doWith(ctx, opts)
}

func (c *grpcCaller) doWith(ctx context.Context, opts []grpc.CallOption) outcome {
	var token string
	if c.dataList {
		if err := c.cc.Invoke(ctx, pb.Data_DataList_FullMethodName, c.dlReq, c.dlResp, opts...); err != nil {
			return c.failed(err)
		}
		if got := len(c.dlResp.Items); got != c.items {
			return fail(kindLength, fmt.Errorf("got %d items; want %d", got, c.items))
		}
		token = c.dlResp.GetAuth().GetToken()
	} else {
		if err := c.cc.Invoke(ctx, pb.Data_DataType_FullMethodName, c.dtReq, c.dtResp, opts...); err != nil {
			return c.failed(err)
		}
		if got := c.dtResp.CodeId; got != WantCode {
			return fail(kindLength, fmt.Errorf("got codeId %d; want %d", got, WantCode))
		}
		token = c.dtResp.GetAuth().GetToken()
	}
	if token == "" {
		return fail(kindLength, errNoToken)
	}
	c.auth.Token = token
	return ok(c.codec.last)
}

func (c *grpcCaller) failed(err error) outcome {
	switch status.Code(err) {
	case codes.Unavailable:
		return fail(kindConnect, err)
	case codes.DeadlineExceeded:
		return fail(kindTimeout, err)
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

func (c *grpcCaller) close() {}

// sizeCodec is the proto codec that remembers the size of the last response it
// decoded: the body bytes ab would count, at no extra cost. One per worker.
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
