package runner

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/testbed"
)

func TestSplitUsage(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		rest      string
		user, sys time.Duration
		ok        bool
	}{
		{"trailer", "log line\n" + usageMarker + "\n0m0.001s 0m0.002s\n0m1.230s 0m0.410s\n", "log line\n", 1230 * time.Millisecond, 410 * time.Millisecond, true},
		{"only trailer", usageMarker + "\n0m0.000s 0m0.000s\n1m2.500s 0m0.000s\n", "", 62500 * time.Millisecond, 0, true},
		{"no trailer", "killed\n", "killed\n", 0, 0, false},
		{"marker inside a line", "x" + usageMarker + "\n0m0.000s 0m0.000s\n0m1.000s 0m0.000s\n", "x" + usageMarker + "\n0m0.000s 0m0.000s\n0m1.000s 0m0.000s\n", 0, 0, false},
		{"cut short", "a\n" + usageMarker + "\n0m0.000s 0m0.000s\n", "a\n" + usageMarker + "\n0m0.000s 0m0.000s\n", 0, 0, false},
		{"garbage times", usageMarker + "\n0m0.000s 0m0.000s\nx y\n", usageMarker + "\n0m0.000s 0m0.000s\nx y\n", 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rest, u, s, ok := splitUsage([]byte(tc.in))
			if string(rest) != tc.rest || u != tc.user || s != tc.sys || ok != tc.ok {
				t.Errorf("got %q %v %v %v; want %q %v %v %v", rest, u, s, ok, tc.rest, tc.user, tc.sys, tc.ok)
			}
		})
	}
}

func TestSplitImage(t *testing.T) {
	tests := []struct{ in, repo, tag string }{
		{"rpcbed/go", "rpcbed/go", "latest"},
		{"rpcbed/go:3f2a9c", "rpcbed/go", "3f2a9c"},
		{"localhost:5000/rpcbed/go", "localhost:5000/rpcbed/go", "latest"},
		{"localhost:5000/rpcbed/go:v1", "localhost:5000/rpcbed/go", "v1"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			repo, tag := splitImage(tc.in)
			if repo != tc.repo || tag != tc.tag {
				t.Errorf("got %s %s; want %s %s", repo, tag, tc.repo, tc.tag)
			}
		})
	}
}

func TestContainerName(t *testing.T) {
	tests := []struct{ in, prefix string }{
		{"php-grpc-datalist-200-c50", "rpcbed-php-grpc-datalist-200-c50-"},
		{"a b/c", "rpcbed-a-b-c-"},
		{"", "rpcbed-run-"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got := containerName(tc.in)
			if !strings.HasPrefix(got, tc.prefix) || len(got) != len(tc.prefix)+8 {
				t.Errorf("got %q; want %q + 8 hex digits", got, tc.prefix)
			}
		})
	}
	if a, b := containerName("x"), containerName("x"); a == b {
		t.Errorf("got the same name twice (%s); want unique names", a)
	}
}

func TestProcStatCPU(t *testing.T) {
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime ...
	line := "42 (my server) S 1 42 42 0 -1 4194560 100 0 0 0 150 30 20 5 20 0 4 0 100 1000 10"
	u, s, err := procStatCPU(line)
	if err != nil || u != 1700*time.Millisecond || s != 350*time.Millisecond {
		t.Errorf("got %v %v %v; want 1.7s 350ms <nil>", u, s, err)
	}
	if _, _, err := procStatCPU("42 (x) S 1"); err == nil {
		t.Errorf("got nil error for a short line; want one")
	}
}

