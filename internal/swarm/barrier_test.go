package swarm

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// runTask runs TaskScript as a swarm task would, on this machine, with program
// as its program.
func runTask(t *testing.T, bar *Barrier, token, task string, program ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"-c", TaskScript, "rpcbed-task"}, program...)...)
	cmd.Env = append(os.Environ(), "RPCBED_BARRIER="+bar.Addr(), "RPCBED_TOKEN="+token, "RPCBED_TASK="+task, "RPCBED_NODE=node-"+task)
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// TestBarrierLocal: the task script against the barrier on 127.0.0.1 — the
// handshake, the clock pings, the program on the connection with its stderr on
// the second, a stranger's token refused, and a third task of a two-task job
// turned away.
func TestBarrierLocal(t *testing.T) {
	bar, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer bar.Close()
	forget := bar.Expect("tok", 2)
	defer forget()
	prog := []string{"/bin/bash", "-c", `read -r l; echo "got $l"; echo "to stderr" >&2`}
	runTask(t, bar, "other", "x", prog...) // not expected: refused
	a := runTask(t, bar, "tok", "a", prog...)
	runTask(t, bar, "tok", "b", prog...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tcs, err := bar.Await(ctx, "tok", 2)
	if err != nil {
		t.Fatalf("%d tasks: %v", len(tcs), err)
	}
	for _, tc := range tcs {
		if tc.Node != "node-"+tc.Task {
			t.Errorf("task %s: node %q", tc.Task, tc.Node)
		}
		clk, err := tc.Sync(5)
		if err != nil {
			t.Fatal(err)
		}
		if clk.Pings != 5 || abs(clk.OffsetS) > clk.RTTS+0.002 {
			t.Errorf("clock %+v: one machine, so |offset| <= round trip", clk)
		}
		if err := tc.Start(); err != nil {
			t.Fatal(err)
		}
		io.WriteString(tc.Stdin(), "hello\n")
		br := bufio.NewReader(tc.Stdout())
		line, err := br.ReadString('\n')
		if err != nil || line != "got hello\n" {
			t.Errorf("got %q (%v); want %q", line, err, "got hello\n")
		}
		go io.Copy(io.Discard, br) // to EOF: the task has ended
		tc.Stop(ctx)
		if got := string(tc.Stderr()); !strings.Contains(got, "to stderr") {
			t.Errorf("stderr: got %q; want it to hold %q", got, "to stderr")
		}
	}
	a.Wait()
	if a.ProcessState.ExitCode() != 0 {
		t.Errorf("task a exit code %d; want 0", a.ProcessState.ExitCode())
	}
}
