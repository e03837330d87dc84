package capacity

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rpcbed/rpcbed/internal/render"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/stats"
)

var (
	runColor  = color.RGBA{R: 0x24, G: 0x4c, B: 0x8f, A: 0xff}
	missColor = color.RGBA{R: 0xc0, G: 0x39, B: 0x2b, A: 0xff}
	sloColors = []color.Color{
		color.RGBA{R: 0xe7, G: 0x6f, B: 0x00, A: 0xff},
		color.RGBA{R: 0x27, G: 0xae, B: 0x60, A: 0xff},
		color.RGBA{R: 0x8e, G: 0x44, B: 0xad, A: 0xff},
		color.RGBA{R: 0x7f, G: 0x8c, B: 0x8d, A: 0xff},
	}
)

// Plots writes plots/CELL.png for every cell with runs: p99 from the intended
// start against the offered rate (the hockey stick), every run a point (a
// run that missed the offered rate in red), the median per rate a line, each
// SLO's p99 budget a dashed line and its knee a vertical line with its 95 %
// interval.
func Plots(dir string, run *Run) error {
	if err := os.MkdirAll(filepath.Join(dir, PlotsDir), 0o755); err != nil {
		return err
	}
	for i := range run.Cells {
		c := &run.Cells[i]
		if len(c.Runs) == 0 {
			continue
		}
		b, err := HockeyStick(c, float64(run.Spec.Search.Accuracy))
		if err != nil {
			return fmt.Errorf("plot %s: %w", c.Name, err)
		}
		if err := results.WriteFileAtomic(filepath.Join(dir, PlotsDir, c.Name+".png"), b); err != nil {
			return err
		}
	}
	return nil
}

// HockeyStick is one cell's plot as PNG.
func HockeyStick(c *CellResult, acc float64) (b []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	p := plot.New()
	p.Title.Text = c.Name + ": p99 from the intended start against the offered rate"
	p.X.Label.Text = "offered rate (calls/s)"
	p.Y.Label.Text = "p99 (ms)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	// 1, 2 and 5 times each power of ten: a search's rates rarely span one.
	p.X.Tick.Marker, p.Y.Tick.Marker = render.Ticks125{}, render.Ticks125{}
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true

	var held, missed plotter.XYs
	byRate := map[float64][]float64{}
	for _, o := range c.Runs {
		if o.Error != "" || o.P99Us <= 0 || o.Offered <= 0 {
			continue
		}
		pt := plotter.XY{X: o.Offered, Y: o.P99Us / 1000}
		if o.Held(acc) {
			held = append(held, pt)
		} else {
			missed = append(missed, pt)
		}
		byRate[o.Offered] = append(byRate[o.Offered], o.P99Us/1000)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for _, pts := range []plotter.XYs{held, missed} {
		for _, pt := range pts {
			lo, hi = math.Min(lo, pt.X), math.Max(hi, pt.X)
			ylo, yhi = math.Min(ylo, pt.Y), math.Max(yhi, pt.Y)
		}
	}
	if math.IsInf(lo, 1) {
		return nil, fmt.Errorf("no run with figures")
	}
	rates := make([]float64, 0, len(byRate))
	for r := range byRate {
		rates = append(rates, r)
	}
	slices.Sort(rates)
	var med plotter.XYs
	for _, r := range rates {
		med = append(med, plotter.XY{X: r, Y: stats.Median(byRate[r])})
	}
	if len(med) > 1 {
		l, err := plotter.NewLine(med)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = runColor, vg.Points(1)
		p.Add(l)
		p.Legend.Add("median per rate", l)
	}
	for _, s := range []struct {
		pts   plotter.XYs
		c     color.Color
		g     draw.GlyphDrawer
		label string
	}{{held, runColor, draw.CircleGlyph{}, "a run (rate held)"}, {missed, missColor, draw.CrossGlyph{}, "a run (rate missed)"}} {
		if len(s.pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(s.pts)
		if err != nil {
			return nil, err
		}
		sc.Color, sc.Shape, sc.Radius = s.c, s.g, vg.Points(2.5)
		p.Add(sc)
		p.Legend.Add(s.label, sc)
	}
	for i, k := range c.Knees {
		col := sloColors[i%len(sloColors)]
		budget := k.SLO.P99.D().Seconds() * 1000
		ylo, yhi = math.Min(ylo, budget), math.Max(yhi, budget)
		h, err := plotter.NewLine(plotter.XYs{{X: lo / 1.2, Y: budget}, {X: hi * 1.2, Y: budget}})
		if err != nil {
			return nil, err
		}
		h.Color, h.Dashes, h.Width = col, []vg.Length{vg.Points(6), vg.Points(3)}, vg.Points(1.5)
		p.Add(h)
		p.Legend.Add("SLO "+k.SLO.Name(), h)
		if k.Status != StatusFound {
			continue
		}
		for j, x := range []float64{k.Rate, k.Low, k.High} {
			v, err := plotter.NewLine(plotter.XYs{{X: x, Y: ylo / 1.5}, {X: x, Y: yhi * 1.5}})
			if err != nil {
				return nil, err
			}
			v.Color, v.Width = col, vg.Points(2)
			if j > 0 {
				v.Width, v.Dashes = vg.Points(0.75), []vg.Length{vg.Points(2), vg.Points(2)}
			}
			p.Add(v)
			if j == 0 {
				p.Legend.Add(fmt.Sprintf("knee %s [%s, %s]/s", thousands(k.Rate), thousands(k.Low), thousands(k.High)), v)
			}
		}
	}
	p.X.Min, p.X.Max = lo/1.2, hi*1.2
	p.Y.Min, p.Y.Max = ylo/1.5, yhi*1.5
	cw, err := draw.NewFormattedCanvas(9*vg.Inch, 5*vg.Inch, "png")
	if err != nil {
		return nil, err
	}
	p.Draw(draw.New(cw))
	var buf bytes.Buffer
	if _, err := cw.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
