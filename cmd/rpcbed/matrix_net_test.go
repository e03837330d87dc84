package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/netbed"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// TestMatrixNet is `make matrix-net`: matrix-net.yaml through docker/netbed.sh —
// go-server and the Java servers in the "server" namespace, go, php and java
// clients in "clients", grpc, thrift and http over the veth between them, on
// loopback, lan, region, lossy and 100mbit — and `make matrix-net-full`
// (RPCBED_NET_SPEC=matrix-net-full.yaml: wan too, three rounds). It asserts that every
// cell completed; that each delayed link's achieved round trip and loss are on
// the record and were within the run's own tolerance of the asked before its
// cells (10 % or 100 µs; a third of the loss), with the mechanism and the
// delayer's CPU (after the cells they are logged, with any drift); that no
// repeat broke the link's physics (link-invariant); that the answers of the
// cells over a link really crossed the veth (the clients' end received at least
// every measured answer's bytes); and that nothing of the bed is left
// afterwards. It prints each link's figures and each shaped HTTP datalist-5000
// cell's calls/s against rate / response size; it never fails on a timing.
//
// It runs only when RPCBED_MATRIX_NET=1 (make matrix-net sets it): two engines
// and a few minutes. RPCBED_NET_OUT keeps the run directory.
func TestMatrixNet(t *testing.T) {
	if os.Getenv("RPCBED_MATRIX_NET") != "1" {
		t.Skip("make matrix-net runs this (RPCBED_MATRIX_NET=1)")
	}
	if why := netbed.Available(); why != "" {
		t.Fatalf("no netbed here: %s", why)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	specFile := "matrix-net.yaml"
	if f := os.Getenv("RPCBED_NET_SPEC"); f != "" {
		specFile = f
	}
	spec, err := plan.ReadSpec(filepath.Join(root, specFile))
	if err != nil {
		t.Fatal(err)
	}
	// SIGINT/SIGTERM end the run through ctx, so the cleanups below still run.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The run ends 2 minutes before go test's -timeout would, so the bed still
	// comes down.
	limit := 12 * time.Minute
	if d, ok := t.Deadline(); ok {
		limit = time.Until(d) - 2*time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()

	b := &netbed.Bed{Root: root, Name: "rpcbed", Net: 0}
	t.Cleanup(func() {
		if err := b.Down(); err != nil {
			t.Error(err)
		}
		if left, err := b.Leftovers(); err != nil || left != "" {
			t.Errorf("left behind: %q (%v)", left, err)
		}
	})
	if err := b.Up(ctx); err != nil {
		t.Fatal(err)
	}
	for _, h := range []struct{ host, env string }{{"server", "NETBED_SERVER_ENGINE"}, {"clients", "NETBED_CLIENTS_ENGINE"}} {
		if got, want := spec.Hosts[h.host].Engine, b.Env[h.env]; got != want {
			t.Fatalf("%s: hosts.%s.engine %s; the netbed's is %s", specFile, h.host, got, want)
		}
	}
	ns, dev := b.Env["NETBED_CLIENTS_NETNS"], b.Env["NETBED_CLIENTS_DEV"]
	before, err := netbed.ReadCounters(ns, dev)
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("RPCBED_NET_OUT")
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "run")
	}
	var out bytes.Buffer
	code := run(ctx, []string{"matrix", "-spec", filepath.Join(root, specFile), "-out", dir, "-runner", "docker", "-root", root},
		stdio{nil, &out, os.Stderr})
	if code != 0 {
		t.Fatalf("rpcbed matrix: exit %d", code)
	}
	after, err := netbed.ReadCounters(ns, dev)
	if err != nil {
		t.Fatal(err)
	}
	r, err := results.LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	var answered int64
	clients := map[string]bool{}
	for _, c := range r.Cells {
		if c.Status != results.StatusOK {
			t.Errorf("%s: %s: %s", c.Name, c.Status, c.Error)
			continue
		}
		clients[c.Client] = true
		for _, rep := range c.Repeats {
			if rep.Has(results.FlagLinkInvariant) {
				t.Errorf("%s r%d: flagged %s: a figure beyond the link's physics", c.Name, rep.Index, results.FlagLinkInvariant)
			}
			if rep.Report != nil && c.Link != "loopback" { // loopback's answers never cross the veth
				answered += rep.Report.Complete * rep.Report.DocumentLength
			}
		}
	}
	checkLinks(t, r.Links)
	for _, c := range []string{"go", "php", "java"} {
		if !clients[c] {
			t.Errorf("no %s cell completed across the veth", c)
		}
	}
	rx := after.RX - before.RX
	t.Logf("%s received %d bytes over the run; the measured answers alone are %d bytes", dev, rx, answered)
	if answered == 0 || rx < uint64(answered) {
		t.Errorf("veth %s received %d bytes; want at least the %d bytes of the measured answers: the traffic did not cross the link", dev, rx, answered)
	}
	for _, c := range r.Cells {
		rate, err := plan.ParseRate(c.Link)
		if err != nil || c.Protocol != "http" || c.Items != 5000 || c.Status != results.StatusOK {
			continue
		}
		rps := c.Stat(results.RPS).Median
		size := float64(c.Repeats[0].Metrics.BytesPerResponse)
		want := float64(rate) / 8 / size
		t.Logf("%s: %.2f calls/s; rate / response size = %s / %.0f B = %.2f calls/s; ratio %.2f", c.Name, rps, c.Link, size, want, rps/want)
	}
}

