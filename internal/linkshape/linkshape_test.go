package linkshape

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/delayer"
	"github.com/rpcbed/rpcbed/internal/nstest"
	"github.com/rpcbed/rpcbed/internal/plan"
)

// fakeRunner records commands; netem answers as this platform's kernel does, or
// as a stock kernel's.
type fakeRunner struct {
	mu     sync.Mutex
	netem  bool
	cmds   []string
	listed string // what iptables -L prints
}

func (f *fakeRunner) run(_ context.Context, name string, args ...string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	line := name + " " + strings.Join(args, " ")
	f.cmds = append(f.cmds, line)
	if strings.Contains(line, " netem ") && strings.Contains(line, "qdisc add") && !f.netem {
		return []byte("Error: Specified qdisc kind is unknown."), fmt.Errorf("exit status 2")
	}
	if strings.Contains(line, "iptables -w 5 -t raw -L") {
		return []byte(f.listed), nil
	}
	return nil, nil
}

func (f *fakeRunner) has(sub string) bool {
	for _, c := range f.cmds {
		if strings.Contains(c, sub) {
			return true
		}
	}
	return false
}

func TestMechanism(t *testing.T) {
	lan := plan.LinkPresets["lan"]
	for _, tc := range []struct {
		name  string
		netem bool
		netns string
		link  plan.Link
		want  string
		err   string
	}{
		{"unshaped", false, "ns", plan.Link{Name: "unshaped"}, MechNone, ""},
		{"rate", false, "ns", plan.Link{Rate: 100e6}, MechTBF, ""},
		{"delay with netem", true, "ns", lan, MechNetem, ""},
		{"delay without netem", false, "ns", lan, MechNFQueue, ""},
		{"delay without netem or namespace", false, "", lan, "", "network namespace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeRunner{netem: tc.netem}
			s := &Shaper{Run: f.run}
			got, err := s.Mechanism(context.Background(), Side{Host: "h", Netns: tc.netns, Dev: "d"}, tc.link)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %q, %v; want an error naming %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// With netem, a link is one netem qdisc a side, asked exactly; without, the
// ingress rules in order (count, loss, queue) and the delayer started before
// the queue rule.
func TestApplyCommands(t *testing.T) {
	l := plan.Link{Name: "x", Rate: 100e6, Delay: plan.Duration(time.Millisecond), Jitter: plan.Duration(100 * time.Microsecond), Loss: 1}
	t.Run("netem", func(t *testing.T) {
		f := &fakeRunner{netem: true}
		s := &Shaper{Run: f.run, Sides: []Side{{Host: "s", Netns: "ns1", Dev: "d1"}}}
		a, err := s.Apply(context.Background(), l)
		if err != nil {
			t.Fatal(err)
		}
		want := "tc qdisc add dev d1 root netem delay 1ms 100µs loss 1% rate 100mbit"
		if len(a) != 1 || a[0].Mechanism != MechNetem || len(a[0].Commands) != 1 || a[0].Commands[0] != want {
			t.Fatalf("got %+v; want one netem command %q", a, want)
		}
	})
	t.Run("nfqueue", func(t *testing.T) {
		f := &fakeRunner{}
		var started []delayer.Config
		s := &Shaper{Run: f.run, Sides: []Side{{Host: "s", Netns: "ns1", Dev: "d1"}, {Host: "c", Netns: "ns2", Dev: "d2"}},
			StartDelayer: func(ctx context.Context, netns string, c delayer.Config) (delayer.Stats, error) {
				f.mu.Lock()
				started = append(started, c)
				f.cmds = append(f.cmds, "delayer "+netns)
				f.mu.Unlock()
				c.Ready(1)
				<-ctx.Done()
				return delayer.Stats{Packets: 5}, nil
			}}
		a, err := s.Apply(context.Background(), l)
		if err != nil {
			t.Fatal(err)
		}
		if len(a) != 2 || a[0].Mechanism != MechNFQueue || a[1].Mechanism != MechNFQueue {
			t.Fatalf("got %+v; want nfqueue on both sides", a)
		}
		if len(started) != 2 || started[0].Delay != time.Millisecond || started[0].Jitter != 100*time.Microsecond {
			t.Fatalf("delayers %+v; want two at 1ms ± 100µs", started)
		}
		var order []string
		for _, c := range f.cmds {
			switch {
			case strings.Contains(c, "netns exec ns1") && strings.Contains(c, "-A PREROUTING") && strings.Contains(c, "statistic"):
				order = append(order, "loss")
			case strings.Contains(c, "netns exec ns1") && strings.Contains(c, "-A PREROUTING") && strings.Contains(c, "NFQUEUE"):
				order = append(order, "queue")
			case strings.Contains(c, "netns exec ns1") && strings.Contains(c, "-A PREROUTING"):
				order = append(order, "count")
			case c == "delayer /var/run/netns/ns1":
				order = append(order, "delayer")
			}
		}
		if got := strings.Join(order, ","); got != "count,loss,delayer,queue" {
			t.Fatalf("side s: %s; want count,loss,delayer,queue", got)
		}
		if !f.has("tc -n ns1 qdisc add dev d1 root tbf rate 100mbit") {
			t.Fatalf("no tbf for the rate: %v", f.cmds)
		}
		if !f.has("--probability 0.01 -j DROP") {
			t.Fatalf("loss 1%% is not probability 0.01: %v", f.cmds)
		}
		st := s.Clear()
		if st["s"].Packets != 5 || st["c"].Packets != 5 {
			t.Fatalf("Clear returned %+v; want both delayers' figures", st)
		}
		if _, ok := s.DelayerCPU(); ok {
			t.Fatalf("DelayerCPU after Clear: want none running")
		}
	})
}

// With a DelaySide, the round trip's whole delay is held on that side alone
// (twice the one-way delay and jitter); the loss stays on every side.
func TestApplyDelaySide(t *testing.T) {
	f := &fakeRunner{}
	var started []string
	s := &Shaper{Run: f.run, DelaySide: "s", Sides: []Side{{Host: "c", Netns: "ns2", Dev: "d2"}, {Host: "s", Netns: "ns1", Dev: "d1"}},
		StartDelayer: func(ctx context.Context, netns string, c delayer.Config) (delayer.Stats, error) {
			f.mu.Lock()
			started = append(started, fmt.Sprintf("%s %v %v", netns, c.Delay, c.Jitter))
			f.mu.Unlock()
			c.Ready(1)
			<-ctx.Done()
			return delayer.Stats{}, nil
		}}
	l := plan.Link{Delay: plan.Duration(time.Millisecond), Jitter: plan.Duration(100 * time.Microsecond), Loss: 1}
	if _, err := s.Apply(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	defer s.Clear()
	if len(started) != 1 || started[0] != "/var/run/netns/ns1 2ms 200µs" {
		t.Fatalf("delayers %q; want one on ns1 at 2ms ± 200µs", started)
	}
	for _, ns := range []string{"ns1", "ns2"} {
		if !f.has("netns exec "+ns+" iptables -w 5 -t raw -A PREROUTING -i") || !f.has("--probability 0.01 -j DROP") {
			t.Fatalf("side %s has no loss rule: %v", ns, f.cmds)
		}
	}
}

func TestParseIngressCounts(t *testing.T) {
	out := `Chain PREROUTING (policy ACCEPT 0 packets, 0 bytes)
    pkts      bytes target     prot opt in     out     source               destination
   20000  1120000            all  --  d1     *       0.0.0.0/0            0.0.0.0/0            /* rpcbed-link */
     197    11032 DROP       all  --  d1     *       0.0.0.0/0            0.0.0.0/0            statistic mode random probability 0.01000000009 /* rpcbed-link */
   19803  1108968 NFQUEUE    all  --  d1     *       0.0.0.0/0            0.0.0.0/0            /* rpcbed-link */ NFQUEUE num 7011 bypass
       9       99            all  --  d1     *       0.0.0.0/0            0.0.0.0/0
`
	c, err := ParseIngressCounts(out)
	if err != nil || c.Arrived != 20000 || c.Dropped != 197 {
		t.Fatalf("got %+v, %v; want arrived 20000, dropped 197", c, err)
	}
	if _, err := ParseIngressCounts("Chain PREROUTING (policy ACCEPT)\n"); err == nil {
		t.Fatalf("no rpcbed rule: got nil; want an error")
	}
	if _, err := ParseIngressCounts("x 1 2 /* rpcbed-link */\n"); err == nil {
		t.Fatalf("a counter that is no number: got nil; want an error")
	}
}

func TestParseNetemCounts(t *testing.T) {
	out := `qdisc netem 8001: root refcnt 2 limit 1000 delay 1ms loss 1%
 Sent 1234567 bytes 9900 pkt (dropped 100, overlimits 0 requeues 0)
 backlog 0b 0p requeues 0
`
	c, err := ParseNetemCounts(out)
	if err != nil || c.Arrived != 10000 || c.Dropped != 100 {
		t.Fatalf("got %+v, %v; want 10000 and 100", c, err)
	}
	if _, err := ParseNetemCounts("qdisc tbf 1: root\n Sent 1 bytes 1 pkt (dropped 0, overlimits 0 requeues 0)\n"); err == nil {
		t.Fatalf("no netem: got nil; want an error")
	}
}

func FuzzParseCounts(f *testing.F) {
	f.Add("   20000  1120000            all  --  d1 * 0/0 0/0 /* rpcbed-link */\n")
	f.Add("qdisc netem 1: root\n Sent 1 bytes 1 pkt (dropped 0, overlimits 0 requeues 0)\n")
	f.Fuzz(func(t *testing.T, s string) {
		if c, err := ParseIngressCounts(s); err == nil && c.Dropped > 0 && c.Arrived == 0 && !strings.Contains(s, "DROP") {
			t.Fatalf("dropped without a DROP rule: %+v", c)
		}
		ParseNetemCounts(s)
	})
}

// On a real pair of namespaces: the asked round trip and loss are what the
// application and the kernel's counters see, and Clear leaves nothing behind.
func TestShaperOnNamespaces(t *testing.T) {
	p := nstest.NewPair(t, 11)
	s := &Shaper{Sides: []Side{{Host: "a", Netns: p.A, Dev: p.DevA}, {Host: "b", Netns: p.B, Dev: p.DevB}}, Seed: 1}
	defer s.Clear()
	c := p.Echo(t)
	base := nstest.Quantile(nstest.RTTs(t, c, 200), 0.5)
	ctx := context.Background()

	region := plan.LinkPresets["region"]
	applied, err := s.Apply(ctx, region)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("region: %+v", applied)
	got := nstest.RTTs(t, c, 300)
	p50 := nstest.Quantile(got, 0.5)
	cpu, ok := s.DelayerCPU()
	t.Logf("region: asked rtt %v, got p50 %v p99 %v (unshaped %v), delayers' cpu %v (%v)", region.RTT(), p50, nstest.Quantile(got, 0.99), base, cpu, ok)
	if got[0] < region.RTT()-2*region.Jitter.D() {
		t.Errorf("fastest round trip %v below the least the link allows (%v)", got[0], region.RTT()-2*region.Jitter.D())
	}
	if p50 > region.RTT()+base+2*time.Millisecond {
		t.Errorf("rtt p50 %v; want within 2 ms of %v", p50, region.RTT())
	}

	lossy := plan.LinkPresets["lossy"]
	if _, err := s.Apply(ctx, lossy); err != nil {
		t.Fatal(err)
	}
	// 20000 datagrams A -> B: B's ingress counts them and drops about 1 %.
	var u net.Conn
	nstest.In(t, p.A, func() { u, err = net.Dial("udp", p.AddrB+":9") })
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	for i := range 20000 {
		u.Write([]byte("x"))
		if i%50 == 0 { // about 50 k/s at most: the pace of the matrix's links
			time.Sleep(time.Millisecond)
		}
	}
	time.Sleep(50 * time.Millisecond)
	counts, err := s.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var cb Counts
	for _, c := range counts {
		if c.Host == "b" {
			cb = c
		}
	}
	share := 100 * float64(cb.Dropped) / float64(cb.Arrived)
	t.Logf("lossy: b arrived %d, dropped %d (%.2f %%; asked %v %%)", cb.Arrived, cb.Dropped, share, lossy.Loss)
	if cb.Arrived < 19000 || share < lossy.Loss*2/3 || share > lossy.Loss*4/3 {
		t.Errorf("b saw %d packets, dropped %.2f %%; want >= 19000 and %v %% within a third", cb.Arrived, share, lossy.Loss)
	}

	st := s.Clear()
	t.Logf("delayers at clear: %+v", st)
	for _, ns := range []string{p.A, p.B} {
		out, _ := exec.Command("ip", "netns", "exec", ns, "iptables", "-t", "raw", "-S").CombinedOutput()
		if strings.Contains(string(out), comment) {
			t.Errorf("%s keeps rpcbed's rules after Clear:\n%s", ns, out)
		}
		out, _ = exec.Command("tc", "-n", ns, "qdisc", "show").CombinedOutput()
		if strings.Contains(string(out), "tbf") || strings.Contains(string(out), "netem") {
			t.Errorf("%s keeps a qdisc after Clear:\n%s", ns, out)
		}
	}
	if _, ok := s.DelayerCPU(); ok {
		t.Errorf("a delayer still runs after Clear")
	}
}
