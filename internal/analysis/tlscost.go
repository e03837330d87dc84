package analysis

import (
	"math"
	"slices"
	"strings"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// What TLS costs, computed once for every printer (matrix.md, the page, its
// plot, README's block, matrix.json): each TLS cell against its plaintext
// cell, and for cells that open a connection per call, what one handshake
// costs each side.

// TLSCostFigures are the figures "What TLS costs" gives, in its columns' order.
var TLSCostFigures = []FigureIndex{FigClientCPU, FigServerCPU, FigP50, FigRPS}

// TLSCost is one TLS cell against its plaintext cell (the same cell, connection
// mode included, with security plaintext).
type TLSCost struct {
	A, B      string // the TLS cell's and the plaintext cell's names
	plan.Cell        // the TLS cell's coordinates
	// By is each figure's tls/plaintext ratio (TLSCostFigures; absent: none).
	By map[FigureIndex]Comparison
	// Dropped names the mismatch flags (results.DropsComparisons) that left the
	// pair out: its ratios are not made. "" for a pair that was compared.
	Dropped string
}

// TLSCosts are the run's TLS cells with their plaintext cells, in the run's
// order; a TLS cell without a plaintext cell in the run is left out.
func (v *View) TLSCosts() []TLSCost {
	by := map[string]Comparison{}
	for _, c := range v.Comparisons {
		if c.Kind == TLSVsPlaintext {
			by[c.A+"|"+c.Figure.Key] = c
		}
	}
	var out []TLSCost
	for _, cv := range v.Cells {
		if !cv.Sec().IsTLS() || cv.Status != results.StatusOK {
			continue
		}
		plain, ok := v.Cell(cv.Cell.Plaintext().Name())
		if !ok || plain.Status != results.StatusOK {
			continue
		}
		t := TLSCost{A: cv.Name, B: plain.Name, Cell: cv.Cell, By: map[FigureIndex]Comparison{}}
		for _, i := range TLSCostFigures {
			if c, ok := by[cv.Name+"|"+i.Figure().Key]; ok {
				t.By[i] = c
			}
		}
		t.Dropped = strings.Join(slices.Concat(dropFlags(cv), dropFlags(plain)), " ")
		out = append(out, t)
	}
	return out
}

// dropFlags are c's flags that leave it out of every comparison.
func dropFlags(c CellView) []string {
	var out []string
	for _, f := range c.Sum.Flags {
		if results.DropsComparisons(f) {
			out = append(out, f)
		}
	}
	return out
}

// Handshake is what opening a connection per call costs a cell: its
// handshakes and connections per call over the window, and each side's CPU per
// call beyond the same cell keeping its connections (the paired difference
// per-call minus persistent), per call and per handshake (per connection for a
// plaintext cell).
type Handshake struct {
	A, B      string // the per-call cell's and its persistent cell's names
	plan.Cell        // the per-call cell's coordinates
	// PerCall is the cell's handshakes per call in the window, the median over
	// its rounds (Low, High: the rounds' least and most); Conns is its
	// connections opened per call the same way; Resumed the share of its
	// handshakes that resumed a session (median). NaN where the report has none.
	PerCall, PerCallLow, PerCallHigh float64
	Conns, Resumed                   float64
	// Client and Server are each side's extra CPU.
	Client, Server HandshakeCPU
	Dropped        string // as TLSCost's
}

// HandshakeCPU is one side's CPU per call of the per-call cell beyond its
// persistent cell: Extra in µs per call with its 95 % interval, Each the same
// per handshake (per connection opened for a plaintext cell), and the paired
// ratio it comes from.
type HandshakeCPU struct {
	Extra, Each stats.Interval
	Ratio       Comparison
	OK          bool
	// Impossible: the whole interval lies below 0, a connection per call
	// costing less CPU than keeping one, which no handshake can do: the figure
	// is left out (not OK) and said, never printed as a result.
	Impossible bool
}

// nonNegative bounds an extra CPU that cannot be negative (opening a connection
// and handshaking never saves CPU): an interval reaching below 0 is cut at 0,
// and the estimate with it; one wholly below 0 is impossible.
func nonNegative(e stats.Interval) (stats.Interval, bool) {
	if e.N == 0 {
		return e, false
	}
	if e.High < 0 {
		return e, true
	}
	e.Low, e.Center = math.Max(e.Low, 0), math.Max(e.Center, 0)
	return e, false
}

// Handshakes are the run's per-call cells against their persistent cells, in
// the run's order.
func (v *View) Handshakes() []Handshake {
	by := map[string]Comparison{}
	for _, c := range v.Comparisons {
		if c.Kind == PerCallVsPersistent {
			by[c.A+"|"+c.Figure.Key] = c
		}
	}
	var out []Handshake
	for _, cv := range v.Cells {
		if cv.ConnectMode() != plan.PerCall || cv.Status != results.StatusOK {
			continue
		}
		pc := cv.Cell
		pc.Connect = ""
		pers, ok := v.Cell(pc.Name())
		if !ok || pers.Status != results.StatusOK {
			continue
		}
		h := Handshake{A: cv.Name, B: pers.Name, Cell: cv.Cell,
			Dropped: strings.Join(slices.Concat(dropFlags(cv), dropFlags(pers)), " ")}
		hs, conns, res := perCallCounts(cv.CellResult)
		h.PerCall, h.Conns, h.Resumed = stats.Median(hs), stats.Median(conns), stats.Median(res)
		h.PerCallLow, h.PerCallHigh = math.NaN(), math.NaN()
		if len(hs) > 0 {
			h.PerCallLow, h.PerCallHigh = slices.Min(hs), slices.Max(hs)
		}
		each := h.PerCall
		if !cv.Sec().IsTLS() {
			each = h.Conns
		}
		for _, s := range []struct {
			fig FigureIndex
			dst *HandshakeCPU
		}{{FigClientCPU, &h.Client}, {FigServerCPU, &h.Server}} {
			c, ok := by[cv.Name+"|"+s.fig.Figure().Key]
			if !ok {
				continue
			}
			extra, impossible := nonNegative(ExtraOf(pers.Interval[s.fig], c.Ratio.Interval))
			*s.dst = HandshakeCPU{Extra: extra, Each: perEach(extra, each), Ratio: c, OK: extra.N > 0 && !impossible, Impossible: impossible}
		}
		out = append(out, h)
	}
	return out
}

// perCallCounts are a cell's handshakes, connections opened per call and
// share of handshakes resumed, one per round whose report has them.
func perCallCounts(c results.CellResult) (hs, conns, resumed []float64) {
	for _, r := range c.Repeats {
		if r.Report == nil || r.Report.Rpcbed == nil || r.Report.Complete <= 0 {
			continue
		}
		x, n := r.Report.Rpcbed, float64(r.Report.Complete)
		if x.TLS != nil {
			hs = append(hs, float64(x.TLS.Handshakes)/n)
			if x.TLS.Handshakes > 0 {
				resumed = append(resumed, float64(x.TLS.Resumed)/float64(x.TLS.Handshakes))
			}
		}
		if x.ConnectionsOpened != nil {
			conns = append(conns, float64(*x.ConnectionsOpened)/n)
		}
	}
	return hs, conns, resumed
}

// HandshakesPerCall is a cell's handshakes per call in the window, the median
// over its rounds; NaN when no round reported TLS.
func HandshakesPerCall(c results.CellResult) float64 {
	hs, _, _ := perCallCounts(c)
	return stats.Median(hs)
}

// ExtraOf is what A costs beyond B, A - B = B x (ratio - 1), from B's figure
// with its interval (b) and the paired ratio A/B with its interval (r), the
// two independent (the ratio is paired by round: the run's drift cancels in
// it, and b carries its own). Where the ratio's interval excludes 1 the
// extra's interval is built on the log scale, where the two add in
// quadrature, each side separately: log extra = log b + log(ratio - 1).
// Where it holds 1 the extra may be nought or negative, and its interval is
// the widest the two intervals give (b's ends times ratio - 1's). N 0 when
// either has no interval.
func ExtraOf(b, r stats.Interval) stats.Interval {
	if !b.Valid() || !r.Valid() {
		return stats.Interval{}
	}
	center := b.Center * (r.Center - 1)
	out := stats.Interval{Center: center, N: min(b.N, r.N)}
	if r.Low > 1 || r.High < 1 {
		lb, hb := math.Log(b.Center/b.Low), math.Log(b.High/b.Center)
		lc := math.Log(math.Abs(r.Center - 1))
		// Below 1 a larger ratio is a smaller |extra|: the ends swap.
		near, far := r.Low-1, r.High-1
		if r.High < 1 {
			near, far = 1-r.High, 1-r.Low
		}
		dn, df := lc-math.Log(near), math.Log(far)-lc
		lo := math.Abs(center) * math.Exp(-math.Hypot(lb, dn))
		hi := math.Abs(center) * math.Exp(math.Hypot(hb, df))
		if center < 0 {
			lo, hi = -hi, -lo
		}
		out.Low, out.High = lo, hi
		return out
	}
	ends := []float64{b.Low * (r.Low - 1), b.High * (r.Low - 1), b.Low * (r.High - 1), b.High * (r.High - 1)}
	out.Low, out.High = slices.Min(ends), slices.Max(ends)
	return out
}

// perEach is an extra per call divided by events per call (handshakes,
// connections): the extra per event; N 0 when there are none.
func perEach(extra stats.Interval, per float64) stats.Interval {
	if extra.N == 0 || !(per > 0) {
		return stats.Interval{}
	}
	return stats.Interval{Center: extra.Center / per, Low: extra.Low / per, High: extra.High / per, N: extra.N}
}

// HandshakeRecord is one per-call cell's row of matrix.json's "handshakes":
// Handshake's figures (µs; NaN-free: a figure the run has not is left out).
type HandshakeRecord struct {
	A                 string       `json:"a"` // the per-call cell
	B                 string       `json:"b"` // its persistent cell
	HandshakesPerCall *float64     `json:"handshakes_per_call,omitempty"`
	PerCallLow        *float64     `json:"handshakes_per_call_low,omitempty"`
	PerCallHigh       *float64     `json:"handshakes_per_call_high,omitempty"`
	Resumed           *float64     `json:"resumed_share,omitempty"`
	ConnsPerCall      *float64     `json:"connections_per_call,omitempty"`
	Client            *ExtraRecord `json:"client,omitempty"`
	Server            *ExtraRecord `json:"server,omitempty"`
	Dropped           string       `json:"dropped,omitempty"`
}

// ExtraRecord is one side's HandshakeCPU in matrix.json: the extra CPU µs per
// call and per handshake (per connection for a plaintext cell), each with its
// 95 % interval.
type ExtraRecord struct {
	ExtraUs   float64  `json:"extra_us_per_call"`
	ExtraLow  float64  `json:"extra_us_per_call_low"`
	ExtraHigh float64  `json:"extra_us_per_call_high"`
	EachUs    *float64 `json:"us_per_handshake,omitempty"`
	EachLow   *float64 `json:"us_per_handshake_low,omitempty"`
	EachHigh  *float64 `json:"us_per_handshake_high,omitempty"`
}

// HandshakeRecords are the view's Handshakes as matrix.json holds them.
func (v *View) HandshakeRecords() []HandshakeRecord {
	num := func(x float64) *float64 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		x = round6(x)
		return &x
	}
	var out []HandshakeRecord
	for _, h := range v.Handshakes() {
		r := HandshakeRecord{A: h.A, B: h.B, HandshakesPerCall: num(h.PerCall), PerCallLow: num(h.PerCallLow), PerCallHigh: num(h.PerCallHigh),
			Resumed: num(h.Resumed), ConnsPerCall: num(h.Conns), Dropped: h.Dropped}
		for _, s := range []struct {
			in  HandshakeCPU
			dst **ExtraRecord
		}{{h.Client, &r.Client}, {h.Server, &r.Server}} {
			if !s.in.OK {
				continue
			}
			e := &ExtraRecord{ExtraUs: round6(s.in.Extra.Center), ExtraLow: round6(s.in.Extra.Low), ExtraHigh: round6(s.in.Extra.High)}
			if s.in.Each.N > 0 {
				e.EachUs, e.EachLow, e.EachHigh = num(s.in.Each.Center), num(s.in.Each.Low), num(s.in.Each.High)
			}
			*s.dst = e
		}
		out = append(out, r)
	}
	return out
}
