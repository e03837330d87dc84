package server

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rpcbed/rpcbed/internal/gen/pb"
	"github.com/rpcbed/rpcbed/internal/service"
)

// grpcData adapts the service core to pb.DataServer.
type grpcData struct {
	pb.UnimplementedDataServer
	svc   *service.Service
	items *service.Table[*pb.Item]
}

func newGRPCData(svc *service.Service) *grpcData {
	return &grpcData{svc: svc, items: service.NewTable(PBItem)}
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
	return &pb.DataListResponse{Auth: &pb.AuthReply{Token: tok}, Items: g.items.First(len(items))}, nil
}
