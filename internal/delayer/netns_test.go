package delayer

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rpcbed/rpcbed/internal/testbed"
)

// pairBed is two network namespaces joined by a veth, made by the test and
// removed on every exit path: a (198.19.250.1) and b (198.19.250.2).
type pairBed struct {
	a, b       string // namespace names
	devA, devB string
	addrA      string
	addrB      string
}

func run(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// newPairBed needs root, ip and iptables; without them the test skips (or fails
// when RPCBED_REQUIRE names netns).
func newPairBed(t *testing.T, subnet int) *pairBed {
	t.Helper()
	req := testbed.Required("netns")
	if os.Geteuid() != 0 {
		testbed.Missing(t, req, "network namespaces need root")
	}
	for _, c := range []string{"ip", "iptables"} {
		if _, err := exec.LookPath(c); err != nil {
			testbed.Missing(t, req, "%s not found", c)
		}
	}
	id := fmt.Sprintf("rbdly%d%d", os.Getpid()%100000, subnet)
	p := &pairBed{a: id + "a", b: id + "b", devA: id + "a", devB: id + "b",
		addrA: fmt.Sprintf("198.19.250.%d", subnet*4+1), addrB: fmt.Sprintf("198.19.250.%d", subnet*4+2)}
	t.Cleanup(func() {
		// Deleting a namespace removes its veth end (and so the pair) and its
		// iptables rules.
		exec.Command("ip", "netns", "del", p.a).Run()
		exec.Command("ip", "netns", "del", p.b).Run()
	})
	run(t, "ip", "netns", "add", p.a)
	run(t, "ip", "netns", "add", p.b)
	run(t, "ip", "link", "add", p.devA, "netns", p.a, "type", "veth", "peer", "name", p.devB, "netns", p.b)
	run(t, "ip", "-n", p.a, "addr", "add", p.addrA+"/30", "dev", p.devA)
	run(t, "ip", "-n", p.b, "addr", "add", p.addrB+"/30", "dev", p.devB)
	for _, ns := range []string{p.a, p.b} {
		run(t, "ip", "-n", ns, "link", "set", "lo", "up")
	}
	run(t, "ip", "-n", p.a, "link", "set", p.devA, "up")
	run(t, "ip", "-n", p.b, "link", "set", p.devB, "up")
	return p
}

func (p *pairBed) path(ns string) string { return "/var/run/netns/" + ns }

// in runs fn on a thread inside namespace ns (a socket made there stays there).
func in(t testing.TB, ns string, fn func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		fd, err := unix.Open("/var/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			err = unix.Setns(fd, unix.CLONE_NEWNET)
			unix.Close(fd)
		}
		if err == nil {
			fn()
		}
		done <- err
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// echo serves a TCP echo in a (on addrA) and returns a connection to it from b.
func (p *pairBed) echo(t *testing.T) net.Conn {
	t.Helper()
	var ln net.Listener
	var err error
	in(t, p.a, func() { ln, err = net.Listen("tcp", p.addrA+":0") })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	var c net.Conn
	in(t, p.b, func() { c, err = net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// rtts times n 64-byte echoes one at a time.
func rtts(t *testing.T, c net.Conn, n int) []time.Duration {
	t.Helper()
	buf := make([]byte, 64)
	out := make([]time.Duration, 0, n)
	c.SetDeadline(time.Now().Add(30 * time.Second))
	for range n {
		t0 := time.Now()
		if _, err := c.Write(buf); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
		out = append(out, time.Since(t0))
	}
	slices.Sort(out)
	return out
}

func quantile(d []time.Duration, q float64) time.Duration { return d[int(q*float64(len(d)-1))] }

// startDelayer binds queue 0 in b and sends b's ingress on devB to it.
func (p *pairBed) startDelayer(t *testing.T, c Config) (stop func() Stats) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	type res struct {
		st  Stats
		err error
	}
	done := make(chan res, 1)
	go func() {
		st, err := RunIn(ctx, p.path(p.b), c)
		done <- res{st, err}
	}()
	// The rule goes in once the queue is bound; with --queue-bypass a packet
	// passes undelayed until then (and after the delayer stops).
	time.Sleep(100 * time.Millisecond)
	run(t, "ip", "netns", "exec", p.b, "iptables", "-t", "raw", "-A", "PREROUTING", "-i", p.devB,
		"-j", "NFQUEUE", "--queue-num", fmt.Sprint(c.Queue), "--queue-bypass")
	var stopped bool
	var st Stats
	stopFn := func() Stats {
		if stopped {
			return st
		}
		stopped = true
		exec.Command("ip", "netns", "exec", p.b, "iptables", "-t", "raw", "-F", "PREROUTING").Run()
		cancel()
		select {
		case r := <-done:
			if r.err != nil {
				t.Errorf("delayer: %v", r.err)
			}
			st = r.st
		case <-time.After(10 * time.Second):
			t.Errorf("delayer did not stop within 10 s")
		}
		return st
	}
	t.Cleanup(func() { stopFn() })
	return stopFn
}

// The delay a delayer adds is what was asked, and the unshaped pair shows what
// the hops cost without it. The bound on the high side is the platform's
// measured overhead (40-140 µs a hop, the timer 20-50 µs late at p50) with room
// for a loaded CI machine.
func TestDelayerAddsDelay(t *testing.T) {
	p := newPairBed(t, 1)
	c := p.echo(t)
	base := rtts(t, c, 200)
	for _, delay := range []time.Duration{500 * time.Microsecond, 2 * time.Millisecond} {
		t.Run(delay.String(), func(t *testing.T) {
			stop := p.startDelayer(t, Config{Queue: 0, Delay: delay})
			got := rtts(t, c, 200)
			st := stop()
			p50 := quantile(got, 0.5)
			t.Logf("asked %v: rtt p50 %v p99 %v (unshaped p50 %v); delayer: %d packets, late p50 %.0f µs p99 %.0f µs, cpu %.3f s, drops %d/%d",
				delay, p50, quantile(got, 0.99), quantile(base, 0.5), st.Packets, st.LateP50Us, st.LateP99Us, st.CPUSeconds, st.QueueDropped, st.UserDropped)
			if got[0] < delay {
				t.Errorf("fastest round trip %v below the asked delay %v: a packet left early", got[0], delay)
			}
			if hi := delay + quantile(base, 0.5) + 2*time.Millisecond; p50 > hi {
				t.Errorf("rtt p50 %v; want at most %v (asked %v)", p50, hi, delay)
			}
			// Each echo is two segments into b at least (the echo and its ack
			// may share one).
			if st.Packets < 200 || st.Released != st.Packets {
				t.Errorf("delayer saw %d packets, released %d; want at least 200, all released", st.Packets, st.Released)
			}
			if st.QueueDropped != 0 || st.UserDropped != 0 {
				t.Errorf("kernel dropped %d (queue full) and %d (delayer) packets; want 0", st.QueueDropped, st.UserDropped)
			}
		})
	}
}

// With jitter as large as the delay, a bulk TCP transfer is neither reordered
// (the flow's release times stay in order) nor corrupted.
func TestDelayerJitterKeepsTCPInOrder(t *testing.T) {
	p := newPairBed(t, 2)
	c := p.echo(t)
	stop := p.startDelayer(t, Config{Queue: 0, Delay: time.Millisecond, Jitter: time.Millisecond, Seed: 3})
	const size = 4 << 20
	out := make([]byte, size)
	for i := range out {
		out[i] = byte(i * 7)
	}
	c.SetDeadline(time.Now().Add(60 * time.Second))
	go c.Write(out)
	back := make([]byte, size)
	if _, err := io.ReadFull(c, back); err != nil {
		t.Fatal(err)
	}
	st := stop()
	if string(back) != string(out) {
		t.Fatalf("the echo differs from what was sent")
	}
	retrans := nstat(t, p.a, "TcpRetransSegs") + nstat(t, p.b, "TcpRetransSegs")
	t.Logf("4 MiB echoed: %d packets delayed, %d held back for their flow, retransmitted segments %d", st.Packets, st.FlowClamped, retrans)
	if st.FlowClamped == 0 {
		t.Errorf("no packet was held back for its flow: the jitter did not bite")
	}
	if retrans > 0 {
		t.Errorf("%d segments retransmitted; want 0 (jitter must not reorder a flow)", retrans)
	}
}

// nstat reads one counter of namespace ns's /proc/net/snmp.
func nstat(t *testing.T, ns, name string) int64 {
	t.Helper()
	var b []byte
	var err error
	in(t, ns, func() { b, err = os.ReadFile("/proc/thread-self/net/snmp") })
	if err != nil {
		t.Fatal(err)
	}
	field := strings.TrimPrefix(name, "Tcp")
	lines := strings.Split(string(b), "\n")
	for i := 0; i+1 < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "Tcp:") || !strings.HasPrefix(lines[i+1], "Tcp:") {
			continue
		}
		names, vals := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		for j := range names {
			if names[j] == field && j < len(vals) {
				var v int64
				fmt.Sscan(vals[j], &v)
				return v
			}
		}
	}
	t.Fatalf("no %s in %s's snmp", name, ns)
	return 0
}

// Binding a queue another program holds is a clear error, not a hang.
func TestDelayerQueueTaken(t *testing.T) {
	p := newPairBed(t, 3)
	p.startDelayer(t, Config{Queue: 5, Delay: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := RunIn(ctx, p.path(p.b), Config{Queue: 5, Delay: time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "queue 5") {
		t.Fatalf("got %v; want an error naming queue 5", err)
	}
}
