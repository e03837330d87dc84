package probe

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/rpcbed/rpcbed/internal/gen/pb"
	"github.com/rpcbed/rpcbed/internal/server"
	"github.com/rpcbed/rpcbed/internal/service"
)

// DecodeWork is one client call's decoding: unmarshal the n-item DataList answer
// go-server sends, into a fresh message, and check the item count.
func DecodeWork(n int) (func(), error) {
	msg := &pb.DataListResponse{Auth: &pb.AuthReply{Token: "probe"}}
	for _, it := range service.Items(n) {
		msg.Items = append(msg.Items, server.PBItem(it))
	}
	wire, err := proto.Marshal(msg)
	if err != nil {
		return nil, err
	}
	return func() {
		var m pb.DataListResponse
		if err := proto.Unmarshal(wire, &m); err != nil || len(m.Items) != n {
			panic(fmt.Sprintf("probe: decode: %v (%d items)", err, len(m.Items)))
		}
	}, nil
}
