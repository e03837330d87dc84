package main

import (
	"bytes"
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/netbed"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// TestMatrixNet is `make matrix-net`: matrix-net.yaml through docker/netbed.sh —
// go-server in the "server" namespace, go, php and java clients in "clients",
// grpc, thrift and http over the veth between them, unshaped and shaped. It
// asserts that every cell completed and that the answers really crossed the veth
// (the clients' end received at least every measured answer's bytes), and that
// nothing of the bed is left afterwards. It prints each shaped HTTP
// datalist-5000 cell's calls/s against rate / response size; it never fails on
// that figure (a timing).
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
	spec, err := plan.ReadSpec(filepath.Join(root, "matrix-net.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// SIGINT/SIGTERM end the run through ctx, so the cleanups below still run.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 12*time.Minute)
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
			t.Fatalf("matrix-net.yaml: hosts.%s.engine %s; the netbed's is %s", h.host, got, want)
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
	code := run(ctx, []string{"matrix", "-spec", filepath.Join(root, "matrix-net.yaml"), "-out", dir, "-runner", "docker", "-root", root},
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
			if rep.Report != nil {
				answered += rep.Report.Complete * rep.Report.DocumentLength
			}
		}
	}
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
	for _, p := range r.Links {
		t.Logf("link %s: RTT %.0f µs, throughput %.1f Mbit/s %s", p.Link, p.RTTUs, p.ThroughputBps/1e6, p.Error)
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
