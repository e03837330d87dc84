package swarm

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/cluster"
	"github.com/rpcbed/rpcbed/internal/netbed"
)

// TestGangOf: a pool with too few usable nodes is refused before anything is
// created, naming the pool, what it has and why the others do not count.
func TestGangOf(t *testing.T) {
	nodes := []cluster.Node{
		{ID: "s1", Addr: "198.18.0.1", Pool: "server", State: "ready", Availability: "active"},
		{ID: "c1", Addr: "198.18.0.2", Pool: "clients", State: "ready", Availability: "active"},
		{ID: "c2", Addr: "198.18.0.3", Pool: "clients", State: "down", Availability: "active"},
		{ID: "c3", Addr: "198.18.0.4", Pool: "clients", State: "ready", Availability: "drain"},
		{ID: "c4", Addr: "198.18.0.5", Pool: "clients", State: "ready", Availability: "active"},
	}
	for _, tc := range []struct {
		name    string
		want    map[string]int
		exclude map[string]string
		err     []string // substrings; nil = no error
		clients int
	}{
		{"enough", map[string]int{"server": 1, "clients": 2}, nil, nil, 2},
		{"short", map[string]int{"server": 1, "clients": 3}, nil,
			[]string{"pool clients has 2 usable node(s), needs 3", "node c2 (198.18.0.3, pool clients) down/active", "node c3 (198.18.0.4, pool clients) ready/drain"}, 2},
		{"lost", map[string]int{"server": 1, "clients": 2}, map[string]string{"c4": "its task's connection ended in r1"},
			[]string{"pool clients has 1 usable node(s), needs 2", "node c4 (198.18.0.5, pool clients) lost: its task's connection ended in r1"}, 1},
		{"no pool", map[string]int{"server": 2, "clients": 1}, nil, []string{"pool server has 1 usable node(s), needs 2"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			by, err := GangOf(nodes, tc.want, tc.exclude)
			if tc.err == nil && err != nil {
				t.Fatalf("got %v; want no error", err)
			}
			if tc.err != nil {
				if !errors.Is(err, ErrShortPool) {
					t.Fatalf("got %v; want ErrShortPool", err)
				}
				for _, s := range tc.err {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q; want it to say %q", err, s)
					}
				}
			}
			if got := len(by["clients"]); got != tc.clients {
				t.Errorf("usable clients: got %d; want %d", got, tc.clients)
			}
		})
	}
}

