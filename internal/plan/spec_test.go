package plan

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseSpecDefaults(t *testing.T) {
	s, err := ParseSpec([]byte("clients: {go: [grpc]}\nitems: [2, 200]\nconcurrency: [50, 1]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"repeats", s.Rounds, 3},
		{"calls", strings.Join(s.Calls, ","), "datalist"},
		{"duration", s.Load.Duration.D(), 2 * time.Second},
		{"client cpuset", s.ClientResources.CPUSet, "1"},
		{"server cpuset", s.ServerResources.CPUSet, "0"},
		{"store", s.Store, "memory"},
		{"aerospike hosts", s.AerospikeHosts, "127.0.0.1:3000"},
		{"auth", *s.Auth, true},
		{"verify", *s.Verify, true},
		{"ice server", s.Servers["ice"], "java"},
		{"grpc server", s.Servers["grpc"], "go"},
		{"cells", len(s.Plan()), 4},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v; want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestParseSpecErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		name, spec, field string
	}{
		{"unknown key", "clientz: {go: [grpc]}", "clientz"},
		{"unknown nested key", "load: {durashun: 1s}", "durashun"},
		{"unknown client", "clients: {ruby: [grpc]}", "clients"},
		{"protocol the client lacks", "clients: {go: [ice]}", "clients.go"},
		{"variant without a pure runtime there", "clients: {php-pure: [http]}", "clients.php-pure"},
		{"client without protocols", "clients: {go: []}", "clients.go"},
		{"unknown call", "calls: [datablob]", "calls"},
		{"negative items", "items: [-1]", "items"},
		{"too many items", "items: [100001]", "items"},
		{"zero concurrency", "concurrency: [0]", "concurrency"},
		{"negative n", "load: {n: -5}", "load.n"},
		{"n below concurrency", "load: {n: 10}\nconcurrency: [50]", "load.n"},
		{"bad duration", "load: {duration: soon}", "duration"},
		{"negative repeats", "repeats: -1", "repeats"},
		{"server that cannot serve", "servers: {ice: go}", "servers.ice"},
		{"unknown server protocol", "servers: {smtp: go}", "servers"},
		{"bad cpuset", "client: {cpuset: one}", "client.cpuset"},
		{"negative cpus", "server: {cpus: -1}", "server"},
		{"bad store", "store: cassandra", "store"},
		{"aerospike hosts without port", "store: aerospike\naerospike_hosts: 127.0.0.1", "aerospike_hosts"},
		{"aerospike hosts bad port", "store: aerospike\naerospike_hosts: 127.0.0.1:3000,h:x", "aerospike_hosts"},
		{"bad override glob", "overrides: [{match: '[', n: 5}]", "overrides[0].match"},
		{"override without load", "load: {n: 100}\noverrides: [{match: '*', n: 0}]", "load (cell"},
		{"not yaml", "clients: [", ""},
		{"repeats 0", "repeats: 0", "repeats"},
		{"bare clients", "clients:", "clients"},
		{"bare clients among others", "items: [2]\nclients:\n", "clients"},
		{"repeats without value", "clients: {go: [grpc]}\nrepeats:", "repeats"},
		{"duration past the cap", "load: {duration: 1000000h}", "load.duration"},
		{"warmup past the cap", "load: {duration: 1s, warmup: 2h}", "load.warmup"},
		{"timeout past the cap", "load: {duration: 1s, timeout: 61m}", "load.timeout"},
		{"repeat_warmup past the cap", "load: {duration: 1s, repeat_warmup: 2h}", "load.repeat_warmup"},
		{"prime of a client not in the spec", "clients: {go: [grpc]}\nprime: {java: 4s}", "prime.java"},
		{"prime of zero", "clients: {go: [grpc]}\nprime: {go: 0s}", "prime.go"},
		{"prime_max of an unprimed client", "clients: {go: [grpc]}\nprime_max: {go: 4s}", "prime_max.go"},
		{"prime_max below prime", "clients: {go: [grpc]}\nprime: {go: 2s}\nprime_max: {go: 1s}", "prime_max.go"},
		{"prime_max of a worker the spec does not run", "clients: {go: [grpc]}\nprime: {go: 2s}\nprime_max: {go-http: 4s}", "prime_max.go-http"},
		{"prime_max of an unprimed client's worker", "clients: {go: [grpc], php: [grpc]}\nprime: {go: 2s}\nprime_max: {php-grpc: 4s}", "prime_max.php-grpc"},
		{"prime_max of a worker below prime", "clients: {go: [grpc]}\nprime: {go: 2s}\nprime_max: {go-grpc: 1s}", "prime_max.go-grpc"},
		{"bad repeat_warmup", "load: {duration: 1s, repeat_warmup: later}", "repeat_warmup"},
		{"seconds past int64", "load: {duration: 1e300}", "duration"},
		{"NaN seconds", "load: {duration: NaN}", "duration"},
		{"override duration past the cap", "overrides: [{match: '*', duration: 3h}]", "load (cell"},
		{"too many runs", "concurrency: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nitems: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nrepeats: 100", "repeats"},
		{"too many cells", "concurrency: [" + strings.Repeat("1, ", 20) + "2]\nitems: [" + strings.Repeat("1, ", 20) + "2]", "clients"},
		{"items list too long", "items: [" + strings.Repeat("1, ", 100) + "2]", "items"},
		{"exclude list too long", "exclude: [" + strings.Repeat("a, ", 1000) + "b]", "exclude"},
		{"a client's list too long", "clients: {go: [" + strings.Repeat("grpc, ", 5) + "http]}", "clients.go"},
		{"too many servers", "servers: {grpc: go, thrift: go, http: go, ice: java, dubbo: java, x: go}", "servers"},
		{"server that cannot serve", "servers: {grpc: nginx}", "servers.grpc"},
		{"unknown protocol in servers", "servers: {carrier-pigeon: go}", "servers"},
		{"a list nested deep", "overrides: [{match: '*', n: [[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]}]", "overrides[0].n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(tc.spec))
			if err == nil {
				t.Fatalf("got no error; want one naming %q", tc.field)
			}
			var fe *FieldError
			if tc.field == "" {
				return
			}
			if !errors.As(err, &fe) {
				t.Fatalf("got %T %q; want a *FieldError naming %q", err, err, tc.field)
			}
			if !strings.HasPrefix(fe.Field, tc.field) {
				t.Errorf("got field %q (%v); want %q", fe.Field, err, tc.field)
			}
		})
	}
}

