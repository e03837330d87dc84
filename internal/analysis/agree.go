package analysis

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/rpcbed/rpcbed/internal/results"
)

// Agreement is how well two runs of the same spec agree, cell by cell: whether
// each run's median lies inside the other's 95 % interval (calibration), whether
// a ratio's verdict flipped, and the share of cells whose medians lie within Tol
// of each other, per figure, with the cells outside (`rpcbed agree`;
// internal/render prints it).
type Agreement struct {
	// Calibration per figure and Flips per kind of comparison and figure
	// (Calibrate); the goal: at least 90 % both ways, no flip.
	Calibration []Calibration
	Flips       []Flips
	Tol         float64
	Figures     []FigureAgreement
	// Outside lists every cell outside Tol on any figure.
	Outside []Disagreement
	// ProbeA and ProbeB: each run's median CPU probe time (µs), client and server
	// core; NaN for a run without probes. CacheA and CacheB: the same of the
	// cache probe (NaN for a run recorded before it).
	ProbeA, ProbeB [2]float64
	CacheA, CacheB [2]float64
	// Noise models each figure from the two runs' repeats; Took is run A's wall
	// time (0 when unknown).
	Noise []NoiseModel
	Took  time.Duration
	// DriftA and DriftB: how far each run's figures moved along the run, per
	// server group (RunDrifts).
	DriftA, DriftB []GroupDrift
}

// FigureAgreement is one figure's share of agreeing cells.
type FigureAgreement struct {
	Name         string
	Agree, Cells int // cells with the figure in both runs, and those within Tol
}

// Share is the share of the cells within Tol (NaN without cells).
func (f FigureAgreement) Share() float64 {
	if f.Cells == 0 {
		return math.NaN()
	}
	return float64(f.Agree) / float64(f.Cells)
}

// Disagreement is one cell outside Tol on at least one figure.
type Disagreement struct {
	Cell    string
	Figures []Moved
}

// Moved is one figure of a cell outside Tol: its medians in A and B, B's change
// on A (relative: +0.25 is 25 % up) and whether B's median lies inside A's 95 %
// interval.
type Moved struct {
	Figure  string
	A, B    float64
	Change  float64
	InsideA bool
}

// Agree compares run b against run a; goal is the share of agreeing cells the
// noise model is asked about.
func Agree(a, b *results.Run, tol, goal float64) Agreement {
	ag := Agreement{Tol: tol}
	ag.ProbeA[0], ag.ProbeA[1] = a.ProbeMedian()
	ag.ProbeB[0], ag.ProbeB[1] = b.ProbeMedian()
	ag.CacheA[0], ag.CacheA[1] = a.CacheProbeMedian()
	ag.CacheB[0], ag.CacheB[1] = b.CacheProbeMedian()
	bcells := map[string]results.CellResult{}
	for _, c := range b.Cells {
		bcells[c.Name] = c
	}
	ag.Calibration, ag.Flips = Calibrate(a, b)
	ua := UncertaintyOf(a)
	out := map[string]*Disagreement{}
	var order []string
	for _, f := range AgreeFigures {
		fa := FigureAgreement{Name: f.Name}
		for _, ca := range a.Cells {
			cb, ok := bcells[ca.Name]
			if !ok {
				continue
			}
			ma, mb := ca.Stat(f.F).Median, cb.Stat(f.F).Median
			if math.IsNaN(ma) || math.IsNaN(mb) || ma <= 0 {
				continue
			}
			fa.Cells++
			d := mb/ma - 1
			if math.Abs(d) <= tol {
				fa.Agree++
				continue
			}
			dis, ok := out[ca.Name]
			if !ok {
				dis = &Disagreement{Cell: ca.Name}
				out[ca.Name] = dis
				order = append(order, ca.Name)
			}
			mv := Moved{Figure: f.Name, A: ma, B: mb, Change: d}
			if fig, ok := figureByName(f.Name); ok {
				mv.InsideA = ua.Interval(ca, fig).Contains(mb)
			}
			dis.Figures = append(dis.Figures, mv)
		}
		ag.Figures = append(ag.Figures, fa)
	}
	for _, n := range order {
		ag.Outside = append(ag.Outside, *out[n])
	}
	ag.Noise = Noise(a, b, ag.shares(), tol, goal)
	ag.DriftA, ag.DriftB = RunDrifts(a), RunDrifts(b)
	if !a.Started.IsZero() && a.Finished.After(a.Started) {
		ag.Took = a.Finished.Sub(a.Started)
	}
	return ag
}

// figureByName is the Figure of an agree figure's name.
func figureByName(name string) (Figure, bool) {
	for _, f := range Figures {
		if f.Name == name {
			return f, true
		}
	}
	return Figure{}, false
}

// shares is the share of cells within Tol per figure (NaN without cells).
func (ag Agreement) shares() []float64 {
	var out []float64
	for _, f := range ag.Figures {
		out = append(out, f.Share())
	}
	return out
}

