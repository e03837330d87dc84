package render

import (
	stdcmp "cmp"
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// linkProbe is a link's check as the plots read it: the round trip and loss
// achieved (measured before its cells), never the asked ones. A refused link
// has no cells and is left out.
func linkProbe(probes []results.LinkCheck, link string) (results.LinkCheck, bool) {
	for _, p := range probes {
		if p.Link == link && p.Refused == "" && p.RTTUs > 0 {
			return p, true
		}
	}
	return results.LinkCheck{}, false
}

// p99VsRTT is p99 against the round trip each link achieved, log-log, one line
// per client x protocol with its 95 % intervals: one point per asked round trip,
// the least lossy link there (lossy beside lan is rpsVsLoss's; wan, the only
// link at 30 ms, is drawn with its loss in its label), and no rate link (its
// round trip is the unshaped path's). Its x is the probe's RTT (the path's own
// and what the link added), so the grey diagonal y = x is the least a call can
// take: a point under it breaks physics (the link-invariant flag).
func p99VsRTT(x *cellIndex, k callItems, conc int, links []string, probes []results.LinkCheck) (*figure, error) {
	ls, rtt := rttLinks(links, probes)
	if len(ls) < 2 {
		return nil, nil
	}
	f := newFigure(fmt.Sprintf("p99 vs the link's round trip, %s, c=%d (grey: y = RTT)", k, conc),
		"round trip achieved (ms, log scale; the probe's p50)", "p99 (ms, median and 95 % interval, log scale)", true, true)
	var ticks []plot.Tick
	lo, hi := math.Inf(1), 0.0
	for _, l := range ls {
		label := fmt.Sprintf("%s %.2f", l, rtt[l])
		if p, _ := linkProbe(probes, l); p.AskedLossPct > 0 {
			label += fmt.Sprintf(", %.2g %% loss", p.AskedLossPct)
		}
		ticks = append(ticks, plot.Tick{Value: rtt[l], Label: label})
		lo, hi = math.Min(lo, rtt[l]), math.Max(hi, rtt[l])
	}
	f.p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p99 := analysis.FigP99.Figure()
	for _, client := range x.clients {
		for _, proto := range x.protos[client] {
			xs, ys := make([]float64, len(ls)), make([]float64, len(ls))
			los, his := make([]float64, len(ls)), make([]float64, len(ls))
			for i, l := range ls {
				c := plan.Cell{Client: client, Protocol: proto, Call: k.call, Items: k.items, Concurrency: conc, Link: l}
				xs[i] = rtt[l]
				ys[i] = x.median(c, results.P99) / 1e3
				a, b := x.interval(c, p99)
				los[i], his[i] = a/1e3, b/1e3
			}
			col := clientColor[client]
			if err := f.line(client+"-"+proto, xs, ys, col, protoDash[proto], protoGlyph[proto]); err != nil {
				return nil, err
			}
			if err := f.errorBars(xs, ys, los, his, col); err != nil {
				return nil, err
			}
		}
	}
	if f.lines == 0 {
		return nil, nil
	}
	if err := f.line("y = RTT", []float64{lo, hi}, []float64{lo, hi}, color.Gray{Y: 0x99}, nil, draw.RingGlyph{}); err != nil {
		return nil, err
	}
	return f, nil
}

// rttLinks are the links p99VsRTT draws, in links' order, and each one's round
// trip in ms (the probe's p50): per asked round trip the least lossy link, no
// rate link; nil for fewer than two.
func rttLinks(links []string, probes []results.LinkCheck) ([]string, map[string]float64) {
	var ls []string
	rtt := map[string]float64{}
	at := map[string]int{} // loopback or not, asked round trip -> its link's place in ls
	for _, l := range links {
		p, ok := linkProbe(probes, l)
		if !ok || p.Rate != "" {
			continue
		}
		key := fmt.Sprint(p.Loopback, p.AskedRTTUs)
		if i, seen := at[key]; seen {
			if q, _ := linkProbe(probes, ls[i]); p.AskedLossPct < q.AskedLossPct {
				delete(rtt, ls[i])
				ls[i], rtt[l] = l, p.RTTUs/1e3
			}
			continue
		}
		at[key] = len(ls)
		ls = append(ls, l)
		rtt[l] = p.RTTUs / 1e3
	}
	if len(ls) < 2 {
		return nil, nil
	}
	return ls, rtt
}

// lossLinks are the links rpsVsLoss draws and the loss each achieved: the
// links that differ only in loss, each lossy link with the links asked for its
// round trip without it (lan and lossy), ordered by round trip, then loss; no
// loopback or rate link, and none whose round trip no lossless link shares
// (wan: its req/s is its 30 ms, not its loss). nil when no such pair.
func lossLinks(links []string, probes []results.LinkCheck) ([]string, map[string]float64) {
	type link struct {
		name           string
		rtt, loss, got float64
	}
	var all []link
	for _, l := range links {
		if p, ok := linkProbe(probes, l); ok && !p.Loopback && p.Rate == "" {
			all = append(all, link{l, p.AskedRTTUs, p.AskedLossPct, p.LossPct})
		}
	}
	var keep []link
	for _, a := range all {
		if slices.ContainsFunc(all, func(b link) bool { return b.rtt == a.rtt && (b.loss > 0) != (a.loss > 0) }) {
			keep = append(keep, a)
		}
	}
	if len(keep) < 2 {
		return nil, nil
	}
	slices.SortStableFunc(keep, func(a, b link) int {
		if c := stdcmp.Compare(a.rtt, b.rtt); c != 0 {
			return c
		}
		return stdcmp.Compare(a.got, b.got)
	})
	var ls []string
	loss := map[string]float64{}
	for _, l := range keep {
		ls = append(ls, l.name)
		loss[l.name] = l.got
	}
	return ls, loss
}

// rpsVsLoss is req/s over the links that differ only in loss (lossLinks), in
// the order of the loss each achieved (its x is the link's place, labelled with the loss the
// kernel counted, since 0 % has no place on a log axis), one line per client x
// protocol with its 95 % intervals: where head-of-line blocking on one
// multiplexed connection shows against a pool of connections.
func rpsVsLoss(x *cellIndex, k callItems, conc int, links []string, probes []results.LinkCheck) (*figure, error) {
	ls, loss := lossLinks(links, probes)
	if ls == nil {
		return nil, nil
	}
	f := newFigure(fmt.Sprintf("Requests/s vs packet loss at one round trip, %s, c=%d", k, conc),
		"link (loss the kernel counted over its probe)", "requests/s (median and 95 % interval, log scale)", false, true)
	var ticks []plot.Tick
	for i, l := range ls {
		ticks = append(ticks, plot.Tick{Value: float64(i + 1), Label: fmt.Sprintf("%s %.2g %%", l, loss[l])})
	}
	f.p.X.Tick.Marker = plot.ConstantTicks(ticks)
	f.p.X.Min, f.p.X.Max = 0.5, float64(len(ls))+0.5
	rps := analysis.FigRPS.Figure()
	for _, client := range x.clients {
		for _, proto := range x.protos[client] {
			xs, ys := make([]float64, len(ls)), make([]float64, len(ls))
			los, his := make([]float64, len(ls)), make([]float64, len(ls))
			for i, l := range ls {
				c := plan.Cell{Client: client, Protocol: proto, Call: k.call, Items: k.items, Concurrency: conc, Link: l}
				xs[i] = float64(i + 1)
				ys[i] = x.median(c, results.RPS)
				los[i], his[i] = x.interval(c, rps)
			}
			col := clientColor[client]
			if err := f.line(client+"-"+proto, xs, ys, col, protoDash[proto], protoGlyph[proto]); err != nil {
				return nil, err
			}
			if err := f.errorBars(xs, ys, los, his, col); err != nil {
				return nil, err
			}
		}
	}
	if f.lines == 0 {
		return nil, nil
	}
	return f, nil
}
