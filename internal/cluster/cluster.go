// Package cluster holds the data of a Docker Swarm run that the plan and the
// results record: the engines a swarm is formed of (a spec's cluster.form), the
// nodes the manager lists, and a task's clock against the driver's. It is data
// only: internal/swarm forms the swarm and fills these in, internal/plan and
// internal/results keep them, and neither of those depends on execution (docs/layout.md).
package cluster

import "fmt"

// Member is one engine of a swarm rpcbed forms: its Docker endpoint, the address
// the other nodes and the clients reach it at (the swarm's advertise address),
// and its pool.
type Member struct {
	Engine  string `yaml:"engine" json:"engine"`
	Address string `yaml:"address" json:"address"`
	Pool    string `yaml:"pool" json:"pool"`
}

// Node is a swarm node as the manager lists it.
type Node struct {
	ID           string `json:"id"`
	Hostname     string `json:"hostname"`
	Addr         string `json:"addr"` // its advertised address (Status.Addr)
	Pool         string `json:"pool"` // its rpcbed.pool label
	State        string `json:"state"`
	Availability string `json:"availability"`
	Manager      bool   `json:"manager,omitempty"`
}

// Usable: ready and active (not drained or paused).
func (n Node) Usable() bool { return n.State == "ready" && n.Availability == "active" }

// String names a node in errors: its id, address and pool.
func (n Node) String() string {
	return fmt.Sprintf("node %s (%s, pool %s)", ShortID(n.ID), n.Addr, n.Pool)
}

// ShortID is a swarm id's first 12 characters, as docker prints it.
func ShortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// Clock is a task's clock against the driver's, from the ready handshake's pings
// (NTP's estimate: the ping with the shortest round trip).
type Clock struct {
	// OffsetS is the task's clock minus the driver's, in seconds.
	OffsetS float64 `json:"offset_s"`
	// RTTS is that ping's round trip: the offset is known to within half of it.
	RTTS  float64 `json:"rtt_s"`
	Pings int     `json:"pings"`
}
