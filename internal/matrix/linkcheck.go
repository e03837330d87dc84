package matrix

import (
	"bytes"
	"context"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/measure"
	"math"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/linkshape"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/runner"
)

// The link check: small, bounded, made of rpcbed's own programs. Before a
// link's cells it measures the round trip (one call at a time), the throughput
// and, for a lossy link, the loss over enough packets to tell a third of the
// asked share (datatype calls at c=8 for a second: tens of thousands of packets
// each way); after the cells, the round trip again and the loss over the cells.
const (
	linkRTTCalls   = 300
	linkBulkItems  = 5000
	linkBulkConc   = 4
	linkBulkWindow = 2 * time.Second
	linkLossConc   = 8
	linkLossWindow = time.Second
	// The loss probe grows (LossProbe) to hold lossPackets(p) packets on a link
	// whose round trip slows it: at most linkLossMaxConc calls in flight, for
	// at most linkLossMaxWindow.
	linkLossMaxConc   = 64
	linkLossMaxWindow = 8 * time.Second
	// linkPacketsPerCall is a lower bound on the packets a keep-alive HTTP
	// datatype call puts through the counted ingress: wan's probe counted 2.7
	// a call here (24,186 packets over about 8,800 calls).
	linkPacketsPerCall = 2
	// linkCalibrations bounds the corrections of a delay by the measured excess.
	linkCalibrations = 2
)

// RTTOff says whether an achieved added round trip misses the asked one by more
// than the tolerance: 10 % of the asked, or 100 µs, whichever is larger.
func RTTOff(askedUs, addedUs float64) bool {
	return math.Abs(addedUs-askedUs) > math.Max(0.1*askedUs, 100)
}

// LossOff says whether an achieved loss share misses the asked one by more than
// a third of the asked.
func LossOff(askedPct, gotPct float64) bool { return math.Abs(gotPct-askedPct) > askedPct/3 }

// lossPackets is how many packets a loss share of pct percent needs counted
// for its measured share to fall within a third of it 95 times in 100
// (binomial: 1.96 standard errors at most a third of the share).
func lossPackets(pct float64) float64 {
	p := pct / 100
	return math.Ceil(math.Pow(1.96*3, 2) * (1 - p) / p)
}

// LossProbe is the loss probe's calls in flight and window for link l: c=8
// for a second where that counts lossPackets (a lan-like link), more calls in
// flight and then a longer window where the link's round trip would leave it
// short (wan: 30 ms, 0.1 %), within linkLossMaxConc and linkLossMaxWindow.
func LossProbe(l plan.Link) (conc int, window time.Duration) {
	conc, window = linkLossConc, linkLossWindow
	if l.Loss <= 0 {
		return conc, window
	}
	rtt := l.RTT().Seconds() + 100e-6 // the path's own round trip, about
	calls := lossPackets(l.Loss) / linkPacketsPerCall
	if need := int(math.Ceil(calls * rtt / window.Seconds())); need > conc {
		conc = min(need, linkLossMaxConc)
	}
	if w := time.Duration(calls * rtt / float64(conc) * float64(time.Second)); w > window {
		window = min(w.Round(100*time.Millisecond)+100*time.Millisecond, linkLossMaxWindow)
	}
	return conc, window
}

