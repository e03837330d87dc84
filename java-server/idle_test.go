package javaserver_test

// Idle connections against the five Java baselines (issue 28 #3, #4): idleConns
// connections that connect and then send nothing (gRPC's send the HTTP/2 preface and
// SETTINGS first, as an idle channel does) are held while a normal call runs; the call
// must succeed, and the baseline must not have closed any of them. Java Thrift closed
// callers behind about 1,073 of them (its pool of 1,024 threads was full) and Dubbo
// behind 2,000 (at most 1,024 connections). RPCBED_IDLE_CONNS sets the count (make
// idle-java IDLE=10000 measures 10,000); the figures go to the test log.

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/testbed"
)

// idleConns is the count the suite holds against each baseline (issue 28's "done when").
const idleConns = 2000

func idleCount(t *testing.T) int {
	n := idleConns
	if v := os.Getenv("RPCBED_IDLE_CONNS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > 50000 {
			t.Fatalf("RPCBED_IDLE_CONNS=%q: want 1..50000", v)
		}
	}
	return n
}

// raiseFDLimit makes room for need descriptors in this process and the baselines it
// starts (they inherit it; the JVM raises its soft limit to the hard one by itself). Go
// already runs with the soft limit at the hard one; root may raise the hard limit too.
func raiseFDLimit(t *testing.T, need uint64) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("getrlimit: %v", err)
	}
	if lim.Cur >= need {
		return
	}
	want := lim
	want.Cur = need
	if want.Max < need {
		want.Max = need
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
		testbed.Missing(t, testbed.Required("java"), "the test needs %d file descriptors; the limit is %d (hard %d) and raising it failed: %v (ulimit -Hn)",
			need, lim.Cur, lim.Max, err)
	}
	t.Logf("file descriptor limit raised from %d (hard %d) to %d", lim.Cur, lim.Max, want.Cur)
}

// sockets counts a process's open sockets (/proc/PID/fd).
func sockets(t *testing.T, pid int) int {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(dir + "/" + e.Name()); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

// parallel runs f(i) for i in 0..n-1 on width goroutines.
func parallel(n, width int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < width; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// openIdle opens n connections to addr that send hello (may be nil) and then nothing.
func openIdle(addr string, n int, hello []byte) ([]net.Conn, error) {
	conns := make([]net.Conn, n)
	errs := make([]error, n)
	parallel(n, 16, func(i int) {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			errs[i] = err
			return
		}
		conns[i] = c
		if hello != nil {
			c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			_, errs[i] = c.Write(hello)
		}
	})
	var open []net.Conn
	var first error
	failed := 0
	for i, c := range conns {
		if c != nil {
			open = append(open, c)
		}
		if errs[i] != nil {
			failed++
			if first == nil {
				first = errs[i]
			}
		}
	}
	if failed > 0 {
		return open, fmt.Errorf("%d of %d connections failed, first: %v", failed, n, first)
	}
	return open, nil
}

// closedByPeer counts the connections the server has closed (EOF or reset), reading and
// dropping whatever it sent meanwhile (Ice's ValidateConnection, HTTP/2 SETTINGS).
func closedByPeer(conns []net.Conn) int {
	var mu sync.Mutex
	closed := 0
	parallel(len(conns), 16, func(i int) {
		b := make([]byte, 512)
		for {
			conns[i].SetReadDeadline(time.Now().Add(5 * time.Millisecond))
			_, err := conns[i].Read(b)
			if err == nil {
				continue
			}
			if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
				mu.Lock()
				closed++
				mu.Unlock()
			}
			return
		}
	})
	return closed
}

// timedCall is normalCall returning the run's wall time and its mean time per call.
func (w *worker) timedCall(t *testing.T, proto, addr string) (time.Duration, float64) {
	t.Helper()
	start := time.Now()
	code, out := w.run("-proto", proto, "-call", "datatype", "-n", "5", "-timeout", "10s", "-addr", addr)
	took := time.Since(start)
	if code != 0 {
		w.mu.Lock()
		defer w.mu.Unlock()
		t.Fatalf("normal %s call after %v: exit %d; want 0; worker stderr tail:\n%s", proto, took, code, testbed.Tail(w.stderr.String(), 3000))
	}
	r, err := report.Parse(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("normal %s call: report: %v", proto, err)
	}
	if r.Complete != 5 || r.Failed != 0 {
		t.Fatalf("normal %s call: complete %d, failed %d; want 5, 0", proto, r.Complete, r.Failed)
	}
	return took, r.TimePerRequestMs
}

func TestJavaBaselinesIdleConnections(t *testing.T) {
	java := testbed.NeedJava(t)
	n := idleCount(t)
	raiseFDLimit(t, uint64(n)+512)
	w := startWorker(t, java)
	// A roomy -idle-timeout: the connections are held for seconds, and the idle cut is
	// tested in TestJavaBaselinesHostile.
	const idle = 60 * time.Second
	for _, proto := range []string{"grpc", "thrift", "http", "ice", "dubbo"} {
		t.Run(proto, func(t *testing.T) {
			cmd, addrs := testbed.JavaBaseline(t, java, proto, "-idle-timeout", idle.String())
			addr := addrs[proto]
			pid := cmd.Process.Pid
			w.firstCall(t, proto, addr)
			before := rss(t, pid)
			var hello []byte
			if proto == "grpc" {
				// An idle gRPC channel has done its handshake (a bare TCP connection is cut
				// after the 10 s handshake limit instead).
				hello = append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), h2Frame(0x4, 0, 0, nil)...)
				hello = append(hello, h2Frame(0x4, 0x1, 0, nil)...)
			}
			opened := time.Now()
			conns, err := openIdle(addr, n, hello)
			defer func() {
				for _, c := range conns {
					c.Close()
				}
			}()
			if err != nil {
				t.Fatalf("opening %d idle connections: %v", n, err)
			}
			openTook := time.Since(opened)
			// The kernel completes the handshakes; wait until the baseline has accepted them.
			held := sockets(t, pid)
			for deadline := time.Now().Add(20 * time.Second); held < n && time.Now().Before(deadline); held = sockets(t, pid) {
				time.Sleep(100 * time.Millisecond)
			}
			accepted := time.Since(opened)
			took, perCall := w.timedCall(t, proto, addr)
			during := rss(t, pid)
			if c := closedByPeer(conns); c > 0 {
				t.Errorf("%s closed %d of %d idle connections within %v; want none closed before -idle-timeout %v",
					proto, c, n, time.Since(opened).Round(time.Millisecond), idle)
			}
			t.Logf("%s: %d idle connections opened in %v, %d sockets held by the baseline after %v; normal call (verify + 5 calls) in %v, %.3f ms per call; RSS %d MB before, %d MB with them",
				proto, n, openTook.Round(time.Millisecond), held, accepted.Round(time.Millisecond), took.Round(time.Millisecond), perCall, before>>20, during>>20)
			if held < n {
				t.Errorf("the baseline holds %d sockets with %d idle connections open; want at least %d", held, n, n)
			}
			if during > rssBound {
				t.Errorf("RSS %d MB with %d idle connections; want at most %d MB", during>>20, n, rssBound>>20)
			}
			for _, c := range conns {
				c.Close()
			}
			conns = nil
			w.normalCall(t, proto, addr) // and after they are gone
		})
	}
}
