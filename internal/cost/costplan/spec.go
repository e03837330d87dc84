// Package costplan is a cost run's plan: cost.yaml (Spec), its cells and the
// short and long run of each (Plan), the cells left out and why.
package costplan

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/rpcbed/rpcbed/internal/cost"
	"github.com/rpcbed/rpcbed/internal/plan"
)

// The sides, as cost.json names them.
const (
	SideClient = cost.SideClient
	SideServer = cost.SideServer
)

// Spec is a cost run (cost.yaml): which cells, how many calls in the short and
// the long run of each, and which side is measured.
type Spec struct {
	// Clients maps a client (go, php, php-pure) to its protocols.
	Clients map[string][]string `yaml:"clients"`
	Items   []int               `yaml:"items"`
	Sides   []string            `yaml:"sides"`
	// Calls are the short and the long run's calls; the marginal cost is taken
	// over their difference. Overrides change them per cell.
	Calls     Calls      `yaml:"calls"`
	Overrides []Override `yaml:"overrides"`
	// Exclude lists cells (path.Match patterns on Cell.Name) not measured, each
	// with its reason, printed in cost.md.
	Exclude []Exclusion `yaml:"exclude"`
	// Servers says where each protocol is served: go (go-server) or java.
	Servers map[string]string `yaml:"servers"`
	// GOGC is the Go processes' fixed GOGC, a percentage or off (recorded with
	// the run); "" = 100.
	GOGC string `yaml:"gogc"`
	// TLS lists the clients whose cells run again over TLS (security tls: TLS
	// 1.3, an ECDSA P-256 leaf of a throwaway CA made for the run), named
	// CELL@tls; overrides and exclusions match them by their plaintext name too.
	TLS []string `yaml:"tls"`
	// ReadDelay (a duration, e.g. 3ms; "" = none) delays what the measured side
	// reads from its native peer, through a proxy on loopback, so that the
	// measured side always waits for its peer's bytes, as on a real network
	// (docs/cost.md, "What moved the counts").
	ReadDelay string `yaml:"read_delay"`
}

// ReadDelayDuration is ReadDelay parsed (Validate checked it); 0 = none.
func (s Spec) ReadDelayDuration() time.Duration {
	d, _ := time.ParseDuration(s.ReadDelay)
	return d
}

// Calls are a cell's short and long run.
type Calls struct {
	Short int64 `yaml:"short"`
	Long  int64 `yaml:"long"`
}

// Override sets the calls of the cells Match names: path.Match on Cell.Name
// (go-grpc-datalist-2-c1, both sides) or on Cell.ID (…-c1/client, one side).
// The last override that matches wins.
type Override struct {
	Match string `yaml:"match"`
	Calls Calls  `yaml:"calls"`
}

// Exclusion is a cell left out, and why.
type Exclusion struct {
	Match  string `yaml:"match"`
	Reason string `yaml:"reason"`
}

// Cell is one measured point: a client calling a server over one protocol for a
// DataList of Items items at c=1, with one Side under callgrind.
type Cell struct {
	Client   string `json:"client"`
	Protocol string `json:"protocol"`
	Items    int    `json:"items"`
	Side     string `json:"side"`
	Server   string `json:"server"` // go|java
	// Security is "" (plaintext) or tls.
	Security string `json:"security,omitempty"`
	Calls    Calls  `json:"-"`
}

// Name is the matrix's cell name (go-grpc-datalist-200-c1,
// go-grpc-datalist-200-c1@tls): plan.Cell's.
func (c Cell) Name() string { return c.Matrix().Name() }

// Matrix is the matrix's cell of c: one caller's datalist calls.
func (c Cell) Matrix() plan.Cell {
	return plan.Cell{Client: c.Client, Protocol: c.Protocol, Call: "datalist", Items: c.Items, Concurrency: 1, Security: c.Security}
}

// ID is the cell's name with its side: go-grpc-datalist-200-c1/client.
func (c Cell) ID() string { return c.Name() + "/" + c.Side }

