package cost

import (
	"math"
	"testing"
)

func TestCycles(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Counts
		want float64
	}{
		{"all L1 hits", Counts{Ir: 100, Dr: 30, Dw: 20}, 150},
		// 150 accesses, 10 L1 misses of which 4 miss LL: 140 + 5×6 + 35×4.
		{"misses", Counts{Ir: 100, Dr: 30, Dw: 20, I1mr: 5, D1mr: 3, D1mw: 2, ILmr: 1, DLmr: 2, DLmw: 1}, 140 + 30 + 140},
		{"every access to RAM", Counts{Ir: 10, I1mr: 10, ILmr: 10}, 350},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.Cycles(); got != tc.want {
				t.Errorf("Cycles() = %v; want %v", got, tc.want)
			}
		})
	}
}

func TestMarginal(t *testing.T) {
	startup := Counts{Ir: 9_000_000, Dr: 2_000_000, Dw: 1_000_000, I1mr: 5000, ILmr: 900, Syscalls: 400}
	perCall := Counts{Ir: 470_000, Dr: 110_000, Dw: 70_000, I1mr: 3600, D1mr: 1600, D1mw: 1200, ILmr: 2, DLmr: 10, DLmw: 60, Syscalls: 37}
	seg := func(n int64) Segment {
		return Segment{Calls: n, Counts: startup.Add(perCall.Scale(float64(n))),
			BytesIn: 300 + 5570*float64(n), BytesOut: 200 + 92*float64(n),
			Layers: map[string]float64{LayerCodec: 1e6 + 180_000*float64(n), LayerRuntime: 8e6 + 290_000*float64(n)}}
	}
	got, err := Marginal(seg(10), seg(110))
	if err != nil {
		t.Fatal(err)
	}
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %v; want %v", name, got, want)
		}
	}
	near("Ir", got.Ir, 470_000)
	near("Syscalls", got.Syscalls, 37)
	near("LL misses", got.LLMisses(), 72)
	near("Cycles", got.Cycles, perCall.Cycles())
	near("BytesIn", got.BytesIn, 5570)
	near("BytesOut", got.BytesOut, 92)
	near("codec", got.Layers[LayerCodec], 180_000)
	near("runtime", got.Layers[LayerRuntime], 290_000)

	// A layer only the short run has counts as negative (it shrank).
	short, long := seg(10), seg(110)
	short.Layers["other"] = 500
	got, _ = Marginal(short, long)
	near("other", got.Layers["other"], -5)

	for _, tc := range []struct {
		name        string
		short, long Segment
	}{
		{"same calls", seg(10), seg(10)},
		{"long shorter", seg(110), seg(10)},
		{"no more instructions", Segment{Calls: 1, Counts: Counts{Ir: 5}}, Segment{Calls: 2, Counts: Counts{Ir: 5}}},
	} {
		if _, err := Marginal(tc.short, tc.long); err == nil {
			t.Errorf("%s: Marginal gave no error", tc.name)
		}
	}
}
