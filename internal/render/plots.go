package render

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// Plot sizes: the legend gets its own column to the right of the axes, so no line
// hides behind it.
const (
	plotW   = 9 * vg.Inch
	plotH   = 5 * vg.Inch
	legendW = 1.9 * vg.Inch
)

// Every client has one colour (its registry row's: plan.ClientKinds) and every
// protocol one dash pattern, in every plot.
var clientColor = clientColors()

func clientColors() map[string]color.Color {
	m := map[string]color.Color{}
	for _, c := range plan.ClientKinds {
		var r, g, b uint8
		if _, err := fmt.Sscanf(c.Color, "#%02x%02x%02x", &r, &g, &b); err == nil {
			m[c.Name] = color.RGBA{R: r, G: g, B: b, A: 0xff}
		}
	}
	return m
}

var protoColor = map[string]color.Color{
	"grpc":   color.RGBA{R: 0x24, G: 0x4c, B: 0x8f, A: 0xff},
	"thrift": color.RGBA{R: 0xc0, G: 0x39, B: 0x2b, A: 0xff},
	"http":   color.RGBA{R: 0x27, G: 0xae, B: 0x60, A: 0xff},
	"ice":    color.RGBA{R: 0x8e, G: 0x44, B: 0xad, A: 0xff},
	"dubbo":  color.RGBA{R: 0x7f, G: 0x8c, B: 0x8d, A: 0xff},
}

var protoDash = map[string][]vg.Length{
	"grpc":   nil,
	"thrift": {vg.Points(6), vg.Points(3)},
	"http":   {vg.Points(2), vg.Points(2)},
	"ice":    {vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)},
	"dubbo":  {vg.Points(12), vg.Points(4)},
}

var protoGlyph = map[string]draw.GlyphDrawer{
	"grpc": draw.CircleGlyph{}, "thrift": draw.SquareGlyph{}, "http": draw.TriangleGlyph{},
	"ice": draw.PlusGlyph{}, "dubbo": draw.CrossGlyph{},
}

// figure is one plot with its legend kept apart.
type figure struct {
	p      *plot.Plot
	legend plot.Legend
	lines  int
	h      vg.Length // the image's height; 0: plotH
	// left is a margin before the y axis's labels: long category labels are
	// drawn wider than gonum measures them (a 25-character label by ~8 px).
	left vg.Length
}

func newFigure(title, xlabel, ylabel string, logX, logY bool) *figure {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = Ticks125{}
	}
	p.Add(plotter.NewGrid())
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	return &figure{p: p, legend: leg}
}

// xTicksAt labels the x axis at exactly these values (items or concurrency levels),
// which log ticks would leave unlabelled.
func (f *figure) xTicksAt(xs []int) {
	var ticks []plot.Tick
	for _, x := range xs {
		if x > 0 {
			ticks = append(ticks, plot.Tick{Value: float64(x), Label: strconv.Itoa(x)})
		}
	}
	f.p.X.Tick.Marker = plot.ConstantTicks(ticks)
}

// line adds one series; points with a value that is not > 0 and finite are
// left out (log axes; a CPU per call over no calls is +Inf).
func (f *figure) line(name string, xs, ys []float64, c color.Color, dash []vg.Length, g draw.GlyphDrawer) error {
	var pts plotter.XYs
	for i := range xs {
		if ys[i] > 0 && !math.IsInf(ys[i], 1) && xs[i] > 0 && !math.IsInf(xs[i], 1) {
			pts = append(pts, plotter.XY{X: xs[i], Y: ys[i]})
		}
	}
	if len(pts) == 0 {
		return nil
	}
	l, s, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	l.Color, l.Dashes, l.Width = c, dash, vg.Points(1.5)
	s.Color, s.Shape, s.Radius = c, g, vg.Points(3)
	f.p.Add(l, s)
	f.legend.Add(name, l, s)
	f.lines++
	return nil
}

// errorBars draws each point's 95 % interval [lo, hi] as a vertical bar
// (points without a valid interval get none).
func (f *figure) errorBars(xs, ys, lo, hi []float64, c color.Color) error {
	var pts errPoints
	for i := range xs {
		if ys[i] > 0 && xs[i] > 0 && lo[i] > 0 && hi[i] >= ys[i] && !math.IsInf(hi[i], 0) {
			pts.xy = append(pts.xy, plotter.XY{X: xs[i], Y: ys[i]})
			pts.err = append(pts.err, struct{ Low, High float64 }{ys[i] - lo[i], hi[i] - ys[i]})
		}
	}
	if len(pts.xy) == 0 {
		return nil
	}
	b, err := plotter.NewYErrorBars(pts)
	if err != nil {
		return err
	}
	b.Color, b.Width = c, vg.Points(1)
	f.p.Add(b)
	return nil
}