// makeLink applies l and checks it. For a link with delay it first measures the
// path's own round trip unshaped (once a run), then corrects the applied delay
// by what the mechanism and the hops add beyond the asked (at most
// linkCalibrations times), so that the round trip the link adds is the one
// asked. Whatever is achieved goes on the record beside what was asked; a link
// still off is refused (LinkCheck.Refused).
func (b *LinkBed) makeLink(ctx context.Context, l plan.Link) (results.LinkCheck, error) {
	if l.Delay > 0 && b.baseRTTUs == 0 {
		b.shaper.Clear()
		base := b.probeLink(ctx, plan.Link{Name: plan.LinkUnshaped}, false, false)
		if ctx.Err() != nil {
			return base, ctx.Err()
		}
		if base.Error == "" && base.RTTUs > 0 {
			b.baseRTTUs = base.RTTUs
		}
	}
	applied := l
	var p results.LinkCheck
	for try := 0; ; try++ {
		a, err := b.shaper.Apply(ctx, applied)
		if err != nil {
			return p, err
		}
		c0, cerr := b.shaper.Counts(ctx)
		p = b.probeLink(ctx, l, true, l.Loss > 0)
		if ctx.Err() != nil {
			return p, ctx.Err()
		}
		if l.Loss > 0 {
			c1, err := b.shaper.Counts(ctx)
			if err == nil && cerr == nil {
				p.LossPct, p.LossPackets = lossShare(c0, c1)
			} else {
				p.Error = strings.TrimPrefix(p.Error+"; loss counters: "+runner.OneLine(fmt.Sprint(cerr, err)), "; ")
			}
		}
		p.Calibrations = try
		fillAsked(&p, l, applied, a, b.baseRTTUs)
		if l.Delay == 0 || p.Error != "" || b.baseRTTUs == 0 || !RTTOff(p.AskedRTTUs, p.AddedRTTUs) || try == linkCalibrations {
			break
		}
		// Correct the one-way delay by half the round trip's miss.
		next := applied.Delay.D() + time.Duration((p.AskedRTTUs-p.AddedRTTUs)/2*1e3)
		if next <= 0 {
			p.Floor = true // the mechanism alone adds more than was asked
			break
		}
		applied.Delay = plan.Duration(next)
		applied.Jitter = min(applied.Jitter, applied.Delay)
		b.say(fmt.Sprintf("link %s: round trip added %.0f µs against %.0f asked: one-way delay %v next", l.Label(), p.AddedRTTUs, p.AskedRTTUs, next))
	}
	p.Refused = refusal(p, l, b.baseRTTUs)
	return p, nil
}

// fillAsked writes what l asks and how it was applied into p.
func fillAsked(p *results.LinkCheck, l, applied plan.Link, a []linkshape.Applied, baseUs float64) {
	for _, x := range a {
		p.Mechanism = append(p.Mechanism, x.Host+": "+x.Mechanism)
	}
	if l.Delay > 0 {
		p.AskedRTTUs = float64(l.RTT().Microseconds())
		p.BaseRTTUs = baseUs
		p.AddedRTTUs = p.RTTUs - baseUs
		p.AppliedDelayUs = float64(applied.Delay.D().Nanoseconds()) / 1e3
	}
	p.AskedLossPct = l.Loss
}

// refusal is why a link's cells cannot be presented ("" they can).
func refusal(p results.LinkCheck, l plan.Link, baseUs float64) string {
	switch {
	case !l.NeedsNetem():
		return ""
	case p.Error != "":
		return fmt.Sprintf("link %s: its check failed (%s): the achieved delay and loss are unknown", l.Label(), p.Error)
	case l.Delay > 0 && baseUs == 0:
		return fmt.Sprintf("link %s: the path's own round trip could not be measured, so the achieved delay is unknown", l.Label())
	case l.Delay > 0 && RTTOff(p.AskedRTTUs, p.AddedRTTUs) && p.Floor:
		return fmt.Sprintf("link %s: the link added %.0f µs to the round trip against %.0f µs asked, with a one-way delay of %.0f µs: the delaying machinery alone adds more than was asked on this machine now", l.Label(), p.AddedRTTUs, p.AskedRTTUs, p.AppliedDelayUs)
	case l.Delay > 0 && RTTOff(p.AskedRTTUs, p.AddedRTTUs):
		return fmt.Sprintf("link %s: the link added %.0f µs to the round trip against %.0f µs asked (more than 10 %% or 100 µs off, after %d corrections)", l.Label(), p.AddedRTTUs, p.AskedRTTUs, p.Calibrations)
	case l.Loss > 0 && LossOff(p.AskedLossPct, p.LossPct):
		return fmt.Sprintf("link %s: %.2f %% of %d packets lost against %.2g %% asked (more than a third off)", l.Label(), p.LossPct, p.LossPackets, p.AskedLossPct)
	}
	return ""
}

