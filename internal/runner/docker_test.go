package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"
)

// required reports whether RPCBED_REQUIRE names dep: CI sets it so that a test
// which would skip for lack of dep fails instead.
func required(dep string) bool {
	for _, f := range strings.FieldsFunc(os.Getenv("RPCBED_REQUIRE"), func(r rune) bool { return r == ',' || r == ' ' }) {
		if f == dep {
			return true
		}
	}
	return false
}

// skipOrFail skips the test, or fails it when CI requires dep.
func skipOrFail(t *testing.T, dep, why string) {
	t.Helper()
	if required(dep) {
		t.Fatalf("%s (RPCBED_REQUIRE=%s insists on %s)", why, os.Getenv("RPCBED_REQUIRE"), dep)
	}
	t.Skip(why)
}

// newDocker connects to the engine or skips: no engine answers without
// docker/engine.sh (make engine) having started one.
func newDocker(t *testing.T) *Docker {
	t.Helper()
	d, err := NewDocker()
	if err != nil {
		skipOrFail(t, "docker", "no Docker engine: "+err.Error())
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		assertNoContainers(t, d)
	})
	return d
}

// assertNoContainers fails when a container started by this test process remains.
func assertNoContainers(t *testing.T, d *Docker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := d.Containers(ctx)
	if err != nil {
		t.Errorf("list containers: %v", err)
		return
	}
	me := strconv.Itoa(os.Getpid())
	for _, c := range cs {
		if c.Labels[LabelPID] == me {
			t.Errorf("container %s (%s, %s) left behind; want every container removed", c.Names, c.Labels[LabelName], c.State)
		}
	}
}

var (
	imagesOnce sync.Once
	imagesErr  error
	imagesOut  []byte
)

// buildImages runs docker/images.sh once per test binary: a no-op in a few
// seconds when `make images` already built them, so the tests never run stale
// binaries. RPCBED_IMAGES=skip uses the images as they are.
func buildImages(t *testing.T) {
	t.Helper()
	if os.Getenv("RPCBED_IMAGES") == "skip" {
		return
	}
	imagesOnce.Do(func() {
		cmd := exec.Command(filepath.Join(repoRoot(t), "docker", "images.sh"), "all")
		imagesOut, imagesErr = cmd.CombinedOutput()
	})
	if imagesErr != nil {
		skipOrFail(t, "docker", fmt.Sprintf("docker/images.sh: %v\n%s", imagesErr, imagesOut))
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func TestDockerContract(t *testing.T) {
	d := newDocker(t)
	buildImages(t)
	if !d.HasImage("rpcbed/base") {
		t.Fatalf("image rpcbed/base is missing after docker/images.sh")
	}
	runnerContract(t, d, "rpcbed/base")
}

func TestDockerLimits(t *testing.T) {
	d := newDocker(t)
	buildImages(t)
	// The engine applies the Task's limits: read them back from inside, where the
	// container's own cgroup is mounted (cgroup v1 and v2 layouts).
	script := `cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.cfs_period_us 2>/dev/null || cat /sys/fs/cgroup/cpu.max
cat /sys/fs/cgroup/cpuset/cpuset.cpus 2>/dev/null || cat /sys/fs/cgroup/cpuset.cpus
cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max`
	res, err := d.Run(context.Background(), Task{Name: "limits", Image: "rpcbed/base", Args: []string{"sh", "-c", script},
		CPUs: 0.5, CPUSet: "0", MemoryMB: 96, Timeout: time.Minute})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("got %v, code %d, stderr %s", err, res.ExitCode, res.Stderr)
	}
	got := strings.Fields(string(res.Stdout))
	want := []string{"50000", "100000", "0", strconv.Itoa(96 << 20)}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got limits %q; want %q (cpu quota, period, cpuset, memory)", got, want)
	}
}

func TestDockerMissingImage(t *testing.T) {
	d := newDocker(t)
	_, err := d.Run(context.Background(), Task{Name: "missing", Image: "rpcbed/no-such-image:0", Args: []string{"true"}})
	if err == nil || !strings.Contains(err.Error(), "make images") {
		t.Errorf("got %v; want an error that says to run make images", err)
	}
}

