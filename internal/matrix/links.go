package matrix

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/report"
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
func imagesFor(s *plan.Spec, host string, p Programs) []string {
	want := map[string]bool{}
	roles := slices.Clone(s.Hosts[host].Roles)
	if slices.ContainsFunc(s.LinkList(), func(l plan.Link) bool { return l.Loopback }) &&
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
	if len(s.LinkList()) > 0 {
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

// connectHosts connects to every host's engine and copies the images each needs from
// the driver's engine (src).
func connectHosts(ctx context.Context, s *plan.Spec, src runner.Runner, p Programs, note func(string)) (*hostEngines, error) {
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
func (pl *hostEngines) checkImage(host string, p Programs) string {
	ims := imagesFor(pl.spec, host, p)
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
func tbfBurst(r plan.Rate) int64 { return max(64<<10, int64(r)/8/250) }

// applyLink shapes every host's side of the link as l asks, or removes any
// shaping for an unshaped or loopback link. A request tc refuses is an error:
// shaping is never silently dropped.
func applyLink(ctx context.Context, s *plan.Spec, l plan.Link) error {
	for _, name := range slices.Sorted(maps.Keys(s.Hosts)) {
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
func clearLinks(s *plan.Spec) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	applyLink(ctx, s, plan.Link{})
}

// checkNetem refuses, before any cell runs, a link that needs netem on a kernel
// without sch_netem: it tries a netem qdisc on each shaped host's device.
func checkNetem(ctx context.Context, s *plan.Spec) error {
	for _, l := range s.LinkList() {
		if !l.NeedsNetem() {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(s.Hosts)) {
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

// ---- a multi-host run: hosts, links and their checks -----------------------------

// The link check: small, bounded, made of rpcbed's own programs.
const (
	linkRTTCalls   = 300
	linkBulkItems  = 5000
	linkBulkConc   = 4
	linkBulkWindow = 2 * time.Second
)

// serverRole is the host role of a server key (go-server, java-grpc ...).
func serverRole(key string) string {
	if key == "go-server" {
		return "go-server"
	}
	return "java-server"
}

// setUpHosts connects to every host's engine, copies the images there, and
// refuses links the kernel cannot shape (netem) before any cell runs. stop
// removes the shaping and closes the engines.
func (e *executor) setUpHosts(ctx context.Context) (stop func(), err error) {
	s := &e.run.Spec
	pl, err := connectHosts(ctx, s, e.o.Runner, e.o.Programs, e.prog.Note)
	if err != nil {
		return nil, err
	}
	if err := checkNetem(ctx, s); err != nil {
		pl.close()
		return nil, err
	}
	e.hosts = pl
	return func() {
		if e.linkSet {
			clearLinks(s)
		}
		pl.close()
	}, nil
}

// hostServerConfig points a server at its host: listen on every interface, hand
// out the host's address, and be ready only once every client host reaches it.
func (e *executor) hostServerConfig(cfg *ServerProcConfig, key string) {
	s := &e.run.Spec
	srvHost := s.HostOf(serverRole(key))
	cfg.Address = s.Hosts[srvHost].Address
	server := "go"
	if key != "go-server" {
		server = "java"
	}
	cfg.ReadyFrom = func(ctx context.Context, addrs []string) error {
		seen := map[*runner.Docker]bool{}
		for _, c := range plan.Clients {
			if _, ok := s.Clients[c]; !ok {
				continue
			}
			r := e.hosts.runnerFor(c, server, e.link)
			if r == nil || seen[r] {
				continue
			}
			seen[r] = true
			host := s.HostOf(c)
			dial := addrs
			if e.link.Loopback {
				host = srvHost
				dial = nil
				for _, a := range addrs {
					dial = append(dial, addrFor(a, e.link))
				}
			}
			if err := r.WaitFrom(ctx, e.hosts.checkImage(host, e.o.Programs), 60*time.Second, dial...); err != nil {
				return fmt.Errorf("host %s: %w", host, err)
			}
		}
		return nil
	}
}

// enterLink sets up the link a group of cells runs over, when it is not the one
// set up: shapes it and checks it. Without a link dimension it does nothing.
func (e *executor) enterLink(ctx context.Context, label string) error {
	if e.hosts == nil || label == "" || (e.linkSet && e.link.Label() == label) {
		return nil
	}
	var l plan.Link
	for _, x := range e.run.Spec.LinkList() {
		if x.Label() == label {
			l = x
		}
	}
	e.prog.Note("link " + label + ": setting up")
	e.linkSet = true
	if err := applyLink(ctx, &e.run.Spec, l); err != nil {
		return err
	}
	e.link = l
	p := e.checkLink(ctx, l)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if p.Error != "" {
		e.prog.Note("link " + label + ": check: " + p.Error)
	} else {
		e.prog.Note(fmt.Sprintf("link %s: RTT %.0f µs, throughput %.1f Mbit/s", label, p.RTTUs, p.ThroughputBps/1e6))
	}
	kept := e.run.Links[:0]
	for _, x := range e.run.Links {
		if x.Link != label {
			kept = append(kept, x)
		}
	}
	e.run.Links = append(kept, p)
	return results.WriteJSON(filepath.Join(e.o.Dir, results.RunFile), e.run)
}

// checkLink measures l's round trip and throughput between the first client's
// host and the first server's host: a go-server of its own there, go-client
// from the client's side.
func (e *executor) checkLink(ctx context.Context, l plan.Link) results.LinkCheck {
	s := &e.run.Spec
	p := results.LinkCheck{Link: l.Label(), Loopback: l.Loopback, At: time.Now().UTC(),
		Method: fmt.Sprintf("go-client over HTTP to a go-server of its own: RTT = p50 of %d datatype calls at c=1; throughput = datalist-%d at c=%d for %v, bytes/s x 8", linkRTTCalls, linkBulkItems, linkBulkConc, linkBulkWindow)}
	if l.Rate > 0 {
		p.Rate = l.Rate.String()
	}
	plan := s.Plan()
	if len(plan) == 0 {
		p.Error = "no cell"
		return p
	}
	first := plan[0]
	p.To = s.HostOf(first.ServerLang + "-server")
	p.From = s.HostOf(first.Client)
	if l.Loopback {
		p.From = p.To
	}
	cfg := ServerProcConfig{Programs: e.o.Programs, Resources: s.ServerResources, Store: "memory", Auth: *s.Auth,
		Address: s.Hosts[p.To].Address}
	from := e.hosts.runners[p.From]
	cfg.ReadyFrom = func(ctx context.Context, addrs []string) error {
		if l.Loopback {
			for i := range addrs {
				addrs[i] = addrFor(addrs[i], l)
			}
		}
		return from.WaitFrom(ctx, e.hosts.checkImage(p.From, e.o.Programs), 60*time.Second, addrs...)
	}
	srv, err := StartServerProc(ctx, e.hosts.runners[p.To], "go-server", cfg)
	if err != nil {
		p.Error = "check server: " + runner.OneLine(err.Error())
		return p
	}
	defer srv.Svc.Stop(context.Background())
	addr := addrFor(srv.Addrs["http"], l)
	goImage := e.o.Programs.image("go")
	run := func(name string, args ...string) (report.Report, error) {
		res, err := from.Run(ctx, runner.Task{Name: name, Image: goImage, Args: append([]string{"go-client"}, args...), Timeout: 90 * time.Second})
		if err != nil {
			return report.Report{}, err
		}
		if res.ExitCode != 0 {
			return report.Report{}, fmt.Errorf("exit code %d: %s", res.ExitCode, runner.LastLine(res.Stderr))
		}
		return report.ParseClient(bytes.NewReader(res.Stdout))
	}
	var errs []string
	if r, err := run("linkcheck-rtt", "-proto", "http", "-call", "datatype", "-c", "1", "-n", fmt.Sprint(linkRTTCalls), "-k", "-addr", addr); err != nil {
		errs = append(errs, "rtt: "+runner.OneLine(err.Error()))
	} else if r.Rpcbed != nil {
		p.RTTUs = float64(r.Rpcbed.P50Us)
	}
	if r, err := run("linkcheck-bulk", "-proto", "http", "-call", "datalist", "-items", fmt.Sprint(linkBulkItems),
		"-c", fmt.Sprint(linkBulkConc), "-t", Seconds(linkBulkWindow), "-k", "-addr", addr); err != nil {
		errs = append(errs, "throughput: "+runner.OneLine(err.Error()))
	} else {
		p.ThroughputBps = r.RequestsPerSecond * float64(r.DocumentLength) * 8
	}
	p.Error = strings.Join(errs, "; ")
	return p
}
