package server

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"google.golang.org/protobuf/proto"

	"github.com/rpcbed/rpcbed/internal/auth"
	"github.com/rpcbed/rpcbed/internal/gen/pb"
	"github.com/rpcbed/rpcbed/internal/gen/thriftgen"
	"github.com/rpcbed/rpcbed/internal/service"
)

// What a DataList(n) call reserves must cover its answer on every protocol (the
// buffer is made that large and never grows), and not by much more, or the
// budget would admit fewer answers than it could.
func TestAnswerEstimate(t *testing.T) {
	a, _ := auth.New([]byte("s"), time.Minute)
	tok := a.Issue("client-with-a-long-id")
	for _, n := range []int{0, 2, 200, 5000, 100000} {
		items := service.Items(n)
		pbItems := newGRPCData(nil, nil, nil, nil).items.First(n)
		thItems := service.NewTable(ThriftItem).First(n)
		j, _ := json.Marshal(service.DataListBody{Message: "ok", Auth: service.TokenBody{Token: tok}, N: n, Items: items})
		p, _ := proto.Marshal(&pb.DataListResponse{Auth: &pb.AuthReply{Token: tok}, Items: pbItems})
		thriftSize := func(pf thrift.TProtocolFactory) int {
			m := thrift.NewTMemoryBuffer()
			pr := pf.GetProtocol(m)
			res := &thriftgen.DataDataListResult{Success: &thriftgen.DataListResponse{Auth: &thriftgen.AuthReply{Token: tok}, Items: thItems}}
			pr.WriteMessageBegin(context.Background(), "DataList", thrift.REPLY, 1)
			res.Write(context.Background(), pr)
			pr.WriteMessageEnd(context.Background())
			return m.Len()
		}
		for _, c := range []struct {
			name    string
			size    int
			perItem int
		}{
			{"json", len(j) + 1, itemJSON},
			{"protobuf", len(p), itemProto},
			{"thrift binary", thriftSize(thrift.NewTBinaryProtocolFactoryConf(nil)), itemThriftBinary},
			{"thrift compact", thriftSize(thrift.NewTCompactProtocolFactoryConf(nil)), itemThriftCompact},
		} {
			est := answerEstimate(n, c.perItem)
			if int64(c.size) > est {
				t.Errorf("%s, n=%d: answer %d bytes; estimate %d is below it", c.name, n, c.size, est)
			}
			if n >= 5000 && float64(est) > 1.25*float64(c.size) {
				t.Errorf("%s, n=%d: answer %d bytes; estimate %d is over 25 %% above it", c.name, n, c.size, est)
			}
		}
	}
}

// The budget: small answers pass free, a full budget makes the next one wait
// until a release or its context ends, and a release twice gives back once.
func TestAnswersReserve(t *testing.T) {
	a := newAnswers(4*SmallAnswer, 2*SmallAnswer)
	ctx := context.Background()
	if _, err := a.reserve(ctx, nil, SmallAnswer-1); err != nil || a.total.held.Load() != 0 {
		t.Fatalf("small answer: err %v, held %d; want free", err, a.total.held.Load())
	}
	conn := a.newConn()
	r1, err := a.reserve(ctx, conn, 10*SmallAnswer) // clamped to the connection's 2
	if err != nil || conn.held.Load() != 2*SmallAnswer || a.total.held.Load() != 2*SmallAnswer {
		t.Fatalf("clamped reservation: err %v, conn %d, total %d", err, conn.held.Load(), a.total.held.Load())
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := a.reserve(short, conn, SmallAnswer); err == nil {
		t.Fatalf("reservation past the connection's budget succeeded; want it to wait and fail with its context")
	}
	got := make(chan error)
	go func() {
		_, err := a.reserve(ctx, conn, SmallAnswer)
		got <- err
	}()
	time.Sleep(20 * time.Millisecond)
	r1()
	r1()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if h := a.total.held.Load(); h != SmallAnswer {
		t.Errorf("held %d after one release (twice) and one reservation; want %d", h, SmallAnswer)
	}
	if a.waits.Load() != 2 || a.refusals.Load() != 1 {
		t.Errorf("waits %d, refusals %d; want 2, 1", a.waits.Load(), a.refusals.Load())
	}
}
