package javaserver_test

// Hostile input against the five Java baselines (issue 18): each case sends what broke
// a baseline before, then makes a normal call on the same port; the flood tier holds
// floodConns connections that each claim a huge frame, header or body, checks the
// baseline's RSS stays under rssBound and that a normal call made meanwhile succeeds.
// Normal calls go through one long-lived java-client worker (worker mode), so each
// costs a run, not a JVM start. Everything is bounded in count and time.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/report"

	"github.com/rpcbed/rpcbed/internal/testbed"
)

const (
	floodConns = 100
	// rssBound is the stated bound of a baseline's resident memory under the flood
	// (README "Limits"); before the fixes Ice and Thrift reached 5.9-6.3 GB.
	rssBound = 512 << 20
	// idleTimeout is the baselines' -idle-timeout in these tests.
	idleTimeout = 2 * time.Second
)

// stackTrace tells whether a reply carries a Java stack trace.
func stackTrace(b []byte) bool {
	return bytes.Contains(b, []byte("\tat ")) || bytes.Contains(b, []byte(".java:"))
}

// worker is one java-client worker process; run hands it one run.
type worker struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr bytes.Buffer
	mu     sync.Mutex
	n      int
}

func startWorker(t *testing.T, java testbed.Java) *worker {
	t.Helper()
	argv := java.Command("worker")
	w := &worker{t: t, cmd: exec.Command(argv[0], argv[1:]...)}
	var err error
	if w.in, err = w.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := w.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	w.cmd.Stderr = &lockedWriter{w: &w.stderr, mu: &w.mu}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.out = bufio.NewReader(stdout)
	t.Cleanup(func() {
		w.in.Close() // EOF is quit
		done := make(chan error, 1)
		go func() { done <- w.cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("worker after EOF: %v", err)
			}
		case <-time.After(15 * time.Second):
			w.cmd.Process.Kill()
			<-done
			t.Errorf("worker did not exit within 15 s of EOF")
		}
	})
	line, err := readLine(w.out, 90*time.Second)
	if err != nil || !strings.HasPrefix(line, "#rpcbed-worker ready java ") {
		t.Fatalf("worker ready line %q, %v; want #rpcbed-worker ready java PID", line, err)
	}
	return w
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// readLine reads one line within d (the worker must answer; a hung one fails the test).
func readLine(r *bufio.Reader, d time.Duration) (string, error) {
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := r.ReadString('\n')
		ch <- res{strings.TrimSuffix(s, "\n"), err}
	}()
	select {
	case x := <-ch:
		return x.s, x.err
	case <-time.After(d):
		return "", fmt.Errorf("no line within %v", d)
	}
}

// run makes one run and returns its exit code and report bytes.
func (w *worker) run(args ...string) (int, []byte) {
	w.t.Helper()
	w.n++
	id := "r" + strconv.Itoa(w.n)
	if _, err := io.WriteString(w.in, strings.Join(append([]string{"run", id}, args...), "\t")+"\n"); err != nil {
		w.t.Fatalf("worker stdin: %v", err)
	}
	var rep bytes.Buffer
	for {
		line, err := readLine(w.out, 2*time.Minute)
		if err != nil {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.t.Fatalf("worker run %s: %v; stderr:\n%s", id, err, w.stderr.String())
		}
		if rest, ok := strings.CutPrefix(line, "#rpcbed-worker done "+id+" exit="); ok {
			code, _ := strconv.Atoi(rest)
			return code, rep.Bytes()
		}
		rep.WriteString(line + "\n")
	}
}

// normalCall makes 5 checked calls to addr and fails the test unless all succeed.
func (w *worker) normalCall(t *testing.T, proto, addr string) {
	t.Helper()
	w.callWithin(t, proto, addr, "10s")
}