// The specs in the repository must parse, and the default must cover what the
// README promises.
func TestRepositorySpecs(t *testing.T) {
	for _, tc := range []struct {
		file      string
		minCells  int
		wantCells []string
	}{
		{"../../matrix.yaml", 66, []string{"go-grpc-datalist-200-c1", "php-ice-datalist-5000-c50", "php-grpc-datalist-5000-c50", "java-dubbo-datalist-200-c50", "php-thrift-datalist-200-c50",
			"php-thrift-datalist-5000-c50", "php-pure-grpc-datalist-200-c1", "php-pure-thrift-datalist-200-c50",
			"go-grpc-datalist-200-c50@tls", "go-http-datalist-200-c50@tls", "php-ice-datalist-200-c50@tls", "java-dubbo-datalist-200-c50@tls"}},
		{"../../matrix-tls.yaml", 112, []string{"go-thrift-datalist-200-c50@tls+percall", "go-grpc-datalist-200-c1@percall", "go-http-datalist-200-c1@tls",
			"php-ice-datalist-200-c1@tls+percall", "php-pure-grpc-datalist-200-c50@tls", "java-dubbo-datalist-200-c50@tls+percall", "java-ice-datalist-200-c1@percall"}},
		{"../../matrix-full.yaml", 200, []string{"go-grpc-datatype-c800", "php-grpc-datalist-2000-c200", "java-ice-datalist-20-c1"}},
		{"../../docs/specs/go-1s.yaml", 18, []string{"go-grpc-datalist-2-c1", "go-http-datalist-5000-c50"}},
		{"../../docs/specs/go-3s.yaml", 18, []string{"go-thrift-datalist-200-c50"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			if _, err := os.Stat(tc.file); err != nil {
				t.Skip(err)
			}
			s, err := ReadSpec(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			names := map[string]bool{}
			for _, c := range s.Plan() {
				names[c.Name()] = true
			}
			if len(names) < tc.minCells {
				t.Errorf("got %d cells; want at least %d", len(names), tc.minCells)
			}
			for _, n := range tc.wantCells {
				if !names[n] {
					t.Errorf("cell %s missing", n)
				}
			}
		})
	}
}

// An empty spec would silently run the whole default matrix: it is refused.
func TestParseSpecRefusesEmpty(t *testing.T) {
	for _, tc := range []struct{ name, spec string }{
		{"empty file", ""},
		{"only a comment", "# nothing\n"},
		{"document marker", "---\n"},
		{"explicit null", "~\n"},
		{"a list", "- go\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSpec([]byte(tc.spec))
			if err == nil {
				t.Fatalf("got a spec of %d cells; want an error", len(s.Plan()))
			}
		})
	}
}

// A hostile 638 KB spec: every value in range, but 100 001 item counts x
// 10 000 concurrencies (1e9 cells per pair). It must be refused from its size,
// not planned: building the plan took 2.1 GB before running out of memory.
func TestParseSpecRefusesHugePlan(t *testing.T) {
	var b strings.Builder
	b.WriteString("clients: {go: [grpc]}\nitems: [")
	for i := 0; i <= 100000; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, i)
	}
	b.WriteString("]\nconcurrency: [")
	for i := 1; i <= 10000; i++ {
		if i > 1 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, i)
	}
	b.WriteString("]\n")
	_, err := ParseSpec([]byte(b.String()))
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "items" || !strings.Contains(err.Error(), "want at most 262144 (256 KiB) in all") {
		t.Fatalf("got %v; want the size limit, naming items", err)
	}
}

