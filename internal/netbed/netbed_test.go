package netbed

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func root(t *testing.T) string {
	r, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// need skips without what a netbed needs, unless RPCBED_REQUIRE names netbed.
func need(t *testing.T) {
	t.Helper()
	why := Available()
	if why == "" {
		return
	}
	for _, f := range strings.FieldsFunc(os.Getenv("RPCBED_REQUIRE"), func(r rune) bool { return r == ',' || r == ' ' }) {
		if f == "netbed" {
			t.Fatalf("no netbed here: %s (RPCBED_REQUIRE insists on netbed)", why)
		}
	}
	t.Skip("no netbed here: " + why)
}

// bed is a netbed of this test's own (name and subnet apart from make matrix-net's).
func bed(t *testing.T, name string, net int) *Bed {
	b := &Bed{Root: root(t), Name: name, Net: net, Purge: true}
	t.Cleanup(func() {
		if err := b.Down(); err != nil {
			t.Error(err)
		}
		assertNothingLeft(t, b)
	})
	return b
}

func assertNothingLeft(t *testing.T, b *Bed) {
	t.Helper()
	left, err := b.Leftovers()
	if err != nil {
		t.Errorf("leftovers: %v", err)
	}
	if left != "" {
		t.Errorf("left behind: %s", left)
	}
	if _, err := os.Stat("/var/run/netns/" + b.Name + "-server"); err == nil {
		t.Errorf("namespace %s-server is still there", b.Name)
	}
	if _, err := os.Stat("/run/rpcbed-netbed/" + b.Name); err == nil {
		t.Errorf("/run/rpcbed-netbed/%s is still there", b.Name)
	}
}

// TestUpDown: up gives two engines that answer and a data link whose ends see
// each other; down leaves nothing.
func TestUpDown(t *testing.T) {
	need(t)
	b := bed(t, "rbt-ud", 201)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := b.Up(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ key, want string }{
		{"NETBED_SERVER_ADDR", "198.18.201.1"},
		{"NETBED_CLIENTS_ADDR", "198.18.201.2"},
		{"NETBED_SERVER_ENGINE", "unix:///run/rpcbed-netbed/rbt-ud/server/docker.sock"},
	} {
		if got := b.Env[tc.key]; got != tc.want {
			t.Errorf("%s: got %q; want %q", tc.key, got, tc.want)
		}
	}
	if out, err := b.cmd(ctx, "status").CombinedOutput(); err != nil {
		t.Errorf("status: %v: %s", err, out)
	}
	if _, err := ReadCounters(b.Env["NETBED_CLIENTS_NETNS"], b.Env["NETBED_CLIENTS_DEV"]); err != nil {
		t.Error(err)
	}
	if err := b.Down(); err != nil {
		t.Fatal(err)
	}
	assertNothingLeft(t, b)
}

// TestFailedUpLeavesNothing: an up whose engines never answer (no time to) takes
// down what it made before it fails.
func TestFailedUpLeavesNothing(t *testing.T) {
	need(t)
	b := bed(t, "rbt-fail", 202)
	b.Extra = []string{"RPCBED_NETBED_WAIT=0"}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := b.Up(ctx); err == nil {
		t.Fatal("up with no time to wait for the engines: got no error")
	}
	assertNothingLeft(t, b)
}

// TestInterruptedUpLeavesNothing: SIGINT while up waits for the engines removes
// what it made.
func TestInterruptedUpLeavesNothing(t *testing.T) {
	need(t)
	b := bed(t, "rbt-int", 203)
	c := b.cmd(context.Background(), "up")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	// Until the namespaces exist: up is then past its checks and making things.
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat("/var/run/netns/rbt-int-clients"); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.Process.Signal(syscall.SIGINT)
	if err := c.Wait(); err == nil {
		t.Log("up finished before the signal reached it; down still runs")
	} else {
		// The trap alone, before any down of ours.
		assertNothingLeft(t, b)
	}
	if err := b.Down(); err != nil {
		t.Fatal(err)
	}
	assertNothingLeft(t, b)
}
