package render

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
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
	Figures        []string // "req/s 1200 -> 1500 (+25 %)"
	NoisyA, NoisyB bool
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
			dis.Figures = append(dis.Figures, fmt.Sprintf("%s %s -> %s (%+.0f %%)", f.name, sig(ma), sig(mb), d*100))
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
	return slices.Contains(summary(c).Flags, results.FlagNoisy)
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

// Write prints the agreement as text.
func (ag Agreement) Write(w io.Writer, share float64) error {
	var b strings.Builder
	for _, f := range ag.Figures {
		pct := math.NaN()
		if f.Cells > 0 {
			pct = float64(f.Agree) / float64(f.Cells)
		}
		fmt.Fprintf(&b, "%-16s %d of %d cells within ±%.0f %%: %s\n", f.Name, f.Agree, f.Cells, ag.Tol*100, pctOf(pct))
	}
	for i, side := range []string{"client", "server"} {
		a, bb := ag.ProbeA[i], ag.ProbeB[i]
		if math.IsNaN(a) || math.IsNaN(bb) || a <= 0 {
			continue
		}
		d := (bb/a - 1) * 100
		how := "the same time in both runs"
		switch {
		case math.Round(d) > 0:
			how = "the same work took that much longer in B"
		case math.Round(d) < 0:
			how = "the same work took that much less time in B"
		}
		fmt.Fprintf(&b, "CPU probe, %s core: median %s µs in A, %s µs in B (%+.0f %%: %s)\n", side, sig(a), sig(bb), d, how)
	}
	unflagged := 0
	if len(ag.Outside) > 0 {
		fmt.Fprintf(&b, "\n%d cells outside ±%.0f %%:\n", len(ag.Outside), ag.Tol*100)
		for _, d := range ag.Outside {
			flag := "noisy in neither run"
			switch {
			case d.NoisyA && d.NoisyB:
				flag = "noisy in both runs"
			case d.NoisyA:
				flag = "noisy in run A"
			case d.NoisyB:
				flag = "noisy in run B"
			}
			if !d.NoisyA && !d.NoisyB {
				unflagged++
			}
			fmt.Fprintf(&b, "  %s: %s; %s\n", d.Cell, strings.Join(d.Figures, ", "), flag)
		}
	}
	writeNoise(&b, ag.Noise, ag.Tol, share, ag.Took)
	verdict := "met"
	if !ag.Met(share) {
		verdict = "not met"
	}
	fmt.Fprintf(&b, "\ngoal (>= %.0f %% of cells within ±%.0f %% for each figure, every cell outside flagged noisy in a run): %s", share*100, ag.Tol*100, verdict)
	if unflagged > 0 {
		fmt.Fprintf(&b, "; %d cells outside are flagged in neither run", unflagged)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}
