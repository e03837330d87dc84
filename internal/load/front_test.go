package load

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"
)

func getList(t *testing.T, url string) (int, *FrontList, http.Header) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l FrontList
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		t.Fatalf("GET %s: body is not JSON: %v", url, err)
	}
	return resp.StatusCode, &l, resp.Header
}

func TestFront(t *testing.T) {
	addrs := goServer(t)
	// What go-server itself answers is the shape the front must give back.
	_, want, _ := getList(t, "http://"+addrs[ProtoHTTP]+"/v1/datalist?n=7")
	for _, p := range protos {
		t.Run(p, func(t *testing.T) {
			f, err := NewFront(context.Background(), Config{Proto: p, Addr: addrs[p]})
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
	addrs := goServer(t)
	px := startProxy(t, addrs[ProtoThrift])
	f, err := NewFront(context.Background(), Config{Proto: ProtoThrift, Addr: px.addr(), Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ts := httptest.NewServer(f.Handler())
	defer ts.Close()
	px.kill()
	code, _, _ := getList(t, ts.URL+"/v1/datalist?n=2")
	if code != http.StatusBadGateway {
		t.Errorf("status = %d; want 502", code)
	}
}

func TestFrontUnreachable(t *testing.T) {
	for _, p := range []string{ProtoGRPC, ProtoThrift} {
		if _, err := NewFront(context.Background(), Config{Proto: p, Addr: closedAddr(t), Timeout: 2 * time.Second}); err == nil {
			t.Errorf("%s: NewFront to a closed port: got no error; want one", p)
		}
	}
}

func TestServeFrontShutdown(t *testing.T) {
	addrs := goServer(t)
	f, err := NewFront(context.Background(), Config{Proto: ProtoGRPC, Addr: addrs[ProtoGRPC]})
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
	go func() { errc <- ServeFront(ctx, ln, f) }()
	if code, _, _ := getList(t, "http://"+ln.Addr().String()+"/v1/datalist?n=1"); code != http.StatusOK {
		t.Fatalf("status = %d; want 200", code)
	}
	cancel()
	if err := runWithin(t, 15*time.Second, func() error { return <-errc }); err != nil {
		t.Errorf("ServeFront after shutdown = %v; want nil", err)
	}
}

func TestFrontExitCodes(t *testing.T) {
	dead := closedAddr(t)
	cases := []struct {
		name string
		args []string
		want int
	}{
		{"help", []string{"front", "-h"}, ExitOK},
		{"bad-proto", []string{"front", "-proto", "ice", "-addr", dead}, ExitUsage},
		{"no-addr", []string{"front", "-proto", "grpc"}, ExitUsage},
		{"zero-conns", []string{"front", "-conns", "0", "-addr", dead}, ExitUsage},
		{"unknown-flag", []string{"front", "-bogus"}, ExitUsage},
		{"grpc-unreachable", []string{"front", "-proto", "grpc", "-timeout", "2s", "-addr", dead}, ExitUnreachable},
		{"http-unreachable", []string{"front", "-proto", "http", "-timeout", "2s", "-addr", dead}, ExitUnreachable},
		{"thrift-unreachable", []string{"front", "-proto", "thrift", "-timeout", "2s", "-addr", dead}, ExitUnreachable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stderr bytes.Buffer
			got := runWithin(t, 20*time.Second, func() int { return Main(c.args, io.Discard, &stderr) })
			if got != c.want {
				t.Errorf("exit = %d; want %d (stderr: %s)", got, c.want, stderr.String())
			}
		})
	}
}
