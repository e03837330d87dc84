package analysis

import (
	"math"

	"github.com/rpcbed/rpcbed/internal/results"
)

// SliceNoise is what one run says about its slice length (make bench-slices):
// the noise of one round and the time a round of one cell costs.
type SliceNoise struct {
	// Length is the measured window per run (the spec's duration), Rounds the
	// spec's rounds, Runs the timed runs measured.
	Length        float64
	Rounds, Runs  int
	Cells         int
	RunWallS      float64 // mean wall time of a run after a cell's first
	SwitchS       float64 // RunWallS less Length: warm-up, dialling, sampling, probes
	Sigma         map[string]float64
	SigmaFigures  []Figure
	MeasuredShare float64 // Length / RunWallS
}

// Slices measures run's slice noise: per figure (req/s and each side's CPU per
// call) the sd of a round's log value about its cell's mean, pooled over cells,
// and the mean wall time of the runs after each cell's first (whose longer
// warm-up a cell pays once, whatever its slice length).
func Slices(run *results.Run) SliceNoise {
	s := SliceNoise{Length: run.Spec.Load.Duration.D().Seconds(), Rounds: run.Spec.Repeats, Sigma: map[string]float64{},
		SigmaFigures: PrecisionFigures}
	var wall float64
	for _, c := range run.Cells {
		if c.Status != results.StatusOK {
			continue
		}
		s.Cells++
		for _, r := range c.Repeats {
			if r.Index > 1 && r.Report != nil {
				wall += r.WallS
				s.Runs++
			}
		}
	}
	if s.Runs > 0 {
		s.RunWallS = wall / float64(s.Runs)
		s.SwitchS = s.RunWallS - s.Length
		s.MeasuredShare = s.Length / s.RunWallS
	}
	for _, f := range PrecisionFigures {
		s.Sigma[f.Key] = math.Sqrt(NoiseOf(run.Cells, f.F).Pool.Var())
	}
	return s
}

// HalfWidth is the in-run 95 % half-width of figure key's median that this slice
// length gives a cell in t seconds of rounds: t / RunWallS rounds of noise Sigma
// (the median's variance pi/2 times the mean's).
func (s SliceNoise) HalfWidth(key string, t float64) float64 {
	if s.RunWallS <= 0 {
		return math.NaN()
	}
	k := t / s.RunWallS
	return 1.96 * math.Sqrt(math.Pi/2*s.Sigma[key]*s.Sigma[key]/k)
}

// TimeFor is the seconds of rounds per cell that bring figure key's in-run
// half-width down to hw at this slice length.
func (s SliceNoise) TimeFor(key string, hw float64) float64 {
	z := 1.96 * s.Sigma[key] / hw
	return math.Pi / 2 * z * z * s.RunWallS
}
