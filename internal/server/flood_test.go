package server_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/protobuf/proto"

	"github.com/rpcbed/rpcbed/internal/gen/pb"
	"github.com/rpcbed/rpcbed/internal/gen/thriftgen"
	"github.com/rpcbed/rpcbed/internal/server"
)

// Before: one EMFILE ended Thrift's accept loop for good, with nothing
// logged. The child go-server gets 64 file descriptors; 80 connections held on the
// Thrift port exhaust them, and 10 more on each other port find none left, so every
// listener's accept fails with EMFILE. Each must log it and, once the connections
// are released, serve a normal call again.
func TestAcceptSurvivesEMFILE(t *testing.T) {
	c := startChild(t, "RPCBED_SERVER_NOFILE=64")
	var held []net.Conn
	defer func() {
		for _, h := range held {
			h.Close()
		}
	}()
	// Thrift first, until its accept fails; only then the others, so that no
	// descriptor is left for them either.
	for _, l := range []struct {
		names []string
		addrs []net.Addr
		n     int
	}{{[]string{"thrift"}, []net.Addr{c.thrift}, 80}, {[]string{"grpc", "http"}, []net.Addr{c.grpc, c.http}, 10}} {
		for _, addr := range l.addrs {
			for range l.n {
				h, err := net.DialTimeout("tcp", addr.String(), 10*time.Second)
				if err != nil {
					t.Fatal(err) // the kernel's backlog takes them even when the server cannot
				}
				held = append(held, h)
			}
		}
		for _, name := range l.names {
			want := name + ": accept: accept tcp"
			if !waitFor(5*time.Second, func() bool { return strings.Contains(c.stderr.String(), want) }) {
				t.Errorf("%s listener logged no accept error (%q) with every descriptor in use (%d open)", name, want, c.fds(t))
			}
		}
	}
	if !strings.Contains(c.stderr.String(), "too many open files") {
		t.Errorf("no EMFILE logged")
	}
	for _, h := range held {
		h.Close()
	}
	held = nil
	for p, cl := range map[string]caller{"grpc": dialGRPC(t, c.grpc), "thrift": dialThrift(t, c.thrift), "http": dialHTTP(t, c.http)} {
		t.Run(p, func(t *testing.T) { stillServes(t, cl) })
	}
}

// Flood bounds: N connections, each claiming a huge frame or header list and
// sending up to perConn bytes of it, held for at most floodHold.
const (
	floodConns   = 100
	floodPerConn = 6 << 20
	floodHold    = 10 * time.Second
	// floodRSS is the child's peak RSS allowed during a flood (VmHWM). Before the
	// limits, the gRPC and Thrift floods below took it past 600 MB.
	floodRSS = 512 << 20
)

// frameHeader is an HTTP/2 frame header.
func frameHeader(length int, typ, flags byte, stream uint32) []byte {
	b := []byte{byte(length >> 16), byte(length >> 8), byte(length), typ, flags}
	return binary.BigEndian.AppendUint32(b, stream)
}

// hpackInt encodes v with an n-bit prefix (RFC 7541 5.1) into first's low bits.
func hpackInt(first byte, n uint, v int) []byte {
	max := 1<<n - 1
	if v < max {
		return []byte{first | byte(v)}
	}
	b := []byte{first | byte(max)}
	for v -= max; v >= 128; v >>= 7 {
		b = append(b, byte(v%128)|0x80)
	}
	return append(b, byte(v))
}

// grpcHeaderFlood opens an HTTP/2 connection and sends one header list claiming a
// 16 MiB value: a HEADERS frame without END_HEADERS, then CONTINUATION frames.
func grpcHeaderFlood(conn net.Conn, perConn int) error {
	const chunk = 16 << 10 // the default SETTINGS_MAX_FRAME_SIZE
	if _, err := conn.Write(append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), frameHeader(0, 4, 0, 0)...)); err != nil {
		return err
	}
	block := append([]byte{0x00}, hpackInt(0, 7, 5)...) // literal, new name, no indexing
	block = append(block, "x-big"...)
	block = append(block, hpackInt(0, 7, 16<<20-1024)...)
	if _, err := conn.Write(append(frameHeader(len(block), 1, 0, 1), block...)); err != nil {
		return err
	}
	payload := make([]byte, chunk)
	for i := range payload {
		payload[i] = 'v'
	}
	for sent := 0; sent < perConn; sent += chunk {
		if _, err := conn.Write(append(frameHeader(chunk, 9, 0, 1), payload...)); err != nil {
			return err
		}
	}
	return nil
}