func TestDockerCloseRemovesServices(t *testing.T) {
	d := newDocker(t)
	buildImages(t)
	if _, err := d.Start(context.Background(), Task{Name: "left-running", Image: "rpcbed/base", Args: []string{"sleep", "60"}}); err != nil {
		t.Fatal(err)
	}
	// Not stopped on purpose: Close (in newDocker's cleanup) must remove it, and
	// the cleanup asserts nothing is left.
}

// TestDockerInterrupt runs a child test process that starts a server and a client
// container the way the matrix does (ctx from signal.NotifyContext, Close
// deferred), interrupts it with SIGINT, and checks it left no container behind.
func TestDockerInterrupt(t *testing.T) {
	if os.Getenv("RPCBED_RUNNER_CHILD") == "interrupt" {
		interruptedChild(t)
		return
	}
	d := newDocker(t)
	buildImages(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestDockerInterrupt$", "-test.v")
	cmd.Env = append(os.Environ(), "RPCBED_RUNNER_CHILD=interrupt")
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.After(2 * time.Minute)
	for !bytes.Contains(out.Bytes(), []byte("CHILD READY")) {
		select {
		case err := <-done:
			t.Fatalf("child exited before it was ready: %v\n%s", err, out.Bytes())
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("child not ready in 2 minutes\n%s", out.Bytes())
		case <-time.After(100 * time.Millisecond):
		}
	}
	cmd.Process.Signal(os.Interrupt)
	select {
	case <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("child did not exit within a minute of SIGINT\n%s", out.Bytes())
	}
	cs, err := d.Containers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	child := strconv.Itoa(cmd.Process.Pid)
	for _, c := range cs {
		if c.Labels[LabelPID] == child {
			t.Errorf("container %s (%s) left behind by the interrupted child; want none\n%s", c.Names, c.State, out.Bytes())
		}
	}
}

func interruptedChild(t *testing.T) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	d, err := NewDocker()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Start(ctx, Task{Name: "interrupt-server", Image: "rpcbed/base", Args: []string{"sleep", "300"}}); err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() {
		_, err := d.Run(ctx, Task{Name: "interrupt-client", Image: "rpcbed/base", Args: []string{"sleep", "300"}})
		ran <- err
	}()
	for {
		cs, err := d.Containers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mine := 0
		for _, c := range cs {
			if c.Labels[LabelPID] == strconv.Itoa(os.Getpid()) && c.State == "running" {
				mine++
			}
		}
		if mine == 2 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Println("CHILD READY")
	if err := <-ran; !errors.Is(err, context.Canceled) {
		t.Errorf("Run after SIGINT: got %v; want context.Canceled", err)
	}
}

// TestDockerSweep: a container whose starting process is gone (a run killed
// outright) is removed by Sweep; one of a live process is left alone.
func TestDockerSweep(t *testing.T) {
	d := newDocker(t)
	buildImages(t)
	// Only this test's containers: the engine may be shared with other runs.
	sc := "sweep-" + strconv.Itoa(os.Getpid())
	t.Setenv(EnvScope, sc)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	orphan, err := d.pool.RunWithOptions(&dockertest.RunOptions{
		Name: containerName("sweep-orphan"), Repository: "rpcbed/base", Tag: "latest", Cmd: []string{"sleep", "60"},
		Labels: map[string]string{LabelRunner: "docker", LabelName: "sweep-orphan", LabelPID: strconv.Itoa(dead.Process.Pid), LabelScope: sc},
	}, func(hc *dc.HostConfig) { hc.NetworkMode = "host"; hc.PublishAllPorts = false })
	if err != nil {
		t.Fatal(err)
	}
	defer d.pool.Purge(orphan) // in case Sweep misses it
	live, err := d.Start(context.Background(), Task{Name: "sweep-live", Image: "rpcbed/base", Args: []string{"sleep", "60"}})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Stop(context.Background())

	if _, err := d.Sweep(context.Background()); err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	cs, err := d.Containers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, c := range cs {
		names[c.Labels[LabelName]] = true
	}
	if names["sweep-orphan"] || !names["sweep-live"] {
		t.Errorf("after Sweep got orphan present=%v live present=%v; want false, true", names["sweep-orphan"], names["sweep-live"])
	}
}
