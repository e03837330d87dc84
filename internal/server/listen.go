package server

import (
	"crypto/tls"
	"errors"
	"log"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
)

// Limits on connections (README: Limits). A live benchmark connection is never
// idle for long: a client calls back to back, or at its -rate.
const (
	// IdleTimeout closes a connection that carried nothing for this long: HTTP's
	// keep-alive idle and a stalled response write, gRPC's MaxConnectionIdle (no call
	// in flight), and Thrift's read and write deadline (any one read or write
	// stalled this long).
	IdleTimeout = 120 * time.Second
	// KeepaliveTime and KeepaliveTimeout find half-open gRPC connections: after
	// KeepaliveTime without traffic the server pings, and closes the connection if
	// no answer comes within KeepaliveTimeout.
	KeepaliveTime    = 30 * time.Second
	KeepaliveTimeout = 10 * time.Second
	// MaxAcceptBackoff is the longest wait between accept retries.
	MaxAcceptBackoff = time.Second
)

// retryListener is a net.Listener whose Accept rides out errors that pass (EMFILE,
// ENFILE, EINTR; net retries ECONNABORTED itself): it logs each one and retries
// with a growing wait (5 ms doubling to 1 s), as net/http's Serve does. Thrift's
// TSimpleServer ends its accept loop for good on the first such error, with
// nothing logged (issue 18 #1); wrapped, no listener does. An error that does not
// pass is returned, and the listener's Serve ends with it (go-server exits 1).
type retryListener struct {
	net.Listener
	name string
	log  *log.Logger
	once sync.Once
	done chan struct{}
}

func newRetryListener(ln net.Listener, name string, lg *log.Logger) *retryListener {
	return &retryListener{Listener: ln, name: name, log: lg, done: make(chan struct{})}
}

func (l *retryListener) Accept() (net.Conn, error) {
	var wait time.Duration
	for {
		conn, err := l.Listener.Accept()
		if err == nil {
			return conn, nil
		}
		select {
		case <-l.done:
			return nil, err
		default:
		}
		if !temporary(err) {
			return nil, err
		}
		wait = min(max(2*wait, 5*time.Millisecond), MaxAcceptBackoff)
		l.log.Printf("%s: accept: %v; retrying in %v", l.name, err, wait)
		t := time.NewTimer(wait)
		select {
		case <-l.done:
			t.Stop()
			return nil, err
		case <-t.C:
		}
	}
}

func (l *retryListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// temporary is net/http's test for an accept error worth retrying.
func temporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// thriftListener is a thrift.TServerTransport over a retryListener. Every accepted
// connection gets conf's SocketTimeout (IdleTimeout) on each read, so an idle or
// half-open connection is closed instead of held for ever, and the stall
// deadline on each write (stallConn).
type thriftListener struct {
	ln     *retryListener
	conf   *thrift.TConfiguration
	stall  time.Duration
	cuts   *atomic.Int64
	framed bool
	// tls, when set, serves TLS, each handshake within handshake (tls.go).
	tls       *tls.Config
	handshake time.Duration
}

func (l *thriftListener) Listen() error { return nil } // bound by startThrift

func (l *thriftListener) Accept() (thrift.TTransport, error) {
	conn, err := l.ln.Accept()
	if err != nil {
		return nil, thrift.NewTTransportExceptionFromError(err)
	}
	sc := &stallConn{Conn: conn, stall: l.stall, cuts: l.cuts}
	return &thriftConn{TSocket: thrift.NewTSocketFromConnConf(tlsServerConn(sc, l.tls, l.handshake), l.conf), framed: l.framed}, nil
}

func (l *thriftListener) Close() error     { return l.ln.Close() }
func (l *thriftListener) Interrupt() error { return l.ln.Close() }
