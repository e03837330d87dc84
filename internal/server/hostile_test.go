package server_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"

	"github.com/rpcbed/rpcbed/internal/auth"
	"github.com/rpcbed/rpcbed/internal/gen/pb"
	"github.com/rpcbed/rpcbed/internal/server"
	"github.com/rpcbed/rpcbed/internal/service"
	"github.com/rpcbed/rpcbed/internal/store"
)

// After every hostile case a normal call on the same port must still work.
func stillServes(t *testing.T, c caller) {
	t.Helper()
	if r := c.dataList("after", "", 2); r.code != 0 || r.items != 2 {
		t.Fatalf("normal call after hostile input = %+v; want 2 items", r)
	}
}

// rawThrift writes b to the Thrift port and reads until the server closes the
// connection or answers; it returns what came back.
func rawSend(t *testing.T, addr net.Addr, b []byte, closeWrite bool) []byte {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr.String(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := conn.Write(b); err != nil {
		t.Fatal(err)
	}
	if closeWrite {
		conn.(*net.TCPConn).CloseWrite()
	}
	out, _ := io.ReadAll(conn) // EOF or reset both end the case
	return out
}

func frame(payload []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(payload)))
	return append(b, payload...)
}

// binaryCall is a strict binary-protocol message header for method name.
func binaryCall(name string) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0x80010001) // version 1, CALL
	b = binary.BigEndian.AppendUint32(b, uint32(len(name)))
	b = append(b, name...)
	b = binary.BigEndian.AppendUint32(b, 1) // seqid
	return append(b, 0)                     // STOP: no arguments
}

func TestHostileThrift(t *testing.T) {
	s := start(t, true)
	c := dialThrift(t, s.ThriftAddr)
	tests := []struct {
		name       string
		send       []byte
		closeWrite bool
		wantReply  string // substring expected in the reply; empty: connection just closes
	}{
		{"garbage", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), false, ""},
		{"frame claims 4 GiB", []byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3}, false, ""},
		{"frame claims 17 MiB", binary.BigEndian.AppendUint32(nil, 17<<20), false, ""},
		{"truncated frame", append(binary.BigEndian.AppendUint32(nil, 100), 1, 2, 3), true, ""},
		{"unknown method", frame(binaryCall("NoSuchMethod")), true, "NoSuchMethod"},
		{"string claims 2 GiB", frame(append(binary.BigEndian.AppendUint32(nil, 0x80010001), 0x7f, 0xff, 0xff, 0xff)), true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := rawSend(t, s.ThriftAddr, tc.send, tc.closeWrite)
			if tc.wantReply != "" && !strings.Contains(string(got), tc.wantReply) {
				t.Errorf("reply %q; want an exception naming %q", got, tc.wantReply)
			}
			stillServes(t, c)
		})
	}
}

// rawCodec sends bytes as they are, to put invalid protobuf on the wire.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error)   { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(b []byte, v any) error { *(v.(*[]byte)) = b; return nil }
func (rawCodec) Name() string                    { return "proto" }

var _ encoding.Codec = rawCodec{}

func TestHostileGRPC(t *testing.T) {
	s := start(t, true)
	c := dialGRPC(t, s.GRPCAddr)
	cc, err := grpc.NewClient(s.GRPCAddr.String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	raw := func(method string, b []byte) error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var out []byte
		return cc.Invoke(ctx, method, &b, &out, grpc.ForceCodec(rawCodec{}))
	}
	tests := []struct {
		name string
		call func() error
		want codes.Code
	}{
		{"oversized message", func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := pb.NewDataClient(cc).DataType(ctx, &pb.DataTypeRequest{GroupName: strings.Repeat("x", 2<<20), EnName: "y"})
			return err
		}, codes.ResourceExhausted},
		{"unknown method", func() error { return raw("/rpcbed.data.Data/NoSuchMethod", []byte{}) }, codes.Unimplemented},
		{"unknown service", func() error { return raw("/no.Such/Service", []byte{}) }, codes.Unimplemented},
		{"invalid protobuf", func() error { return raw("/rpcbed.data.Data/DataList", []byte{0xff, 0xff, 0xff, 0xff, 0x0f}) }, codes.Internal},
		{"wrong wire type", func() error { return raw("/rpcbed.data.Data/DataList", []byte{0x12, 0x05}) }, codes.Internal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := status.Code(tc.call()); got != tc.want {
				t.Errorf("code = %v; want %v", got, tc.want)
			}
			stillServes(t, c)
		})
	}
}

