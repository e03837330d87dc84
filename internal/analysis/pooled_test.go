package analysis

import (
	"math"
	"testing"
)

// calOf is a synthetic calibration of one figure over cells cells; apart is
// how far the runs lay apart on the log scale.
func calOf(f Figure, cells, bInA, aInB int, half, shift, apart float64, rerun ...float64) Calibration {
	return Calibration{Figure: f, Cells: cells, BInA: bInA, AInB: aInB, HalfA: half, HalfB: half,
		ShiftA: shift, ShiftB: shift, Measured: true, Apart: math.Expm1(apart), rerun: rerun}
}

// pairsOf builds pairs whose three figures share each pair's counts.
func pairsOf(counts [][2]int, cells int, half, shift, apart float64, rerun ...float64) [][]Calibration {
	var out [][]Calibration
	for _, c := range counts {
		var cals []Calibration
		for _, f := range PrecisionFigures {
			cals = append(cals, calOf(f, cells, c[0], c[1], half, shift, apart, rerun...))
		}
		out = append(out, cals)
	}
	return out
}

func TestPoolCalibrations(t *testing.T) {
	rerun := []float64{0.01, 0.02, 0.03, 0.05, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25}
	for _, tc := range []struct {
		name    string
		pairs   [][]Calibration
		verdict string
		inGoal  int
		met     bool
	}{
		{"calibrated: pairs scatter about 95 %", pairsOf([][2]int{{66, 65}, {60, 58}, {63, 64}, {66, 66}, {61, 62}}, 66, 0.2, 0.05, 0.05, rerun...), PooledCalibrated, 2, true},
		{"too narrow: 80 % in every pair", pairsOf([][2]int{{53, 52}, {54, 53}, {52, 53}, {53, 54}}, 66, 0.1, 0.05, 0.05, rerun...), PooledNarrow, 0, false},
		{"too wide: every pair holds every cell", pairsOf([][2]int{{66, 66}, {66, 66}, {66, 66}, {66, 66}, {66, 66}, {66, 66}, {66, 66}, {66, 66}}, 66, 0.3, 0.05, 0.05, rerun...), PooledWide, 0, false},
		{"one pair cannot tell", pairsOf([][2]int{{63, 63}}, 66, 0.2, 0.05, 0.05, rerun...), PooledOnePair, 1, false},
		{"calibrated but blunt: half-width past 1.3 x the rerun's p95", pairsOf([][2]int{{66, 65}, {60, 58}, {63, 64}, {66, 66}, {61, 62}}, 66, 0.5, 0.05, 0.05, rerun...), PooledCalibrated, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := PoolCalibrations(tc.pairs, CoverLow)
			if len(ps) != len(PrecisionFigures) {
				t.Fatalf("got %d figures, want %d", len(ps), len(PrecisionFigures))
			}
			p := ps[0]
			if p.Pairs != len(tc.pairs) || p.Ways != 2*66*len(tc.pairs) {
				t.Errorf("pairs %d, ways %d; want %d, %d", p.Pairs, p.Ways, len(tc.pairs), 2*66*len(tc.pairs))
			}
			if got := p.Verdict(); got != tc.verdict {
				t.Errorf("verdict %q (share %+v); want %q", got, p.Share, tc.verdict)
			}
			if p.InGoal != tc.inGoal {
				t.Errorf("pairs in the single pair's goal: %d; want %d", p.InGoal, tc.inGoal)
			}
			if p.Met(CoverLow) != tc.met {
				t.Errorf("met %v (share %+v, sharpness %.2f); want %v", p.Met(CoverLow), p.Share, p.Sharpness(), tc.met)
			}
			if !(p.Share.Low >= 0 && p.Share.Low <= p.Share.Center && p.Share.Center <= p.Share.High && p.Share.High <= 1) {
				t.Errorf("share %+v leaves [0, 1] or its centre", p.Share)
			}
			if math.Abs(p.ApartRMS.Center-1) > 1e-9 || p.ApartVerdict() != ApartRead {
				t.Errorf("apart %+v run shifts, %q; want 1 (each run lay one shift apart), %q", p.ApartRMS, p.ApartVerdict(), ApartRead)
			}
			if p.RerunP95 != 0.25 {
				t.Errorf("pooled rerun p95 %.2f; want 0.25", p.RerunP95)
			}
		})
	}
}