// thriftFrameFlood claims a frame just under the client-side maximum (16 MiB) and
// sends perConn bytes of it.
func thriftFrameFlood(conn net.Conn, perConn int) error {
	if _, err := conn.Write(binary.BigEndian.AppendUint32(nil, server.MaxThriftFrame-1)); err != nil {
		return err
	}
	return writeFill(conn, perConn)
}

// httpHeaderFlood sends one header line that never ends.
func httpHeaderFlood(conn net.Conn, perConn int) error {
	if _, err := conn.Write([]byte("GET /v1/datalist?n=2 HTTP/1.1\r\nHost: x\r\nX-Big: ")); err != nil {
		return err
	}
	return writeFill(conn, perConn)
}

func writeFill(conn net.Conn, n int) error {
	b := make([]byte, 64<<10)
	for i := range b {
		b[i] = 'v'
	}
	for sent := 0; sent < n; sent += len(b) {
		if _, err := conn.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// TestFlood holds floodConns connections on one port of a child go-server, each
// claiming a huge frame or header list; the child's peak RSS must stay under
// floodRSS, and a normal call on the same port made during the flood must succeed.
func TestFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("flood tier: -short")
	}
	tests := []struct {
		name  string
		addr  func(*child) net.Addr
		dial  func(t *testing.T, c *child) caller
		flood func(net.Conn, int) error
	}{
		{"grpc header list", func(c *child) net.Addr { return c.grpc }, func(t *testing.T, c *child) caller { return dialGRPC(t, c.grpc) }, grpcHeaderFlood},
		{"thrift frame", func(c *child) net.Addr { return c.thrift }, func(t *testing.T, c *child) caller { return dialThrift(t, c.thrift) }, thriftFrameFlood},
		{"http header", func(c *child) net.Addr { return c.http }, func(t *testing.T, c *child) caller { return dialHTTP(t, c.http) }, httpHeaderFlood},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := startChild(t)
			normal := tc.dial(t, c)
			stillServes(t, normal) // connected before the flood
			base := c.status(t, "VmHWM")
			var (
				wg    sync.WaitGroup
				mu    sync.Mutex
				conns []net.Conn
				cut   int // connections the server closed before perConn was sent
			)
			deadline := time.Now().Add(floodHold)
			for range floodConns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					conn, err := net.DialTimeout("tcp", tc.addr(c).String(), 10*time.Second)
					if err != nil {
						t.Error(err)
						return
					}
					conn.SetDeadline(deadline)
					mu.Lock()
					conns = append(conns, conn)
					mu.Unlock()
					if tc.flood(conn, floodPerConn) != nil {
						mu.Lock()
						cut++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			defer func() {
				for _, conn := range conns {
					conn.Close()
				}
			}()
			// The flood's connections are still open: a normal call must get through.
			stillServes(t, normal)
			stillServes(t, tc.dial(t, c))
			peak := c.status(t, "VmHWM")
			t.Logf("%d connections, %d cut by the server; peak RSS %d MB (before the flood %d MB)",
				len(conns), cut, peak>>20, base>>20)
			if peak > floodRSS {
				t.Errorf("peak RSS %d MB during the flood; want under %d MB", peak>>20, floodRSS>>20)
			}
		})
	}
}

// Before: 40 DataType calls with 4 MiB names took +503 MB, still held
// afterwards. Each must be refused (the Thrift frame is past MaxThriftRequest), the
// memory must not stay held, and a normal call must work afterwards.
func TestHugeNamesNotStored(t *testing.T) {
	c := startChild(t)
	before := c.status(t, "VmRSS")
	name := strings.Repeat("n", 4<<20)
	for i := range 40 {
		cl := dialThrift(t, c.thrift) // a refused frame closes the connection
		_, err := cl.c.DataType(context.Background(), &thriftgen.DataTypeRequest{Auth: &thriftgen.Auth{ClientId: "me"}, GroupName: fmt.Sprint(i), EnName: name})
		if err == nil {
			t.Fatalf("call %d with a 4 MiB name succeeded; want it refused", i)
		}
	}
	stillServes(t, dialThrift(t, c.thrift))
	after := c.status(t, "VmRSS")
	t.Logf("RSS %d MB before, %d MB after", before>>20, after>>20)
	if after-before > 64<<20 {
		t.Errorf("RSS grew by %d MB after 40 refused calls; want under 64 MB", (after-before)>>20)
	}
}

