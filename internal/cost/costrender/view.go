package costrender

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rpcbed/rpcbed/internal/cost"
	"github.com/rpcbed/rpcbed/internal/cost/coststats"
)

// ReadingGuide is the short guide above every cost table (cost.md, index.html).
const ReadingGuide = "Instructions are the machine instructions a program's own code ran for one call, counted one by one by valgrind's callgrind: the same count on any machine, so a change of 1 % shows. They are not time. " +
	"They leave out the kernel's work (a system call is counted, not what the kernel did in it), time spent waiting (a blocked read runs no instructions) and the real machine's caches (misses are simulated on one fixed cache), and a real core runs several instructions per cycle at its own clock. " +
	"For time, read the matrix's CPU per call; \"Counts against the matrix's CPU per call\" below sets the two side by side. " +
	"Columns: est. cycles weighs memory in (iai's formula: L1 hits + 5 × LL hits + 35 × RAM hits on the simulated cache), a ranking of work, not a clock count; " +
	"syscalls are the system calls made; bytes in and out are the measured side's on the wire; allocs are calls to the allocator; " +
	"the layer columns share the instructions out (each 0-100 %, adding up to about 100 %); " +
	"the garbage collector's work is counted apart, on top, because a collection lands in a run or not by timing; " +
	"\"left out\" are the time-driven threads and the client's latency histogram, rpcbed's bookkeeping. " +
	"— is a marginal below zero: the noise of the two runs is larger than the figure. " + FlaggedMark + " marks a cell whose short run did work its long run did not: none of its figures is a result."

// FlaggedMark follows a flagged cell's name in the tables.
const FlaggedMark = "⚑"

// layerHeads are the layers' column heads in the per-side tables.
var layerHeads = map[string]string{
	cost.LayerCodec: "codec", cost.LayerRPC: "RPC", cost.LayerCrypto: "crypto", cost.LayerTransport: "transport",
	cost.LayerRuntime: "runtime", cost.LayerRpcbed: "rpcbed", cost.LayerOther: "other",
	cost.LayerGC: "GC, apart: instructions (% on top)",
}

// Columns are the per-side tables' columns after the cell, for r's layers.
func Columns(r *cost.Result) []string {
	c := []string{"instructions", "est. cycles", "L1 misses", "LL misses", "syscalls", "bytes in", "bytes out", "allocs"}
	for _, l := range r.LayerSet() {
		c = append(c, layerHeads[l])
	}
	return append(c, "left out: time-driven, bookkeeping", "ms/call under callgrind", "GC cycles, short / long run")
}

// RowView is one cell and side as the tables print it.
type RowView struct {
	Cell    string
	Figures []string // Columns' order
	// Flag is why the row's figures are not a result (cost.CellRun.OneTimeWork),
	// "" when they are.
	Flag string
}

// Name is the row's first column: the cell, with FlaggedMark when flagged.
func (r RowView) Name() string {
	if r.Flag != "" {
		return r.Cell + " " + FlaggedMark
	}
	return r.Cell
}

// SideView is one side's table.
type SideView struct {
	Side, Title string
	Rows        []RowView
	Flagged     []RowView
	NoFigure    bool // a figure printed as NoFigure
}

// Sides are the tables of a run's measured cells, client side first.
func Sides(r *cost.Result) []SideView {
	var out []SideView
	for _, side := range []string{cost.SideClient, cost.SideServer} {
		sv := SideView{Side: side, Title: "Client side (client under callgrind, native server)"}
		if side == cost.SideServer {
			sv.Title = "Server side (go-server under callgrind, native client)"
		}
		for _, c := range r.Cells {
			if c.Side != side || c.Status != cost.StatusOK {
				continue
			}
			rw := rowView(c, r.LayerSet())
			sv.Rows = append(sv.Rows, rw)
			if rw.Flag != "" {
				sv.Flagged = append(sv.Flagged, rw)
			} else if slices.ContainsFunc(rw.Figures, func(s string) bool { return strings.Contains(s, NoFigure) }) {
				sv.NoFigure = true
			}
		}
		out = append(out, sv)
	}
	return out
}