// TestPoolCalibrationsSkips: a pair without cells for a figure is left out of
// that figure's pool, and no pair gives an empty pool that says so.
func TestPoolCalibrationsSkips(t *testing.T) {
	pairs := pairsOf([][2]int{{63, 63}, {62, 64}}, 66, 0.2, 0.05, 0.05, 0.1)
	pairs = append(pairs, pairsOf([][2]int{{0, 0}}, 0, 0, 0, 0)...)
	p := PoolCalibrations(pairs, CoverLow)[0]
	if p.Pairs != 2 || p.Ways != 264 {
		t.Errorf("pairs %d, ways %d; want 2, 264 (the pair without cells left out)", p.Pairs, p.Ways)
	}
	none := PoolCalibrations(nil, CoverLow)[0]
	if none.Pairs != 0 || none.Verdict() != PooledOnePair || none.ApartRMS.N != 0 || none.ApartVerdict() != "" || none.Met(CoverLow) {
		t.Errorf("no pairs: %+v, verdict %q", none, none.Verdict())
	}
}

// TestPoolCalibrationsApart: a run whose probe read a shift near 0 does not
// swamp the runs' distance in shifts (a ratio of root mean squares, not a mean
// of per-run ratios, which would read 0.05/0.001 = 50 here).
func TestPoolCalibrationsApart(t *testing.T) {
	pairs := pairsOf([][2]int{{63, 63}, {62, 64}}, 66, 0.2, 0.05, 0.05, 0.1)
	for i := range pairs[0] {
		pairs[0][i].ShiftA = 0.001
	}
	got := PoolCalibrations(pairs, CoverLow)[0].ApartRMS.Center
	// four runs 0.05 apart; shifts 0.001, 0.05, 0.05, 0.05
	want := math.Sqrt(4 * 0.05 * 0.05 / (0.001*0.001 + 3*0.05*0.05))
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("apart %.4f run shifts; want %.4f", got, want)
	}
}

// TestApartVerdict: runs that lay far more than their shifts apart, over
// enough pairs, say the shift under-read the move; far less, over-read; about
// as far, read it.
func TestApartVerdict(t *testing.T) {
	counts := [][2]int{{63, 63}, {62, 64}, {63, 62}, {64, 63}, {62, 62}, {63, 64}, {64, 64}, {62, 63}}
	for _, tc := range []struct {
		name         string
		shift, apart float64
		want         string
	}{
		{"one shift apart", 0.05, 0.05, ApartRead},
		{"three shifts apart", 0.05, 0.15, ApartUnderRead},
		{"a fifth of a shift apart", 0.05, 0.01, ApartOverRead},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := PoolCalibrations(pairsOf(counts, 66, 0.2, tc.shift, tc.apart, 0.1), CoverLow)[0]
			if got := p.ApartVerdict(); got != tc.want {
				t.Errorf("apart %+v: %q, want %q", p.ApartRMS, got, tc.want)
			}
		})
	}
}

// TestOutside: the ways whose share of cells lies outside [low, CoverHigh].
func TestOutside(t *testing.T) {
	for _, tc := range []struct {
		name       string
		bInA, aInB int
		cells      int
		want       int
		covered    bool
	}{
		{"both inside", 62, 64, 66, 0, true},
		{"one under 90 %", 58, 64, 66, 1, false},
		{"one over 98 %", 66, 63, 66, 1, false},
		{"both out", 50, 66, 66, 2, false},
		{"no cells", 0, 0, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Calibration{Cells: tc.cells, BInA: tc.bInA, AInB: tc.aInB}
			if got := c.Outside(CoverLow); got != tc.want {
				t.Errorf("Outside = %d, want %d", got, tc.want)
			}
			if got := c.Covered(CoverLow); got != tc.covered {
				t.Errorf("Covered = %v, want %v", got, tc.covered)
			}
		})
	}
}