// errPoints are points with their distances to an interval's ends.
type errPoints struct {
	xy  plotter.XYs
	err plotter.YErrors
}

func (p errPoints) Len() int                        { return len(p.xy) }
func (p errPoints) XY(i int) (float64, float64)     { return p.xy[i].X, p.xy[i].Y }
func (p errPoints) YError(i int) (float64, float64) { return p.err[i].Low, p.err[i].High }

// Ticks125 labels a log axis at 1, 2 and 5 times each power of ten in its
// range (log ticks label powers of ten only: two labels over most plots).
type Ticks125 struct{}

func (Ticks125) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	if !(min > 0) || !(max > min) {
		return plot.LogTicks{Prec: -1}.Ticks(min, max)
	}
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v >= min && v <= max {
				out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	if len(out) < 2 {
		return plot.LogTicks{Prec: -1}.Ticks(min, max)
	}
	return out
}

// oneLine draws the horizontal line y = 1 (equal cost) across the plot.
func (f *figure) oneLine(xmin, xmax float64) error {
	l, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: 1}, {X: xmax, Y: 1}})
	if err != nil {
		return err
	}
	l.Color, l.Width, l.Dashes = color.Black, vg.Points(1), []vg.Length{vg.Points(1), vg.Points(2)}
	f.p.Add(l)
	f.legend.Add("1x: equal cost", l)
	return nil
}

// fixLogRange widens a log axis that spans a single value (one concurrency, one
// size): gonum would otherwise pad it down to zero.
func fixLogRange(a *plot.Axis) {
	if _, ok := a.Scale.(plot.LogScale); !ok {
		return
	}
	if a.Min == a.Max || a.Min <= 0 {
		v := math.Max(a.Max, 1e-9)
		a.Min, a.Max = v/2, v*2
	}
}

// encode draws the figure as one image: format is png or svg.
func (f *figure) encode(format string) (b []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	fixLogRange(&f.p.X)
	fixLogRange(&f.p.Y)
	h := f.h
	if h == 0 {
		h = plotH
	}
	cw, err := draw.NewFormattedCanvas(plotW, h, format)
	if err != nil {
		return nil, err
	}
	dc := draw.New(cw)
	f.p.Draw(draw.Crop(dc, f.left, -legendW, 0, 0))
	lc := draw.Crop(dc, plotW-legendW+vg.Points(6), 0, 0, -vg.Points(30))
	f.legend.Draw(lc)
	var buf bytes.Buffer
	if _, err := cw.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// save writes NAME.png and NAME.svg.
func (f *figure) save(dir, name string) ([]string, error) {
	var files []string
	for _, format := range []string{"png", "svg"} {
		b, err := f.encode(format)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", name, err)
		}
		file := filepath.Join(dir, name+"."+format)
		if err := results.WriteFileAtomic(file, b); err != nil {
			return nil, err
		}
		files = append(files, file)
	}
	return files, nil
}

// namedFigure is one plot of a run and the file name (without extension) it has.
type namedFigure struct {
	name string
	fig  *figure
}

// Plots writes the plots of a run into dir (see figures) and returns their files.
func Plots(dir string, run *results.Run) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	figs, err := figures(run)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range figs {
		fs, err := f.fig.save(dir, f.name)
		files = append(files, fs...)
		if err != nil {
			return files, err
		}
	}
	return files, nil
}

// figures are the plots of a run, in the order pages list them:
//   - rps-vs-concurrency-CALL[-ITEMS]: requests/s against concurrency, one line per
//     client x protocol;
//   - latency-vs-items-CLIENT-cC: p50 (solid) and p99 (dashed) against items;
//   - client-cpu-vs-items-cC: client CPU per call against items, per client x protocol;
//   - php-go-cpu-ratio-cC: PHP's client CPU per call over Go's, per protocol;
//   - tls-over-plaintext: every TLS cell's ratios to its plaintext cell (tlscost.go).
//
// With a link dimension each comes once per link (NAME@LINK) and rps-vs-link-*
// follows (links.go).
func figures(run *results.Run) ([]namedFigure, error) {
	var figs []namedFigure
	var err error
	if links := runLinks(run); len(links) > 0 {
		figs, err = linkFigures(run, links)
	} else {
		figs, err = runFigures(run)
	}
	if err != nil {
		return nil, err
	}
	f, err := tlsFigure(analysis.ViewOf(run))
	if err != nil {
		return nil, fmt.Errorf("plot %s: %w", tlsPlotName, err)
	}
	if f != nil {
		figs = append(figs, namedFigure{tlsPlotName, f})
	}
	return figs, nil
}

