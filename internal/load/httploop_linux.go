//go:build linux

package load

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"github.com/rpcbed/rpcbed/internal/stats"
)

// The event loop of load-generator mode on HTTP/1.1 (-check length -k), as wrk
// does it: a few loops (one per GOMAXPROCS), each with its own epoll set over its
// share of the connections, write and read non-blocking sockets themselves.
// A response wakes no goroutine: a loop's thread blocks in epoll_pwait2 on its
// set (wait), and one wake-up returns every connection that became readable;
// each is read until it has nothing more, its head parsed (httpwire.go), and its
// next request written at once (closed loop) or when it is due (open loop): one
// read and one write per call, no epoll_ctl, no allocation. Every connection
// still books its calls in its own caller (histogram, kinds, the monitor's
// counters), so the report is the same as the goroutine loop's.
//
// In a closed loop each loop's thread is pinned to a CPU of its own (-pin auto,
// the default; -pin on pins an open loop's too, -pin off none): loop i to the
// i-th CPU the process may run on. Pinned, a loop answers on its own CPU, and
// go-server's next read finds the request already there more often: x1.14 the
// requests/s of unpinned loops in alternating rounds, at fewer IPIs and idle
// entries per request; an open loop spent more CPU per request pinned (x1.4 at
// 5000/s), so it is not pinned by default (docs/loadgen.md, "Pinned loops").

const loopSupported = true

// loopConn is one connection of a loop, and the caller its calls book into.
type loopConn struct {
	w   *caller
	fd  int // -1 when not connected
	idx int32

	req   []byte // the request, rendered with token
	token []byte
	out   []byte // the part of req not yet written

	buf      []byte
	n        int // bytes of an incomplete head in buf
	head     respHead
	haveHead bool
	got      []byte // the response's X-Token
	body     int64  // body bytes still to come, once the head is read

	inFlight bool
	measured bool      // the call in flight is inside the window
	start    time.Time // its start, or open loop its due time
	sentAt   time.Time // when it was sent: the per-call timeout counts from here
	reused   bool      // the connection has carried a call before this one
	retried  bool      // this call was already sent again on a new connection
	sent     int64     // open loop: measured calls sent, for the caller's quota
	due      time.Time // open loop: when the next call is due; closed loop: not before
	finished bool      // no more calls on this connection
}

// httpLoops is the load of one run over L loops.
type httpLoops struct {
	cfg   *Config
	addr  *net.TCPAddr
	fam   int
	want  int64 // the verified body length
	loops []*httpLoop
	// allowed is where the process may run: a pinned loop's thread goes back to
	// it when the loop ends.
	allowed unix.CPUSet
}

type httpLoop struct {
	l      *httpLoops
	sa     unix.Sockaddr // the server's; each loop its own (Connect writes into it)
	epfd   int           // -1 once closed
	conns  []*loopConn
	events []unix.EpollEvent
	ts     unix.Timespec           // epoll_pwait2's timeout, kept here so that no wait allocates
	hist   *hdrhistogram.Histogram // the latencies of every connection of the loop
	active int                     // connections not finished
	cpu    int                     // the CPU its thread is pinned to; -1 for none
	pinErr error                   // why it could not be pinned
	idle   bool                    // some connection waits for its next call (open loop, after a failure)
}

// newHTTPLoops connects one socket per caller, spread over the loops, and makes
// one unrecorded call on each (the prime of the goroutine loop), carrying token.
func newHTTPLoops(cfg *Config, callers []*caller, want int64, token string) (*httpLoops, error) {
	if bytes.ContainsAny([]byte(cfg.ClientID), "\r\n") {
		return nil, fmt.Errorf("-client-id %q: no line breaks in an HTTP header", cfg.ClientID)
	}
	ta, err := net.ResolveTCPAddr("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	hl := &httpLoops{cfg: cfg, want: want, addr: ta, fam: unix.AF_INET6}
	if ta.IP.To4() != nil {
		hl.fam = unix.AF_INET
	}
	n := min(runtime.GOMAXPROCS(0), len(callers))
	var allowed []int // none: no loop is pinned
	if cfg.pinned() && unix.SchedGetaffinity(0, &hl.allowed) == nil {
		allowed = allowedCPUs(&hl.allowed)
	}
	cpus := pinCPUs(allowed, n)
	for i := range n {
		epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			hl.close()
			return nil, err
		}
		hl.loops = append(hl.loops, &httpLoop{l: hl, epfd: epfd, events: make([]unix.EpollEvent, 256), sa: hl.sockaddr(), cpu: cpus[i]})
	}
	for _, lp := range hl.loops {
		// The callers of a loop book their latencies into one histogram: the
		// buckets in use stay in the cache, where 50 of them (180 KB of counts
		// each) missed it (RecordValues, 5 % of the client's CPU samples).
		lp.hist = stats.NewLatency()
	}
	for i, w := range callers {
		lp := hl.loops[i%n]
		w.hist = lp.hist
		c := &loopConn{w: w, fd: -1, idx: int32(len(lp.conns)), buf: make([]byte, 32<<10), token: []byte(token)}
		c.req = renderRequest(nil, cfg, c.token)
		lp.conns = append(lp.conns, c)
	}
	// The prime: one call per connection, in turn, before anything is timed.
	for _, lp := range hl.loops {
		for _, c := range lp.conns {
			if err := lp.prime(c); err != nil {
				hl.close()
				return nil, fmt.Errorf("priming call: %v", err)
			}
		}
	}
	return hl, nil
}

