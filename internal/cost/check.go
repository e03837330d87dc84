package cost

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// SplitNoise is how far below zero a layer's per-call marginal may fall, as a
// share of the instructions per call, and still be read as zero: the two runs'
// noise on a layer that costs nothing per call. Below it, the short run did
// work the long run did not (OneTimeWork).
const SplitNoise = 0.005

// Shares gives each layer's share of the instructions per call, for every layer
// of LayerOrder but LayerGC (counted apart, on top), each in [0, 1]; ok is false
// when the split is not a figure: no instructions, or a layer below zero beyond
// SplitNoise (then another layer is above its true share, up to more than 100 %).
func (p PerCall) Shares() (shares map[string]float64, ok bool) {
	if !(p.Ir > 0) {
		return nil, false
	}
	shares = map[string]float64{}
	for _, l := range LayerOrder {
		if l == LayerGC {
			continue
		}
		s := p.Layers[l] / p.Ir
		if s < -SplitNoise || math.IsNaN(s) {
			return nil, false
		}
		shares[l] = math.Min(math.Max(s, 0), 1)
	}
	return shares, true
}

// OneTimeWork says why a measured cell's per-call figures are not a result, or
// "" when they are: the short run did work that the long run did not (a
// layer's marginal below zero beyond SplitNoise, or fewer allocations in the
// long run than in the short one). The marginal method cancels only what both
// runs do; one-time work in the short run (a cache filled on its first call)
// makes every figure of the cell low by that work over the calls. Seen on
// go-server's side, whose process serves every server-side cell: the first cell
// of a size and protocol grew go-server's table of converted items in its
// short run (go-grpc-datalist-5000-c1: 24,296 allocations in the 2-call run,
// 1,202 in the 12-call one; docs/cost.md).
func (c CellRun) OneTimeWork() string {
	if c.Status != StatusOK {
		return ""
	}
	p := c.PerCall
	var neg []string
	for _, l := range LayerOrder {
		if l == LayerGC {
			continue
		}
		if v := p.Layers[l]; v < -SplitNoise*math.Abs(p.Ir) {
			neg = append(neg, fmt.Sprintf("%s %s", l, signed(v, 0)))
		}
	}
	if len(neg) > 0 {
		neg = []string{strings.Join(neg, ", ") + " instructions"}
	}
	if c.Allocs < 0 {
		neg = append(neg, signed(c.Allocs, 1)+" allocations")
	}
	if p.HeapObjects < 0 {
		neg = append(neg, signed(p.HeapObjects, 1)+" Go heap objects")
	}
	if len(neg) == 0 {
		return ""
	}
	return fmt.Sprintf("the short run (%d calls) did work the long run (%d calls) did not: per call %s; every figure of the cell is low by that work, so none is a result",
		c.ShortCalls, c.LongCalls, strings.Join(neg, "; "))
}

// signed prints v with thousands separators and digits decimals, a minus sign
// (−) when negative.
func signed(v float64, digits int) string {
	s := strconv.FormatFloat(math.Abs(v), 'f', digits, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, ch := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	if v < 0 {
		return "−" + b.String()
	}
	return b.String()
}