// Non-reading callers: each asks for DataList(100000) with a 4 KiB
// receive buffer and reads nothing. 100 of them took go-server to 3158 MB (HTTP),
// 1048 MB (Thrift) and 334 MB (gRPC), and none was cut while held.
const (
	nonReaders     = 100
	nonReaderItems = 100000
	// nonReaderHold is how long the callers hold before the checks: every answer
	// that fits the budget is built and stuck by then.
	nonReaderHold = 4 * time.Second
)

// dialSmallRcvbuf connects with SO_RCVBUF 4096, as the probe did.
func dialSmallRcvbuf(addr net.Addr) (net.Conn, error) {
	d := net.Dialer{Timeout: 10 * time.Second, Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	return d.Dial("tcp", addr.String())
}

// grpcDataListCall opens an HTTP/2 connection and sends one DataList(n) call,
// without reading anything back (not even the server's SETTINGS).
func grpcDataListCall(conn net.Conn, n int) error { return grpcDataListCalls(conn, n, 1) }

// grpcDataListCalls is grpcDataListCall with streams calls on the connection.
func grpcDataListCalls(conn net.Conn, n, streams int) error {
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		return err
	}
	fr := http2.NewFramer(conn, nil)
	if err := fr.WriteSettings(); err != nil {
		return err
	}
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", "/rpcbed.data.Data/DataList"},
		{":authority", "x"}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
		enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	msg, err := proto.Marshal(&pb.DataListRequest{Auth: &pb.Auth{ClientId: "me"}, N: int32(n)})
	if err != nil {
		return err
	}
	body := append(binary.BigEndian.AppendUint32([]byte{0}, uint32(len(msg))), msg...)
	for i := range streams {
		id := uint32(2*i + 1)
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndHeaders: true}); err != nil {
			return err
		}
		if err := fr.WriteData(id, true, body); err != nil {
			return err
		}
	}
	return nil
}

