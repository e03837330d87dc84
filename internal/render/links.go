package render

import (
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// runLinks are the links a run's cells carry, in the spec's order; nil without a
// link dimension.
func runLinks(run *results.Run) []string {
	var ls []string
	for _, c := range run.Spec.Plan() {
		if c.Link != "" && !slices.Contains(ls, c.Link) {
			ls = append(ls, c.Link)
		}
	}
	for _, c := range run.Cells {
		if c.Link != "" && !slices.Contains(ls, c.Link) {
			ls = append(ls, c.Link)
		}
	}
	return ls
}

// onLink is run restricted to the cells over link, named as without a link
// dimension, so every per-run plot can be drawn once per link.
func onLink(run *results.Run, link string) *results.Run {
	sub := *run
	sub.Cells = nil
	for _, c := range run.Cells {
		if c.Link != link {
			continue
		}
		c.Link = ""
		c.Name = c.Cell.Name()
		sub.Cells = append(sub.Cells, c)
	}
	return &sub
}

// linkFigures are the plots of a run with a link dimension: each per-run plot once
// per link (its name and title carry the link), then rps-vs-link-ITEMS-cC:
// requests/s against the link's rate, one line per client x protocol.
func linkFigures(run *results.Run, links []string) ([]namedFigure, error) {
	var figs []namedFigure
	for _, l := range links {
		fs, err := runFigures(onLink(run, l))
		if err != nil {
			return nil, err
		}
		for _, f := range fs {
			f.fig.p.Title.Text += " @ " + l
			figs = append(figs, namedFigure{f.name + "@" + l, f.fig})
		}
	}
	idx := index(run)
	rates := linkRates(run, links)
	for _, ck := range idx.callItems() {
		for _, c := range idx.conc {
			f, err := rpsVsLink(idx, ck, c, links, rates, run.Links)
			if err != nil {
				return nil, fmt.Errorf("plot rps-vs-link: %w", err)
			}
			if f != nil {
				figs = append(figs, namedFigure{fmt.Sprintf("rps-vs-link-%s-c%d", ck, c), f})
			}
			if f, err = p99VsRTT(idx, ck, c, links, run.Links); err != nil {
				return nil, fmt.Errorf("plot p99-vs-rtt: %w", err)
			} else if f != nil {
				figs = append(figs, namedFigure{fmt.Sprintf("p99-vs-rtt-%s-c%d", ck, c), f})
			}
			if f, err = rpsVsLoss(idx, ck, c, links, run.Links); err != nil {
				return nil, fmt.Errorf("plot rps-vs-loss: %w", err)
			} else if f != nil {
				figs = append(figs, namedFigure{fmt.Sprintf("rps-vs-loss-%s-c%d", ck, c), f})
			}
		}
	}
	return figs, nil
}

// linkRates is each link's rate in bit/s for the x axis: its shaping, else the
// throughput its probe measured (unshaped), else none (loopback is left out).
func linkRates(run *results.Run, links []string) map[string]float64 {
	rates := map[string]float64{}
	spec := map[string]plan.Link{}
	for _, l := range run.Spec.Links {
		spec[l.Label()] = l
	}
	if run.Spec.Link != nil {
		spec[run.Spec.Link.Label()] = *run.Spec.Link
	}
	for _, l := range links {
		if r, err := plan.ParseRate(l); err == nil {
			rates[l] = float64(r)
		} else if sl, ok := spec[l]; ok && sl.Rate > 0 {
			rates[l] = float64(sl.Rate)
		}
	}
	// An unshaped link goes right of the fastest shaped one (at twice its rate, or
	// its probed throughput when that is higher): a probe on a busy machine measures
	// a CPU, and the reader wants the order shaped < unshaped.
	top := 0.0
	for _, r := range rates {
		top = max(top, r)
	}
	for _, p := range run.Links {
		if _, ok := rates[p.Link]; !ok && !p.Loopback && p.ThroughputBps > 0 {
			rates[p.Link] = max(p.ThroughputBps, 2*top)
		}
	}
	return rates
}

func rpsVsLink(x *cellIndex, k callItems, conc int, links []string, rates map[string]float64, probes []results.LinkCheck) (*figure, error) {
	probed := func(l string) string {
		for _, p := range probes {
			if p.Link == l && p.ThroughputBps > 0 {
				return fmt.Sprintf("%.0f Mbit/s", p.ThroughputBps/1e6)
			}
		}
		return "-"
	}
	// The links with a rate and a cell at these items and concurrency.
	var ls []string
	for _, l := range links {
		if rates[l] <= 0 {
			continue
		}
		for _, client := range x.clients {
			for _, proto := range x.protos[client] {
				if _, ok := x.cells[plan.Cell{Client: client, Protocol: proto, Call: k.call, Items: k.items, Concurrency: conc, Link: l}.Name()]; ok && !slices.Contains(ls, l) {
					ls = append(ls, l)
				}
			}
		}
	}
	if len(ls) < 2 {
		return nil, nil
	}
	slices.SortFunc(ls, func(a, b string) int { return int(math.Copysign(1, rates[a]-rates[b])) })
	f := newFigure(fmt.Sprintf("Requests/s vs link rate, %s, c=%d (grey: rate / answer size)", k, conc),
		"link (rate, log scale; unshaped right of the fastest)", "requests/s (median, log scale)", true, true)
	var ticks []plot.Tick
	for _, l := range ls {
		label := l
		if _, err := plan.ParseRate(l); err != nil {
			label = l + " (probed " + probed(l) + ")"
		}
		ticks = append(ticks, plot.Tick{Value: rates[l], Label: label})
	}
	f.p.X.Tick.Marker = plot.ConstantTicks(ticks)
	for _, client := range x.clients {
		for _, proto := range x.protos[client] {
			xs := make([]float64, len(ls))
			ys := make([]float64, len(ls))
			for i, l := range ls {
				xs[i] = rates[l]
				ys[i] = x.median(plan.Cell{Client: client, Protocol: proto, Call: k.call, Items: k.items, Concurrency: conc, Link: l}, results.RPS)
			}
			if err := f.line(client+"-"+proto, xs, ys, clientColor[client], protoDash[proto], protoGlyph[proto]); err != nil {
				return nil, err
			}
		}
	}
	if f.lines == 0 {
		return nil, nil
	}
	// Each protocol's cap on a shaped link: rate / answer size (its first cell's).
	grey := color.Gray{Y: 0x99}
	for _, proto := range plan.Protocols {
		size := 0.0
		for _, client := range x.clients {
			for _, l := range ls {
				if r, ok := x.cells[plan.Cell{Client: client, Protocol: proto, Call: k.call, Items: k.items, Concurrency: conc, Link: l}.Name()]; ok && size == 0 {
					size = r.Stat(func(m results.Metrics) float64 { return float64(m.BytesPerResponse) }).Median
				}
			}
		}
		if size <= 0 {
			continue
		}
		var xs, ys []float64
		for _, l := range ls {
			if _, err := plan.ParseRate(l); err == nil {
				xs, ys = append(xs, rates[l]), append(ys, rates[l]/8/size)
			}
		}
		if err := f.line("cap "+proto, xs, ys, grey, protoDash[proto], draw.RingGlyph{}); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// linksMarkdown is matrix.md's hosts and links: where each role ran and each
// link as probed before its cells ("" for a run on one engine).
func linksMarkdown(run *results.Run) string {
	s := run.Spec
	if len(s.Hosts) == 0 && len(run.Links) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## Hosts and links\n\n")
	if len(s.Hosts) > 0 {
		b.WriteString("| host | engine | address | roles | shaped at |\n|---|---|---|---|---|\n")
		for _, n := range slices.Sorted(maps.Keys(s.Hosts)) {
			h := s.Hosts[n]
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", n, h.Engine, h.Address, strings.Join(h.Roles, ", "), orDash(h.Shape))
		}
		b.WriteString("\n")
	}
	if len(run.Links) > 0 {
		b.WriteString("Each link was probed before its cells ran, from the client host to a go-server of the probe's own on the server host: ")
		b.WriteString("RTT is the median of one-at-a-time HTTP datatype calls (the round trip plus the server's few µs); ")
		b.WriteString("throughput is the bytes/s of HTTP datalist-5000 answers at c=4, a lower bound where a CPU and not the link is the limit.\n\n")
		b.WriteString("| link | shaping | from -> to | RTT µs | throughput Mbit/s | note |\n|---|---|---|---:|---:|---|\n")
		for _, p := range run.Links {
			shaping := "none"
			switch {
			case p.Loopback:
				shaping = "loopback (client on the server's host)"
			case p.Rate != "":
				shaping = "tc tbf " + p.Rate + ", both directions"
			}
			if len(p.Mechanism) > 0 {
				shaping = strings.Join(p.Mechanism, ", ")
			}
			fmt.Fprintf(&b, "| %s | %s | %s -> %s | %s | %s | %s |\n", p.Link, shaping, p.From, p.To,
				fmtOr(p.RTTUs, 0), fmtOr(p.ThroughputBps/1e6, 1), mdEscape(short(p.Error, 200)))
		}
		b.WriteString(linkAccuracyMarkdown(run.Links))
	}
	return b.String()
}

// linkAccuracyMarkdown is asked against achieved for the links with delay or
// loss: before the cells and after them, and what the delayers did.
func linkAccuracyMarkdown(links []results.LinkCheck) string {
	var rows []results.LinkCheck
	for _, p := range links {
		if p.AskedRTTUs > 0 || p.AskedLossPct > 0 {
			rows = append(rows, p)
		}
	}
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nDelay and loss, asked against achieved (docs/scale.md, Links): the round trip the link added is the probe's RTT less the path's own ")
	b.WriteString("(base, measured unshaped), held to 10 % of the asked or 100 µs; the loss is the kernel's own count over the loss probe (before) ")
	b.WriteString("and over the link's cells (after), held to a third of the asked. A refused link's cells were not run.\n\n")
	b.WriteString("| link | asked RTT µs | added before | added after | one-way delay applied µs | asked loss % | lost before | lost after | delayers: late p50/p99 µs, CPU s, kernel drops | verdict |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n")
	for _, p := range rows {
		d := "-"
		if x := p.Delayer; x != nil {
			d = fmt.Sprintf("%.0f/%.0f, %.2f, %d", x.LateP50Us, x.LateP99Us, x.CPUSeconds, x.Dropped)
		}
		verdict := "held"
		switch {
		case p.Refused != "":
			verdict = "refused: " + p.Refused
		case p.Drift != "":
			verdict = "drifted: " + p.Drift
		}
		loss := func(pct float64, n uint64) string {
			if n == 0 {
				return "-"
			}
			return fmt.Sprintf("%.2f of %d", pct, n)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p.Link, fmtOr(p.AskedRTTUs, 0), fmtOr(p.AddedRTTUs, 0),
			fmtOr(p.AfterAddedRTTUs, 0), fmtOr(p.AppliedDelayUs, 0), fmtOr(p.AskedLossPct, 2), loss(p.LossPct, p.LossPackets),
			loss(p.AfterLossPct, p.AfterPackets), d, mdEscape(short(verdict, 300)))
	}
	return b.String()
}

func fmtOr(v float64, prec int) string {
	if v <= 0 || math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, v)
}