// What MarshalSpec saves beside a run must read back as the same spec (Resume).
func TestMarshalSpecRoundTrip(t *testing.T) {
	s, err := ReadSpec("../../matrix.yaml")
	if err != nil {
		t.Skip(err)
	}
	b, err := MarshalSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := ParseSpec(b)
	if err != nil {
		t.Fatalf("re-reading the saved spec: %v\n%s", err, b)
	}
	if got, want := len(s2.Plan()), len(s.Plan()); got != want {
		t.Errorf("got %d cells after the round trip; want %d", got, want)
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, seed := range []string{
		"clients: {go: [grpc]}\nitems: [2, 200]\nconcurrency: [50, 1]\n",
		"load: {duration: 1s, warmup: 0.5s}\noverrides: [{match: 'go-*', warmup: 0.2s}]\n",
		"repeats: 0", "clients:", "---", "", "load: {duration: NaN}",
		"exclude: ['[']", "servers: {ice: go}", "calls: [datatype]\nconcurrency: [1, 10000]",
	} {
		f.Add([]byte(seed))
	}
	for _, spec := range []string{"../../matrix.yaml", "../../matrix-net.yaml"} {
		if b, err := os.ReadFile(spec); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSpec(b)
		if err != nil {
			return
		}
		// Whatever is accepted stays inside the stated caps.
		plan := s.Plan()
		if len(plan) == 0 || len(plan) > MaxCells || len(plan)*s.Rounds > MaxRuns {
			t.Fatalf("accepted a plan of %d cells x %d repeats", len(plan), s.Rounds)
		}
		for _, c := range plan {
			for i, d := range []Duration{c.Load.Duration, c.Load.Warmup, c.Load.Timeout, c.Load.WarmupMax} {
				if i == 1 && d.IsAuto() {
					continue // warmup: auto (until settled, at most warmup_max)
				}
				if d < 0 || d.D() > MaxDuration {
					t.Fatalf("cell %s: accepted duration %v", c.Name(), d.D())
				}
			}
		}
	})
}

// PrimeBudget: a worker's own prime_max key wins over its client's; neither is 0.
func TestPrimeBudget(t *testing.T) {
	s, err := ParseSpec([]byte("clients: {java: [grpc, thrift, dubbo], go: [grpc]}\nprime: {java: 1s}\nprime_max: {java: 16s, java-grpc: 24s, java-dubbo: 8s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		client, proto string
		want          time.Duration
	}{
		{"java", "grpc", 24 * time.Second}, {"java", "dubbo", 8 * time.Second}, {"java", "thrift", 16 * time.Second}, {"go", "grpc", 0},
	} {
		if got := s.PrimeBudget(tc.client, tc.proto); got != tc.want {
			t.Errorf("%s-%s: got %v; want %v", tc.client, tc.proto, got, tc.want)
		}
	}
}

// RoundsFor and ForkOf: a JVM-served group's rounds split evenly over its forks,
// at least two per fork; added rounds go to the last fork; go-server's cells
// never fork.
func TestForkRounds(t *testing.T) {
	java := Cell{Client: "php", Protocol: "ice", ServerLang: "java"}
	goCell := Cell{Client: "php", Protocol: "grpc", ServerLang: "go"}
	for _, tc := range []struct {
		repeats, forks int
		c              Cell
		rounds         int
		forkOf         []int // rounds 1..rounds+1
	}{
		{3, 0, java, 3, []int{0, 0, 0, 0}},
		{3, 1, java, 3, []int{0, 0, 0, 0}},
		{3, 2, goCell, 3, []int{0, 0, 0, 0}},
		{3, 2, java, 4, []int{1, 1, 2, 2, 2}},
		{5, 2, java, 6, []int{1, 1, 1, 2, 2, 2, 2}},
		{3, 3, java, 6, []int{1, 1, 2, 2, 3, 3, 3}},
	} {
		s := Spec{Rounds: tc.repeats, Forks: tc.forks}
		if got := s.RoundsFor(tc.c); got != tc.rounds {
			t.Errorf("repeats %d forks %d %s: RoundsFor %d; want %d", tc.repeats, tc.forks, tc.c.ServerLang, got, tc.rounds)
		}
		var got []int
		for r := 1; r <= len(tc.forkOf); r++ {
			got = append(got, s.ForkOf(tc.c, r))
		}
		if !slices.Equal(got, tc.forkOf) {
			t.Errorf("repeats %d forks %d %s: ForkOf %v; want %v", tc.repeats, tc.forks, tc.c.ServerLang, got, tc.forkOf)
		}
	}
	for _, bad := range []string{"forks: -1", "forks: 5"} {
		if _, err := ParseSpec([]byte("clients: {go: [grpc]}\n" + bad + "\n")); err == nil || !strings.Contains(err.Error(), "forks") {
			t.Errorf("%s: err %v; want one naming forks", bad, err)
		}
	}
}
