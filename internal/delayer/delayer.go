// Package delayer delays a link's packets on a kernel without sch_netem: an
// iptables rule sends each packet arriving on a device to an NFQUEUE queue, and
// the delayer, bound to that queue, holds it until its release time and then
// accepts it. It is the receiving side's half of a link's delay (the kernel's
// raw PREROUTING chain: held packets count against no socket, unlike OUTPUT).
//
// One goroutine on one locked thread reads the queue, keeps the held packets in
// a heap by release time, sleeps in ppoll until the next release or the next
// packet, and sends every due verdict in one sendto. Jitter draws each packet's
// delay uniformly in [delay-jitter, delay+jitter], and a flow's release times are
// kept non-decreasing, so jitter never reorders a TCP connection (reordering
// would make TCP retransmit: ../shared/PLATFORM.md measured 2,066 spurious fast
// retransmits in one transfer without it).
//
// Two things the delayer's own wake-ups would add to every delay are taken
// out. A packet's delay counts from the kernel's stamp of its arrival at the
// hook (the delayer turns the kernel's receive stamps on), not from the read
// that follows the thread's wake-up (15-40 µs later at p50 here, up to a few
// ms on a loaded machine). And the loop wakes early by the timer's recent
// lateness (p90 of the last 64 wake-ups, at most MaxSpin) and spins to the
// release: the release's own lateness fell from 50 to 2-4 µs at p50.
//
// Why not a netlink library: github.com/florianl/go-nfqueue v2.0.2, driven by Go
// timers, lost 14 % of packets at 40 k packets/s on this platform and reached 40 k/s
// only with batched verdicts at +0.39 ms of p50; a raw loop of this shape held
// 80 k/s at +0.2-0.3 ms (PLATFORM.md, "Delay and loss without netem").
package delayer

import (
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"
)

// Config is one delayer: the queue it binds and the delay it adds.
type Config struct {
	Queue  uint16
	Delay  time.Duration // added to every packet
	Jitter time.Duration // each packet's delay uniform in [Delay-Jitter, Delay+Jitter]
	Seed   uint64        // the jitter's draws; 0: from the clock
	MaxLen uint32        // packets the kernel holds for the queue; 0: 16384
	// Ready, when set, is called once the queue is bound, with the delayer's
	// thread id (ThreadCPU reads its CPU while it runs).
	Ready func(tid int) `json:"-"`
}

// Validate names the field that is out of range.
func (c Config) Validate() error {
	switch {
	case c.Delay < 0:
		return fmt.Errorf("delay %v: want >= 0", c.Delay)
	case c.Jitter < 0:
		return fmt.Errorf("jitter %v: want >= 0", c.Jitter)
	case c.Jitter > c.Delay:
		return fmt.Errorf("jitter %v: want at most the delay (%v): a packet cannot leave before it arrived", c.Jitter, c.Delay)
	case c.Delay > 10*time.Second:
		return fmt.Errorf("delay %v: want at most 10s", c.Delay)
	}
	return nil
}

