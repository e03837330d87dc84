package matrix

import (
	"strings"

	"github.com/rpcbed/rpcbed/internal/cluster"
)

// nodeName names a node in a repeat's error: its id, address and pool.
func nodeName(nodes []cluster.Node, id string) string {
	for _, n := range nodes {
		if n.ID == id {
			return n.String()
		}
	}
	return "node " + cluster.ShortID(id)
}

func joinErrs(errs []string) string { return strings.Join(errs, "; ") }