// One gRPC connection's streams share its budget: 40 DataList(100000) calls on
// one connection that reads nothing hold at most ConnAnswerBudget, and a normal
// call on another connection is answered meanwhile.
func TestGRPCConnBudget(t *testing.T) {
	s := start(t, true)
	conn, err := dialSmallRcvbuf(s.GRPCAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := grpcDataListCalls(conn, nonReaderItems, 40); err != nil {
		t.Fatal(err)
	}
	c := &child{http: s.HTTPAddr}
	var st server.Stats
	if !waitFor(20*time.Second, func() bool { st = childStats(t, c); return st.Answers.Waits > 0 }) {
		t.Fatalf("no call waited for the budget; stats %+v", st.Answers)
	}
	stillServes(t, dialGRPC(t, s.GRPCAddr))
	st = childStats(t, c)
	t.Logf("answers held %d MB, %d waits", st.Answers.HeldBytes>>20, st.Answers.Waits)
	if st.Answers.HeldBytes > server.ConnAnswerBudget || st.Answers.HeldBytes == 0 {
		t.Errorf("one connection holds %d bytes of answers; want above 0 and at most %d", st.Answers.HeldBytes, server.ConnAnswerBudget)
	}
}

// thriftDataListCall sends one framed, binary DataList(n) call.
func thriftDataListCall(conn net.Conn, n int) error {
	b := binary.BigEndian.AppendUint32(nil, 0x80010001)
	b = binary.BigEndian.AppendUint32(b, 8)
	b = append(b, "DataList"...)
	b = binary.BigEndian.AppendUint32(b, 1)
	b = append(b, 12, 0, 1, 12, 0, 1, 11, 0, 1, 0, 0, 0, 2, 'm', 'e', 11, 0, 2, 0, 0, 0, 0, 0) // req{auth{"me", ""}
	b = append(b, 8, 0, 2)
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	_, err := conn.Write(frame(append(b, 0, 0)))
	return err
}

func httpDataListCall(conn net.Conn, n int) error {
	_, err := fmt.Fprintf(conn, "GET /v1/datalist?n=%d HTTP/1.1\r\nHost: x\r\nX-Client-Id: me\r\n\r\n", n)
	return err
}

// childStats reads the child's /stats.
func childStats(t *testing.T, c *child) server.Stats {
	t.Helper()
	cl := &http.Client{Timeout: 10 * time.Second}
	resp, err := cl.Get("http://" + c.http.String() + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st server.Stats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestNonReadingCallers holds nonReaders non-reading DataList(100000) callers on
// each protocol of a go-server process (so the RSS is its own, and without the
// race detector's overhead):
// its peak RSS must stay under floodRSS, the answer bytes it holds within the
// budget, a normal call during the hold must succeed, and the callers whose
// answers were built must be cut once they have not read for the stall timeout.
func TestNonReadingCallers(t *testing.T) {
	if testing.Short() {
		t.Skip("flood tier: -short")
	}
	const stall = 3 * time.Second // go-server's default is 10 s; shorter keeps the test short
	bin := buildGoServer(t)
	tests := []struct {
		name string
		addr func(*child) net.Addr
		dial func(t *testing.T, c *child) caller
		call func(net.Conn, int) error
	}{
		{"grpc", func(c *child) net.Addr { return c.grpc }, func(t *testing.T, c *child) caller { return dialGRPC(t, c.grpc) }, grpcDataListCall},
		{"thrift", func(c *child) net.Addr { return c.thrift }, func(t *testing.T, c *child) caller { return dialThrift(t, c.thrift) }, thriftDataListCall},
		{"http", func(c *child) net.Addr { return c.http }, func(t *testing.T, c *child) caller { return dialHTTP(t, c.http) }, httpDataListCall},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := startGoServer(t, bin, "-stall-timeout", stall.String())
			stillServes(t, tc.dial(t, c))
			base := c.status(t, "VmHWM")
			var conns []net.Conn
			defer func() {
				for _, conn := range conns {
					conn.Close()
				}
			}()
			sent := time.Now()
			for range nonReaders {
				conn, err := dialSmallRcvbuf(tc.addr(c))
				if err != nil {
					t.Fatal(err)
				}
				conns = append(conns, conn)
				if err := tc.call(conn, nonReaderItems); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(nonReaderHold)
			// The callers still hold: a normal call on a new connection gets through.
			stillServes(t, tc.dial(t, c))
			st := childStats(t, c)
			peak := c.status(t, "VmHWM")
			t.Logf("%d callers held %v: peak RSS %d MB (before %d MB); answers held %d MB of %d MB, %d calls waited",
				len(conns), time.Since(sent).Round(100*time.Millisecond), peak>>20, base>>20,
				st.Answers.HeldBytes>>20, st.Answers.BudgetBytes>>20, st.Answers.Waits)
			if peak > floodRSS {
				t.Errorf("peak RSS %d MB behind %d non-reading callers; want under %d MB", peak>>20, nonReaders, floodRSS>>20)
			}
			if st.Answers.HeldBytes > st.Answers.BudgetBytes || st.Answers.HeldBytes == 0 {
				t.Errorf("answer bytes held %d; want above 0 and within the budget %d", st.Answers.HeldBytes, st.Answers.BudgetBytes)
			}
			// The first answers were built at once; their callers have not read
			// since, so by the stall timeout (and a margin for a loaded machine) they
			// are cut and their budget goes to the waiting ones.
			time.Sleep(time.Until(sent.Add(stall + 4*time.Second)))
			st = childStats(t, c)
			t.Logf("%d of %d callers cut %v after their call", st.Answers.Cut, len(conns), time.Since(sent).Round(100*time.Millisecond))
			if st.Answers.Cut == 0 {
				t.Errorf("no non-reading caller cut %v after its call; want those holding answers cut after the %v stall", time.Since(sent), stall)
			}
			stillServes(t, tc.dial(t, c))
		})
	}
}
