package matrix

import (
	"context"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/measure"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/linkshape"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/runner"
)

// ---- hosts: one engine per host ----------------------------------------------

// hostEngines is a multi-host run's engines: one runner per host, and the host of
// every role.
type hostEngines struct {
	spec    *plan.Spec
	runners map[string]*runner.Docker // host name -> its engine
}

// imagesFor is the runtime images a host needs for its roles (go for the link
// check too; on a loopback link a server's host runs the clients as well).
func imagesFor(s *plan.Spec, host string, p measure.Programs) []string {
	want := map[string]bool{}
	roles := slices.Clone(s.Hosts[host].Roles)
	if slices.ContainsFunc(s.LinkList(), func(l plan.Link) bool { return l.Loopback }) &&
		slices.ContainsFunc(roles, func(r string) bool { return strings.HasSuffix(r, "-server") }) {
		for c := range s.Clients {
			roles = append(roles, c)
		}
	}
	for _, r := range roles {
		want[plan.LanguageOf(r)] = true
	}
	if len(s.LinkList()) > 0 {
		want["go"] = true
	}
	var ims []string
	for _, rt := range plan.Languages {
		if want[rt] {
			ims = append(ims, p.Image(rt))
		}
	}
	return ims
}

// connectHosts connects to every host's engine and copies the images each needs from
// the driver's engine (src).
func connectHosts(ctx context.Context, s *plan.Spec, src runner.Runner, p measure.Programs, note func(string)) (*hostEngines, error) {
	d, ok := src.(*runner.Docker)
	if !ok {
		return nil, fmt.Errorf("hosts: a multi-host run needs the Docker runner (-runner docker), not %T", src)
	}
	pl := &hostEngines{spec: s, runners: map[string]*runner.Docker{}}
	for _, name := range slices.Sorted(maps.Keys(s.Hosts)) {
		h := s.Hosts[name]
		r, err := runner.NewDockerAt(h.Engine)
		if err != nil {
			pl.close()
			return nil, fmt.Errorf("hosts.%s: %w", name, err)
		}
		pl.runners[name] = r
		for _, im := range imagesFor(s, name, p) {
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

func (pl *hostEngines) close() {
	if pl == nil {
		return
	}
	for _, r := range pl.runners {
		r.Close()
	}
}

// runnerFor is the engine a role runs on under link l: a loopback link puts each
// client on its server's host.
func (pl *hostEngines) runnerFor(role string, server string, l plan.Link) *runner.Docker {
	if l.Loopback && !strings.HasSuffix(role, "-server") {
		role = server + "-server"
	}
	return pl.runners[pl.spec.HostOf(role)]
}

// addrFor is the address a client on the far side of link l dials for a server
// address host:port: 127.0.0.1 on a loopback link, the server host's otherwise.
func addrFor(addr string, l plan.Link) string {
	if !l.Loopback {
		return addr
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// checkImage is an image a host has (for bash checks): go when it has it.
func (pl *hostEngines) checkImage(host string, p measure.Programs) string {
	ims := imagesFor(pl.spec, host, p)
	if len(ims) == 0 {
		return p.Image("go")
	}
	return ims[0]
}

// ---- link shaping -------------------------------------------------------------

// shapeRun runs the shaper's tc, ip and iptables; a variable so tests can see the
// commands (nil: exec).
var shapeRun linkshape.Runner

// shapeDev splits a host's Shape into its namespace and device.
func shapeDev(shape string) (netns, dev string) {
	if ns, d, ok := strings.Cut(shape, "/"); ok {
		return ns, d
	}
	return "", shape
}

// newShaper is the run's link shaper: every host with a shape device is a side.
func newShaper(s *plan.Spec) *linkshape.Shaper {
	sh := &linkshape.Shaper{Run: shapeRun, Seed: uint64(s.Seed)}
	for _, name := range slices.Sorted(maps.Keys(s.Hosts)) {
		if h := s.Hosts[name]; h.Shape != "" && sh.DelaySide == "" &&
			slices.ContainsFunc(h.Roles, func(r string) bool { return strings.HasSuffix(r, "-server") }) {
			sh.DelaySide = name // the servers' host holds a round trip's delay
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Hosts)) {
		if h := s.Hosts[name]; h.Shape != "" {
			ns, dev := shapeDev(h.Shape)
			sh.Sides = append(sh.Sides, linkshape.Side{Host: name, Netns: ns, Dev: dev})
		}
	}
	return sh
}

// ---- a multi-host run: hosts, links and their checks -----------------------------

// serverRole is the host role of a server key (go-server, java-grpc ...).
func serverRole(key string) string {
	if key == "go-server" {
		return "go-server"
	}
	return "java-server"
}

// setUpHosts opens the run's hosts and links (LinkBed.open), each link's check
// recorded in run.json.
func (e *executor) setUpHosts(ctx context.Context) (stop func(), err error) {
	e.checks, e.save = &e.run.Links, func() error {
		return results.WriteJSON(filepath.Join(e.o.Dir, results.RunFile), e.run)
	}
	return e.open(ctx, &e.run.Spec, e.o.Runner, e.o.Programs, e.prog.Note)
}

// hostServerConfig points a server at its host (LinkBed.PlaceServer), ready
// once every client host of the spec reaches it.
func (e *executor) hostServerConfig(cfg *measure.ServerProcConfig, key string) {
	var clients []string
	for _, c := range plan.Clients {
		if _, ok := e.run.Spec.Clients[c]; ok {
			clients = append(clients, c)
		}
	}
	e.PlaceServer(cfg, serverRole(key), clients...)
}

// enterLink sets up the link a group of cells runs over, when it is not the one
// set up: checks the one it leaves again, shapes the new one, and checks that
// what it achieves is what was asked (linkcheck.go). A link that cannot be made
// accurately comes back as a reason: its cells are recorded failed with it,
// never presented. Without a link dimension it does nothing.
func (b *LinkBed) enterLink(ctx context.Context, label string) (string, error) {
	if b.hosts == nil || label == "" || (b.linkSet && b.link.Label() == label) {
		if b.linkSet && b.link.Label() == label {
			return b.linkRefused, nil
		}
		return "", nil
	}
	if b.linkSet {
		b.leaveLink(ctx)
	}
	var l plan.Link
	for _, x := range b.spec.LinkList() {
		if x.Label() == label {
			l = x
		}
	}
	b.say("link " + label + ": setting up")
	b.linkSet = true
	b.link = l
	p, err := b.makeLink(ctx, l)
	if err != nil {
		return "", err
	}
	b.linkRefused = p.Refused
	b.linkCounts, _ = b.shaper.Counts(ctx)
	if p.Error != "" {
		b.say("link " + label + ": check: " + p.Error)
	} else {
		b.say("link " + label + ": " + p.Summary())
	}
	if err := b.saveLinkCheck(p); err != nil {
		return "", err
	}
	return p.Refused, nil
}

// saveLinkCheck records p in place of the link's earlier check (a matrix run's
// run.json).
func (b *LinkBed) saveLinkCheck(p results.LinkCheck) error {
	var kept []results.LinkCheck
	for _, x := range *b.checks {
		if x.Link != p.Link {
			kept = append(kept, x)
		}
	}
	*b.checks = append(kept, p)
	if b.save == nil {
		return nil
	}
	return b.save()
}
