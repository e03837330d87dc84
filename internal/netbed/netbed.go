// Package netbed drives docker/netbed.sh from Go: two network namespaces joined
// by a veth pair, a Docker engine in each (docker/netbed.sh describes the layout).
// The matrix-net test and the leftover tests use it; rpcbed itself only sees the
// endpoints, through a spec's hosts.
package netbed

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Bed is one netbed: its name and subnet, and the endpoints `up` printed.
type Bed struct {
	Root string // the checkout (docker/netbed.sh under it)
	Name string // RPCBED_NETBED: namespaces NAME-server, NAME-clients
	Net  int    // RPCBED_NETBED_NET: 198.18.NET.0/24
	// Clients is RPCBED_NETBED_CLIENTS: the client hosts (0 or 1: one, NAME-clients
	// joined by a veth; K >= 2: NAME-c1..NAME-cK on a bridge in the server namespace).
	Clients int
	// Env is what `up` printed: NETBED_SERVER_ENGINE, NETBED_SERVER_ADDR, ...
	Env map[string]string
	// Extra is added to the script's environment (e.g. RPCBED_NETBED_WAIT).
	Extra []string
	// Purge: Down removes the data-roots too (a test's bed; make matrix-net keeps
	// its own, with the images it loaded).
	Purge bool
}

// Available says why a netbed cannot be made here ("" when it can): root, ip,
// nsenter, tc and dockerd are needed.
func Available() string {
	if os.Geteuid() != 0 {
		return "not root"
	}
	for _, c := range []string{"ip", "nsenter", "tc", "dockerd", "docker"} {
		if _, err := exec.LookPath(c); err != nil {
			return c + " is not installed"
		}
	}
	if _, err := os.Stat("/run/containerd/containerd.sock"); err == nil {
		return "a system containerd runs: the engines would share it"
	}
	return ""
}

func (b *Bed) cmd(ctx context.Context, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, filepath.Join(b.Root, "docker", "netbed.sh"), args...)
	c.Env = append(os.Environ(), fmt.Sprintf("RPCBED_NETBED=%s", b.Name), fmt.Sprintf("RPCBED_NETBED_NET=%d", b.Net))
	if b.Clients > 1 {
		c.Env = append(c.Env, fmt.Sprintf("RPCBED_NETBED_CLIENTS=%d", b.Clients))
	}
	c.Env = append(c.Env, b.Extra...)
	// The script traps INT/TERM itself: a cancelled ctx sends TERM, not KILL, so
	// its trap removes what it made.
	c.Cancel = func() error { return c.Process.Signal(os.Interrupt) }
	c.WaitDelay = 60 * time.Second
	return c
}

// Up makes the bed and reads its endpoints.
func (b *Bed) Up(ctx context.Context) error {
	var out, errb bytes.Buffer
	c := b.cmd(ctx, "up")
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		return fmt.Errorf("netbed up: %w: %s", err, strings.TrimSpace(errb.String()))
	}
	b.Env = map[string]string{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			b.Env[k] = v
		}
	}
	if b.Env["NETBED_SERVER_ENGINE"] == "" {
		return fmt.Errorf("netbed up printed no endpoints: %q", out.String())
	}
	return nil
}

// ClientHost is client host k (1-based) of a bed with Clients >= 2: its engine,
// address, namespace and data device.
type ClientHost struct{ Engine, Addr, NetNS, Dev string }

// ClientHosts lists a multi-client bed's client hosts, from Up's endpoints.
func (b *Bed) ClientHosts() []ClientHost {
	var hs []ClientHost
	for k := 1; ; k++ {
		p := fmt.Sprintf("NETBED_CLIENT%d_", k)
		if b.Env[p+"ENGINE"] == "" {
			return hs
		}
		hs = append(hs, ClientHost{Engine: b.Env[p+"ENGINE"], Addr: b.Env[p+"ADDR"], NetNS: b.Env[p+"NETNS"], Dev: b.Env[p+"DEV"]})
	}
}

// Load copies images from the host's engine to every engine of the bed
// (docker/netbed.sh load: skipped where the image id already matches).
func (b *Bed) Load(ctx context.Context, images ...string) error {
	out, err := b.cmd(ctx, append([]string{"load"}, images...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("netbed load: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Down removes the bed (bounded, whatever ctx says: it runs on every exit path).
func (b *Bed) Down() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"down"}
	if b.Purge {
		args = append(args, "-purge")
	}
	out, err := b.cmd(ctx, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("netbed down: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Leftovers lists what of the bed still exists ("" = nothing): namespaces,
// links, daemons.
func (b *Bed) Leftovers() (string, error) {
	out, err := b.cmd(context.Background(), "leftovers").Output()
	return strings.TrimSpace(string(out)), err
}

// Counters are an interface's byte counters.
type Counters struct{ RX, TX uint64 }

// ReadCounters reads dev's byte counters inside network namespace ns.
func ReadCounters(ns, dev string) (Counters, error) {
	out, err := exec.Command("ip", "-n", ns, "-j", "-s", "link", "show", "dev", dev).Output()
	if err != nil {
		return Counters{}, fmt.Errorf("ip -n %s link show %s: %w", ns, dev, err)
	}
	var links []struct {
		Stats64 struct {
			RX struct{ Bytes uint64 } `json:"rx"`
			TX struct{ Bytes uint64 } `json:"tx"`
		} `json:"stats64"`
	}
	if err := json.Unmarshal(out, &links); err != nil || len(links) != 1 {
		return Counters{}, fmt.Errorf("ip -j link show %s: %v (%q)", dev, err, out)
	}
	return Counters{RX: links[0].Stats64.RX.Bytes, TX: links[0].Stats64.TX.Bytes}, nil
}
