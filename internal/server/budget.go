package server

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/rpcbed/rpcbed/internal/service"
)

// Limits on what go-server holds for a caller (README: Limits). A caller that asks
// for DataList(100000) and then reads nothing used to hold its encoded answer
// (11 MB of JSON) for 120 s: 100 of them took go-server past 3 GB.
const (
	// StallTimeout cuts a connection whose answer write has made no progress for
	// this long (the caller has not read): HTTP and Thrift set it on each 256 KiB
	// chunk of an answer, gRPC on its connection's writes.
	StallTimeout = 10 * time.Second
	// AnswerBudget bounds the answer bytes in flight in the whole process: an
	// answer is encoded only once its bytes fit, and they count until written to
	// the socket (or the connection is cut).
	AnswerBudget = 256 << 20
	// ConnAnswerBudget bounds them per connection. HTTP/1.1 and Thrift carry one
	// call at a time, so it binds gRPC's streams over one connection.
	ConnAnswerBudget = 32 << 20
	// SmallAnswer: answers estimated below it (DataType, DataList of up to about
	// 500 items) are not counted. Each connection has at most one in flight on
	// HTTP and Thrift, so no caller can make a small answer wait behind big ones.
	SmallAnswer = 64 << 10
	// writeChunk is how much of an answer one write deadline covers.
	writeChunk = 256 << 10
)

// Bytes per item of a DataList answer, at most, on each protocol (measured over
// all 100 000 items by TestAnswerEstimate), and the answer's own overhead.
const (
	itemJSON          = 112
	itemProto         = 32
	itemThriftBinary  = 82
	itemThriftCompact = 36
	answerOverhead    = 256
)

// answerEstimate is the size a DataList(n) answer may reach with perItem bytes an
// item: what a call reserves before its answer is built.
func answerEstimate(n, perItem int) int64 {
	return int64(answerOverhead + max(n, 0)*perItem)
}

// budget is a byte count that may be held at once, as a weighted semaphore:
// waiters are served in order, each wait ends with its call's context.
type budget struct {
	sem  *semaphore.Weighted
	size int64
	held atomic.Int64 // for /stats
}

func newBudget(size int64) *budget {
	return &budget{sem: semaphore.NewWeighted(size), size: size}
}

// answers is the process's answer budget and its per-connection size.
type answers struct {
	total    *budget
	perConn  int64
	waits    atomic.Int64 // calls that found the budget full and waited
	refusals atomic.Int64 // calls whose wait ended without it (context done)
	cuts     atomic.Int64 // connections cut for not reading their answers
}

// A JSON answer is reserved three times over: encoding/json encodes into a
// buffer of its own, which grows by doubling (up to twice the answer), before the
// answer's buffer gets a copy.
const jsonCopies = 3

func newAnswers(total, perConn int64) *answers {
	return &answers{total: newBudget(total), perConn: perConn}
}

// reserve takes est bytes from conn's budget, when it has one, and from the
// total; release gives them back and is safe to
// call more than once. An answer below SmallAnswer takes nothing.
func (a *answers) reserve(ctx context.Context, conn *budget, est int64) (release func(), err error) {
	if a == nil || est < SmallAnswer {
		return func() {}, nil
	}
	// The same amount from each, at most what the smaller holds, so that any one
	// answer can always be built once the others are written.
	n := min(est, a.total.size)
	if conn != nil {
		n = min(n, conn.size)
	}
	take := func(b *budget) (func(), error) {
		if b == nil {
			return func() {}, nil
		}
		if !b.sem.TryAcquire(n) {
			a.waits.Add(1)
			if err := b.sem.Acquire(ctx, n); err != nil {
				a.refusals.Add(1)
				return nil, err
			}
		}
		b.held.Add(n)
		return func() { b.held.Add(-n); b.sem.Release(n) }, nil
	}
	relConn, err := take(conn)
	if err != nil {
		return nil, err
	}
	relTotal, err := take(a.total)
	if err != nil {
		relConn()
		return nil, err
	}
	var done atomic.Bool
	return func() {
		if done.CompareAndSwap(false, true) {
			relTotal()
			relConn()
		}
	}, nil
}

func (a *answers) newConn() *budget {
	if a == nil {
		return nil
	}
	return newBudget(a.perConn)
}

// budgetErr is the error a call whose answer found no room in time gets.
func budgetErr(err error) error {
	return &service.Error{Code: service.Unavailable, Msg: "answer budget: " + err.Error()}
}