// allowedCPUs lists the CPUs of set, in order.
func allowedCPUs(set *unix.CPUSet) []int {
	var out []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}

// pinCPUs gives each of n loops its CPU from the allowed ones: loop i the i-th,
// round again when there are more loops than CPUs (GOMAXPROCS set above the
// CPU count); none (-1) when no CPU is allowed.
func pinCPUs(allowed []int, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = -1
		if len(allowed) > 0 {
			out[i] = allowed[i%len(allowed)]
		}
	}
	return out
}

// placement describes where the loops run, for the log: "pinned to CPUs 0 1",
// or why not.
func (hl *httpLoops) placement() string {
	if err := hl.pinErr(); err != nil {
		return "not pinned: " + err.Error()
	}
	var cpus []string
	for _, lp := range hl.loops {
		if lp.cpu < 0 {
			setting := hl.cfg.Pin
			if setting == "" || setting == PinAuto {
				setting = PinAuto
				if hl.cfg.Rate > 0 {
					setting += ", open loop"
				}
			}
			return "not pinned (-pin " + setting + ")"
		}
		cpus = append(cpus, strconv.Itoa(lp.cpu))
	}
	return "pinned to CPUs " + strings.Join(cpus, " ")
}

// pinErr is why a loop could not be pinned; nil when every loop that was to be
// pinned was.
func (hl *httpLoops) pinErr() error {
	for _, lp := range hl.loops {
		if lp.pinErr != nil {
			return lp.pinErr
		}
	}
	return nil
}

// pin locks the calling goroutine to its thread and the thread to lp's CPU,
// and returns what puts the thread back where the process may run and unlocks
// it. Should that fail, the goroutine ends locked: its thread then exits with
// it rather than going back, pinned, to the runtime's pool.
func (lp *httpLoop) pin() (unpin func()) {
	if lp.cpu < 0 {
		return func() {}
	}
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(lp.cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		lp.pinErr = fmt.Errorf("sched_setaffinity CPU %d: %v", lp.cpu, err)
	}
	return func() {
		if unix.SchedSetaffinity(0, &lp.l.allowed) == nil {
			runtime.UnlockOSThread()
		}
	}
}

func (hl *httpLoops) sockaddr() unix.Sockaddr {
	if hl.fam == unix.AF_INET {
		sa := &unix.SockaddrInet4{Port: hl.addr.Port}
		copy(sa.Addr[:], hl.addr.IP.To4())
		return sa
	}
	sa := &unix.SockaddrInet6{Port: hl.addr.Port}
	copy(sa.Addr[:], hl.addr.IP.To16())
	return sa
}

func (hl *httpLoops) close() {
	for _, lp := range hl.loops {
		for _, c := range lp.conns {
			lp.drop(c)
		}
		if lp.epfd >= 0 {
			unix.Close(lp.epfd)
			lp.epfd = -1
		}
	}
}

// dial connects c without blocking the thread past the per-call timeout.
func (lp *httpLoop) dial(c *loopConn) error {
	fd, err := unix.Socket(lp.l.fam, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		return err
	}
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	err = unix.Connect(fd, lp.sa)
	if err == unix.EINPROGRESS {
		err = waitFD(fd, unix.POLLOUT, lp.l.cfg.Timeout)
		if err == nil {
			var soerr int
			soerr, err = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
			if err == nil && soerr != 0 {
				err = unix.Errno(soerr)
			}
		}
	}
	if err == nil {
		// Edge-triggered, readable and writable, once per connection: a short write
		// needs no EPOLL_CTL_MOD (the edge comes when the buffer drains), and an
		// event is not re-checked by every later epoll_wait as a level-triggered
		// one is.
		err = unix.EpollCtl(lp.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLET, Fd: c.idx})
	}
	if err != nil {
		unix.Close(fd)
		return &net.OpError{Op: "dial", Net: "tcp", Err: err}
	}
	c.fd, c.reused, c.n, c.haveHead = fd, false, 0, false
	return nil
}

