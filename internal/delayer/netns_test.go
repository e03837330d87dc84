package delayer

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/nstest"
)

// startDelayer binds queue 0 in b and sends b's ingress on devB to it.
func startDelayer(t *testing.T, p *nstest.Pair, c Config) (stop func() Stats) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	type res struct {
		st  Stats
		err error
	}
	done := make(chan res, 1)
	ready := make(chan int, 1)
	c.Ready = func(tid int) { ready <- tid }
	go func() {
		st, err := RunIn(ctx, nstest.Path(p.B), c)
		done <- res{st, err}
	}()
	// The rule goes in once the queue is bound; with --queue-bypass a packet
	// passes undelayed until then (and after the delayer stops).
	var tid int
	select {
	case tid = <-ready:
	case r := <-done:
		cancel()
		t.Fatalf("delayer ended before it was ready: %v", r.err)
	}
	nstest.Cmd(t, "ip", "netns", "exec", p.B, "iptables", "-t", "raw", "-A", "PREROUTING", "-i", p.DevB,
		"-j", "NFQUEUE", "--queue-num", fmt.Sprint(c.Queue), "--queue-bypass")
	var stopped bool
	var st Stats
	stopFn := func() Stats {
		if stopped {
			return st
		}
		stopped = true
		if cpu, err := ThreadCPU(tid); err != nil || cpu <= 0 {
			t.Errorf("ThreadCPU(%d) = %v, %v; want > 0 while it runs", tid, cpu, err)
		}
		exec.Command("ip", "netns", "exec", p.B, "iptables", "-t", "raw", "-F", "PREROUTING").Run()
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
	p := nstest.NewPair(t, 1)
	c := p.Echo(t)
	base := nstest.RTTs(t, c, 200)
	for _, delay := range []time.Duration{500 * time.Microsecond, 2 * time.Millisecond} {
		t.Run(delay.String(), func(t *testing.T) {
			stop := startDelayer(t, p, Config{Queue: 0, Delay: delay})
			got := nstest.RTTs(t, c, 200)
			st := stop()
			p50 := nstest.Quantile(got, 0.5)
			t.Logf("asked %v: rtt p50 %v p99 %v (unshaped p50 %v); delayer: %d packets (%d stamped, read %.0f µs after arrival at p50, %.0f at p99), late p50 %.0f µs p99 %.0f µs, spin %.0f µs, cpu %.3f s, drops %d/%d",
				delay, p50, nstest.Quantile(got, 0.99), nstest.Quantile(base, 0.5), st.Packets, st.Stamped, st.ReadLateP50Us, st.ReadLateP99Us,
				st.LateP50Us, st.LateP99Us, st.SpinUs, st.CPUSeconds, st.QueueDropped, st.UserDropped)
			if st.Stamped == 0 {
				t.Errorf("no packet carried the kernel's arrival stamp: the delay counts from the delayer's read")
			}
			if got[0] < delay {
				t.Errorf("fastest round trip %v below the asked delay %v: a packet left early", got[0], delay)
			}
			if hi := delay + nstest.Quantile(base, 0.5) + 2*time.Millisecond; p50 > hi {
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
// (the flow's release times stay in order) nor corrupted. A veth reorders a bulk
// flow now and then on its own, before the queue (plain veth here: 4 of 12 4 MiB
// echoes had out-of-order segments, one with 135 retransmissions), so the
// delayer counts what reached it out of order, and a transfer that reached it in
// order must reach the socket in order, with nothing retransmitted. Up to five
// transfers are tried for one that reached it in order (11 of 12 did here).
func TestDelayerJitterKeepsTCPInOrder(t *testing.T) {
	p := nstest.NewPair(t, 2)
	const size = 4 << 20
	out := make([]byte, size)
	for i := range out {
		out[i] = byte(i * 7)
	}
	counters := func() (ofo, retrans int64) {
		return nstest.Counter(t, p.B, "TcpExt", "TCPOFOQueue"),
			nstest.Counter(t, p.A, "Tcp", "RetransSegs") + nstest.Counter(t, p.B, "Tcp", "RetransSegs")
	}
	for try := 1; try <= 5; try++ {
		c := p.Echo(t)
		ofo0, re0 := counters()
		stop := startDelayer(t, p, Config{Queue: 0, Delay: time.Millisecond, Jitter: time.Millisecond, Seed: uint64(try)})
		c.SetDeadline(time.Now().Add(60 * time.Second))
		go c.Write(out)
		back := make([]byte, size)
		if _, err := io.ReadFull(c, back); err != nil {
			t.Fatal(err)
		}
		st := stop()
		c.Close()
		ofo1, re1 := counters()
		ofo, retrans := ofo1-ofo0, re1-re0
		if string(back) != string(out) {
			t.Fatalf("the echo differs from what was sent")
		}
		t.Logf("transfer %d, 4 MiB echoed: %d packets delayed, %d held back for their flow, %d reached the queue behind a later segment; at the socket %d out of order, %d retransmitted",
			try, st.Packets, st.FlowClamped, st.ArrivedBehind, ofo, retrans)
		if st.FlowClamped == 0 {
			t.Errorf("no packet was held back for its flow: the jitter did not bite")
		}
		if st.ArrivedBehind > 0 {
			continue // reordered before the delayer: says nothing of it
		}
		if ofo > 0 || retrans > 0 {
			t.Errorf("every segment reached the delayer in order, yet %d reached the socket out of order and %d were retransmitted: jitter reordered the flow", ofo, retrans)
		}
		return
	}
	t.Errorf("all 5 transfers were reordered before they reached the delayer: its order was never tried")
}

// Binding a queue another program holds is a clear error, not a hang.
func TestDelayerQueueTaken(t *testing.T) {
	p := nstest.NewPair(t, 3)
	startDelayer(t, p, Config{Queue: 5, Delay: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := RunIn(ctx, nstest.Path(p.B), Config{Queue: 5, Delay: time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "queue 5") {
		t.Fatalf("got %v; want an error naming queue 5", err)
	}
}
