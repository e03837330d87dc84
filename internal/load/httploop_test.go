package load

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The event loop against the real go-server (auth on: every call carries the
// token of the one before): closed loop with -n, open loop with -n and -t.
func TestEventLoopGoServer(t *testing.T) {
	if !loopSupported {
		t.Skip("no event loop on this system")
	}
	addr := goServer(t)[ProtoHTTP]
	cases := []struct {
		name string
		cfg  Config
	}{
		{"closed-n", Config{Call: CallDataType, Concurrency: 8, Requests: 2000}},
		{"closed-datalist-200", Config{Call: CallDataList, Items: 200, Concurrency: 3, Requests: 300}},
		// A response of many buffers: the edge-triggered loop reads it to the end.
		{"closed-datalist-5000", Config{Call: CallDataList, Items: 5000, Concurrency: 2, Requests: 40}},
		{"closed-t-warmup", Config{Call: CallDataType, Concurrency: 5, Duration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond}},
		{"open-n", Config{Call: CallDataType, Concurrency: 4, Requests: 400, Rate: 2000}},
		{"open-t", Config{Call: CallDataType, Concurrency: 7, Duration: 400 * time.Millisecond, Rate: 1000}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Proto, cfg.Check, cfg.KeepAlive, cfg.Addr = ProtoHTTP, CheckLength, true, addr
			var log bytes.Buffer
			res, err := Run(context.Background(), cfg, &log)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if !strings.Contains(log.String(), "event loop(s) over") {
				t.Errorf("log %q; want the event loop named", log.String())
			}
			var lo, med, hi, n int64
			at := strings.Index(log.String(), "measured calls per caller:")
			if at < 0 {
				t.Errorf("log %q: no calls per caller", log.String())
			} else if _, err := fmt.Sscanf(log.String()[at:], "measured calls per caller: min %d, median %d, max %d (%d callers)", &lo, &med, &hi, &n); err != nil {
				t.Errorf("log %q: no calls per caller: %v", log.String(), err)
			} else if n != int64(cfg.Concurrency) || lo > med || med > hi || hi > res.Complete || lo*n > res.Complete || hi*n < res.Complete {
				t.Errorf("calls per caller min %d, median %d, max %d over %d callers; want ordered, %d callers, bounding %d calls", lo, med, hi, n, cfg.Concurrency, res.Complete)
			}
			if res.Failed != 0 {
				t.Errorf("failed = %d (%v); want 0\n%s", res.Failed, res.Errors(), log.String())
			}
			if cfg.Requests > 0 && res.Complete != cfg.Requests {
				t.Errorf("complete = %d; want %d", res.Complete, cfg.Requests)
			}
			if res.Complete == 0 || res.Hist.TotalCount() != res.Complete {
				t.Errorf("complete %d, latencies %d; want equal and above 0", res.Complete, res.Hist.TotalCount())
			}
			if res.Bytes != res.DocLength*res.Complete {
				t.Errorf("bytes = %d; want %d x %d", res.Bytes, res.DocLength, res.Complete)
			}
			if cfg.Rate > 0 {
				// An open loop cannot end before its last call is due.
				if cfg.Requests > 0 {
					if min := time.Duration(float64(cfg.Requests-int64(cfg.Concurrency)) / float64(cfg.Rate) * float64(time.Second)); res.TimeTaken < min {
						t.Errorf("time taken %v; want at least %v at %d calls/s", res.TimeTaken, min, cfg.Rate)
					}
				} else if want := int64(float64(cfg.Rate) * cfg.Duration.Seconds()); res.Complete != want {
					t.Errorf("complete = %d; want %d calls due in %v at %d/s", res.Complete, want, cfg.Duration, cfg.Rate)
				}
			}
			if got := res.Report().Rpcbed.Check; got != CheckLength {
				t.Errorf("report Check = %q; want %q", got, CheckLength)
			}
		})
	}
}