func TestHostileHTTP(t *testing.T) {
	s := start(t, true)
	c := dialHTTP(t, s.HTTPAddr)
	base := "http://" + s.HTTPAddr.String()
	get := func(path string, hdr http.Header) (int, string) {
		req, _ := http.NewRequest("GET", base+path, nil)
		for k, v := range hdr {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	tests := []struct {
		name     string
		path     string
		hdr      http.Header
		want     int
		wantBody string
	}{
		{"unknown route", "/v2/nothing", nil, 404, `"code":404`},
		{"n not a number", "/v1/datalist?n=ten", nil, 400, `not an integer`},
		{"n missing", "/v1/datalist", nil, 400, `missing n`},
		{"n overflows int", "/v1/datalist?n=99999999999999999999999", nil, 400, `not an integer`},
		{"n too large", "/v1/datalist?n=100001", nil, 400, `want 0..100000`},
		{"bad escape", "/v1/datalist?n=%zz", nil, 400, `bad query`},
		{"enName missing", "/v1/datatype?groupName=x", nil, 400, `required`},
		{"wrong method route", "/v1/datalist/extra?n=1", nil, 404, ``},
		{"forged token", "/v1/datalist?n=1", http.Header{"X-Token": {strings.Repeat("A", 27)}}, 401, `"code":401`},
		{"oversized headers", "/v1/datalist?n=1", http.Header{"X-Big": {strings.Repeat("b", 128<<10)}}, 431, ``},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := get(tc.path, tc.hdr)
			if code != tc.want || !strings.Contains(body, tc.wantBody) {
				t.Errorf("GET %s = %d %q; want %d with %q", tc.path, code, body, tc.want, tc.wantBody)
			}
			stillServes(t, c)
		})
	}

	t.Run("slow headers", func(t *testing.T) {
		conn, err := net.Dial("tcp", s.HTTPAddr.String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprint(conn, "GET /v1/datalist?n=1 HTTP/1.1\r\nHost: x\r\n") // and never finish
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = bufio.NewReader(conn).ReadString('\n')
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("server kept a connection with unfinished headers open past ReadHeaderTimeout")
		}
		stillServes(t, c)
	})
}

// startIdle runs a go-server whose idle and stall timeouts are short enough to test.
func startIdle(t *testing.T, idle time.Duration) *server.Server {
	t.Helper()
	a, _ := auth.New([]byte("test-secret"), time.Minute)
	svc := service.New(service.Config{Store: store.NewMemory(), Auth: a, CheckAuth: true})
	s, err := server.Start(server.Config{
		GRPCAddr: "127.0.0.1:0", ThriftAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0",
		ReadHeaderTimeout: 300 * time.Millisecond, IdleTimeout: idle, StallTimeout: idle, Log: discardLog(t),
	}, svc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// closedWithin reports whether the server closes conn within d (EOF or reset; a
// read deadline passing means it kept the connection).
func closedWithin(conn net.Conn, d time.Duration) bool {
	conn.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, conn)
	ne, ok := err.(net.Error)
	return !ok || !ne.Timeout()
}

// Before: gRPC and Thrift ports never closed idle or half-open connections.
// A connection that sends nothing, or stops after a call, is closed after the
// idle timeout (Thrift), the handshake timeout or MaxConnectionIdle (gRPC).
func TestIdleConnectionsClosed(t *testing.T) {
	s := startIdle(t, 300*time.Millisecond)
	tests := []struct {
		name string
		addr net.Addr
		send []byte
	}{
		{"thrift, nothing sent", s.ThriftAddr, nil},
		{"thrift, half a frame", s.ThriftAddr, []byte{0, 0, 0, 100, 1, 2}},
		{"thrift, after a call", s.ThriftAddr, frame(binaryCall("NoSuchMethod"))},
		{"grpc, nothing sent", s.GRPCAddr, nil},
		{"http, idle after the connect", s.HTTPAddr, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", tc.addr.String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.Write(tc.send); err != nil {
				t.Fatal(err)
			}
			if !closedWithin(conn, 5*time.Second) {
				t.Errorf("connection still open 5 s after it went idle; want it closed after 300 ms")
			}
		})
	}
	// A gRPC client that made a call and then goes quiet is sent away (GOAWAY):
	// its connection leaves READY.
	t.Run("grpc, idle after a call", func(t *testing.T) {
		cc, err := grpc.NewClient(s.GRPCAddr.String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := pb.NewDataClient(cc).DataList(ctx, &pb.DataListRequest{N: 1}); err != nil {
			t.Fatal(err)
		}
		if !cc.WaitForStateChange(ctx, connectivity.Ready) {
			t.Errorf("connection still READY 5 s after its last call; want it closed after 300 ms idle")
		}
	})
}

