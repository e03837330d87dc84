package load

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/credentials"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/tlsbed"
)

// Security modes (-security) and connection modes (-connect), as the spec names
// them.
const (
	SecPlaintext = "plaintext"
	SecTLS       = "tls"
	SecMTLS      = "mtls"

	ConnectPersistent = "persistent"
	ConnectPerCall    = "per-call"
)

// secure reports whether the run speaks TLS.
func (c *Config) secure() bool { return c.Security == SecTLS || c.Security == SecMTLS }

// perCall reports whether every call opens a connection of its own.
func (c *Config) perCall() bool { return c.Connect == ConnectPerCall }

// validateSecurity checks -security, -connect and the TLS flags, and builds the
// client's crypto/tls configuration into c.tls.
func (c *Config) validateSecurity() error {
	switch c.Security {
	case "", SecPlaintext:
		c.Security = SecPlaintext
	case SecTLS, SecMTLS:
	default:
		return fmt.Errorf("-security %q: want plaintext, tls or mtls", c.Security)
	}
	switch c.Connect {
	case "", ConnectPersistent:
		c.Connect = ConnectPersistent
	case ConnectPerCall:
	default:
		return fmt.Errorf("-connect %q: want persistent or per-call", c.Connect)
	}
	t := c.TLS
	if !c.secure() {
		if t.CACert != "" || t.Cert != "" || t.Key != "" || t.ServerName != "" || (t.Version != "" && t.Version != "1.3") || t.Resume != "" {
			return errors.New("-cacert, -cert, -key, -servername, -tls-version and -resume need -security tls or mtls")
		}
		return nil
	}
	if c.Security == SecMTLS && (t.Cert == "" || t.Key == "") {
		return errors.New("-security mtls: give the client's certificate, -cert and -key")
	}
	if c.Security == SecTLS && (t.Cert != "" || t.Key != "") {
		return errors.New("-cert and -key are for -security mtls")
	}
	host, _, _ := splitHostPort(c.Addr)
	cfg, err := t.Config(host)
	if err != nil {
		return err
	}
	// ALPN as the server states it: http/1.1 for http (no HTTP/2), none for
	// Thrift; grpc-go's credentials offer h2 themselves.
	if c.Proto == ProtoHTTP {
		cfg.NextProtos = []string{"http/1.1"}
	}
	c.tls = cfg
	return nil
}

// netCounters counts a run's connections and TLS handshakes, and keeps what the
// last handshake negotiated. The window's figures are the counts at its end
// less those at its start (measure takes both).
type netCounters struct {
	opened, handshakes, resumed atomic.Int64
	mu                          sync.Mutex
	state                       *tls.ConnectionState // the last handshake's
	lastErr                     error                // the last failed handshake's
}

type netSnapshot struct{ opened, handshakes, resumed int64 }

func (n *netCounters) snapshot() netSnapshot {
	if n == nil {
		return netSnapshot{}
	}
	return netSnapshot{n.opened.Load(), n.handshakes.Load(), n.resumed.Load()}
}

func (n *netCounters) handshake(st tls.ConnectionState) {
	n.handshakes.Add(1)
	if st.DidResume {
		n.resumed.Add(1)
	}
	n.mu.Lock()
	n.state = &st
	n.mu.Unlock()
}

func (n *netCounters) failed(err error) {
	n.mu.Lock()
	n.lastErr = err
	n.mu.Unlock()
}

func (n *netCounters) lastFailure() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.lastErr
}

// dial opens one TCP connection to cfg.Addr and, with TLS, completes its
// handshake before returning, so a call's time holds the handshake.
func (n *netCounters) dial(ctx context.Context, cfg *Config, d *net.Dialer) (net.Conn, error) {
	if n == nil { // a Config that did not go through Run (the front)
		n = &netCounters{}
	}
	nc, err := d.DialContext(ctx, "tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	n.opened.Add(1)
	if !cfg.secure() {
		return nc, nil
	}
	conn := tls.Client(nc, cfg.tls)
	hctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	if err := conn.HandshakeContext(hctx); err != nil {
		nc.Close()
		n.failed(err)
		return nil, err
	}
	n.handshake(conn.ConnectionState())
	return conn, nil
}

// grpcCreds is grpc-go's TLS credentials over the client's configuration,
// counting each handshake and keeping a failed one's error (grpc-go reports a
// failed connection as a state, without the cause).
type grpcCreds struct {
	credentials.TransportCredentials
	n *netCounters
}

func newGRPCCreds(cfg *Config) credentials.TransportCredentials {
	return grpcCreds{credentials.NewTLS(cfg.tls), cfg.net}
}

func (c grpcCreds) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, ai, err := c.TransportCredentials.ClientHandshake(ctx, authority, raw)
	if err != nil {
		c.n.failed(err)
		return nil, nil, err
	}
	if ti, ok := ai.(credentials.TLSInfo); ok {
		c.n.handshake(ti.State)
	}
	return &alertConn{Conn: conn, n: c.n}, ai, nil
}

// alertConn keeps a TLS alert read after the handshake: in TLS 1.3 the server
// checks a client certificate after the client's handshake has ended, so a
// refused one shows as the first read's "remote error", which grpc-go turns into
// a connection state without the cause.
type alertConn struct {
	net.Conn
	n *netCounters
}

func (c *alertConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil && strings.Contains(err.Error(), "remote error: tls:") {
		c.n.failed(err)
	}
	return n, err
}

func (c grpcCreds) Clone() credentials.TransportCredentials {
	return grpcCreds{c.TransportCredentials.Clone(), c.n}
}

// certificateError is a certificate problem found before timing (the server's
// certificate from an unknown CA, expired, for another name, or ours refused):
// exit 3 with the cause named, as php-client and java-client do.
func certificateError(cfg *Config, err error) *ExitError {
	if !cfg.secure() {
		return nil
	}
	cause := tlsbed.Cause(err)
	if cause == "" && cfg.net != nil {
		if last := cfg.net.lastFailure(); last != nil {
			cause, err = tlsbed.Cause(last), last
		}
	}
	if cause == "" {
		return nil
	}
	return &ExitError{report.ExitVerify, "certificate", fmt.Errorf("%s: %s server at %s: %v", cause, cfg.Proto, cfg.Addr, err)}
}

// tlsReport is the report's "TLS:" and "TLS handshakes:" figures: what the last
// handshake negotiated, and the handshakes of the window.
func tlsReport(n *netCounters, hs, resumed int64) *report.TLS {
	if n == nil {
		n = &netCounters{}
	}
	n.mu.Lock()
	st := n.state
	n.mu.Unlock()
	t := &report.TLS{Version: "-", CipherSuite: "-", Group: "-", ALPN: "none", Handshakes: hs, Resumed: resumed}
	if st == nil {
		return t
	}
	t.Version = tlsbed.VersionName(st.Version)
	t.CipherSuite = tls.CipherSuiteName(st.CipherSuite)
	if st.CurveID != 0 {
		t.Group = st.CurveID.String()
	}
	if st.NegotiatedProtocol != "" {
		t.ALPN = st.NegotiatedProtocol
	}
	return t
}
