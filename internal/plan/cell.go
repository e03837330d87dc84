package plan

import (
	"path"
	"slices"
	"strconv"
	"strings"
)

// Cell is one point of the matrix: a client calling one server over one protocol,
// one call, one payload size, one concurrency.
type Cell struct {
	Client      string `json:"client"`
	Protocol    string `json:"protocol"`
	Call        string `json:"call"`
	Items       int    `json:"items"`
	Concurrency int    `json:"concurrency"`
	// ServerLang is the server implementation serving it: "go" (go-server) or
	// "java" (a Java baseline).
	ServerLang string `json:"server"`
	// Link is the link the cell runs over (a spec's links); "" without a link
	// dimension.
	Link string `json:"link,omitempty"`
	// Nodes is the client nodes a cluster run splits the cell's load over
	// (cluster.nodes); 0 without a cluster.
	Nodes int `json:"nodes,omitempty"`
	// Security is the cell's security condition (security.go): "" for plaintext,
	// else tls or mtls with its variants ("tls+tls12"). Connect is "" for a
	// persistent connection per caller, or per-call.
	Security string `json:"security,omitempty"`
	Connect  string `json:"connect,omitempty"`
	Load     Load   `json:"-"`
}

// Name is the cell's one stable name: file name, table row and log line, e.g.
// php-grpc-datalist-200-c50 or go-thrift-datatype-c1. Its conditions follow one
// "@", joined by "+" in a fixed order, each left out at its default: link,
// security with its variants, connection mode (go-grpc-datalist-200-c1@tls,
// php-http-datalist-200-c1@tls+percall, java-thrift-datalist-200-c50@lan+mtls).
func (c Cell) Name() string {
	var b strings.Builder
	b.WriteString(c.Client + "-" + c.Protocol + "-" + c.Call)
	if c.Call == "datalist" {
		b.WriteString("-" + strconv.Itoa(c.Items))
	}
	b.WriteString("-c" + strconv.Itoa(c.Concurrency))
	switch {
	case c.Nodes == 1:
		b.WriteString("-1node")
	case c.Nodes > 1:
		b.WriteString("-" + strconv.Itoa(c.Nodes) + "nodes")
	}
	if t := c.conditions(); len(t) > 0 {
		b.WriteString("@" + strings.Join(t, "+"))
	}
	return b.String()
}

// Pair is the client x protocol x call a verify run checks.
func (c Cell) Pair() string { return c.Client + "-" + c.Protocol + "-" + c.Call }

// Plan lists the spec's cells in run order: grouped by server (go-server's cells
// first), so each server configuration is started once; within a server, by
// client, protocol, call, items and concurrency in the vocabulary's order.
func (s Spec) Plan() []Cell {
	links := s.LinkList()
	if len(links) == 0 {
		return s.planLink("")
	}
	// One link at a time: every cell of a link before the next is set up.
	var cells []Cell
	for _, l := range links {
		cells = append(cells, s.planLink(l.Label())...)
	}
	return cells
}

// planLink is Plan for one link ("" = no link dimension).
func (s Spec) planLink(link string) []Cell {
	var cells []Cell
	for _, srv := range []string{"go", "java"} {
		for _, client := range Clients {
			for _, proto := range Protocols {
				if s.Servers[proto] != srv || !slices.Contains(s.Clients[client], proto) {
					continue
				}
				for _, call := range Calls {
					if !slices.Contains(s.Calls, call) {
						continue
					}
					items := []int{0}
					if call == "datalist" {
						items = sortedInts(s.Items)
					}
					for _, n := range items {
						for _, c := range sortedInts(s.Concurrency) {
							for _, nodes := range s.clusterNodes() {
								// Conditions innermost: the cells they pair sit side by side.
								for _, cond := range s.cellConditions() {
									cell := Cell{Client: client, Protocol: proto, Call: call, Items: n, Concurrency: c, ServerLang: srv, Link: link, Nodes: nodes,
										Security: cond[0], Connect: cond[1]}
									if s.excluded(cell.Name()) {
										continue
									}
									cell.Load = s.loadFor(cell.Name())
									cells = append(cells, cell)
								}
							}
						}
					}
				}
			}
		}
	}
	// One server process at a time: go-server, then each Java baseline.
	rank := func(c Cell) int {
		if c.ServerLang == "go" {
			return 0
		}
		return 1 + slices.Index(Protocols, c.Protocol)
	}
	slices.SortStableFunc(cells, func(a, b Cell) int { return rank(a) - rank(b) })
	return cells
}

// ServerProcKey names the server process a cell needs: go-server serves all its
// protocols from one process; a Java baseline serves one protocol per process.
func (c Cell) ServerProcKey() string {
	if c.ServerLang == "go" {
		return "go-server"
	}
	return "java-" + c.Protocol
}

// GroupKey is the server process and link a cell runs with: cells of one group
// share a server start and its rounds, so cells that differ only in security or
// connection mode are timed in the same rounds and their ratio is paired.
func (c Cell) GroupKey() string { return c.ServerProcKey() + "@" + c.Link }

func (s Spec) excluded(name string) bool {
	for _, g := range s.Exclude {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

func (s Spec) loadFor(name string) Load {
	l := s.Load
	for _, o := range s.Overrides {
		if ok, _ := path.Match(o.Match, name); !ok {
			continue
		}
		if o.N != nil {
			l.N = *o.N
		}
		if o.Duration != nil {
			l.Duration = *o.Duration
		}
		if o.Warmup != nil {
			l.Warmup = *o.Warmup
		}
		if o.Timeout != nil {
			l.Timeout = *o.Timeout
		}
		if o.WarmupMax != nil {
			l.WarmupMax = *o.WarmupMax
		}
		if o.RepeatWarmup != nil {
			l.RepeatWarmup = *o.RepeatWarmup
		}
		if o.Conns != nil {
			l.Conns = *o.Conns
		}
	}
	return l
}

func sortedInts(v []int) []int {
	v = slices.Clone(v)
	slices.Sort(v)
	return slices.Compact(v)
}
