package server

import (
	"context"
	"fmt"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/rpcbed/rpcbed/internal/gen/thriftgen"
	"github.com/rpcbed/rpcbed/internal/service"
)

// MaxThriftFrame bounds a Thrift frame and message a client reads (a DataList of
// 100 000 items is about 8 MB). MaxThriftRequest bounds what go-server reads, as
// MaxGRPCRecv does for gRPC. A peer claiming more is cut off at once; below the
// limit, the library buffers a frame as its bytes arrive, never the claimed size.
const (
	MaxThriftFrame   = 16 << 20
	MaxThriftRequest = 1 << 20
)

// thriftData adapts the service core to thriftgen.Data.
type thriftData struct {
	svc     *service.Service
	items   *service.Table[*thriftgen.Item]
	answers *answers
	perItem int // itemThriftBinary or itemThriftCompact
}

func newThriftData(svc *service.Service, a *answers, protocol string) *thriftData {
	t := &thriftData{svc: svc, items: service.NewTable(ThriftItem), answers: a, perItem: itemThriftBinary}
	if protocol == "compact" {
		t.perItem = itemThriftCompact
	}
	return t
}

// thriftConnData is thriftData for one connection: a DataList answer's bytes are
// reserved before it is built and held until its frame is written (thriftOut).
type thriftConnData struct {
	*thriftData
	conn *thriftConn // nil: not a framed go-server connection, nothing reserved
}

// thriftProcessors gives each connection its own processor (TSimpleServer asks
// for one per connection).
type thriftProcessors struct{ data *thriftData }

func (f thriftProcessors) GetProcessor(t thrift.TTransport) thrift.TProcessor {
	c, _ := t.(*thriftConn)
	return thriftgen.NewDataProcessor(&thriftConnData{thriftData: f.data, conn: c})
}

// ThriftItem converts a generated item to its Thrift form.
func ThriftItem(it service.Item) *thriftgen.Item {
	return &thriftgen.Item{ID: it.ID, Name: it.Name, CreatedAt: it.CreatedAt, Score: it.Score,
		Enabled: it.Enabled, ParentId: it.ParentID, Note: it.Note, Tags: it.Tags}
}

func thriftAuth(a *thriftgen.Auth) service.Auth {
	if a == nil {
		return service.Auth{}
	}
	return service.Auth{ClientID: a.ClientId, Token: a.Token}
}

func thriftErr(err error) error {
	return &thriftgen.DataError{Code: int32(service.CodeOf(err)), Message: err.Error()}
}

func (t *thriftConnData) DataType(ctx context.Context, req *thriftgen.DataTypeRequest) (*thriftgen.DataTypeResponse, error) {
	if req == nil {
		return nil, thriftErr(&service.Error{Code: service.InvalidArgument, Msg: "missing request"})
	}
	res, err := t.svc.DataType(ctx, service.Thrift, thriftAuth(req.Auth), req.GroupName, req.EnName)
	if err != nil {
		return nil, thriftErr(err)
	}
	return &thriftgen.DataTypeResponse{Auth: &thriftgen.AuthReply{Token: res.Token}, CodeId: res.CodeID, CnName: res.CnName}, nil
}

func (t *thriftConnData) DataList(ctx context.Context, req *thriftgen.DataListRequest) (*thriftgen.DataListResponse, error) {
	if req == nil {
		return nil, thriftErr(&service.Error{Code: service.InvalidArgument, Msg: "missing request"})
	}
	tok, items, err := t.svc.DataList(ctx, service.Thrift, thriftAuth(req.Auth), int(req.N))
	if err != nil {
		return nil, thriftErr(err)
	}
	if t.conn != nil && t.conn.framed {
		est := answerEstimate(len(items), t.perItem)
		release, err := t.answers.reserve(ctx, nil, est)
		if err != nil {
			return nil, thriftErr(budgetErr(err))
		}
		t.conn.hold(release, est)
	}
	return &thriftgen.DataListResponse{Auth: &thriftgen.AuthReply{Token: tok}, Items: t.items.First(len(items))}, nil
}

// ThriftConfig is the library configuration of a Go Thrift client.
func ThriftConfig() *thrift.TConfiguration {
	return &thrift.TConfiguration{MaxFrameSize: MaxThriftFrame, MaxMessageSize: MaxThriftFrame}
}

// ThriftServerConfig is go-server's: requests up to MaxThriftRequest, and each
// connection's reads and writes bounded by IdleTimeout.
func ThriftServerConfig() *thrift.TConfiguration {
	return &thrift.TConfiguration{MaxFrameSize: MaxThriftRequest, MaxMessageSize: MaxThriftRequest, SocketTimeout: IdleTimeout}
}

// ThriftFactories returns go-server's transport and protocol factories for the
// names it accepts (transport framed|buffered, protocol binary|compact), with conf
// (ThriftServerConfig) as their limits.
func ThriftFactories(transport, protocol string, conf *thrift.TConfiguration) (thrift.TTransportFactory, thrift.TProtocolFactory, error) {
	var tf thrift.TTransportFactory
	switch transport {
	case "", "framed":
		tf = thrift.NewTFramedTransportFactoryConf(thrift.NewTTransportFactory(), conf)
	case "buffered":
		tf = thrift.NewTBufferedTransportFactory(64 << 10)
	default:
		return nil, nil, fmt.Errorf("thrift transport %q: want framed|buffered", transport)
	}
	var pf thrift.TProtocolFactory
	switch protocol {
	case "", "binary":
		pf = thrift.NewTBinaryProtocolFactoryConf(conf)
	case "compact":
		pf = thrift.NewTCompactProtocolFactoryConf(conf)
	default:
		return nil, nil, fmt.Errorf("thrift protocol %q: want binary|compact", protocol)
	}
	return tf, pf, nil
}