// runFigures are the plots of cells without a link dimension.
func runFigures(run *results.Run) ([]namedFigure, error) {
	idx := index(run)
	var figs []namedFigure
	add := func(f *figure, name string, err error) error {
		if err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
		if f != nil {
			figs = append(figs, namedFigure{name, f})
		}
		return nil
	}
	for _, ck := range idx.callItems() {
		f, err := rpsVsConcurrency(idx, ck)
		if err := add(f, "rps-vs-concurrency-"+ck.String(), err); err != nil {
			return nil, err
		}
	}
	for _, c := range idx.conc {
		for _, client := range idx.clients {
			f, err := latencyVsItems(idx, client, c)
			if err := add(f, fmt.Sprintf("latency-vs-items-%s-c%d", client, c), err); err != nil {
				return nil, err
			}
		}
		f, err := clientCPUVsItems(idx, c)
		if err := add(f, fmt.Sprintf("client-cpu-vs-items-c%d", c), err); err != nil {
			return nil, err
		}
		f, err = phpGoRatio(idx, c)
		if err := add(f, fmt.Sprintf("php-go-cpu-ratio-c%d", c), err); err != nil {
			return nil, err
		}
	}
	return figs, nil
}

// cellIndex finds a run's successful cells by their coordinates.
type cellIndex struct {
	u       *analysis.Uncertainty
	cells   map[string]results.CellResult
	clients []string
	protos  map[string][]string // client -> protocols with a result
	items   []int               // datalist items
	conc    []int
	calls   []string
	vs      map[string]analysis.Comparison // the run's ratios by A|B|figure (vsGo)
}

// vsGo is the run's ratio of cell a's client CPU per call over go cell b's, with
// its interval and verdict (analysis.Comparisons); ok false when the run has
// none.
func (x *cellIndex) vsGo(a, b plan.Cell) (analysis.Comparison, bool) {
	if x.vs == nil {
		x.vs = map[string]analysis.Comparison{}
		for _, c := range x.u.Comparisons() {
			x.vs[c.A+"|"+c.B+"|"+c.Figure.Key] = c
		}
	}
	c, ok := x.vs[a.Name()+"|"+b.Name()+"|"+analysis.FigClientCPU.Figure().Key]
	return c, ok && c.Ratio.Valid()
}

func index(run *results.Run) *cellIndex {
	x := &cellIndex{u: analysis.UncertaintyOf(run), cells: map[string]results.CellResult{}, protos: map[string][]string{}}
	for _, c := range run.Cells {
		if c.Status != results.StatusOK {
			continue
		}
		x.cells[c.Name] = c
		if !slices.Contains(x.protos[c.Client], c.Protocol) {
			x.protos[c.Client] = append(x.protos[c.Client], c.Protocol)
		}
		if c.Call == "datalist" && !slices.Contains(x.items, c.Items) {
			x.items = append(x.items, c.Items)
		}
		if !slices.Contains(x.conc, c.Concurrency) {
			x.conc = append(x.conc, c.Concurrency)
		}
		if !slices.Contains(x.calls, c.Call) {
			x.calls = append(x.calls, c.Call)
		}
	}
	for _, c := range plan.Clients {
		if x.protos[c] != nil {
			x.clients = append(x.clients, c)
			slices.SortFunc(x.protos[c], func(a, b string) int {
				return slices.Index(plan.Protocols, a) - slices.Index(plan.Protocols, b)
			})
		}
	}
	slices.Sort(x.items)
	slices.Sort(x.conc)
	return x
}

// median of one metric in a cell; NaN when the cell has no result.
func (x *cellIndex) median(c plan.Cell, f func(results.Metrics) float64) float64 {
	r, ok := x.cells[c.Name()]
	if !ok {
		return math.NaN()
	}
	return r.Stat(f).Median
}