// hostileServer answers the first good requests on the whole server correctly
// (the verify call through net/http and the loop's prime), then every request
// with answer, which may close the connection.
func hostileServer(t *testing.T, good int, answer func(w *bufio.Writer, c net.Conn) bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var served atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	body := `{"code":0,"message":"","auth":{"token":"tok"},"codeId":101,"cnName":"x"}`
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				br, bw := bufio.NewReader(c), bufio.NewWriter(c)
				for {
					// Read one request head.
					for {
						line, err := br.ReadString('\n')
						if err != nil {
							return
						}
						if line == "\r\n" {
							break
						}
					}
					if served.Add(1) <= int64(good) {
						fmt.Fprintf(bw, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nX-Token: tok\r\nServer: hostile\r\n\r\n%s", len(body), body)
						bw.Flush()
						continue
					}
					if !answer(bw, c) {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// Whatever the server sends after a good start, every measured call ends with
// the failure it deserves, within the per-call timeout, and the run ends.
func TestEventLoopHostileServer(t *testing.T) {
	if !loopSupported {
		t.Skip("no event loop on this system")
	}
	const bodyLen = 72 // the good answer's body
	send := func(s string, keep bool) func(*bufio.Writer, net.Conn) bool {
		return func(w *bufio.Writer, _ net.Conn) bool {
			w.WriteString(s)
			w.Flush()
			return keep
		}
	}
	head := func(extra string, n int) string {
		return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n", n, extra)
	}
	cases := []struct {
		name   string
		answer func(*bufio.Writer, net.Conn) bool
		kind   string
	}{
		{"garbage", send("SSH-2.0-OpenSSH_9.2\r\n\r\n", true), "receive"},
		{"negative length", send("HTTP/1.1 200 OK\r\nContent-Length: -1\r\nX-Token: tok\r\n\r\n", true), "receive"},
		{"huge length", send("HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\nX-Token: tok\r\n\r\n", true), "receive"},
		{"chunked", send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Token: tok\r\n\r\n5\r\nhello\r\n0\r\n\r\n", true), "receive"},
		{"early close in head", send("HTTP/1.1 200 OK\r\nContent-Le", false), "receive"},
		{"close before answer", send("", false), "receive"},
		{"short body", send(head("X-Token: tok\r\n", bodyLen)+"{}", false), "receive"},
		{"extra bytes", send(head("X-Token: tok\r\n", 2)+"{}"+"HTTP/1.1 200 OK\r\n", true), "receive"},
		{"endless head", send("HTTP/1.1 200 OK\r\nX-Pad: "+strings.Repeat("p", 40<<10), true), "receive"},
		{"wrong length", send(head("X-Token: tok\r\n", 2)+"{}", true), "length"},
		{"no token", send(head("", bodyLen)+strings.Repeat(" ", bodyLen), true), "length"},
		{"bad token", send(head("X-Token: a\x01b\r\n", bodyLen)+strings.Repeat(" ", bodyLen), true), "length"},
		{"401", send("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n", true), "unauthenticated"},
		{"503", send("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n", true), "exceptions"},
		{"stall", func(*bufio.Writer, net.Conn) bool { time.Sleep(2 * time.Second); return false }, "timeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			addr := hostileServer(t, 2, tc.answer)
			cfg := Config{Proto: ProtoHTTP, Call: CallDataType, Concurrency: 1, Requests: 5, KeepAlive: true,
				Check: CheckLength, Timeout: 300 * time.Millisecond, Addr: addr}
			var log bytes.Buffer
			start := time.Now()
			res, err := Run(context.Background(), cfg, &log)
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, log.String())
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("run took %v; want it bounded by the per-call timeout", took)
			}
			if res.Complete != 5 || res.Failed != 5 || res.Errors()[tc.kind] != 5 {
				t.Errorf("complete %d, failed %d, errors %v; want 5 calls, all %s\n%s", res.Complete, res.Failed, res.Errors(), tc.kind, log.String())
			}
		})
	}
}

// A server that closes a kept connection between calls costs no failure: the
// call goes again on a new connection, as http.Transport does for a GET.
func TestEventLoopServerClosesKeptConnection(t *testing.T) {
	if !loopSupported {
		t.Skip("no event loop on this system")
	}
	body := `{"code":0,"message":"","auth":{"token":"tok"},"codeId":101,"cnName":"x"}`
	good := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\nX-Token: tok\r\n\r\n%s", len(body), body)
	// Every connection answers two requests, the second with Connection: close
	// every other time and by closing silently afterwards otherwise.
	var n atomic.Int64
	addr := hostileServer(t, 0, func(w *bufio.Writer, c net.Conn) bool {
		w.WriteString(good)
		w.Flush()
		return n.Add(1)%2 == 1
	})
	cfg := Config{Proto: ProtoHTTP, Call: CallDataType, Concurrency: 2, Requests: 50, KeepAlive: true,
		Check: CheckLength, Timeout: time.Second, Addr: addr}
	res, err := Run(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Complete != 50 || res.Failed != 0 {
		t.Errorf("complete %d, failed %d (%v); want 50 and 0", res.Complete, res.Failed, res.Errors())
	}
}

// cannedServer answers every request with one fixed response and allocates
// nothing per request: its reads and writes go to buffers made once.
func cannedServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	body := `{"code":0,"message":"","auth":{"token":"tok"},"codeId":101,"cnName":"x"}`
	resp := []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\nX-Token: tok\r\nServer: canned\r\n\r\n%s", len(body), body))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				buf := make([]byte, 8<<10)
				n := 0
				for {
					m, err := c.Read(buf[n:])
					if err != nil {
						return
					}
					n += m
					// Answer every whole request head in the buffer.
					for {
						i := bytes.Index(buf[:n], crlfcrlf)
						if i < 0 {
							break
						}
						if _, err := c.Write(resp); err != nil {
							return
						}
						n = copy(buf, buf[i+4:n])
					}
					if n == len(buf) {
						return // a head longer than the buffer: not a request of ours
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// The loop allocates nothing per call: over the whole process, a run of 20000
// more calls makes fewer than 0.01 more allocations per call (the run's own
// set-up, verify call and report allocate the same in both).
func TestEventLoopNoAllocsPerCall(t *testing.T) {
	if !loopSupported {
		t.Skip("no event loop on this system")
	}
	addr := cannedServer(t)
	mallocs := func(n int64) uint64 {
		cfg := Config{Proto: ProtoHTTP, Call: CallDataType, Concurrency: 4, Requests: n, KeepAlive: true,
			Check: CheckLength, Addr: addr}
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		res, err := Run(context.Background(), cfg, io.Discard)
		runtime.ReadMemStats(&m1)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if res.Complete != n || res.Failed != 0 {
			t.Fatalf("complete %d, failed %d (%v); want %d and 0", res.Complete, res.Failed, res.Errors(), n)
		}
		return m1.Mallocs - m0.Mallocs
	}
	mallocs(1000) // once first: what a run makes once per process
	short, long := mallocs(1000), mallocs(21000)
	if per := (float64(long) - float64(short)) / 20000; per > 0.01 {
		t.Errorf("%.3f allocations per call (%d for 1000 calls, %d for 21000); want none", per, short, long)
	}
}
