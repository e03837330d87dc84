package costrender

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rpcbed/rpcbed/internal/cost"
	"github.com/rpcbed/rpcbed/internal/cost/coststats"
	"github.com/rpcbed/rpcbed/internal/plan"
)

// PlotsDir is where a cost run's plots go, inside its directory.
const PlotsDir = "plots"

// Plot is one figure of a cost run, drawn as SVG.
type Plot struct {
	Name, Caption string
	SVG, PNG      []byte
}

// layerColors: one per layer.
var layerColors = map[string]color.Color{
	cost.LayerCodec:     color.RGBA{0x1f, 0x77, 0xb4, 0xff},
	cost.LayerRPC:       color.RGBA{0xff, 0x7f, 0x0e, 0xff},
	cost.LayerCrypto:    color.RGBA{0xe3, 0x77, 0xc2, 0xff},
	cost.LayerTransport: color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
	cost.LayerRuntime:   color.RGBA{0x94, 0x67, 0xbd, 0xff},
	cost.LayerRpcbed:    color.RGBA{0xd6, 0x27, 0x28, 0xff},
	cost.LayerOther:     color.RGBA{0x7f, 0x7f, 0x7f, 0xff},
	cost.LayerGC:        color.RGBA{0x8c, 0x56, 0x4b, 0xff}, // apart, on top
}

