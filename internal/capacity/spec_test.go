package capacity

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseSpec(t *testing.T) {
	base := "clients: {go: [grpc]}\nitems: [200]\nconcurrency: [50]\n"
	for _, tc := range []struct {
		name, yaml string
		want       string // an error's text, "" for none
		check      func(t *testing.T, s Spec)
	}{
		{name: "one", yaml: base + "slo: {p99: 10ms, errors: 0.1%}\n", check: func(t *testing.T, s Spec) {
			if len(s.SLOs) != 1 || s.SLOs[0].P99.D() != 10*time.Millisecond || s.SLOs[0].Errors != 0.001 {
				t.Errorf("slo %+v; want p99 10ms, errors 0.1%%", s.SLOs)
			}
			if s.Search.Precision != 0.02 || s.Search.Accuracy != 0.01 || s.Search.Rounds != 3 || s.Search.Factor != 2 {
				t.Errorf("search %+v; want the defaults", s.Search)
			}
			if got := len(s.Matrix.Plan()); got != 1 {
				t.Errorf("%d cells; want 1", got)
			}
			if got := s.SLOs[0].Name(); got != "p99 10ms, errors 0.1%" {
				t.Errorf("name %q", got)
			}
		}},
		{name: "several", yaml: base + "slo: [{p99: 1ms}, {p99: 10ms}, {p99: 100ms, errors: 1%}]\ncapacity: {rounds: 5, start: 1000, prime: {java: 4s}}\n", check: func(t *testing.T, s Spec) {
			if len(s.SLOs) != 3 || s.SLOs[2].Errors != 0.01 || s.SLOs[0].Errors != 0 {
				t.Errorf("slo %+v", s.SLOs)
			}
			if s.Search.Rounds != 5 || s.Search.Start != 1000 || s.Search.Prime["java"].D() != 4*time.Second {
				t.Errorf("search %+v", s.Search)
			}
		}},
		{name: "no slo", yaml: base, want: "spec: slo: missing"},
		{name: "slo scalar", yaml: base + "slo: 10ms\n", want: "spec: slo: line 4: want {p99"},
		{name: "slo no p99", yaml: base + "slo: {errors: 1%}\n", want: "spec: slo.p99: want a latency above 0"},
		{name: "slo unknown key", yaml: base + "slo: {p95: 10ms}\n", want: "spec: slo: unknown key p95"},
		{name: "slo twice", yaml: base + "slo: [{p99: 1ms}, {p99: 1ms}]\n", want: "spec: slo[1].p99: 1ms given twice"},
		{name: "slo bad errors", yaml: base + "slo: {p99: 1ms, errors: 150%}\n", want: "want a share from 0 to below 100 %"},
		{name: "slo huge", yaml: base + "slo: {p99: 2h}\n", want: "spec: slo.p99: 2h0m0s: want at most 1m"},
		{name: "bad factor", yaml: base + "slo: {p99: 1ms}\ncapacity: {factor: 1}\n", want: "spec: capacity.factor: 1: want 1.1..16"},
		{name: "bad rounds", yaml: base + "slo: {p99: 1ms}\ncapacity: {rounds: 1}\n", want: "spec: capacity.rounds: 1: want 2..50"},
		{name: "no visits", yaml: base + "slo: {p99: 1ms}\ncapacity: {visits: 0}\n", want: "spec: capacity.visits: 0: want 1..4"},
		{name: "too many visits", yaml: base + "slo: {p99: 1ms}\ncapacity: {visits: 5}\n", want: "spec: capacity.visits: 5: want 1..4"},
		{name: "unknown search key", yaml: base + "slo: {p99: 1ms}\ncapacity: {steps: 3}\n", want: "spec: capacity: unknown key steps"},
		{name: "prime not a client", yaml: base + "slo: {p99: 1ms}\ncapacity: {prime: {rust: 1s}}\n", want: "spec: capacity.prime: \"rust\": want a client"},
		{name: "matrix error named", yaml: "clients: {go: [ice]}\nslo: {p99: 1ms}\n", want: "spec: clients"},
		{name: "wrong kind", yaml: base + "slo: {p99: 1ms}\ncapacity: {rounds: many}\n", want: "spec: capacity: cannot unmarshal !!str `many` into int"},
		{name: "only slo", yaml: "slo: {p99: 1ms}\n", want: "spec: clients: missing"},
		{name: "not a mapping", yaml: "- a\n", want: "spec: want a mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSpec([]byte(tc.yaml))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("got %v; want no error", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v; want an error with %q", err, tc.want)
			}
			if tc.check != nil {
				tc.check(t, s)
			}
		})
	}
}

// TestDefaultSpec: capacity.yaml parses and covers the 14 client x protocol
// pairs at 200 items.
func TestDefaultSpec(t *testing.T) {
	s, err := ReadSpec("../../capacity.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cells := s.Matrix.Plan()
	if len(cells) != 14 {
		t.Errorf("%d cells; want 14", len(cells))
	}
	for _, c := range cells {
		if c.Items != 200 || c.Call != "datalist" {
			t.Errorf("%s: want datalist at 200 items", c.Name())
		}
	}
}

func FuzzParseSpec(f *testing.F) {
	if b, err := os.ReadFile("../../capacity.yaml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("clients: {go: [grpc]}\nslo: [{p99: 1ms}, {p99: 10ms, errors: 1%}]\ncapacity: {rounds: 4}\n"))
	f.Add([]byte("slo: {p99: -1}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSpec(b)
		if err != nil {
			return
		}
		if len(s.SLOs) == 0 || s.Search.Rounds < 2 || s.Search.Factor < 1.1 {
			t.Fatalf("accepted a spec without its checks: %+v", s)
		}
		for _, x := range s.SLOs {
			if x.P99 <= 0 {
				t.Fatalf("accepted p99 %v", x.P99)
			}
		}
	})
}