// waitFD waits until fd is ready for events, at most d.
func waitFD(fd int, events int16, d time.Duration) error {
	end := time.Now().Add(d)
	for {
		left := time.Until(end)
		if left <= 0 {
			return timeoutError{}
		}
		pfd := []unix.PollFd{{Fd: int32(fd), Events: events}}
		n, err := unix.Poll(pfd, int(max(left/time.Millisecond, 1)))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
	}
}

// timeoutError is a net.Error that netKind books as a timeout.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func (lp *httpLoop) drop(c *loopConn) {
	if c.fd >= 0 {
		unix.Close(c.fd) // closing removes it from the epoll set
		c.fd = -1
	}
	c.inFlight, c.n, c.haveHead, c.out = false, 0, false, nil
}

// prime makes one call on c synchronously and checks it.
func (lp *httpLoop) prime(c *loopConn) error {
	if err := lp.dial(c); err != nil {
		return err
	}
	c.inFlight = true
	defer func() { c.inFlight = false }()
	if err := lp.write(c); err != nil {
		return err
	}
	for c.out != nil {
		if err := waitFD(c.fd, unix.POLLOUT, lp.l.cfg.Timeout); err != nil {
			return err
		}
		if err := lp.write(c); err != nil {
			return err
		}
	}
	for {
		if err := waitFD(c.fd, unix.POLLIN, lp.l.cfg.Timeout); err != nil {
			return err
		}
		o, done := lp.read(c)
		if !done {
			continue
		}
		if o.kind != kindOK {
			return o.err
		}
		if c.head.close {
			lp.drop(c)
			return lp.dial(c)
		}
		return nil
	}
}

// write writes what is left of c's request. After a short write (the socket's
// buffer is full) the rest goes out on the EPOLLOUT edge that comes when it
// drains.
func (lp *httpLoop) write(c *loopConn) error {
	if c.out == nil {
		c.out = c.req
	}
	for len(c.out) > 0 {
		m, err := rawWrite(c.fd, c.out)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return nil
		}
		if err != nil {
			return err
		}
		c.out = c.out[m:]
	}
	c.out = nil
	return nil
}

// read reads what c has and tells whether its call ended, and how. Body bytes
// are counted, not kept: only the head is parsed. The connections are
// edge-triggered, so while the call is not done it reads until the socket says
// EAGAIN: a close that came with the last bytes brings no edge of its own. A
// response that comes whole in one read (go-server's DataType) ends the call
// there, with no second read.
func (lp *httpLoop) read(c *loopConn) (outcome, bool) {
	for {
		m, err := rawRead(c.fd, c.buf[c.n:])
		for err == unix.EINTR {
			m, err = rawRead(c.fd, c.buf[c.n:])
		}
		if err == unix.EAGAIN {
			return outcome{}, false
		}
		if !c.inFlight {
			// A kept connection the server closed between calls, or bytes nobody
			// asked for: the next call opens a new connection.
			lp.drop(c)
			return outcome{}, false
		}
		if err != nil || m == 0 {
			if err == nil {
				err = errEarlyClose
			}
			return fail(kindReceive, err), true
		}
		c.n += m
		if !c.haveHead {
			err := parseHead(c.buf[:c.n], &c.head)
			if err == errHeadShort {
				continue
			}
			if err != nil {
				return fail(kindReceive, err), true
			}
			c.haveHead = true
			c.got = append(c.got[:0], c.head.token...) // the buffer is reused for the body
			c.body = c.head.length - int64(c.n-c.head.headLen)
		} else {
			c.body -= int64(m)
		}
		c.n = 0
		if c.body < 0 {
			return fail(kindReceive, fmt.Errorf("%d bytes after the %d-byte body", -c.body, c.head.length)), true
		}
		if c.body == 0 {
			return lp.answer(c), true
		}
	}
}

