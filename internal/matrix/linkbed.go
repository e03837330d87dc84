package matrix

import (
	"context"
	"fmt"
	"time"

	"github.com/rpcbed/rpcbed/internal/linkshape"
	"github.com/rpcbed/rpcbed/internal/measure"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/runner"
)

// LinkBed is a spec's hosts (one engine each) and the link between them, made
// and checked the one way (linkcheck.go): a matrix run's cells run on it, and so
// does a reproduction with its network back (internal/reproduce). The zero value
// is a run on one engine.
type LinkBed struct {
	spec     *plan.Spec
	programs measure.Programs
	note     func(string)
	// checks is where each link's check goes (a matrix run's Links); save, when
	// set, writes it.
	checks *[]results.LinkCheck
	save   func() error
	// hosts is the hosts' engines (nil: one engine); link the link the current
	// runs cross.
	hosts *hostEngines
	link  plan.Link
	// linkSet says a link has been set up (shaped and checked) in this process;
	// linkRefused why its runs may not be presented ("" they may); shaper applies it.
	linkSet     bool
	linkRefused string
	shaper      *linkshape.Shaper
	// baseRTTUs is the path's own round trip, unshaped (0: not measured);
	// linkCounts the link's counters when its runs began.
	baseRTTUs  float64
	linkCounts []linkshape.Counts
}

// OpenLinkBed connects to spec's hosts, copies the images each needs from src's
// engine, and refuses links no host can make. Enter a link before running on
// it; close takes any shaping off (checking the link once more) and closes the
// engines, on every exit path.
func OpenLinkBed(ctx context.Context, spec *plan.Spec, src runner.Runner, p measure.Programs, note func(string)) (*LinkBed, func(), error) {
	b := &LinkBed{checks: &[]results.LinkCheck{}}
	stop, err := b.open(ctx, spec, src, p, note)
	if err != nil {
		return nil, nil, err
	}
	return b, stop, nil
}

// open connects b to spec's hosts (see OpenLinkBed).
func (b *LinkBed) open(ctx context.Context, spec *plan.Spec, src runner.Runner, p measure.Programs, note func(string)) (stop func(), err error) {
	b.spec, b.programs, b.note = spec, p, note
	pl, err := connectHosts(ctx, spec, src, p, note)
	if err != nil {
		return nil, err
	}
	b.shaper = newShaper(spec)
	if err := b.shaper.Check(ctx, spec.LinkList()); err != nil {
		pl.close()
		return nil, err
	}
	b.hosts = pl
	return func() {
		if b.linkSet {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			b.leaveLink(ctx)
			cancel()
		}
		b.shaper.Clear()
		pl.close()
	}, nil
}

// Enter sets up the link labelled label (spec.Links) and checks it; a non-empty
// reason says why runs over it may not be presented.
func (b *LinkBed) Enter(ctx context.Context, label string) (refused string, err error) {
	return b.enterLink(ctx, label)
}

// Leave checks the current link again and takes its shaping off.
func (b *LinkBed) Leave(ctx context.Context) {
	if b.linkSet {
		b.leaveLink(ctx)
	}
}

// Runner is the engine of the host that runs role (spec.HostOf), under the
// current link; nil for a role no host has.
func (b *LinkBed) Runner(role string) runner.Runner {
	if r := b.hosts.runnerFor(role, plan.LanguageOf(role), b.link); r != nil {
		return r
	}
	return nil
}

// PlaceServer points a server of role at its host, as every server on hosts
// is: listening on every interface, handing out the host's address, and ready
// only once each host that runs one of clients reaches it (on a loopback link,
// the server's own host at 127.0.0.1).
func (b *LinkBed) PlaceServer(cfg *measure.ServerProcConfig, role string, clients ...string) {
	srvHost := b.spec.HostOf(role)
	cfg.Address = b.spec.Hosts[srvHost].Address
	server := plan.LanguageOf(role)
	cfg.ReadyFrom = func(ctx context.Context, addrs []string) error {
		seen := map[*runner.Docker]bool{}
		for _, c := range clients {
			r := b.hosts.runnerFor(c, server, b.link)
			if r == nil || seen[r] {
				continue
			}
			seen[r] = true
			host := b.spec.HostOf(c)
			dial := addrs
			if b.link.Loopback {
				host = srvHost
				dial = nil
				for _, a := range addrs {
					dial = append(dial, addrFor(a, b.link))
				}
			}
			if err := r.WaitFrom(ctx, b.hosts.checkImage(host, b.programs), 60*time.Second, dial...); err != nil {
				return fmt.Errorf("host %s: %w", host, err)
			}
		}
		return nil
	}
}

// Address is the address of the host that runs role.
func (b *LinkBed) Address(role string) string {
	_, a := b.Where(role)
	return a
}

// Where is the host that runs role and its address.
func (b *LinkBed) Where(role string) (host, address string) {
	host = b.spec.HostOf(role)
	return host, b.spec.Hosts[host].Address
}

// Checks are the links' checks so far, the latest of each.
func (b *LinkBed) Checks() []results.LinkCheck { return *b.checks }

// Watch gives a run path the current link's physics and its delayers' CPU.
func (b *LinkBed) Watch(rp *measure.RunPath) { b.linkWatch(rp) }

// say notes s on the run's progress, when it has one.
func (b *LinkBed) say(s string) {
	if b.note != nil {
		b.note(s)
	}
}