// The idle timeout must never cut a connection that keeps calling: calls spaced
// well inside it all succeed on one connection.
func TestIdleTimeoutSparesLiveConnections(t *testing.T) {
	s := startIdle(t, time.Second)
	for p, dial := range map[string]func() caller{
		"grpc":   func() caller { return dialGRPC(t, s.GRPCAddr) },
		"thrift": func() caller { return dialThrift(t, s.ThriftAddr) },
		"http":   func() caller { return dialHTTP(t, s.HTTPAddr) },
	} {
		t.Run(p, func(t *testing.T) {
			c := dial() // connected now: an idle second before the first call would be cut
			for i := range 8 {
				if r := c.dataList("me", "", 200); r.code != 0 || r.items != 200 {
					t.Fatalf("call %d = %+v; want 200 items", i, r)
				}
				time.Sleep(200 * time.Millisecond)
			}
		})
	}
}

// protoString appends a length-delimited field to b.
func protoString(b []byte, field int, v string) []byte {
	b = binary.AppendUvarint(b, uint64(field<<3|2))
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// grpcRawDataType sends a DataTypeRequest encoded by hand, so its strings may be
// invalid UTF-8 (protobuf's own encoder refuses to send them).
func grpcRawDataType(t *testing.T, addr net.Addr, clientID, group, en string) codes.Code {
	cc, err := grpc.NewClient(addr.String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	req := protoString(nil, 1, string(protoString(nil, 1, clientID)))
	req = protoString(req, 101, group)
	req = protoString(req, 102, en)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out []byte
	return status.Code(cc.Invoke(ctx, "/rpcbed.data.Data/DataType", &req, &out, grpc.ForceCodec(rawCodec{})))
}

// Before: invalid UTF-8 names were stored over HTTP and Thrift while gRPC
// refused them (as INTERNAL); names had no size limit. Every protocol now refuses
// both as InvalidArgument, and the port serves a normal call afterwards.
func TestStringsRefusedAlike(t *testing.T) {
	s := start(t, true)
	cs := callers(t, s)
	long := strings.Repeat("n", service.MaxStringBytes+1)
	tests := []struct {
		name              string
		clientID, grp, en string
	}{
		{"invalid UTF-8 group", "me", "USER\xff", en},
		{"invalid UTF-8 entry", "me", group, "\xc3\x28"},
		{"invalid UTF-8 client id", "\xe2\x82", group, en},
		{"group too long", "me", long, en},
		{"entry too long", "me", group, long},
		{"client id too long", long, group, en},
	}
	for _, p := range protos {
		for _, tc := range tests {
			t.Run(p+"/"+tc.name, func(t *testing.T) {
				var got service.Code
				if p == "grpc" {
					got = service.Code(grpcRawDataType(t, s.GRPCAddr, tc.clientID, tc.grp, tc.en))
				} else {
					got = cs[p].dataType(tc.clientID, "", tc.grp, tc.en).code
				}
				if got != service.InvalidArgument {
					t.Errorf("code = %d; want %d (InvalidArgument)", got, service.InvalidArgument)
				}
				stillServes(t, cs[p])
			})
		}
	}
	t.Run("grpc/valid request by hand", func(t *testing.T) {
		if got := grpcRawDataType(t, s.GRPCAddr, "me", group, en); got != codes.OK {
			t.Errorf("code = %v; want OK (the hand encoding is right)", got)
		}
	})
}

// A caller that asks for a big answer and never reads it must not hold the
// encoded response for ever: once a write has made no progress for the stall
// timeout, the server cuts it. (TestIdleTimeoutSparesLiveConnections reads its
// answers at once and is never cut.)
func TestStalledReaderCut(t *testing.T) {
	s := startIdle(t, 500*time.Millisecond)
	req := map[string]struct {
		addr net.Addr
		send []byte
	}{
		"http": {s.HTTPAddr, []byte("GET /v1/datalist?n=100000 HTTP/1.1\r\nHost: x\r\n\r\n")},
		"thrift": {s.ThriftAddr, func() []byte {
			b := binary.BigEndian.AppendUint32(nil, 0x80010001) // DataList(req{auth{"me", ""}, n: 100000})
			b = binary.BigEndian.AppendUint32(b, 8)
			b = append(b, "DataList"...)
			b = binary.BigEndian.AppendUint32(b, 1)
			b = append(b, 12, 0, 1, 12, 0, 1, 11, 0, 1, 0, 0, 0, 2, 'm', 'e', 11, 0, 2, 0, 0, 0, 0, 0)
			b = append(b, 8, 0, 2)
			b = binary.BigEndian.AppendUint32(b, 100000)
			return frame(append(b, 0, 0))
		}()},
	}
	for name, r := range req {
		t.Run(name, func(t *testing.T) {
			d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
				return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
			}}
			conn, err := d.Dial("tcp", r.addr.String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.Write(r.send); err != nil {
				t.Fatal(err)
			}
			// The first byte says the answer is encoded and being written (that takes
			// seconds under -race); then stall well past the idle timeout.
			conn.SetReadDeadline(time.Now().Add(30 * time.Second))
			if _, err := io.ReadFull(conn, make([]byte, 1)); err != nil {
				t.Fatalf("no answer: %v", err)
			}
			time.Sleep(2 * time.Second)
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			n, err := io.Copy(io.Discard, conn)
			n++
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("read %d bytes, then the connection stayed open; want it cut", n)
			}
			if n >= 6<<20 { // the answer is 8.2 MB (Thrift) or 11 MB (JSON); loopback buffers hold about 3 MB
				t.Errorf("read %d bytes after stalling 2 s; want the server to have cut the write", n)
			}
			t.Logf("read %d bytes before the cut", n)
		})
	}
	stillServes(t, dialHTTP(t, s.HTTPAddr))
	stillServes(t, dialThrift(t, s.ThriftAddr))
}

// A half-open gRPC connection (the peer vanished without a FIN, so nothing more
// arrives, not even answers to pings) is closed by keepalive: the server pings
// after KeepaliveTime of silence and gives up after KeepaliveTimeout.
func TestGRPCHalfOpenClosed(t *testing.T) {
	a, _ := auth.New([]byte("test-secret"), time.Minute)
	svc := service.New(service.Config{Store: store.NewMemory(), Auth: a, CheckAuth: true})
	s, err := server.Start(server.Config{
		GRPCAddr: "127.0.0.1:0", IdleTimeout: time.Minute, // only keepalive may close it
		KeepaliveTime: time.Second, KeepaliveTimeout: 500 * time.Millisecond, Log: discardLog(t),
	}, svc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	conn, err := net.Dial("tcp", s.GRPCAddr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A complete handshake, then silence: PINGs go unanswered.
	if _, err := conn.Write(append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), frameHeader(0, 4, 0, 0)...)); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(conn, 10*time.Second) {
		t.Errorf("a connection that answers no ping is still open after 10 s; want it closed after about 1.5 s")
	}
}
