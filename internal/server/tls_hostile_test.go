package server_test

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"io"
	"net"

	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/server"
	"github.com/rpcbed/rpcbed/internal/tlsbed"
)

// Hostile input on every TLS port of a go-server process (a child, so its RSS
// is its own): a garbage ClientHello, 1,000 half-open handshakes, a handshake
// sent a byte a second, and a handshake flood from 20 callers for 10 s. Each
// ends with a normal TLS call answered and the peak RSS under 512 MB.
const (
	tlsHostileRSS     = 512 << 20
	tlsHandshakeLimit = time.Second // the child's -setup-timeout: a handshake's bound
	halfOpen          = 1000
	floodCallers      = 20
	floodFor          = 10 * time.Second
)

// startTLSChild runs go-server serving TLS with -setup-timeout tlsHandshakeLimit.
func startTLSChild(t *testing.T) (*child, *tlsServer) {
	t.Helper()
	f, err := tlsbed.Generate(t.TempDir(), tlsbed.ECDSA, tlsbed.DefaultHosts)
	if err != nil {
		t.Fatal(err)
	}
	c := startGoServer(t, buildGoServer(t), "-tls-cert", f.ServerCert, "-tls-key", f.ServerKey,
		"-setup-timeout", tlsHandshakeLimit.String())
	return c, &tlsServer{Server: &server.Server{GRPCAddr: c.grpc, ThriftAddr: c.thrift, HTTPAddr: c.http}, files: f}
}

func tlsAddr(s *tlsServer, proto string) string {
	return map[string]net.Addr{"grpc": s.GRPCAddr, "thrift": s.ThriftAddr, "http": s.HTTPAddr}[proto].String()
}

// answered fails t unless a normal TLS call over proto gets its 2 items.
func answered(t *testing.T, s *tlsServer, proto, when string) {
	t.Helper()
	if items, _, err := tlsCall(s, proto, s.clientConfig(t, false), 2); err != nil || items != 2 {
		t.Errorf("%s: a normal TLS call got %d items, %v; want 2", when, items, err)
	}
}

// clientHello is the first flight of a real crypto/tls client.
func clientHello(t *testing.T) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	go func() {
		tls.Client(b, &tls.Config{ServerName: "127.0.0.1", InsecureSkipVerify: true}).Handshake()
		b.Close()
	}()
	buf := make([]byte, 4096)
	a.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := a.Read(buf)
	if err != nil || n < 5 || buf[0] != 0x16 {
		t.Fatalf("no ClientHello: %d bytes, %v", n, err)
	}
	return buf[:n]
}

// closedBy reports whether the server closed conn before deadline.
func closedBy(conn net.Conn, deadline time.Time) bool {
	conn.SetReadDeadline(deadline)
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

func TestHostileTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("flood tier: -short")
	}
	c, s := startTLSChild(t)
	hello := clientHello(t)
	for _, proto := range []string{"grpc", "thrift", "http"} {
		t.Run(proto, func(t *testing.T) {
			addr := tlsAddr(s, proto)
			answered(t, s, proto, "before")

			t.Run("garbage ClientHello", func(t *testing.T) {
				junk := make([]byte, 512)
				rand.Read(junk)
				rec := append([]byte{0x16, 0x03, 0x01, 0x02, 0x00}, junk...)
				got := rawDial(t, addr, rec)
				if bytes.Contains(got, []byte("items")) {
					t.Errorf("answered garbage: %q", got)
				}
				answered(t, s, proto, "after a garbage ClientHello")
			})

			t.Run("1000 half-open handshakes", func(t *testing.T) {
				conns := make([]net.Conn, 0, halfOpen)
				defer func() {
					for _, conn := range conns {
						conn.Close()
					}
				}()
				for range halfOpen {
					conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
					if err != nil {
						t.Fatalf("after %d connections: %v", len(conns), err)
					}
					conns = append(conns, conn)
					conn.Write(hello[:len(hello)/2]) // half a ClientHello, then nothing
				}
				answered(t, s, proto, "with 1000 handshakes half open")
				// Every one is cut once the handshake's bound has passed.
				deadline := time.Now().Add(tlsHandshakeLimit + 5*time.Second)
				open := 0
				for _, conn := range conns {
					if !closedBy(conn, deadline) {
						open++
					}
				}
				if open > 0 {
					t.Errorf("%d of %d half-open handshakes still open %v after the %v handshake bound", open, halfOpen, 5*time.Second, tlsHandshakeLimit)
				}
				answered(t, s, proto, "after 1000 half-open handshakes")
			})

			t.Run("a byte a second", func(t *testing.T) {
				conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				start := time.Now()
				cut := false
				for i := 0; i < len(hello) && time.Since(start) < tlsHandshakeLimit+5*time.Second; i++ {
					if _, err := conn.Write(hello[i : i+1]); err != nil {
						cut = true
						break
					}
					if closedBy(conn, time.Now().Add(time.Second)) {
						cut = true
						break
					}
				}
				took := time.Since(start)
				if !cut || took > tlsHandshakeLimit+3*time.Second {
					t.Errorf("a handshake sent a byte a second: cut %v after %v; want cut within the %v bound (+ up to 3 s of the test's own pace)", cut, took.Round(time.Millisecond), tlsHandshakeLimit)
				}
				answered(t, s, proto, "after a slow handshake")
			})

			t.Run("handshake flood", func(t *testing.T) {
				cfg := s.clientConfig(t, false)
				if proto == "http" {
					cfg.NextProtos = []string{"http/1.1"}
				} else if proto == "grpc" {
					cfg.NextProtos = []string{"h2"}
				}
				var done, failed atomic.Int64
				var wg sync.WaitGroup
				stop := time.Now().Add(floodFor)
				for range floodCallers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for time.Now().Before(stop) {
							d := &net.Dialer{Timeout: 5 * time.Second}
							conn, err := tls.DialWithDialer(d, "tcp", addr, cfg)
							if err != nil {
								failed.Add(1)
								continue
							}
							done.Add(1)
							conn.Close()
						}
					}()
				}
				// A normal call in the middle of the flood.
				time.Sleep(floodFor / 2)
				answered(t, s, proto, "during a handshake flood")
				wg.Wait()
				t.Logf("%d handshakes from %d callers in %v (%d failed)", done.Load(), floodCallers, floodFor, failed.Load())
				if done.Load() == 0 {
					t.Error("no handshake completed during the flood")
				}
				answered(t, s, proto, "after a handshake flood")
			})
			if peak := c.status(t, "VmHWM"); peak > tlsHostileRSS {
				t.Errorf("peak RSS %d MB; want under %d MB", peak>>20, tlsHostileRSS>>20)
			}
		})
	}
}

// rawDial sends b to addr and returns what comes back until the server closes
// (bounded by 5 s).
func rawDial(t *testing.T, addr string, b []byte) []byte {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	conn.Write(b)
	got, _ := io.ReadAll(conn)
	return got
}
