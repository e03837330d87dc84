package matrix

import (
	"context"
	"errors"
	"strings"
	"testing"

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
		{"a server host on a loopback link has the clients' images", strings.Join(imagesFor(&s, "a", Programs{}), " "), "rpcbed/go:latest rpcbed/php:latest"},
		{"a client host has its own", strings.Join(imagesFor(&s, "b", Programs{}), " "), "rpcbed/go:latest rpcbed/php:latest"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v; want %v", tc.name, tc.got, tc.want)
		}
	}
}

// TestLinkShaping checks the tc commands a link becomes, and that a kernel
// without netem refuses delay/jitter/loss by name instead of dropping them.
func TestLinkShaping(t *testing.T) {
	var cmds []string
	netem := false
	tcRunner = func(_ context.Context, args ...string) ([]byte, error) {
		cmds = append(cmds, strings.Join(args, " "))
		if !netem && strings.Contains(strings.Join(args, " "), "netem") {
			return []byte("Error: Specified qdisc kind is unknown."), errors.New("exit status 2")
		}
		return nil, nil
	}
	t.Cleanup(func() { tcRunner = defaultTC })
	s, err := plan.ParseSpec([]byte(twoHosts + "links: [100mbit, {rate: 1gbit, delay: 5ms}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := applyLink(context.Background(), &s, s.Links[0]); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"-n ns-a qdisc del dev dev-a root",
		"-n ns-a qdisc add dev dev-a root tbf rate 100mbit burst 65536 latency 50ms",
		"-n ns-b qdisc del dev dev-b root",
		"-n ns-b qdisc add dev dev-b root tbf rate 100mbit burst 65536 latency 50ms",
	}
	if strings.Join(cmds, "\n") != strings.Join(want, "\n") {
		t.Errorf("tc commands:\ngot  %q\nwant %q", cmds, want)
	}
	err = checkNetem(context.Background(), &s)
	if err == nil || !strings.Contains(err.Error(), "sch_netem") || !strings.Contains(err.Error(), "refusing") {
		t.Errorf("without netem: got %v; want a refusal naming sch_netem", err)
	}
	netem = true
	if err := checkNetem(context.Background(), &s); err != nil {
		t.Errorf("with netem: %v", err)
	}
	cmds = nil
	if err := applyLink(context.Background(), &s, s.Links[1]); err != nil {
		t.Fatal(err)
	}
	if got := cmds[1]; got != "-n ns-a qdisc add dev dev-a root netem delay 5ms rate 1gbit" {
		t.Errorf("netem command: got %q", got)
	}
}

var defaultTC = tcRunner
