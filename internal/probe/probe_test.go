package probe

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"
)

func TestFirstCPU(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", -1}, {"1", 1}, {"0-1", 0}, {"3,2", 2}, {" 2 , 5-7", 2}, {"x", -1}, {"-1", -1}, {"a,4", 4},
	} {
		if got := FirstCPU(tc.in); got != tc.want {
			t.Errorf("FirstCPU(%q) = %d; want %d", tc.in, got, tc.want)
		}
	}
}

// Each probe does its work pinned to a CPU (or unpinned), and a CPU this
// machine does not have is an error, not a figure.
func TestCPU(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(cpu int) (time.Duration, error)
	}{
		{"compute", CPU},
		{"cache", Cache},
		{"memory", func(cpu int) (time.Duration, error) { return Memory(cpu, 1000) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, cpu := range []int{-1, 0} {
				d, err := tc.f(cpu)
				if err != nil || d <= 0 {
					t.Errorf("%s(%d) = %v, %v; want a time", tc.name, cpu, d, err)
				}
			}
			if _, err := tc.f(runtime.NumCPU() + 1000); err == nil {
				t.Errorf("%s on a CPU the machine lacks: got no error", tc.name)
			}
		})
	}
}

// The cache walk is one cycle through every entry of its 2 MiB: a walk of as
// many steps as entries comes back to where it began, and no entry is visited
// twice before that (a shorter cycle would leave most of the buffer out of the
// probe's working set).
func TestCacheWalkCycle(t *testing.T) {
	if _, err := Cache(-1); err != nil {
		t.Fatal(err)
	}
	next := cacheWalk.next
	if len(next)*4 != 2<<20 {
		t.Fatalf("cache walk over %d bytes, want 2 MiB", len(next)*4)
	}
	seen := make([]bool, len(next))
	q := uint32(0)
	for i := range len(next) {
		if seen[q] {
			t.Fatalf("entry %d visited again after %d steps of %d", q, i, len(next))
		}
		seen[q] = true
		q = next[q]
	}
	if q != 0 {
		t.Errorf("after %d steps the walk is at %d, want 0", len(next), q)
	}
}

// WindowNoise: the sd of windows' log rates per width, beside the one-slot sd
// over √width; widths without 4 whole windows are left out.
func TestWindowNoise(t *testing.T) {
	white := func(seed uint64, n int) []float64 {
		r := rand.New(rand.NewPCG(seed, 3))
		v := make([]float64, n)
		for i := range v {
			v[i] = 100 * math.Exp(0.2*r.NormFloat64())
		}
		return v
	}
	step := make([]float64, 256) // 20 % slower for the second half: noise no window averages away
	for i := range step {
		step[i] = 100
		if i >= 128 {
			step[i] = 80
		}
	}
	for _, tc := range []struct {
		name   string
		rates  []float64
		widths []int
		check  func(t *testing.T, w []WindowSD)
	}{
		{"constant", slices.Repeat([]float64{50}, 64), []int{1, 4, 16}, func(t *testing.T, w []WindowSD) {
			if len(w) != 3 || w[0].SD > 1e-12 || w[1].SD > 1e-12 || w[2].SD > 1e-12 || w[2].Windows != 4 {
				t.Errorf("got %+v; want sd 0 at 1, 4 and 16 slots (4 windows of 16)", w)
			}
		}},
		{"alternating", slices.Repeat([]float64{100, 200}, 32), []int{1, 2}, func(t *testing.T, w []WindowSD) {
			if len(w) != 2 || w[0].SD < 0.3 || w[1].SD > 1e-12 {
				t.Errorf("got %+v; want a large sd per slot and none over pairs", w)
			}
		}},
		{"independent slots", white(1, 1024), []int{1, 4, 16}, func(t *testing.T, w []WindowSD) {
			if len(w) != 3 || math.Abs(w[0].SD-0.2) > 0.02 {
				t.Fatalf("got %+v; want a one-slot sd of 0.2", w)
			}
			for _, x := range w[1:] {
				if x.SD < x.White*0.7 || x.SD > x.White*1.3 {
					t.Errorf("%d slots: sd %.3f; want about the independent-slot %.3f", x.Slots, x.SD, x.White)
				}
			}
		}},
		{"slow half", step, []int{1, 4, 16, 64}, func(t *testing.T, w []WindowSD) {
			if len(w) != 4 || w[3].SD < 0.1 || w[3].SD < 5*w[3].White {
				t.Errorf("got %+v; want 64-slot windows as spread as the step, far above independent slots", w)
			}
		}},
		{"too few slots", slices.Repeat([]float64{1}, 7), []int{1, 2, 4}, func(t *testing.T, w []WindowSD) {
			if len(w) != 1 || w[0].Slots != 1 {
				t.Errorf("got %+v; want only the 1-slot width (7 windows; 3 of 2, 1 of 4 are too few)", w)
			}
		}},
		{"a slot without work", []float64{1, 2, 0, 1, 2, 1, 2, 1}, []int{0, 1, 2}, func(t *testing.T, w []WindowSD) {
			if len(w) != 1 || w[0].Slots != 2 || !math.IsNaN(w[0].White) {
				t.Errorf("got %+v; want only pairs (width 0 is skipped, a zero rate has no log), with no one-slot sd to scale", w)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, WindowNoise(tc.rates, tc.widths)) })
	}
}

