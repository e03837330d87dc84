package load

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/testbed"
)

// goServer starts the real go-server in-process on :0 ports, auth checked (so
// every test also proves the token round trip), and returns its addresses by
// protocol.
func goServer(t testing.TB) map[string]string {
	t.Helper()
	return goServerThrift(t, "framed", "binary")
}

// goServerThrift is goServer with its Thrift listener's transport and protocol.
func goServerThrift(t testing.TB, transport, protocol string) map[string]string {
	t.Helper()
	addrs, _ := testbed.InProcess(t, transport, protocol)
	return addrs
}

// proxy forwards TCP to a server until kill, which closes the listener and every
// connection at once: the server "dies" for the client.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	dead  bool

	limit, passed atomic.Int64
}

func startProxy(t testing.TB, upstream string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.DialTimeout("tcp", upstream, time.Second)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			if p.dead {
				c.Close()
				u.Close()
			}
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(&killWriter{c, p}, u); c.Close() }()
		}
	}()
	t.Cleanup(p.kill)
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

// killAfter makes the proxy kill every connection once it has passed n bytes from
// the server: "mid-run" measured in answered calls, not in time, so a slow
// machine cannot kill it before the verify call.
func (p *proxy) killAfter(n int64) { p.limit.Store(n) }

// killWriter counts bytes going to the client and kills the proxy past the limit.
type killWriter struct {
	w io.Writer
	p *proxy
}

func (k *killWriter) Write(b []byte) (int, error) {
	n, err := k.w.Write(b)
	if lim := k.p.limit.Load(); lim > 0 && k.p.passed.Add(int64(n)) > lim {
		go k.p.kill()
	}
	return n, err
}

func (p *proxy) kill() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dead = true
	for _, c := range p.conns {
		c.Close()
	}
}
