package front

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/rpcbed/rpcbed/internal/report"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/load"
	"github.com/rpcbed/rpcbed/internal/service"
	"github.com/rpcbed/rpcbed/internal/testbed"
)

func getList(t *testing.T, url string) (int, *service.DataListBody, http.Header) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l service.DataListBody
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		t.Fatalf("GET %s: body is not JSON: %v", url, err)
	}
	return resp.StatusCode, &l, resp.Header
}

func TestFront(t *testing.T) {
	addrs := testbed.InProcess(t, "framed", "binary")
	// What go-server itself answers is the shape the front must give back.
	_, want, _ := getList(t, "http://"+addrs[load.ProtoHTTP]+"/v1/datalist?n=7")
	for _, p := range []string{load.ProtoGRPC, load.ProtoThrift, load.ProtoHTTP} {
		t.Run(p, func(t *testing.T) {
			f, err := New(context.Background(), load.Config{Proto: p, Addr: addrs[p]})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ts := httptest.NewServer(f.Handler())
			defer ts.Close()
			for i := 0; i < 3; i++ { // the token is carried from call to call
				code, got, h := getList(t, ts.URL+"/v1/datalist?n=7")
				if code != http.StatusOK {
					t.Fatalf("status = %d; want 200", code)
				}
				if got.Auth.Token == "" || h.Get("X-Token") != got.Auth.Token {
					t.Errorf("token %q, header %q; want the same non-empty token", got.Auth.Token, h.Get("X-Token"))
				}
				got.Auth.Token = want.Auth.Token
				if !reflect.DeepEqual(got, want) {
					t.Errorf("front = %+v; want go-server's %+v", got, want)
				}
			}
			for _, q := range []string{"n=abc", "n=-1", "n=100001", ""} {
				code, _, _ := getList(t, ts.URL+"/v1/datalist?"+q)
				if code != http.StatusBadRequest {
					t.Errorf("GET ?%s: status = %d; want 400", q, code)
				}
			}
		})
	}
}

func TestFrontUpstreamDown(t *testing.T) {
	addrs := testbed.InProcess(t, "framed", "binary")
	px := testbed.StartProxy(t, addrs[load.ProtoThrift])
	f, err := New(context.Background(), load.Config{Proto: load.ProtoThrift, Addr: px.Addr(), Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ts := httptest.NewServer(f.Handler())
	defer ts.Close()
	px.Kill()
	code, _, _ := getList(t, ts.URL+"/v1/datalist?n=2")
	if code != http.StatusBadGateway {
		t.Errorf("status = %d; want 502", code)
	}
}

func TestFrontUnreachable(t *testing.T) {
	for _, p := range []string{load.ProtoGRPC, load.ProtoThrift} {
		if _, err := New(context.Background(), load.Config{Proto: p, Addr: testbed.FreeAddr(t), Timeout: 2 * time.Second}); err == nil {
			t.Errorf("%s: NewFront to a closed port: got no error; want one", p)
		}
	}
}

func TestServeFrontShutdown(t *testing.T) {
	addrs := testbed.InProcess(t, "framed", "binary")
	f, err := New(context.Background(), load.Config{Proto: load.ProtoGRPC, Addr: addrs[load.ProtoGRPC]})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- Serve(ctx, ln, f) }()
	if code, _, _ := getList(t, "http://"+ln.Addr().String()+"/v1/datalist?n=1"); code != http.StatusOK {
		t.Fatalf("status = %d; want 200", code)
	}
	cancel()
	if err := testbed.Within(t, 15*time.Second, func() error { return <-errc }); err != nil {
		t.Errorf("ServeFront after shutdown = %v; want nil", err)
	}
}

func TestFrontExitCodes(t *testing.T) {
	dead := testbed.FreeAddr(t)
	cases := []struct {
		name string
		args []string
		want int
	}{
		{"help", []string{"-h"}, report.ExitOK},
		{"bad-proto", []string{"-proto", "ice", "-addr", dead}, report.ExitUsage},
		{"no-addr", []string{"-proto", "grpc"}, report.ExitUsage},
		{"zero-conns", []string{"-conns", "0", "-addr", dead}, report.ExitUsage},
		{"unknown-flag", []string{"-bogus"}, report.ExitUsage},
		{"grpc-unreachable", []string{"-proto", "grpc", "-timeout", "2s", "-addr", dead}, report.ExitUnreachable},
		{"http-unreachable", []string{"-proto", "http", "-timeout", "2s", "-addr", dead}, report.ExitUnreachable},
		{"thrift-unreachable", []string{"-proto", "thrift", "-timeout", "2s", "-addr", dead}, report.ExitUnreachable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stderr bytes.Buffer
			got := testbed.Within(t, 20*time.Second, func() int { return Main(c.args, &stderr) })
			if got != c.want {
				t.Errorf("exit = %d; want %d (stderr: %s)", got, c.want, stderr.String())
			}
		})
	}
}
