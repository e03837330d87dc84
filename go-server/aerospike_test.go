package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/aerospiketest"
	"github.com/rpcbed/rpcbed/internal/server"
)

// An unreachable Aerospike at start: go-server exits 2 with the store's error,
// within the connect timeout (guarded at several times it).
func TestAerospikeUnreachableAtStart(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"-store", "aerospike", "-aerospike-hosts", addr, "-grpc", "", "-thrift", "", "-http", "127.0.0.1:0"},
			&stderr, func(*server.Server) { t.Error("server started") })
	}()
	select {
	case code := <-done:
		if code != 2 || !strings.Contains(stderr.String(), "store: aerospike at "+addr) {
			t.Errorf("exit %d, stderr %q; want 2 and the store's error", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("go-server still starting 15 s after it was given an unreachable Aerospike")
	}
}

// asd stopped while go-server runs: DataType fails with 503 and the store's error
// (no call hangs), and once asd is back the same go-server process serves again.
func TestAerospikeRestartUnderGoServer(t *testing.T) {
	asd := aerospiketest.Start(t)
	var stderr bytes.Buffer
	hc := &http.Client{Timeout: 10 * time.Second} // the hang guard, far above the store's bound
	get := func(base, en string) (int, string, error) {
		resp, err := hc.Get(base + "/v1/datatype?groupName=restart&enName=" + en)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	code := run([]string{"-store", "aerospike", "-aerospike-hosts", asd.Hosts, "-grpc", "", "-thrift", "", "-http", "127.0.0.1:0"}, &stderr,
		func(s *server.Server) {
			defer syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
			base := "http://" + s.HTTPAddr.String()
			if st, body, err := get(base, "before"); err != nil || st != 200 || !strings.Contains(body, `"codeId":101`) {
				t.Errorf("before the outage: %d %s %v; want 200 and codeId 101", st, body, err)
				return
			}
			asd.Down(t)
			for i := 0; i < 5; i++ {
				st, body, err := get(base, "down")
				if err != nil {
					t.Errorf("call %d while asd is down: %v (want a 503, not a hang)", i, err)
					continue
				}
				if st != http.StatusServiceUnavailable || !strings.Contains(body, "store: aerospike") {
					t.Errorf("call %d while asd is down: %d %s; want 503 and the store's error", i, st, body)
				}
			}
			asd.Up(t)
			deadline := time.Now().Add(30 * time.Second)
			for {
				st, body, err := get(base, "after")
				if err == nil && st == 200 && strings.Contains(body, `"codeId":101`) {
					return
				}
				if time.Now().After(deadline) {
					t.Errorf("30 s after asd came back: %d %s %v; want 200", st, body, err)
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	if code != 0 {
		t.Errorf("exit %d; want 0; stderr:\n%s", code, stderr.String())
	}
}