// Stats is what a delayer did: how many packets, how late it released them
// against their release times, and what it cost.
type Stats struct {
	Packets  uint64 `json:"packets"`
	Released uint64 `json:"released"`
	HeldMax  int    `json:"held_max"`
	// Late is how long after its release time a packet's verdict was sent (the
	// timer's wake-up and the loop's work), in µs.
	LateP50Us float64 `json:"late_p50_us"`
	LateP99Us float64 `json:"late_p99_us"`
	LateMaxUs float64 `json:"late_max_us"`
	// Stamped is how many packets carried the kernel's arrival stamp, their
	// release counted from it; ReadLate is how long after that arrival the
	// delayer read them (the queue's and the thread's wake-up), in µs. A
	// packet without a stamp is counted from when it was read.
	Stamped       uint64  `json:"stamped"`
	ReadLateP50Us float64 `json:"read_late_p50_us"`
	ReadLateP99Us float64 `json:"read_late_p99_us"`
	// SpinUs is the last early wake-up: the loop wakes this long before a
	// release and spins to it (the timer's lateness at p90 of the last
	// releases, at most MaxSpin).
	SpinUs float64 `json:"spin_us"`
	// Flows is the number of distinct 5-tuples seen; FlowClamped the packets
	// whose drawn release came before their flow's previous one (held back to
	// keep the flow in order).
	Flows       int    `json:"flows"`
	FlowClamped uint64 `json:"flow_clamped"`
	// ArrivedBehind is the TCP segments with data that reached the queue behind
	// a later segment of their flow: reordered (or retransmitted) before the
	// delayer, which keeps the order it is given. A veth reorders a bulk flow
	// now and then on its own (its sender's packets can cross CPUs' backlogs).
	ArrivedBehind uint64 `json:"arrived_behind"`
	// CPUSeconds is the delayer thread's user+system time (the kernel's work on
	// a released packet is charged to it too).
	CPUSeconds float64 `json:"cpu_seconds"`
	// QueueDropped and UserDropped are the kernel's counts for the queue
	// (/proc/net/netfilter/nfnetlink_queue): packets it dropped because the
	// queue was full, or could not hand to the delayer. Both should be 0.
	QueueDropped uint64 `json:"queue_dropped"`
	UserDropped  uint64 `json:"user_dropped"`
}

// copyBytes is how much of a packet the delayer reads: an IPv4 or IPv6 header
// and the transport ports.
const copyBytes = 64

// flowKey is a packet's 5-tuple, as far as the delayer needs it.
type flowKey struct {
	src, dst [16]byte
	proto    uint8
	sport    uint16
	dport    uint16
}

// flowOf reads a packet's 5-tuple; ok is false for what it cannot read (kept
// in one catch-all flow, so it is never reordered either).
func flowOf(b []byte) (k flowKey, ok bool) {
	if len(b) < 1 {
		return k, false
	}
	var l4 []byte
	switch b[0] >> 4 {
	case 4:
		if len(b) < 20 {
			return k, false
		}
		ihl := int(b[0]&0x0f) * 4
		k.proto = b[9]
		copy(k.src[:4], b[12:16])
		copy(k.dst[:4], b[16:20])
		if ihl < 20 || len(b) < ihl {
			return k, true
		}
		l4 = b[ihl:]
	case 6:
		if len(b) < 40 {
			return k, false
		}
		k.proto = b[6]
		copy(k.src[:], b[8:24])
		copy(k.dst[:], b[24:40])
		l4 = b[40:]
	default:
		return k, false
	}
	if (k.proto == unix.IPPROTO_TCP || k.proto == unix.IPPROTO_UDP) && len(l4) >= 4 {
		k.sport = binary.BigEndian.Uint16(l4[0:])
		k.dport = binary.BigEndian.Uint16(l4[2:])
	}
	return k, true
}

// held is a packet waiting for its release time.
type held struct {
	id  uint32
	due int64 // monotonic ns
}

type heldHeap []held

func (h heldHeap) Len() int { return len(h) }
func (h heldHeap) Less(i, j int) bool {
	if h[i].due != h[j].due {
		return h[i].due < h[j].due
	}
	return h[i].id < h[j].id
}
func (h heldHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *heldHeap) Push(x any)   { *h = append(*h, x.(held)) }
func (h *heldHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// schedule is the delay policy without the socket: when each packet is due.
type schedule struct {
	delay, jitter int64
	rng           *rand.Rand
	last          map[flowKey]int64
	clamped       uint64
	arr           arrivals
}

// arrive is the release time of a packet of flow k arriving at now (ns), its
// first bytes b counted by arrivals.
func (s *schedule) arrive(k flowKey, b []byte, now int64) int64 {
	s.arr.see(k, b)
	return s.due(k, now)
}

func newSchedule(c Config) *schedule {
	seed := c.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	return &schedule{delay: int64(c.Delay), jitter: int64(c.Jitter),
		rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), last: map[flowKey]int64{}}
}

