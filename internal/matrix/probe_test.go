package matrix

import (
	"math"
	"runtime"
	"testing"
)

func TestFirstCPU(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", -1}, {"1", 1}, {"0-1", 0}, {"3,2", 2}, {" 2 , 5-7", 2}, {"x", -1}, {"-1", -1}, {"a,4", 4},
	} {
		if got := firstCPU(tc.in); got != tc.want {
			t.Errorf("firstCPU(%q) = %d; want %d", tc.in, got, tc.want)
		}
	}
}

// The probe does its work pinned to a CPU (or unpinned), and a CPU this machine
// does not have is an error, not a figure.
func TestProbeCPU(t *testing.T) {
	for _, cpu := range []int{-1, 0} {
		d, err := ProbeCPU(cpu)
		if err != nil || d <= 0 {
			t.Errorf("ProbeCPU(%d) = %v, %v; want a time", cpu, d, err)
		}
	}
	if _, err := ProbeCPU(runtime.NumCPU() + 1000); err == nil {
		t.Error("ProbeCPU on a CPU the machine lacks: got no error")
	}
}

// ProbeSpread is (max-min)/median over every probe of the repeats, the larger
// side; a cell without probes has none (NaN), and Summarize records it.
func TestProbeSpread(t *testing.T) {
	c := CellResult{Repeats: []Repeat{
		{Probe: &Probe{ClientUs: [2]float64{100, 110}, ServerUs: [2]float64{100, 100}}},
		{Probe: &Probe{ClientUs: [2]float64{90, 100}, ServerUs: [2]float64{100, 130}}},
		{}, // not probed
	}}
	if got := c.ProbeSpread(); math.Abs(got-0.30) > 1e-9 {
		t.Errorf("ProbeSpread = %v; want 0.30 (server: 100..130 over a median of 100)", got)
	}
	if got := c.Summarize().ProbeSpread; math.Abs(got-0.30) > 1e-9 {
		t.Errorf("Summary.ProbeSpread = %v; want 0.30", got)
	}
	if got := (CellResult{Repeats: []Repeat{{}}}).ProbeSpread(); !math.IsNaN(got) {
		t.Errorf("no probes: ProbeSpread = %v; want NaN", got)
	}
	run := &Run{Cells: []CellResult{c}}
	if cl, sv := run.ProbeMedian(); cl != 100 || sv != 100 {
		t.Errorf("ProbeMedian = %v, %v; want 100, 100", cl, sv)
	}
}
