package analysis

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// NoiseModel is what two runs' own repeats say about their agreement: how far a
// repeat strays from its cell's mean within a run, how much the runs differ beyond
// that, and what this predicts for the share of agreeing cells at more repeats per
// cell (docs/method.md, section 6). It answers "would more repeats reach the goal
// on this machine, and how many" from the runs alone.
type NoiseModel struct {
	Figure string
	// Cells with at least two repeats in each run; Deviations: the repeats pooled.
	Cells, Deviations int
	// Repeats is the runs' repeats per cell (the median over the cells).
	Repeats int
	// MedianDev is a repeat's median distance from its cell's mean within its run,
	// relative (0.11: 11 %); MedianDevA and MedianDevB each run's own: a run
	// quieter than its rerun has intervals too narrow for it (docs/method.md,
	// section 6).
	MedianDev, MedianDevA, MedianDevB float64
	// Shift is B's offset from A common to the cells, relative (+0.05: B's figure
	// 5 % higher across the cells); 0 unless it stands out of the cells' spread by
	// two standard errors.
	Shift float64
	// RunSD is the runs' difference beyond their repeats' noise and the shift, as a
	// relative standard deviation of a run's offset per cell (0 when the repeats'
	// noise explains the difference between the runs' means).
	RunSD float64
	// Predicted is the share of cells within Tol that resampling the deviations
	// predicts at Repeats; Measured the share the runs have.
	Predicted, Measured float64
	// Needed is the fewest repeats per cell (of NoiseRepeats) whose predicted share
	// reaches the goal; 0 when none does.
	Needed int
}

// NoiseRepeats are the repeat counts the model tries, and NoiseTrials the
// resampled pairs of runs per count (a predicted share moves by about ±1 % between
// seeds at 4000).
var NoiseRepeats = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20, 25, 30, 40, 50, 64}

const NoiseTrials = 4000

// Noise models each agreement figure (AgreeFigures) from runs a and b: measured
// is the share of cells the runs agree on per figure (NaN: unknown), goal the
// share asked for within tol. The resampling is seeded: the same runs give the same model.
func Noise(a, b *results.Run, measured []float64, tol, goal float64) []NoiseModel {
	bcells := map[string]results.CellResult{}
	for _, c := range b.Cells {
		bcells[c.Name] = c
	}
	var out []NoiseModel
	for i, f := range AgreeFigures {
		m := NoiseModel{Figure: f.Name, Measured: math.NaN()}
		if i < len(measured) {
			m.Measured = measured[i]
		}
		var resid []float64
		var absRun [2][]float64 // each run's |deviation|s: A's, B's
		var reps []int
		var diffs, inv []float64 // per cell: mean A - mean B, and 1/na + 1/nb
		for _, ca := range a.Cells {
			cb, ok := bcells[ca.Name]
			if !ok {
				continue
			}
			la, lb := stats.Logs(ca.Values(f.F)), stats.Logs(cb.Values(f.F))
			if len(la) < 2 || len(lb) < 2 {
				continue
			}
			m.Cells++
			reps = append(reps, len(la), len(lb))
			for run, l := range [][]float64{la, lb} {
				mean := stats.Mean(l)
				k := math.Sqrt(float64(len(l)) / float64(len(l)-1)) // a deviation from the sample's own mean is that much short
				for _, x := range l {
					resid = append(resid, (x-mean)*k)
					absRun[run] = append(absRun[run], math.Abs(x-mean)*k)
				}
			}
			diffs = append(diffs, stats.Mean(lb)-stats.Mean(la))
			inv = append(inv, 1/float64(len(la))+1/float64(len(lb)))
		}
		if m.Cells == 0 {
			out = append(out, m)
			continue
		}
		m.Deviations = len(resid)
		slices.Sort(reps)
		m.Repeats = reps[len(reps)/2]
		abs := make([]float64, len(resid))
		var sw float64
		for j, r := range resid {
			abs[j] = math.Abs(r)
			sw += r * r
		}
		sw /= float64(len(resid))
		slices.Sort(abs)
		m.MedianDev = math.Expm1(abs[len(abs)/2])
		m.MedianDevA, m.MedianDevB = math.Expm1(stats.Median(absRun[0])), math.Expm1(stats.Median(absRun[1]))
		// A shift common to the cells (the whole machine faster in B) counts when
		// the cells' mean difference lies two standard errors from 0.
		k := float64(m.Cells)
		shift, sd := stats.MeanSD(diffs)
		if m.Cells < 2 || math.Abs(shift) <= 2*sd/math.Sqrt(k) {
			shift = 0
		}
		m.Shift = math.Expm1(shift)
		// Around it, E[(d - shift)²] = 2 σrun² + σw² (1/na + 1/nb) per cell. Without
		// a run offset each cell's term over σw² (1/na + 1/nb) is about χ² with one
		// degree of freedom, so their mean is 1 ± sqrt(2/cells): only an excess
		// beyond two of those standard errors counts as the runs differing.
		var between, within float64
		for j, d := range diffs {
			between += (d - shift) * (d - shift)
			within += inv[j]
		}
		if sw > 0 && between/(sw*within) > 1+2*math.Sqrt(2/k) {
			m.RunSD = math.Sqrt((between - sw*within) / (2 * k))
		}
		r := rand.New(rand.NewPCG(11, uint64(i)))
		m.Predicted = stats.ShareWithin(r, resid, shift, m.RunSD, m.Repeats, NoiseTrials, tol)
		for _, n := range NoiseRepeats {
			if stats.ShareWithin(r, resid, shift, m.RunSD, n, NoiseTrials, tol) >= goal {
				m.Needed = n
				break
			}
		}
		out = append(out, m)
	}
	return out
}

// AgreeFigures are the figures two runs' agreement is judged on: throughput and
// CPU per call each side.
var AgreeFigures = []struct {
	Name string
	F    func(results.Metrics) float64
}{
	{"req/s", results.RPS},
	{"client CPU/call", results.ClientCPU},
	{"server CPU/call", results.ServerCPU},
}