// matches is whether pattern (path.Match) matches c's name or ID, or those of
// its plaintext twin: an override or exclusion written for a cell covers its
// TLS cell too.
func (c Cell) matches(pattern string) bool {
	plain := c
	plain.Security = ""
	for _, x := range []Cell{c, plain} {
		byName, _ := path.Match(pattern, x.Name())
		byID, _ := path.Match(pattern, x.ID())
		if byName || byID {
			return true
		}
	}
	return false
}

// vocabularies, in the project's order.
var (
	clientOrder   = cost.ClientOrder
	protocolOrder = cost.ProtocolOrder
)

// LoadSpec reads a cost spec; unknown keys are errors.
func LoadSpec(file string) (Spec, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return Spec{}, err
	}
	var s Spec
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return Spec{}, fmt.Errorf("%s: %w", file, err)
	}
	if err := s.Validate(); err != nil {
		return Spec{}, fmt.Errorf("%s: %w", file, err)
	}
	return s, nil
}

// Validate names the first field that is wrong.
func (s Spec) Validate() error {
	if len(s.Clients) == 0 {
		return fmt.Errorf("clients: none")
	}
	for c, ps := range s.Clients {
		if !slices.Contains(clientOrder, c) {
			return fmt.Errorf("clients: unknown client %q (want go, php, php-pure, java)", c)
		}
		for _, p := range ps {
			if !slices.Contains(protocolOrder, p) {
				return fmt.Errorf("clients.%s: unknown protocol %q", c, p)
			}
			if _, ok := s.Servers[p]; !ok {
				return fmt.Errorf("servers: no server for %q", p)
			}
		}
	}
	if len(s.Items) == 0 {
		return fmt.Errorf("items: none")
	}
	for _, n := range s.Items {
		if n < 0 || n > 100000 {
			return fmt.Errorf("items: %d outside 0..100000", n)
		}
	}
	for _, sd := range s.Sides {
		if sd != SideClient && sd != SideServer {
			return fmt.Errorf("sides: %q (want client, server)", sd)
		}
	}
	if err := s.Calls.validate("calls"); err != nil {
		return err
	}
	for i, o := range s.Overrides {
		if _, err := path.Match(o.Match, ""); err != nil {
			return fmt.Errorf("overrides[%d].match: %v", i, err)
		}
		if err := o.Calls.validate(fmt.Sprintf("overrides[%d].calls", i)); err != nil {
			return err
		}
	}
	for i, e := range s.Exclude {
		if _, err := path.Match(e.Match, ""); err != nil {
			return fmt.Errorf("exclude[%d].match: %v", i, err)
		}
		if e.Reason == "" {
			return fmt.Errorf("exclude[%d]: a reason is required", i)
		}
	}
	for _, c := range s.TLS {
		if !slices.Contains(cost.CallgrindClients(), c) {
			return fmt.Errorf("tls: client %q (want %s: the clients measured under callgrind)", c, strings.Join(cost.CallgrindClients(), ", "))
		}
		if _, ok := s.Clients[c]; !ok {
			return fmt.Errorf("tls: client %q is not among clients", c)
		}
	}
	for p, srv := range s.Servers {
		if srv != "go" && srv != "java" {
			return fmt.Errorf("servers.%s: %q (want go, java)", p, srv)
		}
	}
	if s.ReadDelay != "" {
		if d, err := time.ParseDuration(s.ReadDelay); err != nil || d < 0 || d > time.Second {
			return fmt.Errorf("read_delay: %q (want a duration from 0 to 1s, e.g. 3ms)", s.ReadDelay)
		}
	}
	if s.GOGC != "" && s.GOGC != "off" {
		if n, err := strconv.Atoi(s.GOGC); err != nil || n < 1 {
			return fmt.Errorf("gogc: %q (want a percentage above 0, or off)", s.GOGC)
		}
	}
	return nil
}

func (c Calls) validate(field string) error {
	if c.Short < 1 || c.Long <= c.Short {
		return fmt.Errorf("%s: short %d, long %d: want 1 <= short < long", field, c.Short, c.Long)
	}
	return nil
}