// rawRead and rawWrite never block (the sockets are non-blocking): the runtime
// need not treat them as system calls that might.
func rawRead(fd int, b []byte) (int, error) {
	r, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

func rawWrite(fd int, b []byte) (int, error) {
	r, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

var errEarlyClose = errors.New("connection closed before the response ended")

// headerValue tells whether b can be sent back as a header value.
func headerValue(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// answer checks a whole response: status, length against the verified one, token.
func (lp *httpLoop) answer(c *loopConn) outcome {
	h := &c.head
	c.haveHead = false
	if h.status < 200 || h.status > 299 {
		if h.status == 401 {
			c.setToken(nil, lp.l.cfg)
		}
		return statusOutcome(h.status)
	}
	if lp.l.want >= 0 && h.length != lp.l.want {
		return fail(kindLength, fmt.Errorf("got %d body bytes; want %d", h.length, lp.l.want))
	}
	if len(c.got) == 0 {
		return fail(kindLength, errNoToken)
	}
	if !bytes.Equal(c.got, c.token) {
		if !headerValue(c.got) {
			return fail(kindLength, fmt.Errorf("X-Token %q is not a header value", clip(c.got)))
		}
		c.setToken(c.got, lp.l.cfg)
	}
	c.reused = true
	return ok(h.length)
}

func (c *loopConn) setToken(tok []byte, cfg *Config) {
	c.token = append(c.token[:0], tok...)
	c.req = renderRequest(c.req[:0], cfg, c.token)
}

// run runs every loop in its own goroutine until its connections finish. A
// loop blocks its thread in epoll_pwait2 as wrk's threads do, through a raw
// system call the Go scheduler does not see: the loop keeps its P, no goroutine
// is parked or woken per wake-up, and sysmon does not hand the P away (it does,
// every 20 µs, for a wait made through syscall.Syscall). So that the monitor,
// the timers and the garbage collector still have a P while every loop holds
// one, the run has one P more than loops (docs/loadgen.md has the measured
// candidates: the netpoller wait this replaced, a Syscall wait, a locked thread).
//
// The loops' threads keep the default policy, SCHED_NORMAL, as wrk's do. They
// ran SCHED_BATCH in a closed loop for a while (a woken loop then did not
// preempt the server on its core): on a shared machine that won, but on a
// quiet one it left more of the machine idle (both cores busy 0.80-0.83 of
// the time against 0.88-0.90) and made 7-12 % fewer requests/s in each of 7
// alternating rounds (docs/loadgen.md, "The scheduling policy").
func (hl *httpLoops) run(r *loopRun) {
	if procs := runtime.GOMAXPROCS(0); procs <= len(hl.loops) {
		runtime.GOMAXPROCS(len(hl.loops) + 1)
		defer runtime.GOMAXPROCS(procs)
	}
	var wg sync.WaitGroup
	for _, lp := range hl.loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lp.run(r)
		}()
	}
	wg.Wait()
}

// expireEvery is how often a loop looks for calls past their deadline, and the
// longest it waits before it looks at the stop flag again.
const expireEvery = 10 * time.Millisecond

func (lp *httpLoop) run(r *loopRun) {
	defer lp.pin()()
	now := time.Now()
	lp.active = len(lp.conns)
	if r.open {
		for _, c := range lp.conns {
			c.due = r.win.base.Add(c.w.offset)
		}
		lp.idle = true // the first calls go out when they are due
	} else {
		for _, c := range lp.conns {
			lp.next(c, r, now)
		}
	}
	lastExpire := now
	for lp.active > 0 {
		wake := now.Add(expireEvery)
		if lp.idle {
			for _, c := range lp.conns {
				if !c.inFlight && !c.finished && c.due.Before(wake) {
					wake = c.due
				}
			}
		}
		n := lp.wait(wake.Sub(now))
		now = time.Now()
		for _, ev := range lp.events[:n] {
			c := lp.conns[ev.Fd]
			if c.fd < 0 {
				continue
			}
			if ev.Events&unix.EPOLLOUT != 0 && c.out != nil {
				if err := lp.write(c); err != nil {
					lp.end(c, r, fail(netKind(err), err), now)
					continue
				}
			}
			if ev.Events&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
				if o, done := lp.read(c); done {
					lp.end(c, r, o, now)
				}
			}
		}
		if now.Sub(lastExpire) >= expireEvery {
			lastExpire = now
			for _, c := range lp.conns {
				if c.inFlight && now.Sub(c.sentAt) > lp.l.cfg.Timeout {
					lp.end(c, r, fail(kindTimeout, timeoutError{}), now)
				}
			}
			if r.stop.Load() {
				lp.idle = true // the idle ones finish below
			}
		}
		if lp.idle {
			lp.idle = false
			for _, c := range lp.conns {
				if !c.inFlight && !c.finished && (!c.due.After(now) || r.stop.Load()) {
					lp.next(c, r, now)
				}
				if !c.inFlight && !c.finished {
					lp.idle = true
				}
			}
		}
	}
}