// firstCall is the first normal call to a baseline: the worker may load and compile the
// protocol's client for the first time, which took over 10 s to connect under a load
// average of 50 on two cores.
func (w *worker) firstCall(t *testing.T, proto, addr string) {
	t.Helper()
	w.callWithin(t, proto, addr, "60s")
}

func (w *worker) callWithin(t *testing.T, proto, addr, timeout string) {
	t.Helper()
	code, out := w.run("-proto", proto, "-call", "datatype", "-n", "5", "-timeout", timeout, "-addr", addr)
	if code != 0 {
		w.mu.Lock()
		defer w.mu.Unlock()
		t.Fatalf("normal %s call: exit %d; want 0; worker stderr tail:\n%s", proto, code, testbed.Tail(w.stderr.String(), 3000))
	}
	r, err := report.Parse(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("normal %s call: report: %v", proto, err)
	}
	if r.Complete != 5 || r.Failed != 0 {
		t.Fatalf("normal %s call: complete %d, failed %d; want 5, 0", proto, r.Complete, r.Failed)
	}
}

// rss reads a process's VmRSS in bytes.
func rss(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatalf("read RSS: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	t.Fatalf("no VmRSS for pid %d", pid)
	return 0
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	return c
}

// readAll reads what the server sends until it closes or d passes; closed tells which.
func readAll(c net.Conn, d time.Duration) (got []byte, closed bool) {
	c.SetReadDeadline(time.Now().Add(d))
	var b bytes.Buffer
	buf := make([]byte, 4096)
	for b.Len() < 1<<20 {
		n, err := c.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			ne, ok := err.(net.Error)
			return b.Bytes(), !(ok && ne.Timeout())
		}
	}
	return b.Bytes(), false
}

// ---- wire helpers ----------------------------------------------------------------

// iceHeader is an IceP message header: magic, protocol 1.0, encoding 1.0, type, size.
func iceHeader(msgType byte, size int32) []byte {
	h := []byte{'I', 'c', 'e', 'P', 1, 0, 1, 0, msgType, 0, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(h[10:], uint32(size))
	return h
}

func iceString(b *bytes.Buffer, s string) {
	b.WriteByte(byte(len(s))) // every string here is under 255 bytes
	b.WriteString(s)
}

// iceRequest is a DataType request whose encapsulation is params (encoding 1.1).
func iceRequest(params []byte, encapSize int32) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, int32(1)) // request id
	iceString(&b, "data")                           // identity name
	iceString(&b, "")                               // category
	b.WriteByte(0)                                  // facet: empty sequence
	iceString(&b, "DataType")
	b.WriteByte(0) // mode normal
	b.WriteByte(0) // context: empty
	binary.Write(&b, binary.LittleEndian, encapSize)
	b.Write([]byte{1, 1})
	b.Write(params)
	return append(iceHeader(0, int32(14+b.Len())), b.Bytes()...)
}

// dubboHeader: magic, flags (request, two-way, event?, hessian2 = 2), status, id, body length.
func dubboHeader(event bool, id int64, bodyLen int32) []byte {
	h := make([]byte, 16)
	h[0], h[1] = 0xda, 0xbb
	h[2] = 0x80 | 0x40 | 2
	if event {
		h[2] |= 0x20
	}
	binary.BigEndian.PutUint64(h[4:], uint64(id))
	binary.BigEndian.PutUint32(h[12:], uint32(bodyLen))
	return h
}

