package plan

import (
	"errors"
	"strings"
	"testing"
)

// TestSplitLoad: k6's segments — task i of n gets the whole numbers of
// [i/n, (i+1)/n) of the concurrency and the connections, which add up to both.
func TestSplitLoad(t *testing.T) {
	for _, tc := range []struct {
		c, conns, n int
		want        []Share
	}{
		{50, 50, 2, []Share{{25, 25}, {25, 25}}},
		{50, 50, 1, []Share{{50, 50}}},
		{50, 4, 3, []Share{{16, 1}, {17, 1}, {17, 2}}},
		{7, 7, 3, []Share{{2, 2}, {2, 2}, {3, 3}}},
		{2, 1, 2, []Share{{1, 1}, {1, 1}}}, // a task gets at least one connection
	} {
		got := SplitLoad(tc.c, tc.conns, tc.n)
		if len(got) != len(tc.want) {
			t.Fatalf("SplitLoad(%d, %d, %d): got %v; want %v", tc.c, tc.conns, tc.n, got, tc.want)
		}
		sum := 0
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("SplitLoad(%d, %d, %d)[%d]: got %v; want %v", tc.c, tc.conns, tc.n, i, got[i], tc.want[i])
			}
			sum += got[i].Concurrency
		}
		if sum != tc.c {
			t.Errorf("SplitLoad(%d, %d, %d): concurrency adds up to %d; want %d", tc.c, tc.conns, tc.n, sum, tc.c)
		}
	}
}

const clusterSpec = `clients: {go: [grpc]}
items: [200]
concurrency: [50]
cluster:
  engine: swarm
  form:
    - {engine: unix:///s.sock, address: 198.18.1.1, pool: server}
    - {engine: unix:///c1.sock, address: 198.18.1.2, pool: clients}
    - {engine: unix:///c2.sock, address: 198.18.1.3, pool: clients}
  driver: 198.19.1.2
  pools: {server: 1, clients: 2}
`

// TestClusterSpec: the node dimension names the cells, a spec round-trips, and
// every mistake is refused naming its field.
func TestClusterSpec(t *testing.T) {
	s, err := ParseSpec([]byte(clusterSpec + "  nodes: [2, 1]\n"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range s.Plan() {
		names = append(names, c.Name())
	}
	if got, want := strings.Join(names, " "), "go-grpc-datalist-200-c50-1node go-grpc-datalist-200-c50-2nodes"; got != want {
		t.Errorf("plan: got %s; want %s", got, want)
	}
	b, err := MarshalSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseSpec(b)
	if err != nil {
		t.Fatalf("round trip: %v\n%s", err, b)
	}
	if len(back.Cluster.Form) != 3 || back.Cluster.Driver != "198.19.1.2" || back.Cluster.Pools["clients"] != 2 {
		t.Errorf("round trip: got %+v", back.Cluster)
	}
	s, err = ParseSpec([]byte(clusterSpec))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Plan()[0].Name(); got != "go-grpc-datalist-200-c50-2nodes" {
		t.Errorf("default nodes: got %s; want the clients pool's 2", got)
	}
	for _, tc := range []struct {
		name, from, to, field string
	}{
		{"engine", "engine: swarm", "engine: nomad", "cluster.engine"},
		{"both", "  driver:", "  manager: unix:///m.sock\n  driver:", "cluster"},
		{"driver", "driver: 198.19.1.2", "driver: nowhere", "cluster.driver"},
		{"pool", "clients: 2}", "clients: 2, db: 1}", "cluster.pools"},
		{"short form", "clients: 2}", "clients: 3}", "cluster.form"},
		{"manager first", "pool: server}", "pool: clients}", "cluster.form[0]"},
		{"nodes", "  driver:", "  nodes: [3]\n  driver:", "cluster.nodes"},
		{"min", "  driver:", "  min_nodes: 5\n  driver:", "cluster.min_nodes"},
		{"split", "concurrency: [50]", "concurrency: [1]", "concurrency"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(strings.Replace(clusterSpec, tc.from, tc.to, 1)))
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Errorf("got %v; want an error on %s", err, tc.field)
			}
		})
	}
	if _, err := ParseSpec([]byte(clusterSpec + "hosts: {a: {engine: unix:///a, address: 1.2.3.4, roles: [go]}}\n")); err == nil {
		t.Error("cluster with hosts: got no error")
	}
}

// TestClusterSpecKubernetes: one file carries both engines' fields and runs on
// either by changing only engine:; a kubernetes cluster needs its kubeconfig,
// and each mistake is refused naming its field.
func TestClusterSpecKubernetes(t *testing.T) {
	both := clusterSpec + "  kubeconfig: /run/rpcbed-kube/runner.kubeconfig\n  namespace: rpcbed\n"
	for _, engine := range []string{EngineSwarm, EngineKubernetes} {
		s, err := ParseSpec([]byte(strings.Replace(both, "engine: swarm", "engine: "+engine, 1)))
		if err != nil {
			t.Fatalf("engine %s: %v", engine, err)
		}
		if got := s.Plan()[0].Name(); got != "go-grpc-datalist-200-c50-2nodes" {
			t.Errorf("engine %s: got cell %s; want go-grpc-datalist-200-c50-2nodes on either engine", engine, got)
		}
	}
	kube := strings.Replace(both, "engine: swarm", "engine: kubernetes", 1)
	for _, tc := range []struct {
		name, from, to, field string
	}{
		{"kubeconfig", "  kubeconfig: /run/rpcbed-kube/runner.kubeconfig\n", "", "cluster.kubeconfig"},
		{"namespace", "namespace: rpcbed", "namespace: Rpc_Bed", "cluster.namespace"},
		{"pools", "clients: 2}", "clients: 0}", "cluster.pools.clients"},
		{"nodes", "  driver:", "  nodes: [3]\n  driver:", "cluster.nodes"},
		{"driver", "driver: 198.19.1.2", "driver: nowhere", "cluster.driver"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(strings.Replace(kube, tc.from, tc.to, 1)))
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Errorf("got %v; want an error on %s", err, tc.field)
			}
		})
	}
}
