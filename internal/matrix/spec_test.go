package matrix

import (
	"errors"
	"os"
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
		{"repeats", s.Repeats, 3},
		{"calls", strings.Join(s.Calls, ","), "datalist"},
		{"duration", s.Load.Duration.D(), 2 * time.Second},
		{"client cpuset", s.Client.CPUSet, "1"},
		{"server cpuset", s.Server.CPUSet, "0"},
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
		{"../../matrix.yaml", 71, []string{"go-grpc-datalist-2-c1", "php-ice-datalist-5000-c50", "php-grpc-datalist-5000-c50", "java-dubbo-datalist-200-c50", "php-thrift-datalist-200-c50"}},
		{"../../matrix-full.yaml", 200, []string{"go-grpc-datatype-c800", "php-grpc-datalist-2000-c200", "java-ice-datalist-20-c1"}},
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
