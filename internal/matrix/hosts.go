package matrix

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/url"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/rpcbed/rpcbed/internal/runner"
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
		r, err := ParseRate(n.Value)
		if err != nil {
			return fieldErr("links", "line %d: link %q: want loopback, unshaped, a rate such as 100mbit, or {rate: ..., delay: ...}", n.Line, n.Value)
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
	links := s.linkList()
	if len(s.Hosts) == 0 {
		for _, l := range links {
			if !l.Loopback {
				return fieldErr("links", "%s: a link needs hosts: (two engines joined by it; docker/netbed.sh makes them)", l.Label())
			}
		}
		return nil
	}
	placed := map[string]string{}
	for _, name := range sortedKeys(s.Hosts) {
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
			if s.hostOf(role) == "" {
				return fieldErr("hosts", "role %s (cell %s) is on no host: list it under some host's roles", role, c.Name())
			}
		}
	}
	for _, l := range links {
		if !l.Shaped() {
			continue
		}
		for _, name := range sortedKeys(s.Hosts) {
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
	}
	return nil
}

// linkList is the spec's links: links, or link alone; nil = no link dimension.
func (s *Spec) linkList() []Link {
	if s.Link != nil {
		return []Link{*s.Link}
	}
	return s.Links
}

// hostOf is the host a role runs on; "" when none. php-pure follows php.
func (s *Spec) hostOf(role string) string {
	for _, name := range sortedKeys(s.Hosts) {
		if slices.Contains(s.Hosts[name].Roles, role) {
			return name
		}
	}
	if role == "php-pure" {
		return s.hostOf("php")
	}
	return ""
}

// ---- placement: one engine per host ----------------------------------------------

// placement is a multi-host run's engines: one runner per host, and the host of
// every role.
type placement struct {
	spec    *Spec
	runners map[string]*runner.Docker // host name -> its engine
}

// imagesFor is the runtime images a host needs for its roles (go for the link
// probe too; on a loopback link a server's host runs the clients as well).
func (s *Spec) imagesFor(host string, p Programs) []string {
	want := map[string]bool{}
	roles := slices.Clone(s.Hosts[host].Roles)
	if slices.ContainsFunc(s.linkList(), func(l Link) bool { return l.Loopback }) &&
		slices.ContainsFunc(roles, func(r string) bool { return strings.HasSuffix(r, "-server") }) {
		for c := range s.Clients {
			roles = append(roles, c)
		}
	}
	for _, r := range roles {
		switch r {
		case "go-server", "go":
			want["go"] = true
		case "java-server", "java":
			want["java"] = true
		case "php", "php-pure":
			want["php"] = true
		}
	}
	if len(s.linkList()) > 0 {
		want["go"] = true
	}
	var ims []string
	for _, rt := range []string{"go", "php", "java"} {
		if want[rt] {
			ims = append(ims, p.image(rt))
		}
	}
	return ims
}

// place connects to every host's engine and copies the images each needs from
// the driver's engine (src).
func place(ctx context.Context, s *Spec, src runner.Runner, p Programs, note func(string)) (*placement, error) {
	d, ok := src.(*runner.Docker)
	if !ok {
		return nil, fmt.Errorf("hosts: a multi-host run needs the Docker runner (-runner docker), not %T", src)
	}
	pl := &placement{spec: s, runners: map[string]*runner.Docker{}}
	for _, name := range sortedKeys(s.Hosts) {
		h := s.Hosts[name]
		r, err := runner.NewDockerAt(h.Engine)
		if err != nil {
			pl.close()
			return nil, fmt.Errorf("hosts.%s: %w", name, err)
		}
		pl.runners[name] = r
		for _, im := range s.imagesFor(name, p) {
			t0 := time.Now()
			copied, err := runner.CopyImage(ctx, d, r, im)
			if err != nil {
				pl.close()
				return nil, fmt.Errorf("hosts.%s: %w", name, err)
			}
			if copied && note != nil {
				note(fmt.Sprintf("copied %s to host %s in %.1f s", im, name, time.Since(t0).Seconds()))
			}
		}
	}
	return pl, nil
}

func (pl *placement) close() {
	if pl == nil {
		return
	}
	for _, r := range pl.runners {
		r.Close()
	}
}

// runnerFor is the engine a role runs on under link l: a loopback link puts each
// client on its server's host.
func (pl *placement) runnerFor(role string, server string, l Link) *runner.Docker {
	if l.Loopback && !strings.HasSuffix(role, "-server") {
		role = server + "-server"
	}
	return pl.runners[pl.spec.hostOf(role)]
}