// Plan lists the cells to measure, the client side of every cell first, and the
// cells excluded with their reason.
func (s Spec) Plan() (cells []Cell, excluded []Skipped) {
	sides := s.Sides
	if len(sides) == 0 {
		sides = []string{SideClient, SideServer}
	}
	for _, side := range []string{SideClient, SideServer} {
		if !slices.Contains(sides, side) {
			continue
		}
		for _, client := range clientOrder {
			for _, proto := range protocolOrder {
				if !slices.Contains(s.Clients[client], proto) {
					continue
				}
				items := slices.Clone(s.Items)
				slices.Sort(items)
				for _, n := range slices.Compact(items) {
					c := Cell{Client: client, Protocol: proto, Items: n, Side: side, Server: s.Servers[proto], Calls: s.Calls}
					cells, excluded = s.add(cells, excluded, c)
				}
			}
		}
		// The TLS cells after every plaintext one of the side: go-server under
		// callgrind is started once for each.
		for _, client := range clientOrder {
			if !slices.Contains(s.TLS, client) {
				continue
			}
			for _, proto := range protocolOrder {
				if !slices.Contains(s.Clients[client], proto) {
					continue
				}
				items := slices.Clone(s.Items)
				slices.Sort(items)
				for _, n := range slices.Compact(items) {
					c := Cell{Client: client, Protocol: proto, Items: n, Side: side, Server: s.Servers[proto], Security: SecurityTLS, Calls: s.Calls}
					cells, excluded = s.add(cells, excluded, c)
				}
			}
		}
	}
	return cells, excluded
}

// SecurityTLS is a TLS cell's security.
const SecurityTLS = "tls"

// add gives c its calls (the last override that matches) and puts it among
// the cells or, with its reason, among the excluded.
func (s Spec) add(cells []Cell, excluded []Skipped, c Cell) ([]Cell, []Skipped) {
	for _, o := range s.Overrides {
		if c.matches(o.Match) {
			c.Calls = o.Calls
		}
	}
	if why := c.Unmeasurable(); why != "" {
		return cells, append(excluded, Skipped{Cell: c, Reason: why})
	}
	if why, ok := s.excluded(c); ok {
		return cells, append(excluded, Skipped{Cell: c, Reason: why})
	}
	return append(cells, c), excluded
}

// Reasons are the plan's reasons for the cells it leaves out, by cell ID.
func (s Spec) Reasons() map[string]string {
	_, skipped := s.Plan()
	m := make(map[string]string, len(skipped))
	for _, k := range skipped {
		m[k.Cell.ID()] = k.Reason
	}
	return m
}

// Skipped is a cell not measured, with its reason.
type Skipped struct {
	Cell   Cell
	Reason string
}

// excluded is the reason of the first exclusion that matches c, its
// placeholders filled in for c (Reason).
func (s Spec) excluded(c Cell) (string, bool) {
	for _, e := range s.Exclude {
		if c.matches(e.Match) {
			return c.Reason(e.Reason), true
		}
	}
	return "", false
}

// Reason fills an exclusion's reason in for c: {stack} is the client and
// protocol (java-http), {client}, {protocol}, {side} and {cell} are c's own.
// One exclusion covers many cells; each cell's reason names that cell, not the
// one the reason was first written for.
func (c Cell) Reason(reason string) string {
	return strings.NewReplacer("{stack}", c.Client+"-"+c.Protocol, "{client}", c.Client, "{protocol}", c.Protocol,
		"{side}", c.Side, "{cell}", c.Name()).Replace(reason)
}

// Unmeasurable is why c cannot be measured by rpcbed cost whatever the spec
// says, or "": the server side of a cell served by a Java baseline (the JVM
// under valgrind 3.19, docs/cost.md, Java).
func (c Cell) Unmeasurable() string {
	if c.Side == SideServer && c.Server == "java" {
		return c.Reason("{stack}'s server is the Java baseline for {protocol}, a JVM, and the server side of Java baselines is not measured: " +
			"under valgrind 3.19 the JVM died with SIGSEGV in C2-compiled code, and with C1 only the one JVM timed under callgrind " +
			"(java-thrift's client) took 331 s for 10 calls, so a cell's two runs would take about 10 minutes (docs/cost.md, Java)")
	}
	return ""
}