// Sustained counts works per slot for total/slot slots, refuses a slot
// longer than the total, and stops with its slots so far when ctx ends.
func TestSustained(t *testing.T) {
	rates, err := Sustained(context.Background(), -1, 40*time.Millisecond, 10*time.Millisecond, func() { time.Sleep(time.Millisecond) })
	if err != nil || len(rates) != 4 {
		t.Fatalf("got %v, %v; want 4 slots", rates, err)
	}
	// 1 ms works: at most 1000/s. How many fit in a 10 ms slot depends on the
	// machine's load (a sleep may oversleep by many ms), so only some must.
	some := false
	for _, r := range rates {
		if r > 1000 {
			t.Errorf("rate %.0f/s; want at most 1000 for 1 ms works", r)
		}
		some = some || r > 0
	}
	if !some {
		t.Errorf("rates %v: no slot counted a work", rates)
	}
	if _, err := Sustained(context.Background(), -1, time.Millisecond, time.Second, func() {}); err == nil {
		t.Error("slot longer than total: got no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t0 := time.Now()
	if rates, err := Sustained(ctx, -1, time.Minute, time.Second, func() {}); err != nil || len(rates) != 0 || time.Since(t0) > 5*time.Second {
		t.Errorf("ended ctx: got %d slots, %v after %s; want none at once", len(rates), err, time.Since(t0))
	}
}

// WindowCorrelation: +1 for series that move together, -1 for opposite ones,
// near 0 for independent ones, NaN without enough windows or movement.
func TestWindowCorrelation(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	noise := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = 100 * math.Exp(0.2*r.NormFloat64())
		}
		return v
	}
	a := noise(400)
	double := make([]float64, len(a))
	inverse := make([]float64, len(a))
	for i, x := range a {
		double[i] = 2 * x
		inverse[i] = 1e4 / x
	}
	for _, tc := range []struct {
		name   string
		a, b   []float64
		k      int
		lo, hi float64
	}{
		{"together", a, double, 1, 0.999, 1.001},
		{"together, windows of 4", a, double, 4, 0.999, 1.001},
		{"opposite", a, inverse, 1, -1.001, -0.999},
		{"independent", a, noise(400), 4, -0.35, 0.35},
		{"unequal lengths use the common part", a, double[:100], 4, 0.999, 1.001},
	} {
		if got := WindowCorrelation(tc.a, tc.b, tc.k); got < tc.lo || got > tc.hi {
			t.Errorf("%s: got %.3f; want %.2f..%.2f", tc.name, got, tc.lo, tc.hi)
		}
	}
	for _, tc := range []struct {
		name string
		a, b []float64
		k    int
	}{
		{"too few windows", a[:12], double[:12], 4},
		{"a series that does not move", a, slices.Repeat([]float64{5}, 400), 4},
		{"a window without work", append([]float64{0, 0, 0, 0}, a[:40]...), double[:44], 4},
		{"width 0", a, double, 0},
	} {
		if got := WindowCorrelation(tc.a, tc.b, tc.k); !math.IsNaN(got) {
			t.Errorf("%s: got %.3f; want NaN", tc.name, got)
		}
	}
}
