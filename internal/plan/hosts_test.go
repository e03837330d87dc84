package plan

import (
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
		{"host of php-pure follows php", s.HostOf("php-pure"), "b"},
		{"host of go-server", s.HostOf("go-server"), "a"},
		{"rate", s.Links[2].Rate, Rate(100e6)},
		{"named rate", s.Links[3].Rate.String(), "1500kbit"},
		{"loopback", s.Links[0].Loopback, true},
		{"unshaped is not shaped", s.Links[1].Shaped(), false},
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
