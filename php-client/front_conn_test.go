package phpclient_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/testbed"
)

// frontGet is one front request: status, the X-Rpcbed-Conn and X-Rpcbed-Pid
// headers, and the JSON body's code and message.
type frontAnswer struct {
	status  int
	conn    string
	pid     int
	code    int
	message string
	n       int
	ctype   string
}

func frontGet(c *http.Client, addr, query string) (frontAnswer, error) {
	resp, err := c.Get("http://" + addr + "/v1/datalist?" + query)
	if err != nil {
		return frontAnswer{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return frontAnswer{}, err
	}
	var b struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		N       int    `json:"n"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return frontAnswer{}, fmt.Errorf("status %d, body not JSON (%v): %q", resp.StatusCode, err, testbed.Tail(string(body), 300))
	}
	pid, _ := strconv.Atoi(resp.Header.Get("X-Rpcbed-Pid"))
	return frontAnswer{status: resp.StatusCode, conn: resp.Header.Get("X-Rpcbed-Conn"), pid: pid,
		code: b.Code, message: b.Message, n: b.N, ctype: resp.Header.Get("Content-Type")}, nil
}

// Each php -S process makes its gRPC channel (and Thrift connection) once and keeps
// it: over 1000 requests, the connections made ("X-Rpcbed-Conn: new") are at most
// one per process that answered. The same holds for the production variant of the
// front (OPcache on).
func TestPHPFrontKeepsConnections(t *testing.T) {
	php, backends := frontSetup(t)
	fronts := map[string]*phpFront{
		"published": startPHPFront(t, php, backends),
		"opcache":   startPHPFront(t, php, backends, "RPCBED_FRONT_OPCACHE=1"),
	}
	for _, tc := range []struct {
		front    string
		proto    string
		requests int
	}{
		{"published", "grpc", 1000},
		{"published", "thrift", 300},
		{"opcache", "grpc", 300},
	} {
		t.Run(tc.front+"-"+tc.proto, func(t *testing.T) {
			f := fronts[tc.front]
			var mu sync.Mutex
			made, served := map[int]int{}, map[int]int{}
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for w := 0; w < 4; w++ { // more callers than workers, so every worker serves
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					c := &http.Client{Timeout: 30 * time.Second}
					for i := w; i < tc.requests; i += 4 {
						a, err := frontGet(c, f.addr, "n=2&proto="+tc.proto)
						if err == nil && (a.status != http.StatusOK || a.n != 2 || a.pid == 0) {
							err = fmt.Errorf("status %d n=%d pid=%d: %s", a.status, a.n, a.pid, a.message)
						}
						if err != nil {
							errs <- fmt.Errorf("request %d: %v", i, err)
							return
						}
						mu.Lock()
						served[a.pid]++
						if a.conn == "new" {
							made[a.pid]++
						} else if a.conn != "reused" {
							mu.Unlock()
							errs <- fmt.Errorf("request %d: X-Rpcbed-Conn %q; want new or reused", i, a.conn)
							return
						}
						mu.Unlock()
					}
				}(w)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			total := 0
			for pid, n := range served {
				total += n
				if made[pid] > 1 {
					t.Errorf("worker %d: %d connections made over %d requests; want 1", pid, made[pid], n)
				}
			}
			if total != tc.requests {
				t.Errorf("got %d answers; want %d", total, tc.requests)
			}
			t.Logf("%s: %d requests, per worker pid served/made: %v / %v", tc.proto, total, served, made)
		})
	}
}

// A call that outlasts the front's deadline (RPCBED_FRONT_TIMEOUT, also PHP's time
// limit) is answered JSON 504, not an empty 500: n=100000 over pure-PHP Thrift takes
// far longer than 1 s. The worker then serves a normal call on a fresh connection.
func TestPHPFrontTimeLimitIsJSON(t *testing.T) {
	php, backends := frontSetup(t)
	f := startPHPFront(t, php, backends, "RPCBED_FRONT_TIMEOUT=1", "RPCBED_FRONT_RUNTIME=pure", "PHP_CLI_SERVER_WORKERS=1")
	c := &http.Client{Timeout: 60 * time.Second}
	a, err := frontGet(c, f.addr, "n=100000&proto=thrift")
	if err != nil {
		t.Fatalf("n=100000 thrift: %v\nfront log:\n%s", err, testbed.Tail(f.logText(), 2000))
	}
	if a.status != http.StatusGatewayTimeout || a.code != 4 || a.ctype != "application/json" {
		t.Errorf("n=100000 thrift = %d %s code %d %q; want 504 application/json code 4", a.status, a.ctype, a.code, a.message)
	}
	for i := 0; i < 4; i++ { // every process of the front, on the same port
		a, err := frontGet(c, f.addr, "n=2&proto=thrift")
		if err != nil || a.status != http.StatusOK || a.n != 2 {
			t.Fatalf("normal call %d after the time limit = %+v, %v; want 200 with 2 items", i, a, err)
		}
	}
	f.stillServes(t, "grpc", 0)
}

// SIGTERM to php-front's own pid stops php -S, every worker and the guard: the
// port is closed afterwards and none of the processes that answered is left.
func TestPHPFrontSIGTERMStopsWorkers(t *testing.T) {
	php, backends := frontSetup(t)
	f := startPHPFront(t, php, backends, "PHP_CLI_SERVER_WORKERS=4")
	c := &http.Client{Timeout: 30 * time.Second}
	pids := map[int]bool{}
	for i := 0; i < 40; i++ {
		a, err := frontGet(c, f.addr, "n=2&proto=http")
		if err != nil || a.status != http.StatusOK {
			t.Fatalf("request %d = %+v, %v", i, a, err)
		}
		pids[a.pid] = true
	}
	if err := f.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("php-front did not exit within 20 s of SIGTERM")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var left []string
		for pid := range pids {
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil && !strings.Contains(string(b), "State:\tZ") {
				left = append(left, strconv.Itoa(pid))
			}
		}
		conn, derr := net.DialTimeout("tcp", f.addr, time.Second)
		if derr == nil {
			conn.Close()
		}
		if len(left) == 0 && derr != nil {
			return
		}
		if time.Now().After(deadline) {
			sort.Strings(left)
			t.Fatalf("10 s after php-front exited: workers still running %v, port accepts: %v", left, derr == nil)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// More idle connections than the guard keeps (400) cannot lock callers out: a new
// connection evicts the oldest one still sending its head, and a normal call made
// while 500 connections sit idle is answered.
func TestPHPFrontManyIdleConnections(t *testing.T) {
	php, backends := frontSetup(t)
	f := startPHPFront(t, php, backends)
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for i := 0; i < 500; i++ { // past the guard's 400
		c, err := net.DialTimeout("tcp", f.addr, 5*time.Second)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		if i%2 == 1 {
			io.WriteString(c, "GET /v1/datalist?n=2 HTTP/1.1\r\nHost: x\r\n") // a head that never ends
		}
		idle = append(idle, c)
	}
	time.Sleep(200 * time.Millisecond) // let the guard accept them all
	f.stillServes(t, "grpc", 0)
}

// A pooled Thrift connection the backend cut while the php -S process was idle
// (go-server's idle timeout) costs no failed request: PHP's persistent socket
// finds it closed and reconnects, and a call that still meets the cut gets one new
// connection and one more try (X-Rpcbed-Retried: 1), as a connection pool does.
func TestPHPFrontRetriesCutConnection(t *testing.T) {
	php, backends := frontSetup(t)
	proxy := testbed.StartProxy(t, backends["thrift"])
	via := map[string]string{}
	for k, v := range backends {
		via[k] = v
	}
	via["thrift"] = proxy.Addr()
	f := startPHPFront(t, php, via)
	c := &http.Client{Timeout: 30 * time.Second}
	get := func(i int) (int, string, string) {
		resp, err := c.Get("http://" + f.addr + "/v1/datalist?n=2&proto=thrift")
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: status %d: %s", i, resp.StatusCode, testbed.Tail(string(body), 300))
		}
		return resp.StatusCode, resp.Header.Get("X-Rpcbed-Conn"), resp.Header.Get("X-Rpcbed-Retried")
	}
	for i := range 8 { // both php -S workers hold a pooled connection
		get(i)
	}
	before := proxy.Conns()
	proxy.Cut()
	retried, fresh := 0, 0
	defer func() { t.Logf("after the cut: 8 answered, %d on a new connection, %d retried", fresh, retried) }()
	for i := 8; i < 16; i++ { // get fails the test on any answer but 200
		_, conn, r := get(i)
		if r == "1" {
			retried++
			if conn != "new" {
				t.Errorf("request %d: retried on X-Rpcbed-Conn %q; want new", i, conn)
			}
		}
		if conn == "new" {
			fresh++
		}
	}
	if fresh == 0 || proxy.Conns() == before {
		t.Errorf("after the cut: %d answers on a new connection, %d connections made; want a reconnect", fresh, proxy.Conns()-before)
	}

	// A connection whose close the php -S worker has not seen yet: its next call
	// meets the cut; the front reconnects and tries once more.
	for i := 16; i < 24; i++ {
		get(i)
	}
	proxy.Stale()
	stale := 0
	for i := 24; i < 32; i++ {
		if _, conn, r := get(i); r == "1" {
			stale++
			if conn != "new" {
				t.Errorf("request %d: retried on X-Rpcbed-Conn %q; want new", i, conn)
			}
		}
	}
	if stale == 0 || stale > 4 {
		t.Errorf("got %d retried requests on stale connections; want 1 to 4 (at most one per pooled connection)", stale)
	}
}
