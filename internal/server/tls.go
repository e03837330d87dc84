package server

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/credentials"
)

// ALPN each listener states: gRPC is HTTP/2 ("h2", which grpc-go's TLS
// credentials require); the http protocol stays HTTP/1.1 so it remains
// comparable with its plaintext cells; Thrift has no registered ALPN name and
// offers none.
var alpn = map[string][]string{"grpc": {"h2"}, "http": {"http/1.1"}, "thrift": nil}

// TLSCount is one listener's TLS handshakes: completed, and of them resumed.
type TLSCount struct {
	Handshakes int64 `json:"handshakes"`
	Resumed    int64 `json:"resumed"`
}

// tlsCounters counts each listener's completed handshakes.
type tlsCounters struct {
	hs, resumed [3]atomic.Int64 // grpc, thrift, http
}

var tlsIndex = map[string]int{"grpc": 0, "thrift": 1, "http": 2}

func (t *tlsCounters) snapshot() map[string]TLSCount {
	out := map[string]TLSCount{}
	for p, i := range tlsIndex {
		out[p] = TLSCount{Handshakes: t.hs[i].Load(), Resumed: t.resumed[i].Load()}
	}
	return out
}

// tlsConfig is the listener proto's TLS: the process's configuration with its
// ALPN, counting each completed handshake. nil without TLS.
func (s *Server) tlsConfig(proto string) *tls.Config {
	if s.cfg.TLS == nil {
		return nil
	}
	cfg := s.cfg.TLS.Clone()
	cfg.NextProtos = alpn[proto]
	i := tlsIndex[proto]
	verify := cfg.VerifyConnection
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if verify != nil {
			if err := verify(cs); err != nil {
				return err
			}
		}
		s.tlsCount.hs[i].Add(1)
		if cs.DidResume {
			s.tlsCount.resumed[i].Add(1)
		}
		return nil
	}
	return cfg
}

// handshakeConn is a server-side TLS connection whose handshake, run on its
// first read or write, must end within timeout: Thrift's socket sets its own
// (idle) read deadline before every read, so a deadline set at accept would be
// replaced, and a caller sending a byte a second would hold the connection for
// the idle timeout. The accept loop never waits for a handshake.
type handshakeConn struct {
	*tls.Conn
	timeout time.Duration
	once    sync.Once
	err     error
}

func (c *handshakeConn) handshake() error {
	c.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
		defer cancel()
		if c.err = c.Conn.HandshakeContext(ctx); c.err != nil {
			lingerClose(c.Conn.NetConn())
		}
	})
	return c.err
}

// Bounds of lingerClose: how long and how much it reads of what the peer sent.
const (
	lingerTime  = 250 * time.Millisecond
	lingerBytes = 64 << 10
)

// lingerClose ends a connection whose handshake failed so that the peer reads
// the alert crypto/tls sent: closing a socket with unread input sends a reset,
// which can reach the client before the alert and hide the cause (in TLS 1.3
// a client's request is already on its way when the server refuses its
// certificate). It half-closes, reads what is left for at most lingerTime and
// lingerBytes, then closes.
func lingerClose(c net.Conn) {
	type closeWriter interface{ CloseWrite() error }
	raw := c
	if s, ok := c.(*stallConn); ok {
		raw = s.Conn
	}
	if cw, ok := raw.(closeWriter); ok {
		cw.CloseWrite()
		c.SetReadDeadline(time.Now().Add(lingerTime))
		io.CopyN(io.Discard, c, lingerBytes)
	}
	c.Close()
}

// lingerCreds is gRPC's server TLS credentials whose failed handshake ends
// with lingerClose: grpc-go closes the connection itself when the handshake
// fails, so the connection it is given closes with lingerClose until the
// handshake has succeeded.
type lingerCreds struct {
	credentials.TransportCredentials
}

func (c lingerCreds) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	lc := &lingerConn{Conn: raw}
	conn, ai, err := c.TransportCredentials.ServerHandshake(lc)
	if err != nil {
		lc.Close() // once: grpc-go may have closed it already
		return nil, nil, err
	}
	lc.done.Store(true)
	return conn, ai, nil
}

// lingerConn closes with lingerClose until done (the handshake succeeded), and
// once only.
type lingerConn struct {
	net.Conn
	done atomic.Bool
	once sync.Once
}

func (c *lingerConn) Close() error {
	if c.done.Load() {
		return c.Conn.Close()
	}
	c.once.Do(func() { lingerClose(c.Conn) })
	return nil
}

func (c lingerCreds) Clone() credentials.TransportCredentials {
	return lingerCreds{c.TransportCredentials.Clone()}
}

// tlsListener serves TLS on every accepted connection, its handshake run by
// handshakeConn on the connection's first read or write (never in Accept).
type tlsListener struct {
	net.Listener
	cfg     *tls.Config
	timeout time.Duration
}

func (l tlsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return tlsServerConn(c, l.cfg, l.timeout), nil
}

func (c *handshakeConn) Read(b []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Read(b)
}

func (c *handshakeConn) Write(b []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}

// tlsServerConn wraps an accepted connection for the Thrift listener.
func tlsServerConn(c net.Conn, cfg *tls.Config, timeout time.Duration) net.Conn {
	if cfg == nil {
		return c
	}
	return &handshakeConn{Conn: tls.Server(c, cfg), timeout: timeout}
}
