package plan

import (
	"fmt"
	"maps"
	"math"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Roles are what a spec's hosts place: the two server kinds and each client.
var Roles = []string{"go-server", "java-server", "go", "php", "php-pure", "java"}

// Host is one machine (or one network namespace standing in for one, as
// docker/netbed.sh makes) of a multi-host run.
type Host struct {
	// Engine is the host's Docker endpoint: unix:///path, tcp://host:port or
	// ssh://[user@]host[:port] (ssh runs `docker system dial-stdio` there).
	Engine string `yaml:"engine" json:"engine"`
	// Address is where peers reach the services this host runs (an IP or a name,
	// no port). The driver samples a server's /stats there too.
	Address string `yaml:"address" json:"address"`
	// Roles run on this host: go-server, java-server, go, php, php-pure, java.
	// php-pure goes where php goes unless placed itself.
	Roles []string `yaml:"roles" json:"roles"`
	// Shape is where the driver applies a link's shaping to this host's outgoing
	// traffic with tc: NETNS/DEV (a namespace on the driver's machine, as
	// netbed's) or DEV. Empty: the driver cannot shape this host.
	Shape string `yaml:"shape" json:"shape,omitempty"`
}

// Link is one link setting between the hosts: unshaped, shaped (rate, with tc tbf
// on every host's side: both directions), or loopback (no link: each client runs
// on its server's host and calls 127.0.0.1). Delay, jitter and loss need netem.
type Link struct {
	Name     string   `yaml:"name" json:"name"`
	Rate     Rate     `yaml:"rate" json:"rate,omitzero"`
	Delay    Duration `yaml:"delay" json:"delay,omitzero"`
	Jitter   Duration `yaml:"jitter" json:"jitter,omitzero"`
	Loss     float64  `yaml:"loss" json:"loss,omitzero"` // percent
	Loopback bool     `yaml:"loopback" json:"loopback,omitzero"`
}

// Link names a spec may give as a plain string besides a rate ("100mbit").
const (
	LinkLoopback = "loopback"
	LinkUnshaped = "unshaped"
)

// LinkPresets are the named conditions a spec may give as a plain string, after
// grpc-go's benchmark/latency and common practice. Delay, jitter and loss are
// one way and applied in each direction (netem's meaning on both hosts), so a
// round trip crosses them twice: lan is a 0.2 ms round trip, region 2 ms with
// ±0.2 ms, wan 30 ms with 0.1 % of the packets lost each way, lossy lan with 1 %.
var LinkPresets = map[string]Link{
	"lan":    {Name: "lan", Delay: Duration(100 * time.Microsecond)},
	"region": {Name: "region", Delay: Duration(time.Millisecond), Jitter: Duration(100 * time.Microsecond)},
	"wan":    {Name: "wan", Delay: Duration(15 * time.Millisecond), Loss: 0.1},
	"lossy":  {Name: "lossy", Delay: Duration(100 * time.Microsecond), Loss: 1},
}

// RTT is the round trip the link adds to the path's own: its one-way delay
// applied in each direction.
func (l Link) RTT() time.Duration { return 2 * l.Delay.D() }

// UnmarshalYAML takes a string (loopback, unshaped, or a rate such as 100mbit) or
// a mapping {name, rate, delay, jitter, loss}.
func (l *Link) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		switch n.Value {
		case LinkLoopback:
			*l = Link{Name: LinkLoopback, Loopback: true}
			return nil
		case LinkUnshaped:
			*l = Link{Name: LinkUnshaped}
			return nil
		}
		if p, ok := LinkPresets[n.Value]; ok {
			*l = p
			return nil
		}
		r, err := ParseRate(n.Value)
		if err != nil {
			return fieldErr("links", "line %d: link %q: want loopback, unshaped, a preset (lan, region, wan, lossy), a rate such as 100mbit, or {rate: ..., delay: ...}", n.Line, n.Value)
		}
		*l = Link{Name: n.Value, Rate: r}
		return nil
	}
	type plain Link
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*l = Link(p)
	return nil
}

// Shaped says whether the link asks tc for anything.
func (l Link) Shaped() bool { return l.Rate > 0 || l.NeedsNetem() }

// NeedsNetem: delay, jitter and loss are netem's; tbf cannot do them.
func (l Link) NeedsNetem() bool { return l.Delay > 0 || l.Jitter > 0 || l.Loss > 0 }

// Label is the link's name in cell names: its name, else what it asks for.
func (l Link) Label() string {
	if l.Name != "" {
		return l.Name
	}
	if l.Loopback {
		return LinkLoopback
	}
	var parts []string
	if l.Rate > 0 {
		parts = append(parts, l.Rate.String())
	}
	if l.Delay > 0 {
		parts = append(parts, "d"+l.Delay.D().String())
	}
	if l.Jitter > 0 {
		parts = append(parts, "j"+l.Jitter.D().String())
	}
	if l.Loss > 0 {
		parts = append(parts, "loss"+strconv.FormatFloat(l.Loss, 'f', -1, 64))
	}
	if len(parts) == 0 {
		return LinkUnshaped
	}
	return strings.Join(parts, "_")
}

// Rate is a link rate in bits per second; YAML and JSON take tc's words (100mbit,
// 1gbit, 512kbit, 2000000bit).
type Rate int64

