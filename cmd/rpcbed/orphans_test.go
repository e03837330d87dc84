package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/runner"
)

// killSpec runs one cell for a minute: long enough to be killed halfway.
const killSpec = `
clients: {go: [grpc]}
items: [2]
concurrency: [1]
load: {duration: 60s, warmup: 0s}
repeats: 1
client: {cpuset: ""}
server: {cpuset: ""}
`

// marked lists the processes whose environment names driver id (EnvDriver) and
// the watcher of that driver.
func marked(id string) []string {
	var found []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(b, []byte{0}) {
			if string(kv) == runner.EnvDriver+"="+id || string(kv) == "RPCBED_RUNNER_WATCHER="+id {
				cmd, _ := os.ReadFile(d + "/cmdline")
				found = append(found, filepath.Base(d)+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
			}
		}
	}
	return found
}

func driverID(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return fmt.Sprintf("%d:%s", pid, f[19])
}

func testScope() string {
	var b [4]byte
	rand.Read(b[:])
	return "test-" + hex.EncodeToString(b[:])
}

// built is a root with bin/rpcbed, bin/go-server and bin/go-client, built once
// for every test that needs them (without -race, whatever the tests are built
// with) and removed by TestMain.
var built struct {
	once sync.Once
	root string
	err  error
}

// buildRpcbed returns that root and its rpcbed.
func buildRpcbed(t *testing.T) (root, bin string) {
	t.Helper()
	built.once.Do(func() {
		if built.root, built.err = os.MkdirTemp("", "rpcbed-test-bin-"); built.err != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(built.root, "bin")+"/", "./go-server", "./go-client", "./cmd/rpcbed")
		cmd.Dir = "../.."
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.root, filepath.Join(built.root, "bin", "rpcbed")
}

// Before the reaper, a SIGKILLed rpcbed matrix left its go-server and its client worker
// running. 3 s after the kill none of its processes (nor its watcher) may be
// left, on the local runner; on the Docker runner none of its containers may
// still run.
func TestMatrixKilledLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs rpcbed, go-server and go-client")
	}
	root, bin := buildRpcbed(t)
	for _, runnerName := range []string{"local", "docker"} {
		t.Run(runnerName, func(t *testing.T) {
			var d *runner.Docker
			if runnerName == "docker" {
				d = dockerOrSkip(t)
			}
			sc := testScope()
			spec := filepath.Join(t.TempDir(), "kill.yaml")
			os.WriteFile(spec, []byte(killSpec), 0o644)
			cmd := exec.Command(bin, "matrix", "-spec", spec, "-out", filepath.Join(t.TempDir(), "run"), "-runner", runnerName, "-root", root, "-q")
			cmd.Env = append(os.Environ(), runner.EnvScope+"="+sc)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			go func() { cmd.Wait(); close(exited) }()
			defer func() {
				cmd.Process.Kill()
				<-exited
				if d != nil { // whatever the test did not see removed
					removeScope(d, sc)
				}
			}()
			id := driverID(t, cmd.Process.Pid)
			running := func() []string {
				if d == nil {
					return marked(id)
				}
				return scopeContainers(t, d, sc, true)
			}
			// The cell is running: its server and its client worker are up.
			up := func() bool {
				all := strings.Join(running(), "\n")
				return strings.Contains(all, "go-server") && (strings.Contains(all, "go-client") || strings.Contains(all, "worker-go"))
			}
			if !waitUntil(90*time.Second, up) {
				t.Fatalf("rpcbed matrix started %v; want a server and a client; stderr:\n%s", running(), errb.String())
			}
			before := running()
			killed := time.Now()
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Until(killed.Add(3 * time.Second)))
			if left := running(); len(left) > 0 {
				t.Errorf("3 s after SIGKILL of the driver, %d of its %d are alive: %v", len(left), len(before), left)
			}
			if d != nil {
				if left := marked(id); len(left) > 0 {
					t.Errorf("3 s after SIGKILL of the driver, local processes are alive: %v", left)
				}
			}
			t.Logf("%s: %d alive before the kill %v; none %v after", runnerName, len(before), before, time.Since(killed).Round(100*time.Millisecond))
		})
	}
}

// What a driver killed before it could clean up left behind (here, a process
// marked with a driver that is gone) is reaped by the next rpcbed matrix, which
// says so in one line; what a live driver started is left alone.
func TestMatrixReapsEarlierRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs rpcbed, go-server and go-client")
	}
	root, bin := buildRpcbed(t)
	sc := testScope()
	dead := exec.Command("true")
	dead.Run()
	deadID := driverID(t, os.Getpid()) // this test's start time with a gone pid
	deadID = strconv.Itoa(dead.Process.Pid) + deadID[strings.IndexByte(deadID, ':'):]
	liveID := driverID(t, os.Getpid())
	sleep := func(id string) *exec.Cmd {
		c := exec.Command("sleep", "120")
		c.Env = append(os.Environ(), runner.EnvDriver+"="+id, runner.EnvScope+"="+sc)
		c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return c
	}
	orphan, live := sleep(deadID), sleep(liveID)
	orphanDone := make(chan struct{})
	go func() { orphan.Wait(); close(orphanDone) }()

	spec := filepath.Join(t.TempDir(), "tiny.yaml")
	os.WriteFile(spec, []byte("clients: {go: [grpc]}\nitems: [2]\nload: {n: 20}\nrepeats: 1\nclient: {cpuset: \"\"}\nserver: {cpuset: \"\"}\n"), 0o644)
	cmd := exec.Command(bin, "matrix", "-spec", spec, "-out", filepath.Join(t.TempDir(), "run"), "-runner", "local", "-root", root, "-q")
	cmd.Env = append(os.Environ(), runner.EnvScope+"="+sc)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("rpcbed matrix: %v\n%s", err, out)
	}
	want := fmt.Sprintf("reaped 1 processes and 0 containers left by earlier runs that were killed (drivers %s)", deadID)
	if !strings.Contains(string(out), want) {
		t.Errorf("output:\n%s\nwant the line %q", out, want)
	}
	select {
	case <-orphanDone:
	case <-time.After(5 * time.Second):
		t.Errorf("the orphan of a dead driver is still alive")
	}
	if err := live.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("a live driver's process was reaped: %v", err)
	}
}

func waitUntil(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

func dockerOrSkip(t *testing.T) *runner.Docker {
	t.Helper()
	skip := func(why string) {
		if strings.Contains(os.Getenv("RPCBED_REQUIRE"), "docker") {
			t.Fatalf("RPCBED_REQUIRE has docker, but %s", why)
		}
		t.Skip(why)
	}
	d, err := runner.NewDocker()
	if err != nil {
		skip("no Docker engine answers: " + err.Error())
	}
	if !d.HasImage("rpcbed/go:latest") {
		skip("image rpcbed/go:latest is not built (make images)")
	}
	return d
}

// scopeContainers lists the containers of scope sc (running ones only, if
// running), as "name state".
func scopeContainers(t *testing.T, d *runner.Docker, sc string, running bool) []string {
	t.Helper()
	cs, err := d.Containers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range cs {
		if c.Labels[runner.LabelScope] == sc && (!running || c.State == "running") {
			out = append(out, c.Names[0]+" "+c.State)
		}
	}
	return out
}

func removeScope(d *runner.Docker, sc string) {
	os.Setenv(runner.EnvScope, sc)
	defer os.Unsetenv(runner.EnvScope)
	d.Sweep(context.Background())
}