// lossShare is the share (percent) of the packets arriving between two reads
// of the counters that the loss rules dropped, over every side, and the packets.
func lossShare(c0, c1 []linkshape.Counts) (pct float64, packets uint64) {
	var arrived, dropped uint64
	for i := range c1 {
		for _, a := range c0 {
			if a.Host == c1[i].Host && c1[i].Arrived >= a.Arrived && c1[i].Dropped >= a.Dropped {
				arrived += c1[i].Arrived - a.Arrived
				dropped += c1[i].Dropped - a.Dropped
			}
		}
	}
	if arrived == 0 {
		return 0, 0
	}
	return 100 * float64(dropped) / float64(arrived), arrived
}

// leaveLink checks the link again after its cells: the round trip, the loss
// over the cells (since the check before them) and what the delayers did; then
// it takes the shaping off.
func (b *LinkBed) leaveLink(ctx context.Context) {
	l := b.link
	var p results.LinkCheck
	for _, x := range *b.checks {
		if x.Link == l.Label() {
			p = x
		}
	}
	if l.NeedsNetem() && p.Refused == "" {
		c0 := b.linkCounts
		c1, err := b.shaper.Counts(ctx)
		if l.Loss > 0 && err == nil {
			p.AfterLossPct, p.AfterPackets = lossShare(c0, c1)
		}
		after := b.probeLink(ctx, l, false, false)
		if after.Error == "" {
			p.AfterRTTUs = after.RTTUs
			if p.BaseRTTUs > 0 {
				p.AfterAddedRTTUs = after.RTTUs - p.BaseRTTUs
			}
		}
		var drift []string
		if l.Delay > 0 && p.AfterRTTUs > 0 && RTTOff(p.AskedRTTUs, p.AfterAddedRTTUs) {
			drift = append(drift, fmt.Sprintf("after the cells the link added %.0f µs against %.0f asked", p.AfterAddedRTTUs, p.AskedRTTUs))
		}
		if l.Loss > 0 && p.AfterPackets > 0 && LossOff(p.AskedLossPct, p.AfterLossPct) {
			drift = append(drift, fmt.Sprintf("over the cells %.2f %% of %d packets were lost against %.2g %% asked", p.AfterLossPct, p.AfterPackets, p.AskedLossPct))
		}
		p.Drift = strings.Join(drift, "; ")
	}
	if st := b.shaper.Clear(); len(st) > 0 {
		d := &results.LinkDelayer{}
		for _, x := range st {
			d.Packets += x.Packets
			d.LateP50Us = math.Max(d.LateP50Us, x.LateP50Us)
			d.LateP99Us = math.Max(d.LateP99Us, x.LateP99Us)
			d.CPUSeconds += x.CPUSeconds
			d.Dropped += x.QueueDropped + x.UserDropped
			d.Stamped += x.Stamped
			d.ReadLateP50Us = math.Max(d.ReadLateP50Us, x.ReadLateP50Us)
			d.SpinUs = math.Max(d.SpinUs, x.SpinUs)
			d.ArrivedBehind += x.ArrivedBehind
		}
		p.Delayer = d
	}
	b.linkSet = false
	if p.Link == "" {
		return
	}
	if p.Drift != "" {
		b.say("link " + p.Link + ": " + p.Drift)
	}
	if err := b.saveLinkCheck(p); err != nil {
		b.say("link " + p.Link + ": " + err.Error())
	}
}

