package server_test

import (
	"strconv"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rpcbed/rpcbed/internal/gen/pb"
	"github.com/rpcbed/rpcbed/internal/server"
)

func FuzzDataListQuery(f *testing.F) {
	for _, s := range []string{"n=2", "n=", "", "n=-1", "n=1&n=2", "n=%zz", "n=99999999999999999999", "a=b;c", "n=+5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		n, err := server.DataListQuery(q)
		if err != nil {
			return
		}
		// Whatever parsed must be what the query said.
		if again, err := server.DataListQuery("n=" + strconv.Itoa(n)); err != nil || again != n {
			t.Fatalf("n=%d does not parse back: %d, %v", n, again, err)
		}
	})
}

func FuzzDataTypeQuery(f *testing.F) {
	for _, s := range []string{"groupName=USER_EVENT&enName=x", "groupName=%", "", "enName=&groupName="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		server.DataTypeQuery(q) // must not panic
	})
}

// FuzzDecodeLenient: the gRPC codec's fallback decodes what protobuf decodes, to
// the same message, and never panics on anything else.
func FuzzDecodeLenient(f *testing.F) {
	for _, m := range []proto.Message{
		&pb.DataTypeRequest{Auth: &pb.Auth{ClientId: "me", Token: "t"}, GroupName: "USER_EVENT", EnName: "app"},
		&pb.DataListRequest{Auth: &pb.Auth{ClientId: "me"}, N: 200},
	} {
		b, _ := proto.Marshal(m)
		f.Add(b)
	}
	f.Add([]byte{0x0a, 0x02, 0x0a, 0xff})
	f.Add([]byte{0xaa, 0x06, 0x02, 0xc3, 0x28})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, newMsg := range []func() proto.Message{
			func() proto.Message { return new(pb.DataTypeRequest) },
			func() proto.Message { return new(pb.DataListRequest) },
		} {
			strict, lenient := newMsg(), newMsg()
			serr := proto.Unmarshal(b, strict)
			lerr := server.DecodeLenient(b, lenient.ProtoReflect())
			if serr == nil && (lerr != nil || !proto.Equal(strict, lenient)) {
				t.Fatalf("protobuf decodes %x to %v; lenient gives %v, %v", b, strict, lenient, lerr)
			}
		}
	})
}