// due is the release time of a packet of flow k arriving at now (ns).
func (s *schedule) due(k flowKey, now int64) int64 {
	d := s.delay
	if s.jitter > 0 {
		d += s.rng.Int64N(2*s.jitter+1) - s.jitter
	}
	t := now + d
	if last, ok := s.last[k]; ok && t < last {
		t = last
		s.clamped++
	}
	if len(s.last) >= maxFlows {
		s.forget(now)
	}
	s.last[k] = t
	return t
}

// tcpSeq reads a TCP segment's sequence number and data length from a packet's
// first bytes; ok is false for anything else, or a segment without data.
func tcpSeq(b []byte) (seq, n uint32, ok bool) {
	if len(b) < 20 || b[0]>>4 != 4 || b[9] != unix.IPPROTO_TCP {
		return 0, 0, false
	}
	ihl := int(b[0]&0x0f) * 4
	if ihl < 20 || len(b) < ihl+13 {
		return 0, 0, false
	}
	total := int(binary.BigEndian.Uint16(b[2:]))
	off := int(b[ihl+12]>>4) * 4
	if total-ihl-off <= 0 {
		return 0, 0, false
	}
	return binary.BigEndian.Uint32(b[ihl+4:]), uint32(total - ihl - off), true
}

// arrivals counts segments that reach the queue behind a later one of their
// flow (sequence numbers compared modulo 2^32).
type arrivals struct {
	next   map[flowKey]uint32 // the highest seq+len seen
	behind uint64
}

func (a *arrivals) see(k flowKey, b []byte) {
	seq, n, ok := tcpSeq(b)
	if !ok {
		return
	}
	if a.next == nil || len(a.next) >= maxFlows {
		a.next = map[flowKey]uint32{}
	}
	if end, seen := a.next[k]; seen && int32(seq+n-end) <= 0 {
		a.behind++
		return
	}
	a.next[k] = seq + n
}

// maxFlows bounds the flow table: beyond it, flows with nothing held are dropped
// (a flow's order matters only while one of its packets is held).
const maxFlows = 1 << 16

func (s *schedule) forget(now int64) {
	for k, last := range s.last {
		if last <= now {
			delete(s.last, k)
		}
	}
}

// realtime is CLOCK_REALTIME nanoseconds, the clock of the kernel's stamps.
func realtime() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_REALTIME, &ts)
	return ts.Nano()
}

// MaxSpin bounds the early wake-up: the loop never spins longer than this
// before a release, whatever the timer's lateness.
const MaxSpin = 200 * time.Microsecond

// waker learns how late the timer wakes the loop (the thread's wake-up on this
// machine, 20-50 µs at p50 on an idle VM and more after a long sleep), so that
// the loop wakes that much early and spins to the release: the p90 of the last
// 64 wake-ups, at most MaxSpin. Spinning costs the delayer's thread CPU, which
// is measured like the rest of its work.
type waker struct {
	lates  [64]int64
	sorted [64]int64
	n      int
	cur    int64
}

func (w *waker) record(late int64) {
	w.lates[w.n%len(w.lates)] = max(0, late)
	w.n++
	k := min(w.n, len(w.lates))
	s := w.sorted[:k]
	copy(s, w.lates[:k])
	slices.Sort(s)
	w.cur = min(s[k*9/10], int64(MaxSpin))
}

func (w *waker) spin() int64 { return w.cur }

