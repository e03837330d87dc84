package front

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/load"
	"github.com/rpcbed/rpcbed/internal/service"
	"github.com/rpcbed/rpcbed/internal/testbed"
)

// hostileFront runs the front as Serve configures it, on a :0 port, in front
// of an in-process go-server over proto; only ReadHeaderTimeout is shortened so
// the slow-headers case does not wait 10 s.
func hostileFront(t *testing.T, proto string) string {
	t.Helper()
	addrs := testbed.InProcess(t, "framed", "binary")
	f, err := New(context.Background(), load.Config{Proto: proto, Addr: addrs[proto], Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpServer(f.Handler())
	srv.ReadHeaderTimeout = 2 * time.Second
	srv.ErrorLog = nil
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// frontStillServes is the normal call that must work after every hostile case.
func frontStillServes(t *testing.T, addr string) {
	t.Helper()
	c := &http.Client{Timeout: 15 * time.Second} // a hang guard, not a timing assertion
	defer c.CloseIdleConnections()
	resp, err := c.Get("http://" + addr + "/v1/datalist?n=2")
	if err != nil {
		t.Fatalf("normal call after hostile input: %v", err)
	}
	defer resp.Body.Close()
	var l service.DataListBody
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil || resp.StatusCode != http.StatusOK || len(l.Items) != 2 {
		t.Fatalf("normal call after hostile input = %d, %d items, %v; want 200 with 2 items", resp.StatusCode, len(l.Items), err)
	}
}

func TestFrontHostileRequests(t *testing.T) {
	addr := hostileFront(t, load.ProtoGRPC)
	badN := fmt.Sprintf("want an integer in 0..%d", service.MaxItems)
	tests := []testbed.Refusal{
		{"unknown route", "GET", "/v2/nothing", 404, "no route GET /v2/nothing"},
		{"route with extra segment", "GET", "/v1/datalist/extra?n=1", 404, "no route"},
		{"root", "GET", "/", 404, "no route"},
		{"wrong method", "POST", "/v1/datalist?n=1", 404, "no route POST"},
		{"n missing", "GET", "/v1/datalist", 400, badN},
		{"n empty", "GET", "/v1/datalist?n=", 400, badN},
		{"n not a number", "GET", "/v1/datalist?n=ten", 400, badN},
		{"n float", "GET", "/v1/datalist?n=1.5", 400, badN},
		{"n exponent", "GET", "/v1/datalist?n=1e3", 400, badN},
		{"n hex", "GET", "/v1/datalist?n=0x10", 400, badN},
		{"n with space", "GET", "/v1/datalist?n=+2", 400, badN},
		{"n NUL", "GET", "/v1/datalist?n=%00", 400, badN},
		{"n negative", "GET", "/v1/datalist?n=-1", 400, badN},
		{"n one too many", "GET", fmt.Sprintf("/v1/datalist?n=%d", service.MaxItems+1), 400, badN},
		{"n past int32", "GET", "/v1/datalist?n=2147483648", 400, badN},
		{"n overflows int64", "GET", "/v1/datalist?n=99999999999999999999999", 400, badN},
		{"n of 10000 digits", "GET", "/v1/datalist?n=" + strings.Repeat("9", 10000), 400, badN},
		{"n bad escape", "GET", "/v1/datalist?n=%zz", 400, "bad query"},
		{"other pair bad escape", "GET", "/v1/datalist?%zz&n=2", 400, "bad query"},
		{"n truncated escape", "GET", "/v1/datalist?n=2%", 400, "bad query"},
	}
	for _, tc := range tests {
		t.Run(tc.Name, func(t *testing.T) {
			testbed.CheckRefusal(t, addr, tc, 15*time.Second)
			frontStillServes(t, addr)
		})
	}
}

func TestFrontHostileBytes(t *testing.T) {
	addr := hostileFront(t, load.ProtoGRPC)
	ok := testbed.Request("/v1/datalist?n=2", "")
	// More header bytes than the front accepts (net/http's default when unset).
	limit := httpServer(nil).MaxHeaderBytes
	if limit == 0 {
		limit = http.DefaultMaxHeaderBytes
	}
	// A client that half-closes after its request makes net/http cancel the
	// request's context (and so the front's upstream call): cases that want an
	// answer end with "Connection: close" instead.
	last := testbed.Request("/v1/datalist?n=2", "Connection: close\r\n")
	tests := []struct {
		name       string
		send       string
		closeWrite bool
		want       []int // status of every response before the server closes
	}{
		{"garbage", "\x00\xff\x10garbage\r\n\r\n", false, []int{400}},
		{"TLS hello then a request", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n" + ok, false, []int{400}},
		{"request then garbage", ok + "\x00\x01\x02\x03\r\n\r\n", false, []int{200, 400}},
		{"three pipelined requests", ok + ok + last, false, []int{200, 200, 200}},
		{"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", false, []int{400}},
		{"noise without a newline", strings.Repeat("A", 64<<10), true, nil},
		{"truncated request", "GET /v1/datalist?n=2 HTTP/1.1\r\nHo", true, []int{400}},
		{"oversized headers", testbed.Request("/v1/datalist?n=2", "X-Big: "+strings.Repeat("b", limit+64<<10)+"\r\n"), false, []int{431}},
		{"oversized query", testbed.Request("/v1/datalist?n=2&pad="+strings.Repeat("q", limit+64<<10), ""), false, []int{431}},
		{"body on GET", testbed.Request("/v1/datalist?n=2", "Content-Length: 11\r\n") + "hello world" + last, false, []int{200, 200}},
		{"large body on GET", testbed.Request("/v1/datalist?n=2", "Content-Length: 4194304\r\n") + strings.Repeat("z", 4<<20), false, []int{200}},
		{"malformed chunked body on GET", testbed.Request("/v1/datalist?n=2", "Transfer-Encoding: chunked\r\n") + "zz\r\nhello\r\n" + ok, false, []int{200}},
		{"short body on GET", testbed.Request("/v1/datalist?n=2", "Content-Length: 100\r\n") + "short", true, []int{200}},
		{"negative Content-Length", testbed.Request("/v1/datalist?n=2", "Content-Length: -5\r\n"), false, []int{400}},
		{"two Content-Lengths", testbed.Request("/v1/datalist?n=2", "Content-Length: 1\r\nContent-Length: 2\r\n") + "ab", false, []int{400}},
		{"no Host", "GET /v1/datalist?n=2 HTTP/1.1\r\n\r\n", false, []int{400}},
		{"HTTP/1.0 request", "GET /v1/datalist?n=2 HTTP/1.0\r\n\r\n", false, []int{200}},
		{"unknown version", "GET /v1/datalist?n=2 HTTP/9.9\r\nHost: x\r\n\r\n", false, []int{505}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := testbed.RawExchange(t, addr, []byte(tc.send), tc.closeWrite, 15*time.Second)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("responses = %v; want %v", got, tc.want)
			}
			frontStillServes(t, addr)
		})
	}

	t.Run("slow headers", func(t *testing.T) {
		if httpServer(nil).ReadHeaderTimeout <= 0 {
			t.Fatal("the front has no ReadHeaderTimeout: a client can hold a connection open forever")
		}
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		io.WriteString(conn, "GET /v1/datalist?n=2 HTTP/1.1\r\nHost: x\r\n") // and never finish
		conn.SetReadDeadline(time.Now().Add(15 * time.Second))
		_, err = io.ReadAll(conn)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("the front kept a connection with unfinished headers open past ReadHeaderTimeout")
		}
		frontStillServes(t, addr)
	})
}

// A client that goes away mid-response or before the answer must not break the
// front's connection to the server, whatever the protocol.
func TestFrontHostileDisconnect(t *testing.T) {
	for _, p := range []string{load.ProtoGRPC, load.ProtoThrift, load.ProtoHTTP} {
		t.Run(p, func(t *testing.T) {
			addr := hostileFront(t, p)
			tests := []struct {
				name     string
				readBack int // bytes read before hanging up
			}{
				{"gone before the answer", 0},
				{"gone after the status line", 16},
				{"gone mid-body", 64 << 10},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					for i := 0; i < 5; i++ {
						conn, err := net.Dial("tcp", addr)
						if err != nil {
							t.Fatal(err)
						}
						conn.SetDeadline(time.Now().Add(15 * time.Second))
						io.WriteString(conn, testbed.Request("/v1/datalist?n=5000", ""))
						if tc.readBack > 0 {
							if _, err := io.ReadFull(conn, make([]byte, tc.readBack)); err != nil {
								t.Fatalf("reading the first %d bytes of n=5000: %v", tc.readBack, err)
							}
						}
						conn.(*net.TCPConn).SetLinger(0) // hang up hard: a reset
						conn.Close()
					}
					frontStillServes(t, addr)
				})
			}
			// Whole answers still come through intact after all that.
			resp, err := (&http.Client{Timeout: 30 * time.Second}).Get("http://" + addr + "/v1/datalist?n=5000")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var l service.DataListBody
			if err := json.NewDecoder(resp.Body).Decode(&l); err != nil || len(l.Items) != 5000 {
				t.Errorf("n=5000 after the disconnects: %d items, %v; want 5000", len(l.Items), err)
			}
		})
	}
}
