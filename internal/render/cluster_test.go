package render

import (
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/cluster"

	"github.com/rpcbed/rpcbed/internal/results"
)

// TestClusterMarkdown: a cluster run's matrix.md names its swarm and nodes and
// says that the spec's cpuset did not apply; a run without one says nothing.
func TestClusterMarkdown(t *testing.T) {
	if got := clusterMarkdown(&results.Run{}); got != "" {
		t.Errorf("no cluster: got %q; want nothing", got)
	}
	run := &results.Run{Cluster: &results.ClusterRecord{Engine: "swarm", Manager: "unix:///m.sock", Formed: true,
		Nodes: []cluster.Node{{Pool: "server", Addr: "198.18.1.1"}, {Pool: "clients", Addr: "198.18.1.2"}}}}
	got := clusterMarkdown(run)
	for _, want := range []string{"formed by rpcbed", "manager unix:///m.sock", "server 198.18.1.1, clients 198.18.1.2", "cpuset above does not apply"} {
		if !strings.Contains(got, want) {
			t.Errorf("got %q; want it to say %q", got, want)
		}
	}
}