// bed is a three-host netbed of this test's own (server + 2 client hosts) with
// rpcbed/go loaded on every engine, torn down with nothing left.
func bed(t *testing.T, name string, net int) *netbed.Bed {
	t.Helper()
	if why := netbed.Available(); why != "" {
		for _, f := range strings.Split(os.Getenv("RPCBED_REQUIRE"), ",") {
			if f == "netbed" || f == "swarm" {
				t.Fatalf("no netbed here: %s (RPCBED_REQUIRE)", why)
			}
		}
		t.Skip("no netbed here: " + why)
	}
	if err := exec.Command("docker", "image", "inspect", "rpcbed/go:latest").Run(); err != nil {
		t.Skip("rpcbed/go is not built (make images)")
	}
	root, _ := filepath.Abs("../..")
	b := &netbed.Bed{Root: root, Name: name, Net: net, Clients: 2, Purge: true}
	t.Cleanup(func() {
		if err := b.Down(); err != nil {
			t.Error(err)
		}
		if left, err := b.Leftovers(); err != nil || left != "" {
			t.Errorf("left behind: %q (%v)", left, err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := b.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Load(ctx, "rpcbed/go:latest"); err != nil {
		t.Fatal(err)
	}
	return b
}

func members(b *netbed.Bed) []cluster.Member {
	ms := []cluster.Member{{Engine: b.Env["NETBED_SERVER_ENGINE"], Address: b.Env["NETBED_SERVER_ADDR"], Pool: "server"}}
	for _, h := range b.ClientHosts() {
		ms = append(ms, cluster.Member{Engine: h.Engine, Address: h.Addr, Pool: "clients"})
	}
	return ms
}

// TestSwarm forms a 3-node swarm over netbed's engines and checks, on the real
// engine: the pools' labels and the gang check; that a replicated job's finished
// and failed tasks are never restarted (moby/moby#42741); the ready barrier (both
// tasks connect, answer clock pings, run their program on the connection, stderr
// on the second one); and that Close leaves no swarm state on any engine.
func TestSwarm(t *testing.T) {
	// A name and subnet of this process's own: other checkouts' tests may run a
	// netbed on this machine at the same time.
	pid := os.Getpid()
	b := bed(t, fmt.Sprintf("rbsw%d", pid%100000), 150+pid%50)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ms := members(b)
	c, err := Form(ctx, ms, fmt.Sprintf("198.19.%d.128/25", 150+pid%50))
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			c.Close()
		}
	})
	by, err := c.Gang(ctx, map[string]int{"server": 1, "clients": 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := by["server"][0].Addr; got != ms[0].Address {
		t.Errorf("server node address: got %s; want %s", got, ms[0].Address)
	}
	if _, err := c.Gang(ctx, map[string]int{"server": 1, "clients": 3}, nil); !errors.Is(err, ErrShortPool) || !strings.Contains(err.Error(), "pool clients") {
		t.Errorf("gang for 3 clients on 2: got %v; want a short pool clients", err)
	}

	// A task that finished and one that failed, and then long enough for a restart
	// policy to have acted (its default delay is 5 s). As a replicated service with
	// --restart-condition none (what rpcbed uses) neither is ever restarted; as a
	// replicated job, Debian's 20.10.24 replaced the failed task on some runs even
	// with --restart-condition none (moby/moby#42741): logged, not asserted.
	for _, job := range []bool{false, true} {
		name := "replicated service"
		if job {
			name = "replicated job"
		}
		t.Run(name, func(t *testing.T) {
			first := by["clients"][0].ID
			id, err := c.Create(ctx, Service{Name: "once", Image: "rpcbed/go:latest", Entrypoint: "/bin/bash",
				Args: []string{"-c", `sleep 0.5; [ "$RPCBED_NODE" = "$1" ] && exit 0; exit 3`, "once", first},
				Env:  []string{"RPCBED_NODE={{.Node.ID}}"}, Pool: "clients", Replicas: 2, Job: job})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Remove(id)
			wctx, wcancel := context.WithTimeout(ctx, time.Minute)
			defer wcancel()
			if _, err := c.WaitTasks(wctx, id, 2); err != nil {
				t.Fatal(err)
			}
			time.Sleep(8 * time.Second)
			ts, err := c.Tasks(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			states := map[string]int{}
			for _, tk := range ts {
				states[tk.State]++
			}
			if job {
				t.Logf("replicated job with --restart-condition none: %d tasks %v (2 = none restarted)", len(ts), states)
				return
			}
			if len(ts) != 2 {
				t.Fatalf("got %d tasks; want 2 (a finished or failed task was restarted): %+v", len(ts), ts)
			}
			if states["complete"] != 1 || states["failed"] != 1 {
				t.Errorf("task states %v; want one complete, one failed", states)
			}
			for _, tk := range ts {
				if tk.State == "failed" && tk.ExitCode != 3 {
					t.Errorf("failed task exit code %d; want 3", tk.ExitCode)
				}
			}
		})
	}

	t.Run("ready barrier", func(t *testing.T) {
		bar, err := Listen(b.Env["NETBED_DRIVER_ADDR"] + ":0")
		if err != nil {
			t.Fatal(err)
		}
		defer bar.Close()
		token := "t" + newID()
		forget := bar.Expect(token, 2)
		defer forget()
		id, err := c.Create(ctx, Service{Name: "barrier", Image: "rpcbed/go:latest", Entrypoint: "/bin/bash",
			Args: []string{"-c", TaskScript, "rpcbed-task", "/bin/bash", "-c", `read -r l; echo "got $l"; echo "to stderr" >&2`},
			Env:  TaskEnv(bar.Addr(), token), Pool: "clients", Replicas: 2})
		if err != nil {
			t.Fatal(err)
		}
		actx, acancel := context.WithTimeout(ctx, time.Minute)
		defer acancel()
		tcs, err := bar.Await(actx, token, 2)
		if err != nil {
			t.Fatalf("%d of 2 tasks connected: %v", len(tcs), err)
		}
		nodes := map[string]bool{}
		for _, tc := range tcs {
			nodes[tc.Node] = true
			clk, err := tc.Sync(5)
			if err != nil {
				t.Fatal(err)
			}
			// One machine, one clock: the offset is within the ping's round trip.
			if clk.Pings != 5 || clk.RTTS <= 0 || clk.RTTS > 0.5 || abs(clk.OffsetS) > clk.RTTS+0.005 {
				t.Errorf("clock %+v: want 5 pings and |offset| within the round trip", clk)
			}
			if err := tc.Start(); err != nil {
				t.Fatal(err)
			}
			io.WriteString(tc.Stdin(), "hello\n")
			br := bufio.NewReader(tc.Stdout())
			line, err := br.ReadString('\n')
			if err != nil || line != "got hello\n" {
				t.Errorf("task answered %q (%v); want %q", line, err, "got hello\n")
			}
			go io.Copy(io.Discard, br)
			tc.Stop(ctx)
			if !strings.Contains(string(tc.Stderr()), "to stderr") {
				t.Errorf("stderr over the second connection: %q", tc.Stderr())
			}
		}
		if len(nodes) != 2 {
			t.Errorf("tasks ran on %d nodes; want 2 (one per node)", len(nodes))
		}
		ts, err := c.WaitTasks(actx, id, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range ts {
			if tk.State != "complete" {
				t.Errorf("task %s: %s %s; want complete", tk.ID, tk.State, tk.Err)
			}
		}
		out, _, err := c.Logs(ctx, id)
		if err != nil || !strings.Contains(string(out), "") {
			t.Errorf("logs: %v", err)
		}
	})

	// A drained node: swarm stops its task (SIGTERM, then SIGKILL after the grace
	// period), so the task's connection to the barrier ends — what the matrix
	// takes for a lost node — and the gang check no longer counts the node.
	t.Run("drained node", func(t *testing.T) {
		bar, err := Listen(b.Env["NETBED_DRIVER_ADDR"] + ":0")
		if err != nil {
			t.Fatal(err)
		}
		defer bar.Close()
		token := "d" + newID()
		forget := bar.Expect(token, 1)
		defer forget()
		victim := by["clients"][1]
		id, err := c.Create(ctx, Service{Name: "drained", Image: "rpcbed/go:latest", Entrypoint: "/bin/bash",
			Args: []string{"-c", TaskScript, "rpcbed-task", "/bin/bash", "-c", "sleep 120"},
			Env:  TaskEnv(bar.Addr(), token), Node: victim.ID, Replicas: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Remove(id)
		actx, acancel := context.WithTimeout(ctx, time.Minute)
		defer acancel()
		tcs, err := bar.Await(actx, token, 1)
		if err != nil {
			t.Fatal(err)
		}
		tc := tcs[0]
		if err := tc.Start(); err != nil {
			t.Fatal(err)
		}
		go io.Copy(io.Discard, tc.Stdout())
		if _, err := docker(ctx, c.Manager, "node", "update", "--availability", "drain", victim.ID); err != nil {
			t.Fatal(err)
		}
		defer docker(context.Background(), c.Manager, "node", "update", "--availability", "active", victim.ID)
		select {
		case <-tc.Done():
		case <-time.After(40 * time.Second):
			t.Fatal("the drained node's task still holds its connection after 40 s")
		}
		_, err = c.Gang(ctx, map[string]int{"clients": 2}, nil)
		if !errors.Is(err, ErrShortPool) || !strings.Contains(err.Error(), victim.Addr) || !strings.Contains(err.Error(), "drain") {
			t.Errorf("gang with a drained node: got %v; want a short pool naming %s drained", err, victim.Addr)
		}
	})

	t.Run("attach to an existing swarm", func(t *testing.T) {
		a, err := Attach(ctx, c.Manager)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Attach(ctx, ms[1].Engine); err == nil {
			t.Error("attach to a worker: got no error; want not a manager")
		}
		if _, err := a.Create(ctx, Service{Name: "attached", Image: "rpcbed/go:latest", Entrypoint: "/bin/bash",
			Args: []string{"-c", "sleep 30"}, Pool: "server"}); err != nil {
			t.Fatal(err)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		// Only what it created is gone: the swarm and its nodes stay.
		if left, err := a.Services(ctx); err != nil || len(left) != 0 {
			t.Errorf("after Close: services %v (%v); want none of its own", left, err)
		}
		for _, m := range ms {
			if st, err := LocalState(ctx, m.Engine); err != nil || st != "active" {
				t.Errorf("engine %s after an attached Close: state %q (%v); want active (it formed nothing)", m.Engine, st, err)
			}
		}
	})

	closed = true
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if st, err := LocalState(ctx, m.Engine); err != nil || st != "inactive" {
			t.Errorf("engine %s: swarm state %q (%v); want inactive", m.Engine, st, err)
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
