package plan

import (
	"fmt"
	"net"
	"regexp"
	"slices"

	"github.com/rpcbed/rpcbed/internal/cluster"
)

// Cluster is a spec's cluster: the cells run on Docker Swarm or Kubernetes,
// the server as a service (a pod) on a node of the server pool, each cell's
// load split over client nodes, each of which runs one task (docs/scale.md).
// The nodes of a pool carry the label rpcbed.pool=server|clients on either
// engine. A spec may carry both engines' fields, so that one file runs on
// either by changing only engine:.
//
//	cluster:
//	  engine: swarm
//	  form:                       # rpcbed forms the swarm (first = manager) ...
//	    - {engine: unix:///run/rpcbed-netbed/rbswarm/server/docker.sock, address: 198.18.1.1, pool: server}
//	    - {engine: unix:///run/rpcbed-netbed/rbswarm/c1/docker.sock, address: 198.18.1.2, pool: clients}
//	  # manager: ssh://me@10.0.0.5  ... or uses an existing one by its manager
//	  driver: 198.19.1.2          # where the tasks reach the driver's ready barrier
//	  pools: {server: 1, clients: 2}
//	  nodes: [1, 2]               # the client nodes each cell runs on (default: pools.clients)
//
//	  engine: kubernetes          # on Kubernetes instead:
//	  kubeconfig: /run/rpcbed-kube/runner.kubeconfig
//	  namespace: rpcbed
//	  # image_prefix: registry.example.com/  (else the images are on every node, never pulled)
type Cluster struct {
	Engine string `yaml:"engine" json:"engine"`
	// Kubeconfig (kubernetes): the runner's credentials, at best a ServiceAccount
	// token bound to docs/kube-role.yaml's Role; Namespace where it creates its
	// pods (default: the kubeconfig's, else default).
	Kubeconfig string `yaml:"kubeconfig,omitempty" json:"kubeconfig,omitempty"`
	Namespace  string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	// ImagePrefix (kubernetes): a registry the nodes pull rpcbed's images from
	// (prefix + rpcbed/go:TAG, imagePullPolicy IfNotPresent). Without it the
	// images must be on every node already and are never pulled.
	ImagePrefix string `yaml:"image_prefix,omitempty" json:"image_prefix,omitempty"`
	// Manager is an existing swarm's manager engine: rpcbed forms nothing and
	// removes only the services it made. Form instead lists the engines rpcbed
	// makes a swarm of (and leaves again on every exit path).
	Manager string           `yaml:"manager,omitempty" json:"manager,omitempty"`
	Form    []cluster.Member `yaml:"form,omitempty" json:"form,omitempty"`
	// AddrPool is a formed swarm's default address pool (no overlay network is
	// used; it keeps swarm's own choice, a private range, out of the machine).
	AddrPool string `yaml:"addr_pool,omitempty" json:"addr_pool,omitempty"`
	// Driver is the address the tasks dial the driver's ready barrier at.
	Driver string `yaml:"driver" json:"driver"`
	// Pools: the nodes each pool needs (labels rpcbed.pool=server|clients).
	Pools map[string]int `yaml:"pools" json:"pools"`
	// Nodes lists the client node counts each cell runs at, a dimension of the
	// plan (go-grpc-datalist-200-c50-2nodes); default [pools.clients].
	Nodes []int `yaml:"nodes,omitempty" json:"nodes,omitempty"`
	// MinNodes is the fewest client nodes a cell's repeat may run on once nodes
	// were lost (the load is then split over the nodes left); default: the cell's
	// own count, so a short pool fails the repeat with that reason.
	MinNodes int `yaml:"min_nodes,omitempty" json:"min_nodes,omitempty"`
	// ReadyTimeout bounds the ready step: every task connected to the barrier
	// (default 120 s: image start and a JVM on a busy machine).
	ReadyTimeout Duration `yaml:"ready_timeout,omitempty" json:"ready_timeout,omitempty"`
}

// Cluster engines.
const (
	EngineSwarm      = "swarm"
	EngineKubernetes = "kubernetes"
)

var dns1123 = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// Pool names.
const (
	PoolServer  = "server"
	PoolClients = "clients"
)