// Met reports whether the goal holds: for every figure at least share (and at
// most CoverHigh) of the cells have the other run's median inside their 95 %
// interval, both ways, at a half-width of at most SharpGoal times the rerun
// difference's 95th percentile, and no verdict flipped between faster and slower.
func (ag Agreement) Met(share float64) bool {
	if len(ag.Calibration) == 0 {
		return false
	}
	for _, c := range ag.Calibration {
		if !c.Calibrated(share) {
			return false
		}
	}
	for _, f := range ag.Flips {
		if len(f.Flipped) > 0 {
			return false
		}
	}
	return true
}

// Moved names the runs whose figures moved along the run in some server group
// (GroupDrift.Moved): "A", "B", both or neither.
func (ag Agreement) Moved() []string {
	var out []string
	for i, d := range [][]GroupDrift{ag.DriftA, ag.DriftB} {
		if slices.ContainsFunc(d, GroupDrift.Moved) {
			out = append(out, []string{"A", "B"}[i])
		}
	}
	return out
}

// Misses lists what keeps the goal from being met (Met), one line a criterion:
// a figure's share past either bound one way (with its exact share, which a
// rounded one hides: 65 of 66 is 98.5 %, over 98 %), an interval too wide
// against the rerun difference, verdicts flipped; none when it is met.
func (ag Agreement) Misses(share float64) []string {
	if len(ag.Calibration) == 0 {
		return []string{"no cell in both runs"}
	}
	var out []string
	for _, c := range ag.Calibration {
		if c.Cells == 0 {
			out = append(out, c.Figure.Name+": no cell with it in both runs")
			continue
		}
		n := float64(c.Cells)
		for _, way := range c.Ways() {
			switch pct := 100 * float64(way.K) / n; {
			case float64(way.K) < share*n:
				out = append(out, fmt.Sprintf("%s %s %d of %d (%.1f %%), under %.0f %%", c.Figure.Name, way.Name, way.K, c.Cells, pct, 100*share))
			case float64(way.K) > CoverHigh*n:
				out = append(out, fmt.Sprintf("%s %s %d of %d (%.1f %%), over %.0f %%", c.Figure.Name, way.Name, way.K, c.Cells, pct, 100*CoverHigh))
			}
		}
		if sh := c.Sharpness(); !(sh <= SharpGoal) {
			out = append(out, fmt.Sprintf("%s half-width %.2f x the rerun difference's 95th percentile, over %.1f", c.Figure.Name, sh, SharpGoal))
		}
	}
	flipped := 0
	for _, f := range ag.Flips {
		flipped += len(f.Flipped)
	}
	if flipped > 0 {
		out = append(out, fmt.Sprintf("verdicts flipped between faster and slower: %d", flipped))
	}
	return out
}

// FartherApart names each figure and way whose coverage fell under share
// ("req/s A in B's") where the runs lay more than ApartBeyond times the shift
// of the run whose intervals missed: the machine moved between the runs more
// than that run's probe saw along itself.
func (ag Agreement) FartherApart(share float64) []string {
	var out []string
	for _, c := range ag.Calibration {
		n := share * float64(c.Cells)
		for _, way := range c.Ways() {
			if float64(way.K) < n && c.ApartTimes(way.Run) > ApartBeyond {
				out = append(out, c.Figure.Name+" "+way.Name)
			}
		}
	}
	return out
}

// Undercovered says some figure held the other run's median in fewer than
// share of its cells, one way or the other: a miss a run that moved can explain,
// unlike intervals too wide or a flipped verdict.
func (ag Agreement) Undercovered(share float64) bool {
	return slices.ContainsFunc(ag.Calibration, func(c Calibration) bool {
		n := share * float64(c.Cells)
		return float64(c.BInA) < n || float64(c.AInB) < n
	})
}

// ProbeChange is side i's (0 client, 1 server) CPU probe time in B relative to
// A (+0.10: the same work took 10 % longer in B); ok is false when a run has no
// probe on that side.
func (ag Agreement) ProbeChange(i int) (change float64, ok bool) {
	return timeChange(ag.ProbeA[i], ag.ProbeB[i])
}

// CacheChange is ProbeChange of the cache probe.
func (ag Agreement) CacheChange(i int) (change float64, ok bool) {
	return timeChange(ag.CacheA[i], ag.CacheB[i])
}

func timeChange(a, b float64) (float64, bool) {
	if math.IsNaN(a) || math.IsNaN(b) || a <= 0 {
		return 0, false
	}
	return b/a - 1, true
}

// RunMinutes is how long a run with m.Needed repeats per cell would take, in
// minutes, scaled from took for m.Repeats (start-up, verify and primes scale
// too: an upper bound); 0 when unknown.
func (m NoiseModel) RunMinutes(took time.Duration) float64 {
	if took <= 0 || m.Repeats <= 0 || m.Needed <= 0 {
		return 0
	}
	return took.Minutes() * float64(m.Needed) / float64(m.Repeats)
}