// addrFor is the address a client on the far side of link l dials for a server
// address host:port: 127.0.0.1 on a loopback link, the server host's otherwise.
func addrFor(addr string, l Link) string {
	if !l.Loopback {
		return addr
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// probeImage is an image a host has (for bash probes): go when it has it.
func (pl *placement) probeImage(host string, p Programs) string {
	ims := pl.spec.imagesFor(host, p)
	if len(ims) == 0 {
		return p.image("go")
	}
	return ims[0]
}

// ---- link shaping -------------------------------------------------------------

// tcRunner runs tc; a variable so tests can see the commands.
var tcRunner = func(ctx context.Context, args ...string) ([]byte, error) {
	return exec.CommandContext(ctx, "tc", args...).CombinedOutput()
}

// shapeDev splits a host's Shape into tc's -n NETNS and DEV.
func shapeDev(shape string) (netns, dev string) {
	if ns, d, ok := strings.Cut(shape, "/"); ok {
		return ns, d
	}
	return "", shape
}

func tcArgs(netns string, args ...string) []string {
	if netns != "" {
		return append([]string{"-n", netns}, args...)
	}
	return args
}

// tbfBurst is the bucket for rate r: at least 64 KiB, and 4 ms at the rate (tbf
// needs a bucket of at least one timer tick's worth of bytes).
func tbfBurst(r Rate) int64 { return max(64<<10, int64(r)/8/250) }

// applyLink shapes every host's side of the link as l asks, or removes any
// shaping for an unshaped or loopback link. A request tc refuses is an error:
// shaping is never silently dropped.
func applyLink(ctx context.Context, s *Spec, l Link) error {
	for _, name := range sortedKeys(s.Hosts) {
		h := s.Hosts[name]
		if h.Shape == "" {
			continue
		}
		ns, dev := shapeDev(h.Shape)
		// Whatever a previous link left: a device without a root qdisc answers
		// an error here, which is fine.
		tcRunner(ctx, tcArgs(ns, "qdisc", "del", "dev", dev, "root")...)
		if !l.Shaped() {
			continue
		}
		var args []string
		if l.NeedsNetem() {
			args = tcArgs(ns, "qdisc", "add", "dev", dev, "root", "netem")
			if l.Delay > 0 {
				args = append(args, "delay", l.Delay.D().String())
				if l.Jitter > 0 {
					args = append(args, l.Jitter.D().String())
				}
			}
			if l.Loss > 0 {
				args = append(args, "loss", strconv.FormatFloat(l.Loss, 'f', -1, 64)+"%")
			}
			if l.Rate > 0 {
				args = append(args, "rate", l.Rate.String())
			}
		} else {
			args = tcArgs(ns, "qdisc", "add", "dev", dev, "root", "tbf", "rate", l.Rate.String(),
				"burst", strconv.FormatInt(tbfBurst(l.Rate), 10), "latency", "50ms")
		}
		if out, err := tcRunner(ctx, args...); err != nil {
			return fmt.Errorf("link %s: host %s: tc %s: %v: %s", l.Label(), name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// clearLinks removes the shaping of every host (the run's end, every exit path).
func clearLinks(s *Spec) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	applyLink(ctx, s, Link{})
}

// checkNetem refuses, before any cell runs, a link that needs netem on a kernel
// without sch_netem: it tries a netem qdisc on each shaped host's device.
func checkNetem(ctx context.Context, s *Spec) error {
	for _, l := range s.linkList() {
		if !l.NeedsNetem() {
			continue
		}
		for _, name := range sortedKeys(s.Hosts) {
			ns, dev := shapeDev(s.Hosts[name].Shape)
			out, err := tcRunner(ctx, tcArgs(ns, "qdisc", "add", "dev", dev, "root", "netem", "delay", "1ms")...)
			if err != nil {
				msg := strings.TrimSpace(string(out))
				if strings.Contains(msg, "unknown") || strings.Contains(msg, "No such file") {
					return fmt.Errorf("link %s asks for delay/jitter/loss, which need the netem qdisc (sch_netem), and this kernel has none (host %s: tc: %s); refusing to run it unshaped: drop delay/jitter/loss or run on a kernel with sch_netem", l.Label(), name, msg)
				}
				return fmt.Errorf("link %s: host %s: netem: %v: %s", l.Label(), name, err, msg)
			}
			tcRunner(ctx, tcArgs(ns, "qdisc", "del", "dev", dev, "root")...)
		}
	}
	return nil
}
