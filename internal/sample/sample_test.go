package sample

import (
	"math"
	"strings"
	"testing"
)

func TestInterpolate(t *testing.T) {
	s := []Server{{T: 10, CPU: 1, Calls: 100}, {T: 10.1, CPU: 1.05, Calls: 200}, {T: 10.3, CPU: 1.25, Calls: 200}}
	for _, tc := range []struct {
		name      string
		t0, t1    float64
		cpu       float64
		calls     float64
		errSubstr string
	}{
		{"whole series", 10, 10.3, 0.25, 100, ""},
		{"inside one step", 10.05, 10.1, 0.025, 50, ""},
		{"across steps", 10.05, 10.2, 0.125, 50, ""},
		{"before the first sample", 9.9, 10.2, 0, 0, "outside the samples"},
		{"after the last sample", 10.1, 10.4, 0, 0, "outside the samples"},
	} {
		cpu, calls, err := Interpolate(s, tc.t0, tc.t1)
		if tc.errSubstr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errSubstr) {
				t.Errorf("%s: got error %v; want %q", tc.name, err, tc.errSubstr)
			}
			continue
		}
		if err != nil || math.Abs(cpu-tc.cpu) > 1e-9 || math.Abs(calls-tc.calls) > 1e-9 {
			t.Errorf("%s: got %v %v %v; want %v %v", tc.name, cpu, calls, err, tc.cpu, tc.calls)
		}
	}
	if _, _, err := Interpolate(s[:1], 10, 10); err == nil {
		t.Error("one sample: got no error; want one")
	}
}

func TestParseProcStat(t *testing.T) {
	m, err := ParseProcStat("cpu  1000 50 300 8000 100 20 30 40 0 0", 5)
	if err != nil {
		t.Fatal(err)
	}
	if m.Busy != 14 || m.Idle != 81 || m.Steal != 0.4 || m.T != 5 {
		t.Errorf("got %+v; want busy 14 s, idle 81 s, steal 0.4 s", m)
	}
	for _, bad := range []string{"", "intr 1 2 3", "cpu 1 2 x 4 5 6 7 8"} {
		if _, err := ParseProcStat(bad, 0); err == nil {
			t.Errorf("%q: got no error; want one", bad)
		}
	}
	live, err := ReadProcStat()
	if err != nil || live.Busy+live.Idle <= 0 {
		t.Errorf("this machine's /proc/stat: got %+v, %v", live, err)
	}
}

// JITOver interpolates a JVM server's compile time over the window; a series
// without one (go-server) has none.
func TestJITOver(t *testing.T) {
	s := []Server{{T: 10, JITMs: 100}, {T: 11, JITMs: 300}, {T: 12, JITMs: 300}}
	for _, tc := range []struct {
		t0, t1 float64
		want   float64
		ok     bool
	}{
		{10, 12, 200, true},
		{10.5, 11.5, 100, true},
		{11, 12, 0, true},
		{9, 12, 0, false}, // starts before the samples
	} {
		got, ok := JITOver(s, tc.t0, tc.t1)
		if ok != tc.ok || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("JITOver(%v, %v) = %v, %v; want %v, %v", tc.t0, tc.t1, got, ok, tc.want, tc.ok)
		}
	}
	if _, ok := JITOver([]Server{{T: 10, JITMs: -1}, {T: 11, JITMs: -1}}, 10, 11); ok {
		t.Error("JITOver on a server without a JIT: ok")
	}
}
