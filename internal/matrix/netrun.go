package matrix

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/runner"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// The link probe: small, bounded, made of rpcbed's own programs.
const (
	probeRTTCalls   = 300
	probeBulkItems  = 5000
	probeBulkConc   = 4
	probeBulkWindow = 2 * time.Second
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
	pl, err := place(ctx, s, e.o.Runner, e.o.Programs, e.prog.note)
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
			if err := r.WaitFrom(ctx, e.hosts.probeImage(host, e.o.Programs), 60*time.Second, dial...); err != nil {
				return fmt.Errorf("host %s: %w", host, err)
			}
		}
		return nil
	}
}

// enterLink sets up the link a group of cells runs over, when it is not the one
// set up: shapes it and probes it. Without a link dimension it does nothing.
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
	e.prog.note("link " + label + ": setting up")
	e.linkSet = true
	if err := applyLink(ctx, &e.run.Spec, l); err != nil {
		return err
	}
	e.link = l
	p := e.probeLink(ctx, l)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if p.Error != "" {
		e.prog.note("link " + label + ": probe: " + p.Error)
	} else {
		e.prog.note(fmt.Sprintf("link %s: RTT %.0f µs, throughput %.1f Mbit/s", label, p.RTTUs, p.ThroughputBps/1e6))
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

// probeLink measures l's round trip and throughput between the first client's
// host and the first server's host: a go-server of its own there, go-client
// from the client's side.
func (e *executor) probeLink(ctx context.Context, l plan.Link) results.LinkProbe {
	s := &e.run.Spec
	p := results.LinkProbe{Link: l.Label(), Loopback: l.Loopback, At: time.Now().UTC(),
		Probe: fmt.Sprintf("go-client over HTTP to a go-server of its own: RTT = p50 of %d datatype calls at c=1; throughput = datalist-%d at c=%d for %v, bytes/s x 8", probeRTTCalls, probeBulkItems, probeBulkConc, probeBulkWindow)}
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
		return from.WaitFrom(ctx, e.hosts.probeImage(p.From, e.o.Programs), 60*time.Second, addrs...)
	}
	srv, err := StartServerProc(ctx, e.hosts.runners[p.To], "go-server", cfg)
	if err != nil {
		p.Error = "probe server: " + runner.OneLine(err.Error())
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
	if r, err := run("linkprobe-rtt", "-proto", "http", "-call", "datatype", "-c", "1", "-n", fmt.Sprint(probeRTTCalls), "-k", "-addr", addr); err != nil {
		errs = append(errs, "rtt: "+runner.OneLine(err.Error()))
	} else if r.Rpcbed != nil {
		p.RTTUs = float64(r.Rpcbed.P50Us)
	}
	if r, err := run("linkprobe-bulk", "-proto", "http", "-call", "datalist", "-items", fmt.Sprint(probeBulkItems),
		"-c", fmt.Sprint(probeBulkConc), "-t", Seconds(probeBulkWindow), "-k", "-addr", addr); err != nil {
		errs = append(errs, "throughput: "+runner.OneLine(err.Error()))
	} else {
		p.ThroughputBps = r.RequestsPerSecond * float64(r.DocumentLength) * 8
	}
	p.Error = strings.Join(errs, "; ")
	return p
}
