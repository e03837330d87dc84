package load

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestPinCPUs(t *testing.T) {
	cases := []struct {
		allowed []int
		n       int
		want    []int
	}{
		{[]int{0, 1}, 2, []int{0, 1}},
		{[]int{0, 1}, 1, []int{0}},
		{[]int{2, 5, 7}, 2, []int{2, 5}},
		// GOMAXPROCS above the CPUs the process may use: round again.
		{[]int{3}, 3, []int{3, 3, 3}},
		{[]int{0, 1}, 5, []int{0, 1, 0, 1, 0}},
		{nil, 2, []int{-1, -1}},
	}
	for _, tc := range cases {
		if got := pinCPUs(tc.allowed, tc.n); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("pinCPUs(%v, %d) = %v; want %v", tc.allowed, tc.n, got, tc.want)
		}
	}
}

// -pin auto (the default) pins a closed loop's event loops, each on a CPU of
// its own, and not an open loop's; on and off say so for both. The log says
// which, and no thread of the process stays pinned after the run: each loop's
// thread goes back to the process's CPUs.
func TestEventLoopPinned(t *testing.T) {
	if !loopSupported {
		t.Skip("no event loop on this system")
	}
	before := threadCPUs(t)
	addr := goServer(t)[ProtoHTTP]
	cases := []struct {
		pin    string
		rate   int
		pinned bool
		not    string
	}{
		{"", 0, true, ""},
		{PinAuto, 0, true, ""},
		{PinAuto, 4000, false, "not pinned (-pin auto, open loop)"},
		{PinOn, 4000, true, ""},
		{PinOff, 0, false, "not pinned (-pin off)"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("pin=%s,rate=%d", tc.pin, tc.rate), func(t *testing.T) {
			cfg := Config{Proto: ProtoHTTP, Call: CallDataType, Check: CheckLength, KeepAlive: true, Addr: addr,
				Concurrency: 4, Requests: 400, Rate: tc.rate, Pin: tc.pin}
			var log bytes.Buffer
			res, err := Run(context.Background(), cfg, &log)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Failed != 0 || res.Complete != cfg.Requests {
				t.Errorf("complete %d, failed %d; want %d, 0", res.Complete, res.Failed, cfg.Requests)
			}
			loops := min(runtime.GOMAXPROCS(0), cfg.Concurrency)
			want := tc.not
			if tc.pinned {
				var cpus []string
				for i := range loops {
					cpus = append(cpus, fmt.Sprint(before[i%len(before)]))
				}
				want = "pinned to CPUs " + strings.Join(cpus, " ")
			}
			if !strings.Contains(log.String(), fmt.Sprintf("%d event loop(s) over 4 connections, %s\n", loops, want)) {
				t.Errorf("log %q; want %q", log.String(), want)
			}
			if strings.Contains(log.String(), "not pinned: ") {
				t.Errorf("a loop could not be pinned: %q", log.String())
			}
			if after := threadCPUs(t); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("after the run a thread may run on CPUs %v; want every thread on %v", after, before)
			}
		})
	}
	if _, err := ParseArgs([]string{"-proto", "http", "-call", "datatype", "-n", "1", "-addr", addr, "-pin", "yes"}); err == nil || !strings.Contains(err.Error(), "-pin") {
		t.Errorf("-pin yes: err %v; want it refused, naming -pin", err)
	}
}

// threadCPUs is the union of the CPUs the process's threads may run on, and
// fails the test when two threads differ.
func threadCPUs(t *testing.T) []int {
	t.Helper()
	dirs, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skipf("no /proc/self/task: %v", err)
	}
	var first string
	for _, d := range dirs {
		b, err := os.ReadFile("/proc/self/task/" + d.Name() + "/status")
		if err != nil {
			continue // the thread ended meanwhile
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				v = strings.TrimSpace(v)
				if first == "" {
					first = v
				} else if v != first {
					t.Fatalf("thread %s may run on CPUs %s, another on %s", d.Name(), v, first)
				}
			}
		}
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	return allowedCPUs(&set)
}
