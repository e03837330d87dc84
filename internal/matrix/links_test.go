package matrix

import (
	"context"
	"errors"
	"github.com/rpcbed/rpcbed/internal/measure"
	"strings"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/plan"
)

// twoHosts: a go-server host and a client host, each with a shape device.
const twoHosts = `clients: {go: [http], php: [grpc]}
hosts:
  a: {engine: "unix:///run/a.sock", address: 198.18.0.1, roles: [go-server], shape: ns-a/dev-a}
  b: {engine: "tcp://198.18.0.2:2375", address: 198.18.0.2, roles: [go, php], shape: ns-b/dev-b}
`

func TestPlacement(t *testing.T) {
	s, err := plan.ParseSpec([]byte(twoHosts + "links: [loopback, unshaped, 100mbit, {name: slow, rate: 1500kbit}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"loopback address", addrFor("198.18.0.1:7000", s.Links[0]), "127.0.0.1:7000"},
		{"link address", addrFor("198.18.0.1:7000", s.Links[2]), "198.18.0.1:7000"},
		{"a server host on a loopback link has the clients' images", strings.Join(imagesFor(&s, "a", measure.Programs{}), " "), "rpcbed/go:latest rpcbed/php:latest"},
		{"a client host has its own", strings.Join(imagesFor(&s, "b", measure.Programs{}), " "), "rpcbed/go:latest rpcbed/php:latest"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v; want %v", tc.name, tc.got, tc.want)
		}
	}
}

// TestLinkShaping checks the commands a link becomes on each host, and that a
// host without netem gets the delayer on its ingress instead of a refusal or a
// silent drop.
func TestLinkShaping(t *testing.T) {
	var cmds []string
	netem := false
	shapeRun = func(_ context.Context, name string, args ...string) ([]byte, error) {
		line := name + " " + strings.Join(args, " ")
		cmds = append(cmds, line)
		if !netem && strings.Contains(line, "netem") {
			return []byte("Error: Specified qdisc kind is unknown."), errors.New("exit status 2")
		}
		return nil, nil
	}
	t.Cleanup(func() { shapeRun = nil })
	s, err := plan.ParseSpec([]byte(twoHosts + "links: [100mbit, {rate: 1gbit, delay: 5ms}, lan]\n"))
	if err != nil {
		t.Fatal(err)
	}
	sh := newShaper(&s)
	if _, err := sh.Apply(context.Background(), s.Links[0]); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"tc -n ns-a qdisc del dev dev-a root",
		"tc -n ns-b qdisc del dev dev-b root",
		"tc -n ns-a qdisc add dev dev-a root tbf rate 100mbit burst 65536 latency 50ms",
		"tc -n ns-b qdisc add dev dev-b root tbf rate 100mbit burst 65536 latency 50ms",
	}
	var got []string
	for _, c := range cmds {
		if strings.HasPrefix(c, "tc ") {
			got = append(got, c)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tc commands:\ngot  %q\nwant %q", got, want)
	}
	for _, l := range s.Links[1:] {
		m, err := sh.Mechanism(context.Background(), sh.Sides[0], l)
		if err != nil || m != "nfqueue" {
			t.Errorf("link %s without netem: got %q, %v; want nfqueue (the delayer)", l.Label(), m, err)
		}
	}
	netem = true
	sh = newShaper(&s)
	cmds = nil
	a, err := sh.Apply(context.Background(), s.Links[1])
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 2 || a[0].Commands[0] != "tc qdisc add dev dev-a root netem delay 5ms rate 1gbit" {
		t.Errorf("netem command: got %+v", a)
	}
}

// The tolerances a link's achieved round trip and loss are held to.
func TestLinkTolerances(t *testing.T) {
	for _, tc := range []struct {
		asked, got float64
		off        bool
	}{
		{200, 299, false}, {200, 301, true}, {200, 99, true}, // lan: 100 µs
		{2000, 2190, false}, {2000, 2210, true}, {30000, 27100, false}, {30000, 26900, true}, // 10 %
	} {
		if got := RTTOff(tc.asked, tc.got); got != tc.off {
			t.Errorf("RTTOff(%v, %v) = %v; want %v", tc.asked, tc.got, got, tc.off)
		}
	}
	for _, tc := range []struct {
		asked, got float64
		off        bool
	}{{1, 0.7, false}, {1, 1.3, false}, {1, 0.6, true}, {1, 1.4, true}, {0.1, 0.05, true}} {
		if got := LossOff(tc.asked, tc.got); got != tc.off {
			t.Errorf("LossOff(%v, %v) = %v; want %v", tc.asked, tc.got, got, tc.off)
		}
	}
}

// The loss probe holds enough packets to tell a third of the asked loss at
// every preset (at the calls a link's round trip allows), within its bounds,
// and stays c=8 for a second where that already does.
func TestLossProbe(t *testing.T) {
	for _, tc := range []struct {
		link       string
		conc       int
		minW, maxW time.Duration
	}{
		{"lan", 8, time.Second, time.Second},
		{"lossy", 8, time.Second, time.Second},
		{"wan", linkLossMaxConc, 7 * time.Second, linkLossMaxWindow},
	} {
		t.Run(tc.link, func(t *testing.T) {
			l := plan.LinkPresets[tc.link]
			c, w := LossProbe(l)
			if c != tc.conc || w < tc.minW || w > tc.maxW || w > linkLossMaxWindow {
				t.Fatalf("got c=%d for %v; want c=%d for %v..%v", c, w, tc.conc, tc.minW, tc.maxW)
			}
			if l.Loss == 0 {
				return
			}
			rtt := l.RTT().Seconds() + 100e-6
			if got, need := linkPacketsPerCall*float64(c)*w.Seconds()/rtt, lossPackets(l.Loss); got < 0.95*need {
				t.Errorf("about %.0f packets counted; want at least %.0f for a third of %.2g %%", got, need, l.Loss)
			}
		})
	}
	if n := lossPackets(1); n < 3000 || n > 3500 {
		t.Errorf("lossPackets(1 %%) = %.0f; want about 3400 (1.96² x 9 x 0.99 / 0.01)", n)
	}
}