// wait waits for events at most d (to the nanosecond, so that an open loop's
// calls leave when due; Go's own timers wake in whole milliseconds when the
// process is idle) and returns how many are in lp.events. A signal (the
// runtime's preemption, a profile's tick) ends the wait early with none.
func (lp *httpLoop) wait(d time.Duration) int {
	if d <= 0 {
		return lp.poll()
	}
	lp.ts = unix.NsecToTimespec(int64(d))
	if !noPwait2.Load() {
		r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(lp.epfd), uintptr(unsafe.Pointer(&lp.events[0])), uintptr(len(lp.events)),
			uintptr(unsafe.Pointer(&lp.ts)), 0, 0)
		if e != unix.ENOSYS {
			if e != 0 {
				return 0
			}
			return int(r)
		}
		noPwait2.Store(true) // a kernel before 5.11: whole milliseconds, rounded up
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(lp.epfd), uintptr(unsafe.Pointer(&lp.events[0])), uintptr(len(lp.events)),
		uintptr(ms), 0, 0)
	if e != 0 {
		return 0
	}
	return int(r)
}

var noPwait2 atomic.Bool

// poll is epoll_wait without waiting.
func (lp *httpLoop) poll() int {
	for {
		r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(lp.epfd), uintptr(unsafe.Pointer(&lp.events[0])), uintptr(len(lp.events)), 0, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0
		}
		return int(r)
	}
}

// end books the call on c that just ended, and starts the next one in a closed
// loop.
func (lp *httpLoop) end(c *loopConn, r *loopRun, o outcome, now time.Time) {
	retry := o.kind == kindReceive && c.reused && !c.retried && c.n == 0 && !c.haveHead
	if o.kind != kindOK || c.head.close {
		lp.drop(c)
	}
	if retry {
		// A kept connection the server closed meanwhile: send once more on a new
		// one, as http.Transport does for a GET; the call keeps its start.
		c.retried = true
		c.sentAt = now
		if err := lp.send(c); err == nil {
			return
		}
	}
	c.inFlight, c.retried = false, false
	c.w.record(o, c.start, now, c.measured)
	if o.kind == kindConnect {
		c.due = now.Add(connectPause) // nothing listens: do not spin
	}
	if r.open {
		// Finish now rather than at the next due time, past the window: the
		// window ends with the last measured call (the achieved rate).
		if _, over := r.win.at(c.due); over || (c.w.quota > 0 && c.sent >= c.w.quota) {
			lp.finish(c)
			return
		}
	}
	if r.open || c.due.After(now) {
		lp.idle = true
		return
	}
	lp.next(c, r, now)
}

// next starts c's next call if the run wants one, and marks c finished if not.
func (lp *httpLoop) next(c *loopConn, r *loopRun, now time.Time) {
	if r.stop.Load() {
		lp.finish(c)
		return
	}
	start := now
	if r.open {
		start = c.due
		if c.w.quota > 0 && c.sent >= c.w.quota {
			lp.finish(c)
			return
		}
	}
	measured, over := r.win.at(start)
	if over {
		lp.finish(c)
		return
	}
	if r.counted && measured && r.remaining.Add(-1) < 0 {
		lp.finish(c)
		return
	}
	if r.open {
		c.due = c.due.Add(r.interval)
		if measured {
			c.sent++
		}
	}
	c.start, c.sentAt, c.measured = start, now, measured
	if err := lp.send(c); err != nil {
		o := fail(netKind(err), err)
		c.w.record(o, start, time.Now(), measured)
		if o.kind == kindConnect && !r.open {
			c.due = now.Add(connectPause)
		}
		lp.idle = true
	}
}

func (lp *httpLoop) finish(c *loopConn) {
	c.finished = true
	lp.active--
}

// send writes c's request, on a new connection if c has none.
func (lp *httpLoop) send(c *loopConn) error {
	if c.fd < 0 {
		if err := lp.dial(c); err != nil {
			return err
		}
	}
	c.inFlight = true
	err := lp.write(c)
	if err != nil {
		lp.drop(c)
		return err
	}
	return nil
}