// stallConn is a net.Conn whose writes carry a deadline StallTimeout ahead: a
// write blocked that long (the peer stopped reading) fails, and the connection's
// server closes it. The deadline is moved at most once per tenth of the stall, so
// a busy connection does not pay for a timer update on every write; a blocked
// write is cut after 0.9 to 1 times the stall.
//
// Answers are written in pieces of at most writeChunk, so a caller that keeps
// reading is never cut however long its whole answer takes; one slower than
// writeChunk per StallTimeout is.
type stallConn struct {
	net.Conn
	stall   time.Duration
	until   atomic.Int64 // the write deadline set, Unix ns; 0: none
	written atomic.Int64 // bytes written so far
	onClose func()
	cuts    *atomic.Int64 // counts this connection once when a write stalls
	cut     atomic.Bool
}

// markCut counts the connection as cut for not reading (once).
func (c *stallConn) markCut() {
	if c.cuts != nil && c.cut.CompareAndSwap(false, true) {
		c.cuts.Add(1)
	}
}

func (c *stallConn) Write(b []byte) (int, error) {
	now := time.Now()
	if time.Duration(c.until.Load()-now.UnixNano()) < c.stall-c.stall/10 {
		until := now.Add(c.stall)
		c.until.Store(until.UnixNano())
		c.Conn.SetWriteDeadline(until)
	}
	n, err := c.Conn.Write(b)
	c.written.Add(int64(n))
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		c.markCut()
	}
	return n, err
}

// SetDeadline and SetWriteDeadline (grpc-go sets and clears one around its
// handshake, the Thrift socket before each write) replace the stall deadline
// until the next write moves it again.
func (c *stallConn) SetDeadline(t time.Time) error {
	c.until.Store(0)
	return c.Conn.SetDeadline(t)
}

func (c *stallConn) SetWriteDeadline(t time.Time) error {
	c.until.Store(0)
	return c.Conn.SetWriteDeadline(t)
}

func (c *stallConn) Close() error {
	if c.onClose != nil {
		c.onClose()
	}
	return c.Conn.Close()
}

// stallListener wraps every accepted connection in a stallConn; accepted, when
// set, is told of each one.
type stallListener struct {
	net.Listener
	stall    time.Duration
	cuts     *atomic.Int64
	accepted func(*stallConn)
}

func (l stallListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	sc := &stallConn{Conn: c, stall: l.stall, cuts: l.cuts}
	if l.accepted != nil {
		l.accepted(sc)
	}
	return sc, nil
}

// writeChunked writes b to w in pieces of at most writeChunk.
func writeChunked(w io.Writer, b []byte) error {
	for len(b) > 0 {
		k := min(len(b), writeChunk)
		if _, err := w.Write(b[:k]); err != nil {
			return err
		}
		b = b[k:]
	}
	return nil
}

// connBudgets keeps each gRPC connection's budget, found from a call's peer
// address, and cuts a connection that holds answer bytes but does not take them.
// gRPC writes only what the caller's flow-control window allows, so a caller that
// stops reading leaves its answers queued without any write blocking: the stall
// deadline alone would never fire. Instead, a connection holding reserved answer
// bytes that wrote less than min(writeChunk, held) of them in StallTimeout is
// closed, which frees its streams and their answers.
type connBudgets struct {
	a     *answers
	stall time.Duration
	mu    sync.Mutex
	m     map[string]*grpcConn
}

type grpcConn struct {
	b *budget
	c *stallConn
	// The watchdog's mark: written bytes at a time since which the connection has
	// held answer bytes.
	markT time.Time
	markW int64
}

func newConnBudgets(a *answers, stall time.Duration) *connBudgets {
	return &connBudgets{a: a, stall: stall, m: map[string]*grpcConn{}}
}

func (cb *connBudgets) add(c *stallConn) {
	key, gc := c.RemoteAddr().String(), &grpcConn{b: cb.a.newConn(), c: c}
	cb.mu.Lock()
	cb.m[key] = gc
	cb.mu.Unlock()
	var once sync.Once
	c.onClose = func() {
		once.Do(func() {
			cb.mu.Lock()
			if cb.m[key] == gc {
				delete(cb.m, key)
			}
			cb.mu.Unlock()
		})
	}
}

func (cb *connBudgets) of(addr net.Addr) *budget {
	if addr == nil {
		return nil
	}
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if gc := cb.m[addr.String()]; gc != nil {
		return gc.b
	}
	return nil
}

// watch checks every connection once per tick until done closes.
func (cb *connBudgets) watch(tick time.Duration, done <-chan struct{}) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			for _, c := range cb.stalled(now) {
				c.markCut()
				c.Close()
			}
		}
	}
}

// stalled returns the connections to cut at now.
func (cb *connBudgets) stalled(now time.Time) []*stallConn {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	var cut []*stallConn
	for _, gc := range cb.m {
		held, w := gc.b.held.Load(), gc.c.written.Load()
		switch {
		case held == 0:
			gc.markT = time.Time{}
		case gc.markT.IsZero() || w-gc.markW >= min(writeChunk, held):
			gc.markT, gc.markW = now, w
		case now.Sub(gc.markT) >= cb.stall:
			cut = append(cut, gc.c)
		}
	}
	return cut
}