// ParseRate reads NUMBER[bit|kbit|mbit|gbit|tbit] (decimal multiples, as tc's).
func ParseRate(s string) (Rate, error) {
	units := []struct {
		suffix string
		mul    float64
	}{{"tbit", 1e12}, {"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1}}
	low := strings.ToLower(strings.TrimSpace(s))
	for _, u := range units {
		if num, ok := strings.CutSuffix(low, u.suffix); ok {
			f, err := strconv.ParseFloat(num, 64)
			if err != nil || f <= 0 || math.IsInf(f, 0) || f*u.mul > 1e13 {
				break
			}
			return Rate(f * u.mul), nil
		}
	}
	return 0, fmt.Errorf("rate %q: want a number with bit, kbit, mbit, gbit or tbit (e.g. 100mbit)", s)
}

func (r Rate) String() string {
	for _, u := range []struct {
		suffix string
		div    int64
	}{{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}} {
		if int64(r) >= u.div && int64(r)%u.div == 0 {
			return strconv.FormatInt(int64(r)/u.div, 10) + u.suffix
		}
	}
	return strconv.FormatInt(int64(r), 10) + "bit"
}

func (r *Rate) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseRate(n.Value)
	if err != nil {
		return fieldErr("rate", "line %d: %v", n.Line, err)
	}
	*r = v
	return nil
}

func (r Rate) MarshalYAML() (any, error) { return r.String(), nil }
func (r Rate) MarshalText() ([]byte, error) {
	return []byte(r.String()), nil
}
func (r *Rate) UnmarshalText(b []byte) error {
	v, err := ParseRate(string(b))
	*r = v
	return err
}

// validateHosts checks hosts and links (called by Validate).
func (s *Spec) validateHosts() error {
	if s.Link != nil {
		if len(s.Links) > 0 {
			return fieldErr("link", "give link or links, not both")
		}
	}
	links := s.LinkList()
	if len(s.Hosts) == 0 {
		for _, l := range links {
			if !l.Loopback {
				return fieldErr("links", "%s: a link needs hosts: (two engines joined by it; docker/netbed.sh makes them)", l.Label())
			}
		}
		return nil
	}
	placed := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(s.Hosts)) {
		h := s.Hosts[name]
		f := "hosts." + name
		u, err := url.Parse(h.Engine)
		if err != nil || h.Engine == "" {
			return fieldErr(f+".engine", "%q: want unix:///path/docker.sock, tcp://host:port or ssh://user@host", h.Engine)
		}
		switch u.Scheme {
		case "unix":
			if u.Path == "" {
				return fieldErr(f+".engine", "%q: no socket path", h.Engine)
			}
		case "tcp", "http", "https":
			if u.Host == "" {
				return fieldErr(f+".engine", "%q: no host", h.Engine)
			}
		case "ssh":
			if u.Hostname() == "" {
				return fieldErr(f+".engine", "%q: want ssh://[user@]host[:port]", h.Engine)
			}
		default:
			return fieldErr(f+".engine", "%q: want unix://, tcp:// or ssh://", h.Engine)
		}
		if h.Address == "" || strings.ContainsAny(h.Address, "/ ") {
			return fieldErr(f+".address", "%q: want the IP or name peers reach this host at (no port)", h.Address)
		}
		if _, _, err := net.SplitHostPort(h.Address); err == nil {
			return fieldErr(f+".address", "%q: no port (the servers pick theirs)", h.Address)
		}
		if len(h.Roles) == 0 {
			return fieldErr(f+".roles", "no role: want some of %s", strings.Join(Roles, ", "))
		}
		for _, r := range h.Roles {
			if !slices.Contains(Roles, r) {
				return fieldErr(f+".roles", "unknown role %q: want %s", r, strings.Join(Roles, ", "))
			}
			if other, ok := placed[r]; ok {
				return fieldErr(f+".roles", "role %s is on hosts %s and %s: one host per role", r, other, name)
			}
			placed[r] = name
		}
		if h.Shape != "" && strings.Count(h.Shape, "/") > 1 {
			return fieldErr(f+".shape", "%q: want NETNS/DEV or DEV", h.Shape)
		}
	}
	for _, c := range s.Plan() {
		for _, role := range []string{c.ServerLang + "-server", c.Client} {
			if s.HostOf(role) == "" {
				return fieldErr("hosts", "role %s (cell %s) is on no host: list it under some host's roles", role, c.Name())
			}
		}
	}
	for _, l := range links {
		if !l.Shaped() {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(s.Hosts)) {
			if s.Hosts[name].Shape == "" {
				return fieldErr("hosts."+name+".shape", "link %s is shaped but host %s names no shape device (NETNS/DEV): the driver cannot shape it, and will not run the link unshaped", l.Label(), name)
			}
		}
	}
	seen := map[string]bool{}
	for _, l := range links {
		lb := l.Label()
		if seen[lb] {
			return fieldErr("links", "link %s listed twice", lb)
		}
		seen[lb] = true
		if strings.ContainsAny(lb, "@/ *?[") {
			return fieldErr("links", "link name %q: no @, /, spaces or glob characters", lb)
		}
		if l.Loss < 0 || l.Loss > 100 {
			return fieldErr("links", "link %s: loss %v: want 0..100 (percent)", lb, l.Loss)
		}
		if l.Delay < 0 || l.Jitter < 0 || l.Jitter > l.Delay || l.Delay.D() > 10*time.Second {
			return fieldErr("links", "link %s: delay %v, jitter %v: want 0 <= jitter <= delay <= 10s (a packet cannot leave before it arrived)", lb, l.Delay.D(), l.Jitter.D())
		}
	}
	return nil
}

// LinkList is the spec's links: links, or link alone; nil = no link dimension.
func (s *Spec) LinkList() []Link {
	if s.Link != nil {
		return []Link{*s.Link}
	}
	return s.Links
}

// HostOf is the host a role runs on; "" when none. php-pure follows php.
func (s *Spec) HostOf(role string) string {
	for _, name := range slices.Sorted(maps.Keys(s.Hosts)) {
		if slices.Contains(s.Hosts[name].Roles, role) {
			return name
		}
	}
	if role == "php-pure" {
		return s.HostOf("php")
	}
	return ""
}
