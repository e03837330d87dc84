package matrix

import (
	"strings"

	"github.com/rpcbed/rpcbed/internal/swarm"
)

// nodeName names a node in a repeat's error: its id, address and pool.
func nodeName(nodes []swarm.Node, id string) string {
	for _, n := range nodes {
		if n.ID == id {
			return n.String()
		}
	}
	if len(id) > 12 {
		id = id[:12]
	}
	return "node " + id
}

func joinErrs(errs []string) string { return strings.Join(errs, "; ") }