// runnerContract runs the same cases against any Runner; image is an image with
// sh, for Docker (Local ignores it).
func runnerContract(t *testing.T, r Runner, image string) {
	ctx := context.Background()
	burn := `i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done`
	runs := []struct {
		name           string
		script         string
		timeout        time.Duration
		stdout, stderr string
		code           int
		err            error
		cpu            bool
	}{
		{"ok", "echo report; echo log >&2", 0, "report\n", "log\n", 0, nil, false},
		{"exit code is not an error", "echo partial; exit 3", 0, "partial\n", "", 3, nil, false},
		{"cpu is counted", burn + "; echo done", 0, "done\n", "", 0, nil, true},
		{"timeout kills", "echo started; exec sleep 30", 3 * time.Second, "started\n", "", 137, ErrTimeout, false},
	}
	for _, tc := range runs {
		t.Run("Run/"+tc.name, func(t *testing.T) {
			res, err := r.Run(ctx, Task{Name: "contract", Image: image, Args: []string{"sh", "-c", tc.script}, Timeout: tc.timeout, CPUs: 1, MemoryMB: 128})
			if !errors.Is(err, tc.err) {
				t.Fatalf("got error %v; want %v", err, tc.err)
			}
			if string(res.Stdout) != tc.stdout || string(res.Stderr) != tc.stderr || res.ExitCode != tc.code {
				t.Errorf("got stdout %q stderr %q code %d; want %q %q %d", res.Stdout, res.Stderr, res.ExitCode, tc.stdout, tc.stderr, tc.code)
			}
			if tc.cpu && res.CPUUser+res.CPUSystem == 0 {
				t.Errorf("got CPU 0 for a busy loop; want > 0")
			}
			if tc.err == nil && res.Wall <= 0 {
				t.Errorf("got wall %v; want > 0", res.Wall)
			}
		})
	}

	t.Run("Run/cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(500*time.Millisecond, cancel)
		_, err := r.Run(cctx, Task{Name: "contract", Image: image, Args: []string{"sleep", "30"}})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v; want context.Canceled", err)
		}
	})

	t.Run("Start/ready then stop", func(t *testing.T) {
		// Not ready on the first poll: Start must keep polling.
		polls := 0
		svc, err := r.Start(ctx, Task{Name: "contract-srv", Image: image, Args: []string{"sh", "-c", "echo up; " + burn + "; exec sleep 60"},
			Ready: func(context.Context) error {
				if polls++; polls < 2 {
					return errors.New("not yet")
				}
				return nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		u, s, err := svc.Usage(ctx)
		if err != nil || u+s < 0 {
			t.Errorf("Usage: got %v %v %v; want no error", u, s, err)
		}
		res, err := svc.Stop(ctx)
		if err != nil {
			t.Fatalf("Stop: %v", err)
		}
		if string(res.Stdout) != "up\n" {
			t.Errorf("got stdout %q; want %q", res.Stdout, "up\n")
		}
		if res.ExitCode != 143 {
			t.Errorf("got exit code %d; want 143 (SIGTERM)", res.ExitCode)
		}
		if _, err := svc.Stop(ctx); err != nil {
			t.Errorf("second Stop: got %v; want nil", err)
		}
	})

	t.Run("Start/exits before ready", func(t *testing.T) {
		_, err := r.Start(ctx, Task{Name: "contract-srv", Image: image, Args: []string{"sh", "-c", "echo cannot listen >&2; exit 1"},
			Ready: func(context.Context) error { return errors.New("never") }, Timeout: 20 * time.Second})
		if err == nil || !strings.Contains(err.Error(), "cannot listen") {
			t.Errorf("got %v; want an error carrying the program's stderr", err)
		}
	})

	t.Run("Start/never ready", func(t *testing.T) {
		_, err := r.Start(ctx, Task{Name: "contract-srv", Image: image, Args: []string{"sleep", "60"},
			Ready: func(context.Context) error { return errors.New("nope") }, Timeout: time.Second})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("got %v; want context.DeadlineExceeded", err)
		}
	})
}

func TestLocalContract(t *testing.T) {
	l := &Local{}
	defer l.Close()
	runnerContract(t, l, "")
}

func TestChecks(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ok.Close()
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }))
	defer bad.Close()
	closed := testbed.FreeAddr(t)
	tests := []struct {
		name string
		p    Check
		ok   bool
	}{
		{"http 200", HTTPCheck(ok.URL), true},
		{"http 503", HTTPCheck(bad.URL), false},
		{"http refused", HTTPCheck("http://" + closed), false},
		{"tcp open", TCPCheck(strings.TrimPrefix(ok.URL, "http://")), true},
		{"tcp one closed", TCPCheck(strings.TrimPrefix(ok.URL, "http://"), closed), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p(context.Background())
			if (err == nil) != tc.ok {
				t.Errorf("got %v; want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestCPUSetSize(t *testing.T) {
	for _, tc := range []struct {
		set  string
		want int
	}{
		{"0", 1}, {"1", 1}, {"0-1", 2}, {"0,2-3", 3}, {"0-3,8", 5}, {"", 0}, {"x", 0}, {"3-1", 0}, {"-1", 0},
	} {
		if got := CPUSetSize(tc.set); got != tc.want {
			t.Errorf("CPUSetSize(%q): got %d; want %d", tc.set, got, tc.want)
		}
	}
}

func TestCoresAllowed(t *testing.T) {
	online := float64(OnlineCores())
	_, err := exec.LookPath("taskset")
	localSet := online
	if err == nil {
		localSet = 1
	}
	for _, tc := range []struct {
		name string
		r    Runner
		s    Task
		want float64
	}{
		{"docker cpuset", &Docker{}, Task{CPUSet: "0"}, 1},
		{"docker quota below set", &Docker{}, Task{CPUSet: "0", CPUs: 0.5}, 0.5},
		{"docker nothing set", &Docker{}, Task{}, online},
		{"local cpuset (taskset)", &Local{}, Task{CPUSet: "0"}, localSet},
		{"local ignores the quota", &Local{}, Task{CPUs: 0.5}, online},
	} {
		if got := CoresAllowed(tc.r, tc.s); got != tc.want {
			t.Errorf("%s: got %v; want %v", tc.name, got, tc.want)
		}
	}
}
