package server_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/gen/thriftgen"
	"github.com/rpcbed/rpcbed/internal/server"
)

// Issue 18 #1: one EMFILE ended Thrift's accept loop for good, with nothing
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

// Issue 18 #7: 40 DataType calls with 4 MiB names took +503 MB, still held
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
