package load

import (
	"context"
	"fmt"
	"strings"
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
}

func (c *grpcCaller) call(ctx context.Context) outcome {
	return c.do(ctx, c.opts)
}

func (c *grpcCaller) verify(ctx context.Context) (outcome, string) {
	var md metadata.MD
	o := c.do(ctx, append(c.opts[:len(c.opts):len(c.opts)], grpc.Header(&md)))
	return o, strings.Join(md.Get("server"), " ")
}

func (c *grpcCaller) do(ctx context.Context, opts []grpc.CallOption) outcome {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
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