func (s *Spec) validateCluster() error {
	c := s.Cluster
	if c == nil {
		return nil
	}
	switch c.Engine {
	case EngineSwarm:
		if (c.Manager == "") == (len(c.Form) == 0) {
			return fieldErr("cluster", "give manager (an existing swarm) or form (engines rpcbed makes a swarm of), not both or neither")
		}
	case EngineKubernetes:
		if c.Kubeconfig == "" {
			return fieldErr("cluster.kubeconfig", "want the path of the runner's kubeconfig (engine kubernetes)")
		}
		if c.Namespace != "" && !dns1123.MatchString(c.Namespace) {
			return fieldErr("cluster.namespace", "%q: want a Kubernetes namespace name (lower-case letters, digits, '-')", c.Namespace)
		}
	default:
		return fieldErr("cluster.engine", "%q: want swarm (Docker Swarm mode) or kubernetes", c.Engine)
	}
	if len(s.Hosts) > 0 || len(s.LinkList()) > 0 {
		return fieldErr("cluster", "a cluster places the roles itself: no hosts or links with it")
	}
	if net.ParseIP(c.Driver) == nil {
		return fieldErr("cluster.driver", "%q: want the IP address the tasks reach the driver at", c.Driver)
	}
	for p, n := range c.Pools {
		if p != PoolServer && p != PoolClients {
			return fieldErr("cluster.pools", "unknown pool %q: want server and clients", p)
		}
		if n < 1 {
			return fieldErr("cluster.pools."+p, "%d: want at least 1 node", n)
		}
	}
	if c.Pools[PoolServer] < 1 || c.Pools[PoolClients] < 1 {
		return fieldErr("cluster.pools", "want server and clients, each at least 1 (e.g. {server: 1, clients: 2})")
	}
	if c.Engine == EngineKubernetes {
		return s.validateClusterCells(c) // form, manager, addr_pool: a swarm's, unused here
	}
	have := map[string]int{}
	for i, m := range c.Form {
		f := fmt.Sprintf("cluster.form[%d]", i)
		if m.Engine == "" || net.ParseIP(m.Address) == nil {
			return fieldErr(f, "want engine and address (the IP the other nodes reach it at)")
		}
		if _, ok := c.Pools[m.Pool]; !ok {
			return fieldErr(f+".pool", "%q: want server or clients", m.Pool)
		}
		have[m.Pool]++
	}
	if len(c.Form) > 0 {
		if c.Form[0].Pool != PoolServer {
			return fieldErr("cluster.form[0]", "the first member (the manager) is the server pool's")
		}
		for _, p := range []string{PoolServer, PoolClients} {
			if have[p] < c.Pools[p] {
				return fieldErr("cluster.form", "pool %s needs %d nodes, form lists %d", p, c.Pools[p], have[p])
			}
		}
	}
	return s.validateClusterCells(c)
}

// validateClusterCells checks what every engine shares: the node counts, the
// worker mode, each cell's concurrency against its nodes.
func (s *Spec) validateClusterCells(c *Cluster) error {
	for _, n := range c.Nodes {
		if n < 1 || n > c.Pools[PoolClients] {
			return fieldErr("cluster.nodes", "%d: want 1..%d (pools.clients)", n, c.Pools[PoolClients])
		}
	}
	if c.MinNodes < 0 || c.MinNodes > c.Pools[PoolClients] {
		return fieldErr("cluster.min_nodes", "%d: want 0..%d", c.MinNodes, c.Pools[PoolClients])
	}
	if s.Worker != nil && !*s.Worker {
		return fieldErr("worker", "a cluster run's tasks are client workers: worker: false is not supported with cluster")
	}
	for _, cell := range s.Plan() {
		if cell.Concurrency < cell.Nodes {
			return fieldErr("concurrency", "cell %s: c=%d cannot be split over %d nodes", cell.Name(), cell.Concurrency, cell.Nodes)
		}
	}
	return nil
}

// clusterNodes is the client-node dimension of the plan: [0] without a cluster.
func (s Spec) clusterNodes() []int {
	if s.Cluster == nil {
		return []int{0}
	}
	if len(s.Cluster.Nodes) > 0 {
		ns := slices.Clone(s.Cluster.Nodes)
		slices.Sort(ns)
		return slices.Compact(ns)
	}
	return []int{s.Cluster.Pools[PoolClients]}
}

// Share is one client task's part of a cell's load, as k6 splits a test over
// its runners: segment i of n gets the whole numbers in [i/n, (i+1)/n) of the
// concurrency and of the connections.
type Share struct {
	Concurrency int `json:"concurrency"`
	Conns       int `json:"conns"`
}

// SplitLoad divides concurrency c and conns connections over n tasks.
func SplitLoad(c, conns, n int) []Share {
	seg := func(total, i int) int { return (i+1)*total/n - i*total/n }
	sh := make([]Share, n)
	for i := range sh {
		sh[i] = Share{Concurrency: seg(c, i), Conns: seg(conns, i)}
		if sh[i].Conns < 1 {
			sh[i].Conns = 1
		}
	}
	return sh
}
