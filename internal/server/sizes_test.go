package server_test

import (
	"encoding/json"
	"math"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rpcbed/rpcbed/internal/auth"
	"github.com/rpcbed/rpcbed/internal/gen/pb"
	"github.com/rpcbed/rpcbed/internal/server"
	"github.com/rpcbed/rpcbed/internal/service"
)

// TestDataListSizes prints the encoded DataList response sizes next to the
// published ones and checks they are within 15 %.
func TestDataListSizes(t *testing.T) {
	published := []struct {
		n           int
		proto, json int
	}{
		{2, 87, 315}, {20, 556, 2198}, {200, 5527, 21199}, {2000, 56928, 213000}, {5000, 143928, 534000},
	}
	a, _ := auth.New([]byte("s"), 0)
	tok := a.Issue("client")
	t.Logf("%6s %10s %10s %7s %10s %10s %7s", "n", "protobuf", "published", "diff", "json", "published", "diff")
	for _, p := range published {
		items := service.Items(p.n)
		pbItems := make([]*pb.Item, len(items))
		for i, it := range items {
			pbItems[i] = server.PBItem(it)
		}
		b, err := proto.Marshal(&pb.DataListResponse{Auth: &pb.AuthReply{Token: tok}, Items: pbItems})
		if err != nil {
			t.Fatal(err)
		}
		j, err := json.Marshal(service.DataListBody{Message: "ok", Auth: service.TokenBody{Token: tok}, N: p.n, Items: items})
		if err != nil {
			t.Fatal(err)
		}
		j = append(j, '\n') // the encoder's newline is part of the body
		dp := float64(len(b))/float64(p.proto) - 1
		dj := float64(len(j))/float64(p.json) - 1
		t.Logf("%6d %10d %10d %+6.1f%% %10d %10d %+6.1f%%", p.n, len(b), p.proto, 100*dp, len(j), p.json, 100*dj)
		for name, d := range map[string]float64{"protobuf": dp, "json": dj} {
			if math.Abs(d) > 0.15 {
				t.Errorf("n=%d: %s size off the published one by %+.1f%%; want within 15%%", p.n, name, 100*d)
			}
		}
	}
}