// interval of one figure in a cell: its 95 % bounds (NaN when it has none).
func (x *cellIndex) interval(c plan.Cell, f analysis.Figure) (lo, hi float64) {
	r, ok := x.cells[c.Name()]
	if !ok {
		return math.NaN(), math.NaN()
	}
	iv := x.u.Interval(r, f)
	if !iv.Valid() {
		return math.NaN(), math.NaN()
	}
	return iv.Low, iv.High
}

type callItems struct {
	call  string
	items int
}

func (k callItems) String() string {
	if k.call == "datalist" {
		return "datalist-" + strconv.Itoa(k.items)
	}
	return k.call
}

func (x *cellIndex) callItems() []callItems {
	var ks []callItems
	if slices.Contains(x.calls, "datatype") {
		ks = append(ks, callItems{call: "datatype"})
	}
	if slices.Contains(x.calls, "datalist") {
		for _, n := range x.items {
			ks = append(ks, callItems{"datalist", n})
		}
	}
	return ks
}

func floats(v []int) []float64 {
	f := make([]float64, len(v))
	for i, x := range v {
		f[i] = float64(x)
	}
	return f
}

func rpsVsConcurrency(x *cellIndex, k callItems) (*figure, error) {
	f := newFigure("Requests/s vs concurrency, "+k.String(), "concurrency (-c, log scale)", "requests/s (median, 95 % interval, log scale)", true, true)
	f.xTicksAt(x.conc)
	for _, client := range x.clients {
		for _, proto := range x.protos[client] {
			ys, lo, hi := make([]float64, len(x.conc)), make([]float64, len(x.conc)), make([]float64, len(x.conc))
			for i, c := range x.conc {
				cell := plan.Cell{Client: client, Protocol: proto, Call: k.call, Items: k.items, Concurrency: c}
				ys[i] = x.median(cell, results.RPS)
				lo[i], hi[i] = x.interval(cell, analysis.FigRPS.Figure())
			}
			if err := f.line(client+"-"+proto, floats(x.conc), ys, clientColor[client], protoDash[proto], protoGlyph[proto]); err != nil {
				return nil, err
			}
			if err := f.errorBars(floats(x.conc), ys, lo, hi, clientColor[client]); err != nil {
				return nil, err
			}
		}
	}
	if f.lines == 0 {
		return nil, nil
	}
	return f, nil
}

func latencyVsItems(x *cellIndex, client string, c int) (*figure, error) {
	if len(x.items) == 0 {
		return nil, nil
	}
	f := newFigure(fmt.Sprintf("%s client: latency vs items, datalist, c=%d", client, c),
		"items per response (log scale)", "latency, ms (median, 95 % interval, log scale)", true, true)
	f.xTicksAt(x.items)
	for _, proto := range x.protos[client] {
		for _, q := range []struct {
			name string
			fig  analysis.FigureIndex
			dash []vg.Length
		}{{"p50", analysis.FigP50, nil}, {"p99", analysis.FigP99, []vg.Length{vg.Points(5), vg.Points(3)}}} {
			ys, lo, hi := make([]float64, len(x.items)), make([]float64, len(x.items)), make([]float64, len(x.items))
			for i, n := range x.items {
				cell := plan.Cell{Client: client, Protocol: proto, Call: "datalist", Items: n, Concurrency: c}
				ys[i] = x.median(cell, q.fig.Figure().F) / 1000
				lo[i], hi[i] = x.interval(cell, q.fig.Figure())
				lo[i], hi[i] = lo[i]/1000, hi[i]/1000
			}
			if err := f.line(proto+" "+q.name, floats(x.items), ys, protoColor[proto], q.dash, protoGlyph[proto]); err != nil {
				return nil, err
			}
			if err := f.errorBars(floats(x.items), ys, lo, hi, protoColor[proto]); err != nil {
				return nil, err
			}
		}
	}
	if f.lines == 0 {
		return nil, nil
	}
	return f, nil
}