func rowView(c cost.CellRun, layers []string) RowView {
	rw := RowView{Cell: c.Cell, Flag: c.OneTimeWork()}
	if rw.Flag != "" {
		rw.Figures = make([]string, 11+len(layers))
		for i := range rw.Figures {
			rw.Figures[i] = NoFigure
		}
		return rw
	}
	p := c.PerCall
	rw.Figures = []string{fig(p.Ir), fig(p.Cycles), fig(p.L1Misses()), fig(p.LLMisses()), fig1(p.Syscalls), fig(p.BytesIn), fig(p.BytesOut), fig1(c.Allocs)}
	shares, ok := p.Shares()
	for _, l := range layers {
		switch {
		case l == cost.LayerGC:
			rw.Figures = append(rw.Figures, fmt.Sprintf("%s (%s)", fig(p.GC.Ir), pct(p.GC.Ir, p.Ir)))
		case ok:
			rw.Figures = append(rw.Figures, share(shares[l]))
		default:
			rw.Figures = append(rw.Figures, NoFigure)
		}
	}
	rw.Figures = append(rw.Figures, fmt.Sprintf("%s, %s", fig(p.TimeDriven), fig(p.Bookkeeping)), fig1(p.MsPerCall), fmt.Sprintf("%.0f / %.0f", c.GCCycles[0], c.GCCycles[1]))
	return rw
}

// share prints a share in [0, 1] as a whole percentage.
func share(s float64) string { return fmt.Sprintf("%.0f %%", math.Round(100*s)+0) }

// perNs prints a point's instructions per CPU ns, or that it is beyond what a
// core retires (flagged, not a result).
func perNs(p coststats.TimedPoint) string {
	if !p.Plausible() {
		return fmt.Sprintf("beyond %.0f %s", coststats.MaxInstructionsPerNs, FlaggedMark)
	}
	return fmt.Sprintf("%.1f", p.PerNs)
}

// Beyond are the points whose instructions per CPU ns are not plausible.
func Beyond(cmp coststats.Comparison) []coststats.TimedPoint {
	var out []coststats.TimedPoint
	for _, p := range cmp.Points {
		if !p.Plausible() {
			out = append(out, p)
		}
	}
	return out
}

// BeyondNote explains the points beyond the ceiling.
func BeyondNote(beyond []coststats.TimedPoint) string {
	var names []string
	for _, p := range beyond {
		names = append(names, fmt.Sprintf("%s's %s side (%s instructions per call in %.1f µs of CPU: %.1f per ns)", p.Cell, p.Side, thousands(p.Instructions), p.CPUus, p.PerNs))
	}
	return fmt.Sprintf("%s Flagged, not a result: %s. A core retires at most about %.0f instructions per ns (a clock up to 5 GHz × 4 a cycle): such a count holds work the core does in fewer instructions than callgrind counts (callgrind counts every iteration of a rep-prefixed copy or fill as an instruction, the hardware counts it once; glibc copies 8 KiB and more with rep movsb on valgrind's CPU), or the timed and the counted runs did different work.",
		FlaggedMark, strings.Join(names, "; "), coststats.MaxInstructionsPerNs)
}

// TimedIntro is the paragraph above the counts-against-time table.
func TimedIntro(cmp coststats.Comparison) string {
	s := fmt.Sprintf("Spearman's rank correlation of estimated cycles with the CPU µs per call over %d cells and sides: %.2f (1: the same order). ", len(cmp.Points), cmp.Spearman)
	if lo, hi, med, n := cmp.PerNsSpread(); n > 0 {
		s += fmt.Sprintf("Instructions per ns of CPU are the clock times the instructions per cycle the count implies; here %.1f to %.1f, median %.1f. ", lo, hi, med)
	}
	return s + fmt.Sprintf("Low: the time went where the count does not look (the kernel's work in system calls, waiting, misses of the real caches). High: the count holds work the core does quickly (long copies, simple loops). Above %.0f a core cannot go: flagged. The four lowest and the four highest, in order:", coststats.MaxInstructionsPerNs)
}