// checkLinks: every delayed link was made, probed and kept: asked against
// achieved on the record, within the run's tolerance (10 % of the asked round
// trip or 100 µs, a third of the asked loss), before and after its cells, with
// the mechanism on each host and the delayer's CPU.
func checkLinks(t *testing.T, links []results.LinkCheck) {
	t.Helper()
	delayed := 0
	for _, p := range links {
		t.Logf("link %s: RTT %.0f µs (p99 %.0f), throughput %.1f Mbit/s; asked %.0f µs added, achieved %.0f then %.0f; loss asked %.2g %%, %.2f %% then %.2f %%; %v %s%s",
			p.Link, p.RTTUs, p.RTTP99Us, p.ThroughputBps/1e6, p.AskedRTTUs, p.AddedRTTUs, p.AfterAddedRTTUs, p.AskedLossPct, p.LossPct, p.AfterLossPct, p.Mechanism, p.Error, p.Refused+p.Drift)
		if p.AskedRTTUs == 0 && p.AskedLossPct == 0 {
			continue
		}
		delayed++
		if p.Refused != "" || len(p.Mechanism) == 0 {
			t.Errorf("link %s: refused %q, mechanism %v; want it made and kept", p.Link, p.Refused, p.Mechanism)
			continue
		}
		// The check before the cells is the run's gate; after them a drift is on
		// the record (Drift) and logged above, not a failure of the run.
		if tol := max(0.1*p.AskedRTTUs, 100); p.AskedRTTUs > 0 && math.Abs(p.AddedRTTUs-p.AskedRTTUs) > tol {
			t.Errorf("link %s: %.0f µs added against %.0f asked; want within %.0f µs", p.Link, p.AddedRTTUs, p.AskedRTTUs, tol)
		}
		if p.AskedLossPct > 0 && math.Abs(p.LossPct-p.AskedLossPct) > p.AskedLossPct/3 {
			t.Errorf("link %s: %.2f %% lost against %.2g %% asked; want within a third", p.Link, p.LossPct, p.AskedLossPct)
		}
		if slices.Contains(p.Mechanism, "clients: nfqueue") && (p.Delayer == nil || p.Delayer.CPUSeconds <= 0) {
			t.Errorf("link %s: made by the delayer, but no delayer CPU on the record: %+v", p.Link, p.Delayer)
		}
	}
	t.Logf("%d delayed links checked", delayed)
}