func clientCPUVsItems(x *cellIndex, c int) (*figure, error) {
	if len(x.items) == 0 {
		return nil, nil
	}
	f := newFigure(fmt.Sprintf("Client CPU per call by language, datalist, c=%d", c),
		"items per response (log scale)", "client CPU µs per call (95 % interval, log scale)", true, true)
	f.xTicksAt(x.items)
	for _, client := range x.clients {
		for _, proto := range x.protos[client] {
			ys, lo, hi := make([]float64, len(x.items)), make([]float64, len(x.items)), make([]float64, len(x.items))
			for i, n := range x.items {
				cell := plan.Cell{Client: client, Protocol: proto, Call: "datalist", Items: n, Concurrency: c}
				ys[i] = x.median(cell, results.ClientCPU)
				lo[i], hi[i] = x.interval(cell, analysis.FigClientCPU.Figure())
			}
			if err := f.line(client+"-"+proto, floats(x.items), ys, clientColor[client], protoDash[proto], protoGlyph[proto]); err != nil {
				return nil, err
			}
			if err := f.errorBars(floats(x.items), ys, lo, hi, clientColor[client]); err != nil {
				return nil, err
			}
		}
	}
	if f.lines == 0 {
		return nil, nil
	}
	return f, nil
}

func phpGoRatio(x *cellIndex, c int) (*figure, error) {
	if len(x.items) == 0 {
		return nil, nil
	}
	f := newFigure(fmt.Sprintf("PHP vs Go client: CPU per call ratio, datalist, c=%d", c),
		"items per response (log scale)", "PHP CPU per call / Go's (95 % interval, log scale)", true, true)
	f.xTicksAt(x.items)
	// Both PHP variants: php (protobuf C extension, Thrift accelerator) in the
	// protocol's colour, php-pure in php-pure's colour, each labelled by its cell
	// prefix. A ratio on a cell of too few calls (few-calls) is drawn apart, at
	// the edge of the range the others set, and never sets the scale.
	lo1, hi1 := 1.0, 1.0
	var outX, outY []float64
	var outNames []string // the cells drawn apart, for the count
	for _, client := range plan.ClientsIn("php") {
		for _, proto := range plan.Protocols {
			ys, lo, hi := make([]float64, len(x.items)), make([]float64, len(x.items)), make([]float64, len(x.items))
			for i, n := range x.items {
				a := plan.Cell{Client: client, Protocol: proto, Call: "datalist", Items: n, Concurrency: c}
				b := plan.Cell{Client: "go", Protocol: proto, Call: "datalist", Items: n, Concurrency: c}
				ys[i], lo[i], hi[i] = math.NaN(), math.NaN(), math.NaN()
				r, ok := x.vsGo(a, b)
				if !ok {
					continue
				}
				if x.fewCalls(a) || x.fewCalls(b) {
					outX, outY = append(outX, float64(n)), append(outY, r.Ratio.Center)
					outNames = append(outNames, a.Name())
					continue
				}
				ys[i], lo[i], hi[i] = r.Ratio.Center, r.Ratio.Low, r.Ratio.High
				lo1, hi1 = math.Min(lo1, r.Ratio.Low), math.Max(hi1, r.Ratio.High)
			}
			col := protoColor[proto]
			if cl, _ := plan.ClientOf(client); cl.Base != "" {
				col = clientColor[client]
			}
			if err := f.line(client+"-"+proto, floats(x.items), ys, col, protoDash[proto], protoGlyph[proto]); err != nil {
				return nil, err
			}
			if err := f.errorBars(floats(x.items), ys, lo, hi, col); err != nil {
				return nil, err
			}
		}
	}
	if f.lines == 0 {
		return nil, nil
	}
	f.p.Y.Min, f.p.Y.Max = lo1/1.25, hi1*1.25
	if err := f.oneLine(float64(x.items[0]), float64(x.items[len(x.items)-1])); err != nil {
		return nil, err
	}
	if len(outX) > 0 {
		var pts plotter.XYs
		for i := range outX {
			pts = append(pts, plotter.XY{X: outX[i], Y: math.Min(math.Max(outY[i], f.p.Y.Min), f.p.Y.Max)})
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.Shape, sc.Color, sc.Radius = draw.PyramidGlyph{}, color.RGBA{R: 0xb3, G: 0x26, B: 0x1e, A: 0xff}, vg.Points(5)
		f.p.Add(sc)
		f.legend.Add(fmt.Sprintf("few-calls (%d), at the edge", len(outNames)), sc)
	}
	return f, nil
}

// fewCalls says whether cell c carries the few-calls flag (too few calls in a
// window to compare).
func (x *cellIndex) fewCalls(c plan.Cell) bool {
	r, ok := x.cells[c.Name()]
	return ok && slices.Contains(r.Summarized().Flags, results.FlagFewCalls)
}
