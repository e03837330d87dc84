// Package nstest makes two network namespaces joined by a veth for tests of
// what crosses a link (the delayer, link shaping), and removes them on every
// exit path. Addresses come from 198.19.250.0/24 (RFC 2544's benchmarking range),
// with no route out.
package nstest

import (
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

// Pair is namespaces A and B joined by a veth: DevA (AddrA) in A, DevB (AddrB)
// in B.
type Pair struct {
	A, B         string // `ip netns` names
	DevA, DevB   string
	AddrA, AddrB string
}

// Cmd runs a command and fails t with its output when it fails.
func Cmd(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// NewPair makes a pair; subnet (1..60) keeps the pairs of tests running at once
// apart. It needs root, ip and iptables: without them the test skips, or fails
// when RPCBED_REQUIRE names netns.
func NewPair(t testing.TB, subnet int) *Pair {
	t.Helper()
	req := testbed.Required("netns")
	if os.Geteuid() != 0 {
		testbed.Missing(t, req, "network namespaces need root")
	}
	for _, c := range []string{"ip", "iptables", "tc"} {
		if _, err := exec.LookPath(c); err != nil {
			testbed.Missing(t, req, "%s not found", c)
		}
	}
	id := fmt.Sprintf("rbns%d-%d", os.Getpid()%100000, subnet)
	p := &Pair{A: id + "a", B: id + "b", DevA: id + "a", DevB: id + "b",
		AddrA: fmt.Sprintf("198.19.250.%d", subnet*4+1), AddrB: fmt.Sprintf("198.19.250.%d", subnet*4+2)}
	t.Cleanup(func() {
		// Deleting a namespace removes its veth end (and so the pair), its
		// qdiscs and its iptables rules.
		exec.Command("ip", "netns", "del", p.A).Run()
		exec.Command("ip", "netns", "del", p.B).Run()
	})
	Cmd(t, "ip", "netns", "add", p.A)
	Cmd(t, "ip", "netns", "add", p.B)
	Cmd(t, "ip", "link", "add", p.DevA, "netns", p.A, "type", "veth", "peer", "name", p.DevB, "netns", p.B)
	Cmd(t, "ip", "-n", p.A, "addr", "add", p.AddrA+"/30", "dev", p.DevA)
	Cmd(t, "ip", "-n", p.B, "addr", "add", p.AddrB+"/30", "dev", p.DevB)
	for _, ns := range []string{p.A, p.B} {
		Cmd(t, "ip", "-n", ns, "link", "set", "lo", "up")
	}
	Cmd(t, "ip", "-n", p.A, "link", "set", p.DevA, "up")
	Cmd(t, "ip", "-n", p.B, "link", "set", p.DevB, "up")
	return p
}

// Path is namespace ns's file.
func Path(ns string) string { return "/var/run/netns/" + ns }

// In runs fn on a thread inside namespace ns (a socket made there stays there).
func In(t testing.TB, ns string, fn func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		fd, err := unix.Open(Path(ns), unix.O_RDONLY|unix.O_CLOEXEC, 0)
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

// Echo serves a TCP echo in A (on AddrA) and returns a connection to it from B.
func (p *Pair) Echo(t testing.TB) net.Conn {
	t.Helper()
	var ln net.Listener
	var err error
	In(t, p.A, func() { ln, err = net.Listen("tcp", p.AddrA+":0") })
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
	In(t, p.B, func() { c, err = net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// RTTs times n 64-byte echoes one at a time, sorted.
func RTTs(t testing.TB, c net.Conn, n int) []time.Duration {
	t.Helper()
	buf := make([]byte, 64)
	out := make([]time.Duration, 0, n)
	c.SetDeadline(time.Now().Add(60 * time.Second))
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

// Quantile of sorted durations.
func Quantile(d []time.Duration, q float64) time.Duration { return d[int(q*float64(len(d)-1))] }

// Counter reads one counter of namespace ns's /proc/net/snmp or netstat, e.g. ("Tcp",
// "RetransSegs").
func Counter(t testing.TB, ns, group, name string) int64 {
	t.Helper()
	var b []byte
	var err error
	// snmp holds Ip, Tcp, Udp...; netstat holds TcpExt and IpExt.
	In(t, ns, func() {
		var s, x []byte
		if s, err = os.ReadFile("/proc/thread-self/net/snmp"); err != nil {
			return
		}
		if x, err = os.ReadFile("/proc/thread-self/net/netstat"); err != nil {
			return
		}
		b = append(append(s, '\n'), x...)
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for i := 0; i+1 < len(lines); i++ {
		if !strings.HasPrefix(lines[i], group+":") || !strings.HasPrefix(lines[i+1], group+":") {
			continue
		}
		names, vals := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		for j := range names {
			if names[j] == name && j < len(vals) {
				var v int64
				fmt.Sscan(vals[j], &v)
				return v
			}
		}
	}
	t.Fatalf("no %s %s in %s's snmp or netstat", group, name, ns)
	return 0
}
