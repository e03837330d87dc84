package server_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/rpcbed/rpcbed/internal/auth"
	"github.com/rpcbed/rpcbed/internal/gen/pb"
	"github.com/rpcbed/rpcbed/internal/gen/thriftgen"
	"github.com/rpcbed/rpcbed/internal/server"
	"github.com/rpcbed/rpcbed/internal/service"
	"github.com/rpcbed/rpcbed/internal/store"
	"github.com/rpcbed/rpcbed/internal/tlsbed"
)

// tlsServer is a go-server serving TLS on every listener, with its certificates.
type tlsServer struct {
	*server.Server
	files *tlsbed.Files
}

// startTLS runs a go-server serving TLS (mtls: client certificates required),
// each handshake within handshake.
func startTLS(t testing.TB, mtls bool, handshake time.Duration) *tlsServer {
	t.Helper()
	f, err := tlsbed.Generate(t.TempDir(), tlsbed.ECDSA, tlsbed.DefaultHosts)
	if err != nil {
		t.Fatal(err)
	}
	clientCA := ""
	if mtls {
		clientCA = f.CA
	}
	cfg, err := tlsbed.ServerConfig(f.ServerCert, f.ServerKey, clientCA, "1.2")
	if err != nil {
		t.Fatal(err)
	}
	a, err := auth.New([]byte("test-secret"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: store.NewMemory(), Auth: a})
	s, err := server.Start(server.Config{
		GRPCAddr: "127.0.0.1:0", ThriftAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0",
		StoreKind: "memory", ReadHeaderTimeout: handshake, TLS: cfg, Log: discardLog(t),
	}, svc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return &tlsServer{s, f}
}

func (s *tlsServer) clientConfig(t testing.TB, withCert bool) *tls.Config {
	t.Helper()
	c := tlsbed.Client{CACert: s.files.CA}
	if withCert {
		c.Cert, c.Key = s.files.ClientCert, s.files.ClientKey
	}
	cfg, err := c.Config("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// tlsCall makes one DataList call of n items over proto with cfg and returns
// the items and the connection's negotiated ALPN.
func tlsCall(s *tlsServer, proto string, cfg *tls.Config, n int) (items int, alpn string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	switch proto {
	case "grpc":
		var st tls.ConnectionState
		creds := credentials.NewTLS(cfg)
		cc, err := grpc.NewClient(s.GRPCAddr.String(), grpc.WithTransportCredentials(creds))
		if err != nil {
			return 0, "", err
		}
		defer cc.Close()
		r, err := pb.NewDataClient(cc).DataList(ctx, &pb.DataListRequest{Auth: &pb.Auth{ClientId: "tls"}, N: int32(n)})
		if err != nil {
			return 0, "", err
		}
		// grpc-go's credentials refuse a connection without h2; a handshake of
		// the same config shows what the listener negotiates.
		conn, derr := tls.Dial("tcp", s.GRPCAddr.String(), withALPN(cfg, "h2"))
		if derr == nil {
			st = conn.ConnectionState()
			conn.Close()
		}
		return len(r.Items), st.NegotiatedProtocol, nil
	case "thrift":
		conf := server.ThriftConfig()
		conf.ConnectTimeout, conf.SocketTimeout = 5*time.Second, 5*time.Second
		conn, err := tls.Dial("tcp", s.ThriftAddr.String(), cfg)
		if err != nil {
			return 0, "", err
		}
		tr := thrift.NewTFramedTransportConf(thrift.NewTSocketFromConnConf(conn, conf), conf)
		defer tr.Close()
		c := thriftgen.NewDataClientFactory(tr, thrift.NewTBinaryProtocolFactoryConf(conf))
		r, err := c.DataList(ctx, &thriftgen.DataListRequest{Auth: &thriftgen.Auth{ClientId: "tls"}, N: int32(n)})
		if err != nil {
			return 0, "", err
		}
		return len(r.Items), conn.ConnectionState().NegotiatedProtocol, nil
	default:
		tr := &http.Transport{TLSClientConfig: withALPN(cfg, "http/1.1")}
		defer tr.CloseIdleConnections()
		req, _ := http.NewRequestWithContext(ctx, "GET", "https://"+s.HTTPAddr.String()+"/v1/datalist?n="+strconv.Itoa(n), nil)
		req.Header.Set("X-Client-Id", "tls")
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		var body struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			return 0, "", err
		}
		return len(body.Items), resp.TLS.NegotiatedProtocol, nil
	}
}

func withALPN(cfg *tls.Config, p ...string) *tls.Config {
	c := cfg.Clone()
	c.NextProtos = p
	return c
}

// Every listener serves TLS only, states its ALPN (h2 for gRPC, http/1.1 for
// http, none for Thrift), counts its handshakes in /stats, and with mtls
// answers only a caller with a certificate from the CA.
func TestTLSListeners(t *testing.T) {
	for _, mtls := range []bool{false, true} {
		s := startTLS(t, mtls, 2*time.Second)
		for _, tc := range []struct{ proto, alpn string }{{"grpc", "h2"}, {"thrift", ""}, {"http", "http/1.1"}} {
			name := tc.proto + map[bool]string{false: "-tls", true: "-mtls"}[mtls]
			t.Run(name, func(t *testing.T) {
				if mtls {
					if _, _, err := tlsCall(s, tc.proto, s.clientConfig(t, false), 2); err == nil {
						t.Fatal("a caller without a client certificate was answered; want refused")
					}
				}
				items, alpn, err := tlsCall(s, tc.proto, s.clientConfig(t, mtls), 200)
				if err != nil {
					t.Fatal(err)
				}
				if items != 200 || alpn != tc.alpn {
					t.Errorf("got %d items, ALPN %q; want 200 and %q", items, alpn, tc.alpn)
				}
			})
		}
		st := tlsStats(t, s)
		for _, p := range []string{"grpc", "thrift", "http"} {
			if st.TLS[p].Handshakes < 1 {
				t.Errorf("mtls=%v: /stats tls.%s.handshakes %d; want at least 1", mtls, p, st.TLS[p].Handshakes)
			}
		}
	}
}

// tlsStats reads /stats over TLS.
func tlsStats(t testing.TB, s *tlsServer) server.Stats {
	t.Helper()
	cfg := s.clientConfig(t, true)
	tr := &http.Transport{TLSClientConfig: cfg}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("https://" + s.HTTPAddr.String() + "/stats")
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

// Plaintext sent to a TLS port is refused (the connection ends, no answer in
// plaintext), and the next TLS call is answered.
func TestTLSPortRefusesPlaintext(t *testing.T) {
	s := startTLS(t, false, 2*time.Second)
	for _, tc := range []struct {
		proto string
		addr  net.Addr
		send  []byte
	}{
		{"grpc", s.GRPCAddr, []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")},
		{"thrift", s.ThriftAddr, []byte{0, 0, 0, 20, 0x80, 1, 0, 1, 0, 0, 0, 8, 'D', 'a', 't', 'a', 'L', 'i', 's', 't'}},
		{"http", s.HTTPAddr, []byte("GET /v1/datalist?n=2 HTTP/1.1\r\nHost: x\r\n\r\n")},
	} {
		t.Run(tc.proto, func(t *testing.T) {
			c, err := net.Dial("tcp", tc.addr.String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			c.Write(tc.send)
			b, _ := io.ReadAll(c)
			if strings.Contains(string(b), "items") || strings.Contains(string(b), "DataList") {
				t.Errorf("the TLS port answered plaintext: %q", b)
			}
			if items, _, err := tlsCall(s, tc.proto, s.clientConfig(t, false), 2); err != nil || items != 2 {
				t.Errorf("next TLS call: %d items, %v; want 2 items", items, err)
			}
		})
	}
}
