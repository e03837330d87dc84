package matrix

import (
	"context"
	"errors"
	"strings"
	"testing"
)

const twoHosts = `clients: {go: [http], php: [grpc]}
hosts:
  a: {engine: "unix:///run/a.sock", address: 198.18.0.1, roles: [go-server], shape: ns-a/dev-a}
  b: {engine: "tcp://198.18.0.2:2375", address: 198.18.0.2, roles: [go, php], shape: ns-b/dev-b}
`

func TestHostsSpec(t *testing.T) {
	s, err := ParseSpec([]byte(twoHosts + "links: [loopback, unshaped, 100mbit, {name: slow, rate: 1500kbit}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	plan := s.Plan()
	if got, want := len(plan), 2*4; got != want {
		t.Fatalf("cells: got %d; want %d", got, want)
	}
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"first cell", plan[0].Name(), "go-http-datalist-200-c1@loopback"},
		{"last cell", plan[len(plan)-1].Name(), "php-grpc-datalist-200-c1@slow"},
		{"host of php-pure follows php", s.hostOf("php-pure"), "b"},
		{"host of go-server", s.hostOf("go-server"), "a"},
		{"rate", s.Links[2].Rate, Rate(100e6)},
		{"named rate", s.Links[3].Rate.String(), "1500kbit"},
		{"loopback", s.Links[0].Loopback, true},
		{"unshaped is not shaped", s.Links[1].Shaped(), false},
		{"loopback address", addrFor("198.18.0.1:7000", s.Links[0]), "127.0.0.1:7000"},
		{"link address", addrFor("198.18.0.1:7000", s.Links[2]), "198.18.0.1:7000"},
		{"a server host on a loopback link has the clients' images", strings.Join(s.imagesFor("a", Programs{}), " "), "rpcbed/go:latest rpcbed/php:latest"},
		{"a client host has its own", strings.Join(s.imagesFor("b", Programs{}), " "), "rpcbed/go:latest rpcbed/php:latest"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v; want %v", tc.name, tc.got, tc.want)
		}
	}
	// A spec with hosts but no link dimension keeps today's cell names.
	s, err = ParseSpec([]byte(twoHosts))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Plan()[0].Name(), "go-http-datalist-200-c1"; got != want {
		t.Errorf("no links: got %s; want %s", got, want)
	}
	b, err := MarshalSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseSpec(b); err != nil {
		t.Errorf("saved spec does not read back: %v\n%s", err, b)
	}
}

func TestHostsSpecErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		name, spec, field string
	}{
		{"link without hosts", "links: [100mbit]", "links"},
		{"bad rate", twoHosts + "links: [fast]", "links"},
		{"role on two hosts", strings.Replace(twoHosts, "roles: [go, php]", "roles: [go, php, go-server]", 1), "hosts.b.roles"},
		{"unknown role", strings.Replace(twoHosts, "roles: [go, php]", "roles: [go, php, ruby]", 1), "hosts.b.roles"},
		{"unplaced role", strings.Replace(twoHosts, "roles: [go, php]", "roles: [go]", 1), "hosts"},
		{"ssh engine without a host", strings.Replace(twoHosts, "tcp://198.18.0.2:2375", "ssh://", 1), "hosts.b.engine"},
		{"unknown engine scheme", strings.Replace(twoHosts, "tcp://198.18.0.2:2375", "ftp://b", 1), "hosts.b.engine"},
		{"address with port", strings.Replace(twoHosts, "address: 198.18.0.2", "address: 198.18.0.2:80", 1), "hosts.b.address"},
		{"shaped link without a device", strings.Replace(twoHosts, ", shape: ns-b/dev-b", "", 1) + "links: [1gbit]", "hosts.b.shape"},
		{"link twice", twoHosts + "links: [1gbit, 1gbit]", "links"},
		{"link and links", twoHosts + "link: {rate: 1gbit}\nlinks: [1gbit]", "link"},
		{"loss over 100", twoHosts + "links: [{rate: 1gbit, loss: 120}]", "links"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(tc.spec))
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v; want a FieldError on %s", err, tc.field)
			}
			if fe.Field != tc.field {
				t.Errorf("field: got %s; want %s (%v)", fe.Field, tc.field, err)
			}
		})
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
	s, err := ParseSpec([]byte(twoHosts + "links: [100mbit, {rate: 1gbit, delay: 5ms}]\n"))
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

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Rate
		ok   bool
	}{
		{"100mbit", 100e6, true}, {"1gbit", 1e9, true}, {"1.5Mbit", 1.5e6, true}, {"800bit", 800, true},
		{"100mbps", 0, false}, {"-1mbit", 0, false}, {"mbit", 0, false}, {"1e30gbit", 0, false}, {"", 0, false},
	} {
		got, err := ParseRate(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseRate(%q): got %v, %v; want %v (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

var defaultTC = tcRunner
