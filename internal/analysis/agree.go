package analysis

import (
	"math"
	"slices"
	"time"

	"github.com/rpcbed/rpcbed/internal/results"
)

// Agreement is how well two runs of the same spec agree, cell by cell: the share
// of cells whose medians lie within Tol of each other, per figure, and the cells
// outside with whether either run flagged them noisy (issue 11's reproducibility
// goal: at least 90 % within ±10 %, every cell outside flagged noisy in at least
// one of the two runs).
type Agreement struct {
	Tol     float64
	Figures []FigureAgreement
	// Outside lists every cell outside Tol on any figure.
	Outside []Disagreement
	// ProbeA and ProbeB: each run's median CPU probe time (µs), client and server
	// core; NaN for a run without probes.
	ProbeA, ProbeB [2]float64
	// Noise models each figure from the two runs' repeats; Took is run A's wall
	// time (0 when unknown).
	Noise []NoiseModel
	Took  time.Duration
}

// FigureAgreement is one figure's share of agreeing cells.
type FigureAgreement struct {
	Name         string
	Agree, Cells int // cells with the figure in both runs, and those within Tol
}

// Disagreement is one cell outside Tol on at least one figure.
type Disagreement struct {
	Cell           string
	Changes        []FigureChange
	NoisyA, NoisyB bool
}

// FigureChange is one figure's medians in runs A and B.
type FigureChange struct {
	Figure string
	A, B   float64
}

// agreeFigures are the figures compared: throughput and CPU per call each side.
var agreeFigures = []struct {
	name string
	f    func(results.Metrics) float64
}{
	{"req/s", results.RPS},
	{"client CPU/call", results.ClientCPU},
	{"server CPU/call", results.ServerCPU},
}

// Agree compares run b against run a; goal is the share of agreeing cells the
// noise model is asked about.
func Agree(a, b *results.Run, tol, goal float64) Agreement {
	ag := Agreement{Tol: tol}
	ag.ProbeA[0], ag.ProbeA[1] = a.ProbeMedian()
	ag.ProbeB[0], ag.ProbeB[1] = b.ProbeMedian()
	bcells := map[string]results.CellResult{}
	for _, c := range b.Cells {
		bcells[c.Name] = c
	}
	out := map[string]*Disagreement{}
	var order []string
	for _, f := range agreeFigures {
		fa := FigureAgreement{Name: f.name}
		for _, ca := range a.Cells {
			cb, ok := bcells[ca.Name]
			if !ok {
				continue
			}
			ma, mb := ca.Stat(f.f).Median, cb.Stat(f.f).Median
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
				dis = &Disagreement{Cell: ca.Name, NoisyA: isNoisy(ca), NoisyB: isNoisy(cb)}
				out[ca.Name] = dis
				order = append(order, ca.Name)
			}
			dis.Changes = append(dis.Changes, FigureChange{f.name, ma, mb})
		}
		ag.Figures = append(ag.Figures, fa)
	}
	for _, n := range order {
		ag.Outside = append(ag.Outside, *out[n])
	}
	ag.Noise = Noise(a, b, ag, tol, goal)
	if !a.Started.IsZero() && a.Finished.After(a.Started) {
		ag.Took = a.Finished.Sub(a.Started)
	}
	return ag
}

// isNoisy: the cell's summary (computed now for a run saved without one) says noisy.
func isNoisy(c results.CellResult) bool {
	return slices.Contains(c.Summarized().Flags, results.FlagNoisy)
}

// Met reports whether the goal holds: every figure at least share within Tol, and
// every cell outside flagged noisy in at least one run.
func (ag Agreement) Met(share float64) bool {
	for _, f := range ag.Figures {
		if f.Cells == 0 || float64(f.Agree) < share*float64(f.Cells) {
			return false
		}
	}
	for _, d := range ag.Outside {
		if !d.NoisyA && !d.NoisyB {
			return false
		}
	}
	return true
}