// Plots draws the cost run's figures: PHP over Go, the layers per cell on each
// side, and (with a matrix run) estimated cycles against CPU per call.
func Plots(r *cost.Result, t cost.Timed) ([]Plot, error) {
	var out []Plot
	add := func(name, caption string, p *plot.Plot, w, h vg.Length, err error) error {
		if err != nil || p == nil {
			return err
		}
		b, err := draw1(p, w, h, "svg")
		if err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
		pb, err := draw1(p, w, h, "png")
		if err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
		out = append(out, Plot{Name: name, Caption: caption, SVG: b, PNG: pb})
		return nil
	}
	p, err := phpOverGoPlot(r)
	if err := add("php-over-go", "PHP's client cost per call as a multiple of Go's, same protocol and size (1 = as Go)", p, 9*vg.Inch, 4.5*vg.Inch, err); err != nil {
		return nil, err
	}
	for _, side := range []string{cost.SideClient, cost.SideServer} {
		p, h, err := layersPlot(r, side)
		if err := add("layers-"+side, "Where the "+side+"'s instructions per call go, by layer (share of the call's instructions)", p, 9*vg.Inch, h, err); err != nil {
			return nil, err
		}
	}
	if t != nil {
		p, err := cyclesVsCPUPlot(r, t)
		if err := add("cycles-vs-cpu", "Estimated cycles per call against the matrix's CPU µs per call (same cells, same side)", p, 7*vg.Inch, 5*vg.Inch, err); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// WritePlots writes dir/plots/NAME.svg and NAME.png for every figure.
func WritePlots(dir string, r *cost.Result, t cost.Timed) error {
	plots, err := Plots(r, t)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, PlotsDir), 0o755); err != nil {
		return err
	}
	for _, p := range plots {
		if err := os.WriteFile(filepath.Join(dir, PlotsDir, p.Name+".svg"), p.SVG, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, PlotsDir, p.Name+".png"), p.PNG, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func draw1(p *plot.Plot, w, h vg.Length, format string) (b []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	wt, err := p.WriterTo(w, h, format)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func phpOverGoPlot(r *cost.Result) (*plot.Plot, error) {
	rows := coststats.PHPOverGo(r)
	if len(rows) == 0 {
		return nil, nil
	}
	// Categories: protocol-items in the order seen; series: client x measure.
	var cats []string
	catIdx := map[string]int{}
	for _, x := range rows {
		k := x.Protocol + "-" + strconv.Itoa(x.Items)
		if _, ok := catIdx[k]; !ok {
			catIdx[k] = len(cats)
			cats = append(cats, k)
		}
	}
	type series struct {
		name    string
		client  string
		measure func(coststats.Ratio) float64
	}
	var all []series
	for _, cl := range plan.ClientsIn("php") {
		all = append(all,
			series{cl + " instructions", cl, func(x coststats.Ratio) float64 { return x.Instructions }},
			series{cl + " est. cycles", cl, func(x coststats.Ratio) float64 { return x.Cycles }})
	}
	// A dot per client x measure and protocol-size, on a log axis with a line at
	// 1x: php-pure's 30-70x and php's 0.5-2x both readable, nothing past the
	// frame (bars from 0 cannot sit on a log axis, and on a linear one php-pure
	// flattened every production-PHP bar to 0).
	p := plot.New()
	p.Title.Text = "PHP client over Go client, per call (c=1)"
	p.Y.Label.Text = "x Go (log scale; the dashed line is 1x)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	lo, hi := 1.0, 1.0
	n := 0
	shapes := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.PlusGlyph{}, draw.RingGlyph{}, draw.CrossGlyph{}}
	for _, s := range all {
		var pts plotter.XYs
		for _, x := range rows {
			if v := s.measure(x); x.Client == s.client && v > 0 && !math.IsNaN(v) && !math.IsInf(v, 0) {
				pts = append(pts, plotter.XY{X: float64(catIdx[x.Protocol+"-"+strconv.Itoa(x.Items)]) + 0.12*(float64(n)-1.5), Y: v})
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
		if len(pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle.Color = plotutil.Color(n)
		sc.GlyphStyle.Shape = shapes[n%len(shapes)]
		sc.GlyphStyle.Radius = vg.Points(4)
		p.Add(sc)
		p.Legend.Add(s.name, sc)
		n++
	}
	p.NominalX(cats...)
	p.X.Min, p.X.Max = -0.6, float64(len(cats))-0.4
	p.Y.Min, p.Y.Max = lo/1.5, hi*1.5
	one := plotter.NewFunction(func(float64) float64 { return 1 })
	one.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(one)
	return p, nil
}

func layersPlot(r *cost.Result, side string) (*plot.Plot, vg.Length, error) {
	var cells []cost.CellRun
	for _, c := range r.Cells {
		if _, ok := c.PerCall.Shares(); ok && c.Side == side && c.Status == cost.StatusOK && c.OneTimeWork() == "" {
			cells = append(cells, c)
		}
	}
	if len(cells) == 0 {
		return nil, 0, nil
	}
	p := plot.New()
	p.Title.Text = "Instructions per call by layer, " + side + " side"
	p.X.Label.Text = "% of the call's instructions (the garbage collector on top, apart)"
	p.Legend.Top = true
	p.Legend.Left = false
	var names []string
	for i := len(cells) - 1; i >= 0; i-- { // first cell on top
		names = append(names, cells[i].Cell)
	}
	var prev *plotter.BarChart
	for _, l := range r.LayerSet() {
		vals := make(plotter.Values, len(names))
		for i := range names {
			c := cells[len(cells)-1-i]
			sh, _ := c.PerCall.Shares()
			v := 100 * sh[l]
			if l == cost.LayerGC {
				v = math.Max(0, 100*c.PerCall.GC.Ir/c.PerCall.Ir) // a collection in the short run only: none per call
			}
			vals[i] = v
		}
		bc, err := plotter.NewBarChart(vals, vg.Points(9))
		if err != nil {
			return nil, 0, err
		}
		bc.Horizontal = true
		bc.Color = layerColors[l]
		bc.LineStyle.Width = 0
		if prev != nil {
			bc.StackOn(prev)
		}
		p.Add(bc)
		p.Legend.Add(cost.LayerNames[l], bc)
		prev = bc
	}
	p.NominalY(names...)
	p.X.Min, p.X.Max = 0, 150 // room on the right for the legend
	h := vg.Points(float64(14*len(names) + 90))
	return p, h, nil
}

func cyclesVsCPUPlot(r *cost.Result, t cost.Timed) (*plot.Plot, error) {
	cmp := coststats.CompareTimed(r, t)
	if len(cmp.Points) == 0 {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Estimated cycles vs measured CPU per call (Spearman %.2f)", cmp.Spearman)
	p.X.Label.Text = "CPU µs per call (matrix, timed)"
	p.Y.Label.Text = "estimated cycles per call (callgrind)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	type group struct {
		name   string
		side   string
		client string
	}
	var groups []group
	for _, cl := range cost.CallgrindClients() {
		groups = append(groups, group{cl + " client", cost.SideClient, cl})
	}
	for _, cl := range cost.CallgrindClients() {
		groups = append(groups, group{"go-server (" + cl + " clients)", cost.SideServer, cl})
	}
	for i, g := range groups {
		var pts plotter.XYs
		for _, pt := range cmp.Points {
			if pt.Side == g.side && pt.Client == g.client && pt.CPUus > 0 && pt.Cycles > 0 {
				pts = append(pts, plotter.XY{X: pt.CPUus, Y: pt.Cycles})
			}
		}
		if len(pts) == 0 {
			continue
		}
		s, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		s.Color = plotutil.Color(i % 3)
		s.Radius = vg.Points(3.5)
		if g.side == cost.SideServer {
			s.Shape = draw.BoxGlyph{}
		} else {
			s.Shape = draw.CircleGlyph{}
		}
		p.Add(s)
		p.Legend.Add(g.name, s)
	}
	return p, nil
}
