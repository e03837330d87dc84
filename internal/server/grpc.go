package server

import (
	"context"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/rpcbed/rpcbed/internal/gen/pb"
	"github.com/rpcbed/rpcbed/internal/service"
)

// grpcData adapts the service core to pb.DataServer.
type grpcData struct {
	pb.UnimplementedDataServer
	svc     *service.Service
	items   *service.Table[*pb.Item]
	answers *answers
	conns   *connBudgets
	pending *pendingAnswers
}

func newGRPCData(svc *service.Service, a *answers, conns *connBudgets, pending *pendingAnswers) *grpcData {
	return &grpcData{svc: svc, items: service.NewTable(PBItem), answers: a, conns: conns, pending: pending}
}

// pendingAnswers hands a DataList answer's reservation from its handler to the
// codec, which ties it to the encoded bytes: grpc-go frees them once they are
// written to the connection (or the stream is gone), and that releases it.
type pendingAnswers struct{ m sync.Map } // *pb.DataListResponse -> func()

func (p *pendingAnswers) put(ctx context.Context, resp *pb.DataListResponse, release func()) {
	p.m.Store(resp, release)
	// A response that is never encoded (the call ended first) releases when the
	// call's context ends.
	context.AfterFunc(ctx, func() {
		if r, ok := p.m.LoadAndDelete(resp); ok {
			r.(func())()
		}
	})
}

func (p *pendingAnswers) take(v any) func() {
	if p == nil {
		return nil
	}
	resp, ok := v.(*pb.DataListResponse)
	if !ok {
		return nil
	}
	if r, ok := p.m.LoadAndDelete(resp); ok {
		return r.(func())
	}
	return nil
}

// PBItem converts a generated item to its protobuf form.
func PBItem(it service.Item) *pb.Item {
	return &pb.Item{Id: it.ID, Name: it.Name, CreatedAt: it.CreatedAt, Score: it.Score,
		Enabled: it.Enabled, ParentId: it.ParentID, Note: it.Note, Tags: it.Tags}
}

func pbAuth(a *pb.Auth) service.Auth {
	return service.Auth{ClientID: a.GetClientId(), Token: a.GetToken()}
}

func grpcErr(err error) error {
	return status.Error(codes.Code(service.CodeOf(err)), err.Error())
}

func (g *grpcData) DataType(ctx context.Context, req *pb.DataTypeRequest) (*pb.DataTypeResponse, error) {
	res, err := g.svc.DataType(ctx, service.GRPC, pbAuth(req.GetAuth()), req.GetGroupName(), req.GetEnName())
	if err != nil {
		return nil, grpcErr(err)
	}
	return &pb.DataTypeResponse{Auth: &pb.AuthReply{Token: res.Token}, CodeId: res.CodeID, CnName: res.CnName}, nil
}

func (g *grpcData) DataList(ctx context.Context, req *pb.DataListRequest) (*pb.DataListResponse, error) {
	tok, items, err := g.svc.DataList(ctx, service.GRPC, pbAuth(req.GetAuth()), int(req.GetN()))
	if err != nil {
		return nil, grpcErr(err)
	}
	// The items are shared by every response: marshaling only reads them.
	resp := &pb.DataListResponse{Auth: &pb.AuthReply{Token: tok}, Items: g.items.First(len(items))}
	if est := answerEstimate(len(items), itemProto); est >= SmallAnswer && g.answers != nil {
		var conn *budget
		if p, ok := peer.FromContext(ctx); ok {
			conn = g.conns.of(p.Addr)
		}
		release, err := g.answers.reserve(ctx, conn, est)
		if err != nil {
			return nil, grpcErr(budgetErr(err))
		}
		g.pending.put(ctx, resp, release)
	}
	return resp, nil
}