// clock is monotonic nanoseconds.
func clock() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// Run binds the queue in the calling thread's network namespace and delays packets until ctx ends; then it accepts every
// packet still held, unbinds, and returns what it did.
func Run(ctx context.Context, c Config) (Stats, error) {
	if err := c.Validate(); err != nil {
		return Stats{}, err
	}
	if c.MaxLen == 0 {
		c.MaxLen = 16384
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// The thread's timer slack (50 µs by default) is lateness on every release.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	// A socket that asks receive stamps turns the kernel's stamping of
	// arriving packets on (it is global), so queued packets carry their arrival.
	if ts, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err == nil {
		_ = unix.SetsockoptInt(ts, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
		defer unix.Close(ts)
	}
	s, err := openQueue(c.Queue, copyBytes, c.MaxLen)
	if err != nil {
		return Stats{}, err
	}
	defer s.close()
	if c.Ready != nil {
		c.Ready(unix.Gettid())
	}
	// ctx's end wakes ppoll through a pipe.
	var wake [2]int
	if err := unix.Pipe2(wake[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return Stats{}, err
	}
	defer unix.Close(wake[0])
	stop := context.AfterFunc(ctx, func() { unix.Write(wake[1], []byte{1}) })
	defer func() { stop(); unix.Close(wake[1]) }()
	return loop(ctx, s, c, wake[0])
}

func loop(ctx context.Context, s *socket, c Config, wakeFd int) (Stats, error) {
	var (
		st   Stats
		sch  = newSchedule(c)
		h    heldHeap
		out  builder
		buf  = make([]byte, 1<<16)
		late = hdrhistogram.New(1, 60_000_000, 3) // µs
		// readLate: from the kernel's arrival stamp to the read, µs.
		readLate = hdrhistogram.New(1, 60_000_000, 3)
		fds      = []unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLIN}, {Fd: int32(wakeFd), Events: unix.POLLIN}}
		ru0      unix.Rusage
		fatal    error
	)
	unix.Getrusage(unix.RUSAGE_THREAD, &ru0)
	release := func(now int64, all bool) error {
		out.reset()
		for len(h) > 0 && (all || h[0].due <= now) {
			p := heap.Pop(&h).(held)
			out.verdict(s.queue, p.id)
			late.RecordValue(max(1, (now-p.due)/1000))
			st.Released++
			// One sendto carries up to 256 verdicts.
			if len(out.b) >= 256*32 {
				if err := s.send(out.b); err != nil {
					return err
				}
				out.reset()
			}
		}
		return s.send(out.b)
	}
	var wake waker
	for ctx.Err() == nil {
		var timeout *unix.Timespec
		var wakeAt int64
		if len(h) > 0 {
			wakeAt = h[0].due - wake.spin()
			ts := unix.NsecToTimespec(max(0, wakeAt-clock()))
			timeout = &ts
		}
		n, err := unix.Ppoll(fds, timeout, nil)
		if err != nil && err != unix.EINTR {
			fatal = fmt.Errorf("ppoll: %w", err)
			break
		}
		if n == 0 && len(h) > 0 {
			// The timer's wake-up: how late it came, then spin to the release.
			now := clock()
			wake.record(now - wakeAt)
			for due := h[0].due; now < due; now = clock() {
			}
		}
		// Read everything waiting, then release what is due.
		for {
			n, _, err := unix.Recvfrom(s.fd, buf, unix.MSG_DONTWAIT)
			if err != nil {
				if err == unix.EAGAIN || err == unix.EINTR {
					break
				}
				if err == unix.ENOBUFS { // the kernel dropped some: it counts them
					continue
				}
				fatal = fmt.Errorf("recv: %w", err)
				break
			}
			now := clock()
			// The clocks' offset, read realtime first: a preemption between the
			// two reads makes it smaller, so a packet's arrival reads later and its
			// delay longer, never shorter.
			off := realtime() - clock()
			perr := parse(buf[:n], func(p packet) {
				k, _ := flowOf(p.payload)
				at := now
				// The kernel's arrival stamp when plausible: delay from the device.
				if a := p.stampNs - off; p.stampNs != 0 && a <= now && now-a < int64(time.Second) {
					at = a
					st.Stamped++
					readLate.RecordValue(max(1, (now-a)/1000))
				}
				heap.Push(&h, held{id: p.id, due: sch.arrive(k, p.payload, at)})
				st.Packets++
			})
			if perr != nil {
				fatal = fmt.Errorf("queue %d: %w", c.Queue, perr)
				break
			}
			st.HeldMax = max(st.HeldMax, len(h))
		}
		if fatal != nil {
			break
		}
		if err := release(clock(), false); err != nil {
			fatal = fmt.Errorf("verdict: %w", err)
			break
		}
	}
	// Nothing is left held: accept the rest at once.
	if err := release(clock(), true); err != nil && fatal == nil && !errors.Is(err, unix.EBADF) {
		fatal = fmt.Errorf("verdict: %w", err)
	}
	var ru1 unix.Rusage
	unix.Getrusage(unix.RUSAGE_THREAD, &ru1)
	st.CPUSeconds = tvSeconds(ru1.Utime) + tvSeconds(ru1.Stime) - tvSeconds(ru0.Utime) - tvSeconds(ru0.Stime)
	st.Flows = len(sch.last)
	st.QueueDropped, st.UserDropped = queueDrops(c.Queue)
	st.FlowClamped = sch.clamped
	st.ArrivedBehind = sch.arr.behind
	st.SpinUs = float64(wake.spin()) / 1e3
	if readLate.TotalCount() > 0 {
		st.ReadLateP50Us = float64(readLate.ValueAtQuantile(50))
		st.ReadLateP99Us = float64(readLate.ValueAtQuantile(99))
	}
	if late.TotalCount() > 0 {
		st.LateP50Us = float64(late.ValueAtQuantile(50))
		st.LateP99Us = float64(late.ValueAtQuantile(99))
		st.LateMaxUs = float64(late.Max())
	}
	return st, fatal
}

// RunIn is Run inside the network namespace at netns (e.g. /var/run/netns/NAME),
// on a thread of its own that ends with it.
func RunIn(ctx context.Context, netns string, c Config) (Stats, error) {
	type result struct {
		st  Stats
		err error
	}
	done := make(chan result, 1)
	go func() {
		// Locked and never unlocked: the thread, in another namespace, ends
		// with this goroutine.
		runtime.LockOSThread()
		fd, err := unix.Open(netns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			done <- result{err: fmt.Errorf("netns %s: %w", netns, err)}
			return
		}
		err = unix.Setns(fd, unix.CLONE_NEWNET)
		unix.Close(fd)
		if err != nil {
			done <- result{err: fmt.Errorf("netns %s: setns: %w", netns, err)}
			return
		}
		st, err := Run(ctx, c)
		done <- result{st, err}
	}()
	r := <-done
	return r.st, r.err
}

// queueDrops reads the kernel's drop counts of queue q in this thread's
// namespace: 0, 0 when it cannot.
func queueDrops(q uint16) (queueDropped, userDropped uint64) {
	b, err := os.ReadFile("/proc/thread-self/net/netfilter/nfnetlink_queue")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 7 {
			continue
		}
		if n, err := strconv.ParseUint(f[0], 10, 16); err != nil || uint16(n) != q {
			continue
		}
		queueDropped, _ = strconv.ParseUint(f[5], 10, 64)
		userDropped, _ = strconv.ParseUint(f[6], 10, 64)
	}
	return queueDropped, userDropped
}

// ThreadCPU is the CPU time thread tid of this process has run
// (/proc/self/task/TID/schedstat: nanoseconds, not clock ticks), so a caller can
// take a delayer's CPU over any window while it runs.
func ThreadCPU(tid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/schedstat")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 0, fmt.Errorf("schedstat of thread %d: %q", tid, b)
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("schedstat of thread %d: %w", tid, err)
	}
	return time.Duration(ns), nil
}

func tvSeconds(t unix.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