// h2Frame is one HTTP/2 frame.
func h2Frame(typ, flags byte, stream uint32, payload []byte) []byte {
	f := []byte{byte(len(payload) >> 16), byte(len(payload) >> 8), byte(len(payload)), typ, flags, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(f[5:], stream)
	return append(f, payload...)
}

// hpackLiteral encodes headers as literals without indexing (no Huffman): every name
// and value here is under 127 bytes.
func hpackLiteral(kv ...string) []byte {
	var b []byte
	for i := 0; i < len(kv); i += 2 {
		b = append(b, 0, byte(len(kv[i])))
		b = append(b, kv[i]...)
		b = append(b, byte(len(kv[i+1])))
		b = append(b, kv[i+1]...)
	}
	return b
}

// grpcOpen is an HTTP/2 client preface, SETTINGS and the HEADERS of a DataType call.
func grpcOpen(authority string) []byte {
	b := []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	b = append(b, h2Frame(0x4, 0, 0, nil)...)
	b = append(b, h2Frame(0x1, 0x4, 1, hpackLiteral(":method", "POST", ":scheme", "http",
		":path", "/rpcbed.data.Data/DataType", ":authority", authority,
		"content-type", "application/grpc", "te", "trailers"))...)
	return b
}

// ---- the suite -------------------------------------------------------------------

type hostileCase struct {
	name string
	// send writes the hostile input on a fresh connection and checks the reply.
	send func(t *testing.T, addr string)
}

// flood is what each of the floodConns connections sends before it stalls.
type floodFunc func(addr string) []byte

func TestJavaBaselinesHostile(t *testing.T) {
	java := testbed.NeedJava(t)
	w := startWorker(t, java)
	// Only the idle cases need a short -idle-timeout; on a busy machine a client may sit
	// silent for seconds while it sets up (Dubbo), so the others keep a roomy one.
	const roomy = 60 * time.Second
	suites := []struct {
		proto string
		idle  time.Duration
		cases []hostileCase
		flood floodFunc
	}{
		{"ice", roomy, iceCases(), func(string) []byte {
			return iceHeader(0, 66060288) // issue 18 #2: a 14-byte header claiming 63 MiB
		}},
		{"thrift", idleTimeout, thriftCases(), func(string) []byte {
			return []byte{0x04, 0, 0, 0} // issue 18 #5: a frame header claiming 64 MiB
		}},
		{"http", roomy, httpCases(), func(string) []byte {
			// issue 18 #8: a body claiming 1 TiB, 1 KiB of it sent.
			return append([]byte("POST /v1/datatype?groupName=g&enName=e HTTP/1.1\r\nHost: x\r\n"+
				"Content-Length: 1099511627776\r\n\r\n"), bytes.Repeat([]byte("x"), 1024)...)
		}},
		{"grpc", idleTimeout, grpcCases(), func(addr string) []byte {
			// A gRPC message prefix claiming the 1 MiB limit, 5 bytes of it sent.
			return append(grpcOpen(addr), h2Frame(0x0, 0, 1, []byte{0, 0, 0x10, 0, 0, 1, 2, 3, 4, 5})...)
		}},
		{"dubbo", roomy, dubboCases(), func(string) []byte {
			// A body claiming 60 MiB (under the 64 MB payload limit), 16 bytes sent.
			return append(dubboHeader(false, 7, 60<<20), bytes.Repeat([]byte{0x4e}, 16)...)
		}},
	}
	for _, s := range suites {
		t.Run(s.proto, func(t *testing.T) {
			cmd, addrs := testbed.JavaBaseline(t, java, s.proto, "-idle-timeout", s.idle.String())
			addr := addrs[s.proto]
			w.firstCall(t, s.proto, addr)
			for _, c := range s.cases {
				t.Run(c.name, func(t *testing.T) {
					c.send(t, addr)
					w.normalCall(t, s.proto, addr) // the port still serves
				})
			}
			t.Run("flood", func(t *testing.T) {
				before := rss(t, cmd.Process.Pid)
				var conns []net.Conn
				defer func() {
					for _, c := range conns {
						c.Close()
					}
				}()
				payload := s.flood(addr)
				for i := 0; i < floodConns; i++ {
					c, err := net.DialTimeout("tcp", addr, 5*time.Second)
					if err != nil {
						t.Logf("flood connection %d: %v (the baseline may refuse: fine)", i, err)
						continue
					}
					conns = append(conns, c)
					c.SetWriteDeadline(time.Now().Add(2 * time.Second))
					c.Write(payload) // a refused frame may close the connection: fine
				}
				time.Sleep(500 * time.Millisecond) // let the baseline read what it was sent
				w.normalCall(t, s.proto, addr)
				got := rss(t, cmd.Process.Pid)
				t.Logf("%s: RSS %d MB before, %d MB with %d connections claiming huge sizes",
					s.proto, before>>20, got>>20, len(conns))
				if got > rssBound {
					t.Errorf("RSS %d MB under the flood; want at most %d MB", got>>20, rssBound>>20)
				}
			})
		})
	}
}

func iceCases() []hostileCase {
	return []hostileCase{
		{"header claiming 63 MiB", func(t *testing.T, addr string) {
			c := dial(t, addr)
			defer c.Close()
			c.Write(iceHeader(0, 66060288))
			// The server closes the connection (MemoryLimitException) instead of
			// allocating 63 MiB; its first 14 bytes are the ValidateConnection message.
			if _, closed := readAll(c, 10*time.Second); !closed {
				t.Errorf("connection still open 10 s after a header claiming 63 MiB; want it closed")
			}
		}},
		{"malformed encapsulation", func(t *testing.T, addr string) {
			c := dial(t, addr)
			defer c.Close()
			// DataTypeRequest cut after two bytes: the servant cannot unmarshal it.
			c.Write(iceRequest([]byte{5, 'a'}, 8))
			got, _ := readAll(c, 3*time.Second)
			if stackTrace(got) {
				t.Errorf("reply carries a Java stack trace:\n%q", got)
			}
			if !bytes.Contains(got, []byte("malformed request")) {
				t.Errorf("reply %q; want an UnknownLocalException saying malformed request", got)
			}
		}},
	}
}

func thriftCases() []hostileCase {
	return []hostileCase{
		{"frame claiming 64 MiB", func(t *testing.T, addr string) {
			c := dial(t, addr)
			defer c.Close()
			c.Write([]byte{0x04, 0, 0, 0})
			if _, closed := readAll(c, 10*time.Second); !closed {
				t.Errorf("connection still open 10 s after a frame claiming 64 MiB; want it closed")
			}
		}},
		{"idle connection", func(t *testing.T, addr string) {
			c := dial(t, addr)
			defer c.Close()
			start := time.Now()
			if _, closed := readAll(c, idleTimeout+8*time.Second); !closed {
				t.Errorf("idle connection still open after %v; want it closed after -idle-timeout %v", time.Since(start), idleTimeout)
			}
		}},
		{"half frame then silence", func(t *testing.T, addr string) {
			c := dial(t, addr)
			defer c.Close()
			c.Write([]byte{0, 0, 0x10, 0, 0x80, 0x01}) // claims 4 KiB, sends 2 bytes
			if _, closed := readAll(c, idleTimeout+8*time.Second); !closed {
				t.Errorf("half-sent frame's connection still open; want it closed after -idle-timeout %v", idleTimeout)
			}
		}},
	}
}

func httpCases() []hostileCase {
	return []hostileCase{
		{"body claiming 1 TiB", func(t *testing.T, addr string) {
			c := dial(t, addr)
			defer c.Close()
			fmt.Fprintf(c, "POST /v1/datatype?groupName=g&enName=e HTTP/1.1\r\nHost: x\r\nContent-Length: 1099511627776\r\n\r\nxx")
			got, _ := readAll(c, 2*time.Second)
			if !bytes.HasPrefix(got, []byte("HTTP/1.1 413 ")) {
				t.Errorf("reply %q; want HTTP/1.1 413", got[:min(len(got), 200)])
			}
		}},
		{"70 KiB header", func(t *testing.T, addr string) {
			c := dial(t, addr)
			defer c.Close()
			c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n", strings.Repeat("a", 70<<10))
			// Over maxReqHeaderSize (64 KiB): the JDK server closes the connection.
			if got, closed := readAll(c, 5*time.Second); !closed || bytes.HasPrefix(got, []byte("HTTP/1.1 200")) {
				t.Errorf("reply %q, closed %v; want the connection closed without an answer", got[:min(len(got), 100)], closed)
			}
		}},
		{"3 MiB chunked body", func(t *testing.T, addr string) {
			c := dial(t, addr)
			defer c.Close()
			fmt.Fprintf(c, "POST /v1/datatype?groupName=g&enName=e HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
			chunk := append([]byte("100000\r\n"), append(bytes.Repeat([]byte("y"), 1<<20), "\r\n"...)...)
			go func() {
				for i := 0; i < 3; i++ {
					c.SetWriteDeadline(time.Now().Add(5 * time.Second))
					if _, err := c.Write(chunk); err != nil {
						return
					}
				}
			}()
			got, _ := readAll(c, 10*time.Second)
			if !bytes.HasPrefix(got, []byte("HTTP/1.1 413 ")) {
				t.Errorf("reply %q; want HTTP/1.1 413", got[:min(len(got), 200)])
			}
		}},
		{"slowloris 40 connections", func(t *testing.T, addr string) {
			var conns []net.Conn
			for i := 0; i < 40; i++ {
				c := dial(t, addr)
				conns = append(conns, c)
				fmt.Fprintf(c, "GET /v1/datatype?groupName=g&enName=e HTTP/1.1\r\nHost: x\r\nX-Slow: ")
			}
			defer func() {
				for _, c := range conns {
					c.Close()
				}
			}()
			time.Sleep(300 * time.Millisecond)
			// The normal call after this case runs while the 40 are still held: see send's caller.
			// Here: one more full request on a fresh connection must be answered.
			c := dial(t, addr)
			defer c.Close()
			fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
			got, _ := readAll(c, 5*time.Second)
			if !bytes.HasPrefix(got, []byte("HTTP/1.1 200 ")) {
				t.Errorf("GET /healthz beside 40 slowloris connections: %q; want HTTP/1.1 200", got)
			}
		}},
	}
}

func grpcCases() []hostileCase {
	return []hostileCase{
		{"idle HTTP/2 connection", func(t *testing.T, addr string) {
			c := dial(t, addr)
			defer c.Close()
			c.Write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
			c.Write(h2Frame(0x4, 0, 0, nil))
			c.Write(h2Frame(0x4, 0x1, 0, nil)) // ACK of the server's SETTINGS
			start := time.Now()
			// grpc-java closes an idle connection gracefully: GOAWAY and a PING, then it
			// waits up to 10 s for the PING's ACK (this peer never sends one) and closes.
			if _, closed := readAll(c, idleTimeout+20*time.Second); !closed {
				t.Errorf("idle HTTP/2 connection still open after %v; want it closed after -idle-timeout %v", time.Since(start), idleTimeout)
			}
		}},
		{"message claiming 64 MiB", func(t *testing.T, addr string) {
			c := dial(t, addr)
			defer c.Close()
			c.Write(append(grpcOpen(addr), h2Frame(0x0, 0, 1, []byte{0, 0x04, 0, 0, 0})...))
			got, _ := readAll(c, 3*time.Second)
			// RESOURCE_EXHAUSTED (8) in the trailers, no allocation of the claim.
			if stackTrace(got) {
				t.Errorf("reply carries a Java stack trace: %q", got)
			}
		}},
	}
}

func dubboCases() []hostileCase {
	bad := func(t *testing.T, addr string, event bool) {
		c := dial(t, addr)
		defer c.Close()
		body := []byte("\x91\xff\xfe garbage that is no hessian2 \x00\x01")
		c.Write(append(dubboHeader(event, 42, int32(len(body))), body...))
		got, closed := readAll(c, 3*time.Second)
		t.Logf("reply %d bytes (closed %v): %q", len(got), closed, got[:min(len(got), 300)])
		if stackTrace(got) {
			t.Errorf("reply carries a Java stack trace:\n%q", got)
		}
	}
	return []hostileCase{
		{"bad event", func(t *testing.T, addr string) { bad(t, addr, true) }},
		{"bad request body", func(t *testing.T, addr string) { bad(t, addr, false) }},
		{"body claiming 1 GiB", func(t *testing.T, addr string) {
			c := dial(t, addr)
			defer c.Close()
			c.Write(dubboHeader(false, 43, 1<<30))
			// Refused by the payload limit (64 MB) before any of it is buffered; Dubbo
			// answers or closes, either is fine, a stack trace is not.
			got, closed := readAll(c, 3*time.Second)
			t.Logf("reply %d bytes (closed %v): %q", len(got), closed, got[:min(len(got), 300)])
			if stackTrace(got) {
				t.Errorf("reply carries a Java stack trace:\n%q", got)
			}
		}},
	}
}

// TestJavaBaselineStats: -stats-port serves docs/method.md section 10's JSON, counting
// every answered call (errors too) as go-server does, and survives garbage.
func TestJavaBaselineStats(t *testing.T) {
	java := testbed.NeedJava(t)
	w := startWorker(t, java)
	for _, proto := range []string{"thrift", "http"} {
		t.Run(proto, func(t *testing.T) {
			_, addrs := testbed.JavaBaseline(t, java, proto, "-stats-port", "0")
			before := time.Now()
			w.normalCall(t, proto, addrs[proto]) // verify (2 calls) + 5
			if code, _ := w.run("-proto", proto, "-call", "datalist", "-items", "3", "-n", "4", "-addr", addrs[proto]); code != 0 {
				t.Fatalf("datalist run: exit %d; want 0", code)
			}
			// Garbage on the stats port first: it must go on serving.
			c := dial(t, addrs["stats"])
			c.Write([]byte("\x00\x01garbage\r\n\r\nPOST /stats HTTP/1.1\r\n\r\n"))
			readAll(c, time.Second)
			c.Close()
			st := getStats(t, addrs["stats"])
			if st.Server != "rpcbed-java-"+proto {
				t.Errorf("server %q; want rpcbed-java-%s", st.Server, proto)
			}
			now := float64(time.Now().UnixMicro()) / 1e6
			if st.TimeUnixS < float64(before.UnixMicro())/1e6 || st.TimeUnixS > now {
				t.Errorf("time_unix_s %.6f; want between %.6f and %.6f", st.TimeUnixS, float64(before.UnixMicro())/1e6, now)
			}
			if st.CPUUserS <= 0 || st.CPUSystemS < 0 {
				t.Errorf("cpu user %v system %v; want user > 0, system >= 0", st.CPUUserS, st.CPUSystemS)
			}
			got := st.Calls[proto]
			want := map[string]statsCount{"datatype": {7, 0}, "datalist": {6, 0}}
			for call, wc := range want {
				if got[call] != wc {
					t.Errorf("calls[%s][%s] = %+v; want %+v (verify's 2 + the run's calls)", proto, call, got[call], wc)
				}
			}
		})
	}
}

type statsCount struct {
	Requests int64 `json:"requests"`
	Errors   int64 `json:"errors"`
}

type statsDoc struct {
	Server     string                           `json:"server"`
	TimeUnixS  float64                          `json:"time_unix_s"`
	CPUUserS   float64                          `json:"cpu_user_s"`
	CPUSystemS float64                          `json:"cpu_system_s"`
	Calls      map[string]map[string]statsCount `json:"calls"`
}

func getStats(t *testing.T, addr string) statsDoc {
	t.Helper()
	cl := &http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get("http://" + addr + "/stats")
	if err != nil {
		t.Fatalf("GET /stats: %v", err)
	}
	defer resp.Body.Close()
	var st statsDoc
	if resp.StatusCode != 200 {
		t.Fatalf("GET /stats: HTTP %d; want 200", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatalf("GET /stats: %v", err)
	}
	return st
}