// probeLink measures the path between the first client's host and the first
// server's host as l stands now: a go-server of its own there, go-client from
// the client's side; the round trip always, the throughput and the loss probe
// when asked.
func (b *LinkBed) probeLink(ctx context.Context, l plan.Link, bulk, loss bool) results.LinkCheck {
	s := b.spec
	lossConc, lossWindow := LossProbe(l)
	p := results.LinkCheck{Link: l.Label(), Loopback: l.Loopback, At: time.Now().UTC(),
		Method: fmt.Sprintf("go-client over HTTP to a go-server of its own: RTT = p50 of %d datatype calls at c=1; throughput = datalist-%d at c=%d for %v, bytes/s x 8; loss = the kernel's counters over datatype calls at c=%d for %v", linkRTTCalls, linkBulkItems, linkBulkConc, linkBulkWindow, lossConc, lossWindow)}
	if l.Rate > 0 {
		p.Rate = l.Rate.String()
	}
	cells := s.Plan()
	if len(cells) == 0 {
		p.Error = "no cell"
		return p
	}
	first := cells[0]
	p.To = s.HostOf(first.ServerLang + "-server")
	p.From = s.HostOf(first.Client)
	if l.Loopback {
		p.From = p.To
	}
	cfg := measure.ServerProcConfig{Programs: b.programs, Resources: s.ServerResources, Store: "memory", Auth: *s.Auth,
		Address: s.Hosts[p.To].Address}
	from := b.hosts.runners[p.From]
	cfg.ReadyFrom = func(ctx context.Context, addrs []string) error {
		if l.Loopback {
			for i := range addrs {
				addrs[i] = addrFor(addrs[i], l)
			}
		}
		return from.WaitFrom(ctx, b.hosts.checkImage(p.From, b.programs), 60*time.Second, addrs...)
	}
	srv, err := measure.StartServerProc(ctx, b.hosts.runners[p.To], "go-server", cfg)
	if err != nil {
		p.Error = "check server: " + runner.OneLine(err.Error())
		return p
	}
	defer srv.Svc.Stop(context.Background())
	addr := addrFor(srv.Addrs["http"], l)
	goImage := b.programs.Image("go")
	run := func(name string, args ...string) (report.Report, error) {
		res, err := from.Run(ctx, runner.Task{Name: name, Image: goImage, Args: append([]string{"go-client"}, args...), Timeout: 90 * time.Second})
		if err != nil {
			return report.Report{}, err
		}
		if res.ExitCode != 0 {
			return report.Report{}, fmt.Errorf("exit code %d: %s", res.ExitCode, runner.LastLine(res.Stderr))
		}
		return report.ParseClient(bytes.NewReader(res.Stdout))
	}
	var errs []string
	if r, err := run("linkcheck-rtt", "-proto", "http", "-call", "datatype", "-c", "1", "-n", fmt.Sprint(linkRTTCalls), "-k", "-addr", addr); err != nil {
		errs = append(errs, "rtt: "+runner.OneLine(err.Error()))
	} else if r.Rpcbed != nil {
		p.RTTUs = float64(r.Rpcbed.P50Us)
		p.RTTP99Us = float64(r.Rpcbed.P99Us)
	}
	if bulk {
		if r, err := run("linkcheck-bulk", "-proto", "http", "-call", "datalist", "-items", fmt.Sprint(linkBulkItems),
			"-c", fmt.Sprint(linkBulkConc), "-t", plan.Seconds(linkBulkWindow), "-k", "-addr", addr); err != nil {
			errs = append(errs, "throughput: "+runner.OneLine(err.Error()))
		} else {
			p.ThroughputBps = r.RequestsPerSecond * float64(r.DocumentLength) * 8
		}
	}
	if loss {
		if _, err := run("linkcheck-loss", "-proto", "http", "-call", "datatype", "-c", fmt.Sprint(lossConc),
			"-t", plan.Seconds(lossWindow), "-k", "-addr", addr); err != nil {
			errs = append(errs, "loss: "+runner.OneLine(err.Error()))
		}
	}
	p.Error = strings.Join(errs, "; ")
	return p
}

// linkWatch gives a group's run path the link's physics and its delayers' CPU.
func (b *LinkBed) linkWatch(rp *measure.RunPath) {
	if b.shaper == nil || !b.linkSet || !b.link.NeedsNetem() {
		return
	}
	rp.LinkCPU = b.shaper.DelayerCPU
	for _, x := range *b.checks {
		if x.Link == b.link.Label() && x.AddedRTTUs > 0 {
			rp.LinkFloorUs = LinkFloorUs(x.AddedRTTUs, b.link)
		}
	}
}

// LinkFloorUs is the least round trip a link adds: the achieved one less the
// most its jitter can take off both ways, less the 10 % the achieved may be off.
func LinkFloorUs(addedUs float64, l plan.Link) float64 {
	return math.Max(0, 0.9*addedUs-2*float64(l.Jitter.D().Microseconds()))
}
