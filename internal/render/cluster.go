package render

import (
	"fmt"
	"strings"

	"github.com/rpcbed/rpcbed/internal/results"
)

// clusterMarkdown is matrix.md's line on a cluster run's swarm ("" otherwise):
// its nodes and pools, how each repeat ran, and that the spec's cpuset did not
// apply (swarm cannot pin a task).
func clusterMarkdown(run *results.Run) string {
	c := run.Cluster
	if c == nil {
		return ""
	}
	how := "an existing swarm, manager " + c.Manager
	if c.Formed {
		how = "formed by rpcbed over its engines, manager " + c.Manager
	}
	var nodes []string
	for _, n := range c.Nodes {
		nodes = append(nodes, fmt.Sprintf("%s %s", n.Pool, n.Addr))
	}
	return fmt.Sprintf("- cluster: Docker Swarm, %s; nodes %s; each repeat one task per client node (cells -1node, -2nodes ...), "+
		"the load split as k6 splits it, released together after a ready step, merged (calls, req/s and CPU summed; percentiles "+
		"from the merged latency records); swarm tasks are not pinned: the cpuset above does not apply (docs/scale.md)\n",
		how, strings.Join(nodes, ", "))
}
