package costplan

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestPlanOverrides(t *testing.T) {
	s := Spec{
		Clients: map[string][]string{"go": {"grpc"}, "php": {"grpc"}},
		Items:   []int{2, 200},
		Sides:   []string{SideClient, SideServer},
		Calls:   Calls{Short: 20, Long: 220},
		Overrides: []Override{
			{Match: "*-200-c1", Calls: Calls{Short: 10, Long: 60}},
			{Match: "go-*-datalist-2-c1", Calls: Calls{Short: 2000, Long: 3000}},
			{Match: "php-grpc-datalist-2-c1/server", Calls: Calls{Short: 5, Long: 50}},
		},
		Exclude: []Exclusion{{Match: "php-grpc-datalist-200-c1/client", Reason: "a test"}},
		Servers: map[string]string{"grpc": "go"},
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	cells, skipped := s.Plan()
	got := map[string]Calls{}
	for _, c := range cells {
		got[c.ID()] = c.Calls
	}
	for id, want := range map[string]Calls{
		"go-grpc-datalist-2-c1/client":    {2000, 3000},
		"go-grpc-datalist-2-c1/server":    {2000, 3000},
		"go-grpc-datalist-200-c1/client":  {10, 60},
		"php-grpc-datalist-2-c1/client":   {20, 220},
		"php-grpc-datalist-2-c1/server":   {5, 50}, // by ID: one side only
		"php-grpc-datalist-200-c1/server": {10, 60},
	} {
		if got[id] != want {
			t.Errorf("%s: calls %+v; want %+v", id, got[id], want)
		}
	}
	if len(skipped) != 1 || skipped[0].Cell.ID() != "php-grpc-datalist-200-c1/client" {
		t.Errorf("skipped %+v; want php-grpc-datalist-200-c1/client", skipped)
	}
	if cells[0].Side != SideClient || cells[len(cells)-1].Side != SideServer {
		t.Errorf("the client side of every cell comes first: %v ... %v", cells[0].ID(), cells[len(cells)-1].ID())
	}
}

func TestLoadSpecErrors(t *testing.T) {
	base := "clients: {go: [grpc]}\nitems: [2]\ncalls: {short: 1, long: 2}\nservers: {grpc: go}\n"
	for _, tc := range []struct{ name, extra, want string }{
		{"ok", "read_delay: 1ms\n", ""},
		{"bad delay", "read_delay: soon\n", "read_delay"},
		{"negative delay", "read_delay: -1ms\n", "read_delay"},
		{"unknown key", "colour: red\n", "colour"},
		{"bad gogc", "gogc: lots\n", "gogc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "cost.yaml")
			if err := os.WriteFile(f, []byte(base+tc.extra), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := LoadSpec(f)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if s.ReadDelayDuration().String() != "1ms" {
					t.Errorf("ReadDelayDuration = %v; want 1ms", s.ReadDelayDuration())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("LoadSpec: %v; want an error naming %q", err, tc.want)
			}
		})
	}
}

func TestCostYAML(t *testing.T) {
	s, err := LoadSpec("../../../cost.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cells, _ := s.Plan()
	if len(cells) == 0 {
		t.Fatal("cost.yaml plans no cell")
	}
}

var stackName = regexp.MustCompile(`\b(go|php-pure|php|java)-(grpc|thrift|http|ice|dubbo)\b`)

// Every cell cost.yaml leaves out gets a reason that names that cell's stack
// first: one exclusion covers many cells, and java-http's reason used to be
// java-thrift's words ("java-thrift made its 10 calls"), php-ice's server side
// grpc-java's epoll transport.
func TestReasonsNameTheirCell(t *testing.T) {
	s, err := LoadSpec(filepath.Join("..", "..", "..", "cost.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, skipped := s.Plan()
	if len(skipped) == 0 {
		t.Fatal("cost.yaml leaves nothing out")
	}
	for _, k := range skipped {
		own := k.Cell.Client + "-" + k.Cell.Protocol
		if first := stackName.FindString(k.Reason); first != own {
			t.Errorf("%s: reason names %q first; want %q: %s", k.Cell.ID(), first, own, k.Reason)
		}
		if strings.Contains(k.Reason, "{") {
			t.Errorf("%s: a placeholder left: %s", k.Cell.ID(), k.Reason)
		}
		if k.Cell.Server == "java" && k.Cell.Side == SideServer && strings.Contains(k.Reason, "epoll") {
			t.Errorf("%s: grpc-java's epoll given for a %s server", k.Cell.ID(), k.Cell.Protocol)
		}
	}
	c := Cell{Client: "java", Protocol: "http", Items: 200, Side: SideClient}
	if got := c.Reason("{stack} {client} {protocol} {side} {cell}"); got != "java-http java http client java-http-datalist-200-c1" {
		t.Errorf("Reason = %q", got)
	}
}

// tls: the clients' cells again as CELL@tls, after the side's plaintext cells,
// with the overrides and exclusions written for their plaintext twins.
func TestPlanTLS(t *testing.T) {
	s := Spec{
		Clients:   map[string][]string{"go": {"grpc", "http"}, "php": {"grpc"}},
		Items:     []int{2},
		Sides:     []string{SideClient, SideServer},
		Calls:     Calls{Short: 20, Long: 220},
		Overrides: []Override{{Match: "go-*-datalist-2-c1", Calls: Calls{Short: 2000, Long: 4000}}},
		Exclude:   []Exclusion{{Match: "go-http-datalist-2-c1/server", Reason: "{cell}: a test"}},
		Servers:   map[string]string{"grpc": "go", "http": "go"},
		TLS:       []string{"go"},
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	cells, skipped := s.Plan()
	var ids []string
	for _, c := range cells {
		ids = append(ids, c.ID())
		if c.Client == "go" && c.Calls.Short != 2000 {
			t.Errorf("%s: calls %+v; want the go-*-datalist-2-c1 override", c.ID(), c.Calls)
		}
	}
	want := []string{"go-grpc-datalist-2-c1/client", "go-http-datalist-2-c1/client", "php-grpc-datalist-2-c1/client",
		"go-grpc-datalist-2-c1@tls/client", "go-http-datalist-2-c1@tls/client",
		"go-grpc-datalist-2-c1/server", "php-grpc-datalist-2-c1/server", "go-grpc-datalist-2-c1@tls/server"}
	if !slices.Equal(ids, want) {
		t.Errorf("cells %v; want %v", ids, want)
	}
	var why []string
	for _, k := range skipped {
		why = append(why, k.Reason)
	}
	if !slices.Equal(why, []string{"go-http-datalist-2-c1: a test", "go-http-datalist-2-c1@tls: a test"}) {
		t.Errorf("skipped %v", why)
	}
	for _, bad := range [][]string{{"java"}, {"php-pure"}} {
		s.TLS = bad
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "tls: client") {
			t.Errorf("tls %v: %v; want an error naming tls", bad, err)
		}
	}
}
