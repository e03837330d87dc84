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
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"

	"github.com/rpcbed/rpcbed/internal/gen/pb"
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