// Summary is cost.md's "In plain words": what the run measured, from its own
// figures.
func Summary(r *cost.Result, timed cost.Timed) []string {
	var ok, flagged, skipped int
	for _, c := range r.Cells {
		switch {
		case c.Status != cost.StatusOK:
			skipped++
		case c.OneTimeWork() != "":
			flagged++
		default:
			ok++
		}
	}
	out := []string{fmt.Sprintf("%d cells and sides counted; %d flagged (%s: their short run did work the long one did not, so their figures are not results); %d not measured or failed, each with its reason at the end.", ok, flagged, FlaggedMark, skipped)}
	items := middleItems(r)
	for _, side := range []string{cost.SideClient, cost.SideServer} {
		type pt struct {
			name string
			ir   float64
		}
		var pts []pt
		largest := map[string]int{}
		for _, c := range r.Cells {
			if c.Side != side || c.Items != items || c.Status != cost.StatusOK || c.OneTimeWork() != "" || c.PerCall.Ir <= 0 {
				continue
			}
			if side == cost.SideServer && c.Client != "go" {
				continue // go-server's work; the go client's row stands for the protocol
			}
			name := c.Client + "-" + c.Protocol
			if side == cost.SideServer {
				name = c.Protocol
			}
			pts = append(pts, pt{name, c.PerCall.Ir})
			if sh, ok := c.PerCall.Shares(); ok {
				best := ""
				for _, l := range cost.LayerOrder {
					if l != cost.LayerGC && (best == "" || sh[l] > sh[best]) {
						best = l
					}
				}
				largest[best]++
			}
		}
		if len(pts) == 0 {
			continue
		}
		slices.SortStableFunc(pts, func(a, b pt) int { return int(math.Copysign(1, a.ir-b.ir)) })
		var parts []string
		for _, p := range pts {
			parts = append(parts, fmt.Sprintf("%s %s", p.name, thousands(p.ir)))
		}
		what := "The client's instructions per call"
		if side == cost.SideServer {
			what = "go-server's instructions per call, by protocol (against the go client)"
		}
		line := fmt.Sprintf("%s at %d items, fewest first: %s.", what, items, strings.Join(parts, ", "))
		if l, n := mostLargest(largest); n > 0 {
			line += fmt.Sprintf(" The largest layer is %s in %d of these %d rows.", cost.LayerNames[l], n, len(pts))
		}
		out = append(out, line)
	}
	if rows := coststats.PHPOverGo(r); len(rows) > 0 {
		var parts []string
		for _, x := range rows {
			if x.Client == "php" && x.Items == items {
				parts = append(parts, fmt.Sprintf("%s %.2fx", x.Protocol, x.Instructions))
			}
		}
		if len(parts) > 0 {
			out = append(out, fmt.Sprintf("PHP's client against Go's at %d items, in instructions with the collector's: %s. A multiple below 1 is less user-space work, not less time: time adds the kernel, waiting and the real caches.", items, strings.Join(parts, ", ")))
		}
	}
	if timed != nil {
		cmp := coststats.CompareTimed(r, timed)
		if len(cmp.Points) > 1 {
			out = append(out, fmt.Sprintf("Counts and time rank the cells alike (Spearman %.2f over %d cells and sides), but a count is not a time: see \"Counts against the matrix's CPU per call\".", cmp.Spearman, len(cmp.Points)))
		}
	}
	return out
}

// middleItems is the run's middle response size (200 in cost.yaml).
func middleItems(r *cost.Result) int {
	var n []int
	for _, c := range r.Cells {
		if !slices.Contains(n, c.Items) {
			n = append(n, c.Items)
		}
	}
	if len(n) == 0 {
		return 0
	}
	slices.Sort(n)
	return n[(len(n)-1)/2]
}

func mostLargest(m map[string]int) (string, int) {
	best, n := "", 0
	for _, l := range cost.LayerOrder {
		if m[l] > n {
			best, n = l, m[l]
		}
	}
	return best, n
}

// TLSRow is a TLS cell and side against its plaintext twin.
type TLSRow struct {
	Cell, Side string
	// Instructions per call over TLS and in plaintext, their ratio.
	TLS, Plain, Ratio float64
	// Crypto is the crypto layer per call (the records; in plaintext only the
	// auth token's HMAC on go-server's side), CryptoShare its share.
	Crypto, CryptoShare float64
	// Handshake is the crypto layer's instructions per run, over the
	// plaintext twin's (the handshake and the TLS library's set-up).
	Handshake float64
}

// TLSRows pairs every measured TLS cell with its plaintext twin.
func TLSRows(r *cost.Result) []TLSRow {
	m := r.Lookup()
	var out []TLSRow
	for _, c := range r.Cells {
		if c.Security == "" || c.Status != cost.StatusOK || c.OneTimeWork() != "" {
			continue
		}
		plain, ok := m[strings.TrimSuffix(c.Cell, "@"+c.Security)+"/"+c.Side]
		if !ok || plain.Status != cost.StatusOK || plain.OneTimeWork() != "" || plain.PerCall.Ir <= 0 {
			continue
		}
		sh, _ := c.PerCall.Shares()
		out = append(out, TLSRow{Cell: c.Cell, Side: c.Side, TLS: c.PerCall.Ir, Plain: plain.PerCall.Ir, Ratio: c.PerCall.Ir / plain.PerCall.Ir,
			Crypto: c.PerCall.Layers[cost.LayerCrypto], CryptoShare: sh[cost.LayerCrypto],
			Handshake: c.PerRun[cost.LayerCrypto] - plain.PerRun[cost.LayerCrypto]})
	}
	return out
}

// TLSIntro is the paragraph above the TLS table.
const TLSIntro = "Each TLS cell against its plaintext twin, same side: instructions per call and their ratio, the crypto layer per call (the records' encryption and their framing; on go-server's side the auth token's HMAC runs in plaintext too) and its share, and the handshake: the crypto layer's instructions per run that do not grow with the calls, over the plaintext twin's (one connection per run, so one handshake; the TLS library's set-up and the certificate check in it). Counts, not time: what TLS costs in time is the matrix's."
