// Package linkshape applies a link's conditions (rate, delay, jitter, loss) to
// each host's end of it, with the mechanism the host's kernel has, and takes
// them off again on every exit path:
//
//   - rate alone: tc tbf on the side's device (its egress: both directions
//     shaped when every side has one);
//   - delay, jitter and loss where the kernel has sch_netem: one netem qdisc on
//     each side's egress (with netem's own rate when one is asked);
//   - without netem (this platform's kernel): loss by an iptables `statistic`
//     match dropping on the side's ingress (raw PREROUTING), and delay and jitter
//     by rpcbed's delayer (internal/delayer) holding the side's ingress packets
//     from an NFQUEUE queue; the rate still by tbf on egress.
//
// Either way a link's delay is one way and asked of each direction, as netem on
// both hosts would apply it: a round trip crosses it twice. With the delayer,
// when the shaper names a DelaySide, the whole round trip's delay (and twice the
// jitter) is held on that side's ingress alone: one delayer, so the round trip
// pays one delayer's lateness and one queue's hops instead of two (on this
// platform 100-300 µs each under load), while the loss stays on both sides. Which mechanism applied is
// on the record, and the packets each side saw and dropped are read back from
// the kernel's own counters, so the achieved loss is measured, not assumed.
package linkshape

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rpcbed/rpcbed/internal/delayer"
	"github.com/rpcbed/rpcbed/internal/plan"
)

// A Side is one host's end of the link: where its shaping applies.
type Side struct {
	Host  string
	Netns string // an `ip netns` name on the driver's machine; "" = the driver's own namespace
	Dev   string
}

// Mechanisms, as the record names them.
const (
	MechNone    = "none"
	MechTBF     = "tbf"
	MechNetem   = "netem"
	MechNFQueue = "nfqueue" // the delayer, with iptables loss and tbf rate
)

// Applied is how one side's part of a link was made.
type Applied struct {
	Host      string   `json:"host"`
	Mechanism string   `json:"mechanism"`
	Commands  []string `json:"commands,omitempty"`
}

// Counts is what a side's kernel saw of the link's traffic into it since the
// link was applied: packets arrived and packets the loss rule dropped.
type Counts struct {
	Host    string `json:"host"`
	Arrived uint64 `json:"arrived"`
	Dropped uint64 `json:"dropped"`
}

// Runner runs a command (tc, ip, iptables) and returns its combined output; a
// variable of a Shaper so tests can see the commands.
type Runner func(ctx context.Context, name string, args ...string) ([]byte, error)

func execRunner(ctx context.Context, name string, args ...string) ([]byte, error) {
	return exec.CommandContext(ctx, name, args...).CombinedOutput()
}

// queueNum is the NFQUEUE queue a side's delayer binds: queues are per network
// namespace, and rpcbed's own number keeps it apart from anything else there.
const queueNum = 7011

// comment marks rpcbed's iptables rules, so Clear removes exactly those.
const comment = "rpcbed-link"

// Shaper holds the shaping of one run's sides.
type Shaper struct {
	Sides []Side
	Run   Runner // nil: exec
	// StartDelayer runs a delayer in a side's namespace until ctx ends; nil:
	// delayer.RunIn in this process.
	StartDelayer func(ctx context.Context, netns string, c delayer.Config) (delayer.Stats, error)
	Seed         uint64
	// DelaySide is the host whose ingress holds a round trip's whole delay
	// under the delayer ("": every side holds its direction's).
	DelaySide string

	mu       sync.Mutex
	netem    map[string]string // side host -> "" has netem, else why not
	delayers map[string]*running
	link     plan.Link
	mech     string
}

// running is one side's delayer.
type running struct {
	cancel context.CancelFunc
	done   chan result
	tid    int
}

type result struct {
	st  delayer.Stats
	err error
}

func (s *Shaper) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	if s.Run != nil {
		return s.Run(ctx, name, args...)
	}
	return execRunner(ctx, name, args...)
}

func (s *Shaper) tc(ctx context.Context, side Side, args ...string) ([]byte, error) {
	if side.Netns != "" {
		args = append([]string{"-n", side.Netns}, args...)
	}
	return s.run(ctx, "tc", args...)
}

func (s *Shaper) iptables(ctx context.Context, side Side, args ...string) ([]byte, error) {
	a := append([]string{"-w", "5", "-t", "raw"}, args...)
	if side.Netns != "" {
		return s.run(ctx, "ip", append([]string{"netns", "exec", side.Netns, "iptables"}, a...)...)
	}
	return s.run(ctx, "iptables", a...)
}

// HasNetem says whether a side's kernel takes a netem qdisc ("" yes, else the
// reason); it tries one on the side's device and removes it. Cached per side.
func (s *Shaper) HasNetem(ctx context.Context, side Side) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if why, ok := s.netem[side.Host]; ok {
		return why
	}
	if s.netem == nil {
		s.netem = map[string]string{}
	}
	s.tc(ctx, side, "qdisc", "del", "dev", side.Dev, "root")
	out, err := s.tc(ctx, side, "qdisc", "add", "dev", side.Dev, "root", "netem", "delay", "1ms")
	why := ""
	if err != nil {
		why = "tc: " + strings.TrimSpace(string(out))
		if why == "tc: " {
			why = "tc: " + err.Error()
		}
	} else {
		s.tc(ctx, side, "qdisc", "del", "dev", side.Dev, "root")
	}
	s.netem[side.Host] = why
	return why
}

// Mechanism is the mechanism link l gets on side: netem where the kernel has it,
// else the delayer (which needs the side's own namespace on this machine).
func (s *Shaper) Mechanism(ctx context.Context, side Side, l plan.Link) (string, error) {
	switch {
	case !l.Shaped():
		return MechNone, nil
	case !l.NeedsNetem():
		return MechTBF, nil
	}
	why := s.HasNetem(ctx, side)
	if why == "" {
		return MechNetem, nil
	}
	if side.Netns == "" {
		return "", fmt.Errorf("link %s: host %s has no netem (%s), and the delayer needs the host's side in a network namespace of this machine (shape: NETNS/DEV)", l.Label(), side.Host, why)
	}
	return MechNFQueue, nil
}

// Check refuses, before any cell runs, links no side can make.
func (s *Shaper) Check(ctx context.Context, links []plan.Link) error {
	for _, l := range links {
		for _, side := range s.Sides {
			if _, err := s.Mechanism(ctx, side, l); err != nil {
				return err
			}
		}
	}
	return nil
}

// Apply takes off whatever the previous link left and makes l on every side.
// A request the kernel refuses is an error: shaping is never silently dropped.
func (s *Shaper) Apply(ctx context.Context, l plan.Link) ([]Applied, error) {
	s.Clear()
	var out []Applied
	for _, side := range s.Sides {
		mech, err := s.Mechanism(ctx, side, l)
		if err != nil {
			return out, err
		}
		a := Applied{Host: side.Host, Mechanism: mech}
		var cmds [][]string
		switch mech {
		case MechTBF:
			cmds = append(cmds, tbfArgs(side, l.Rate))
		case MechNetem:
			cmds = append(cmds, netemArgs(side, l))
		case MechNFQueue:
			if l.Rate > 0 {
				cmds = append(cmds, tbfArgs(side, l.Rate))
			}
		}
		for _, c := range cmds {
			a.Commands = append(a.Commands, "tc "+strings.Join(c, " "))
			if o, err := s.tc(ctx, side, c...); err != nil {
				return append(out, a), fmt.Errorf("link %s: host %s: tc %s: %v: %s", l.Label(), side.Host, strings.Join(c, " "), err, strings.TrimSpace(string(o)))
			}
		}
		if mech == MechNFQueue {
			cmds, err := s.applyIngress(ctx, side, l)
			a.Commands = append(a.Commands, cmds...)
			if err != nil {
				return append(out, a), fmt.Errorf("link %s: host %s: %w", l.Label(), side.Host, err)
			}
		}
		out = append(out, a)
	}
	s.mu.Lock()
	s.link = l
	s.mu.Unlock()
	return out, nil
}

func tbfArgs(side Side, r plan.Rate) []string {
	return []string{"qdisc", "add", "dev", side.Dev, "root", "tbf", "rate", r.String(),
		"burst", strconv.FormatInt(TBFBurst(r), 10), "latency", "50ms"}
}

// TBFBurst is the bucket for rate r: at least 64 KiB, and 4 ms at the rate (tbf
// needs a bucket of at least one timer tick's worth of bytes).
func TBFBurst(r plan.Rate) int64 { return max(64<<10, int64(r)/8/250) }

func netemArgs(side Side, l plan.Link) []string {
	args := []string{"qdisc", "add", "dev", side.Dev, "root", "netem"}
	if l.Delay > 0 {
		args = append(args, "delay", l.Delay.D().String())
		if l.Jitter > 0 {
			// Without a distribution netem draws uniformly, as the delayer does.
			args = append(args, l.Jitter.D().String())
		}
	}
	if l.Loss > 0 {
		args = append(args, "loss", strconv.FormatFloat(l.Loss, 'f', -1, 64)+"%")
	}
	if l.Rate > 0 {
		args = append(args, "rate", l.Rate.String())
	}
	return args
}

// applyIngress makes l's loss and delay on side's ingress: a counting rule, the
// loss rule, then the queue rule, in raw PREROUTING (before conntrack; held
// packets count against no socket). The delayer binds its queue before the queue
// rule goes in; --queue-bypass lets packets through undelayed, never dropped,
// should the delayer be gone.
func (s *Shaper) applyIngress(ctx context.Context, side Side, l plan.Link) ([]string, error) {
	var cmds []string
	rule := func(args ...string) error {
		a := append([]string{"-A", "PREROUTING", "-i", side.Dev}, args...)
		a = append(a, "-m", "comment", "--comment", comment)
		cmds = append(cmds, "iptables -t raw "+strings.Join(a, " "))
		if o, err := s.iptables(ctx, side, a...); err != nil {
			return fmt.Errorf("iptables %s: %v: %s", strings.Join(a, " "), err, strings.TrimSpace(string(o)))
		}
		return nil
	}
	if err := rule(); err != nil { // counts every packet arriving
		return cmds, err
	}
	if l.Loss > 0 {
		p := strconv.FormatFloat(l.Loss/100, 'f', -1, 64)
		if err := rule("-m", "statistic", "--mode", "random", "--probability", p, "-j", "DROP"); err != nil {
			return cmds, err
		}
	}
	if l.Delay > 0 && (s.DelaySide == "" || s.DelaySide == side.Host) {
		if s.DelaySide != "" {
			l.Delay, l.Jitter = 2*l.Delay, 2*l.Jitter
		}
		if err := s.startDelayer(ctx, side, l); err != nil {
			return cmds, err
		}
		cmds = append(cmds, fmt.Sprintf("delayer -netns %s -queue %d -delay %v -jitter %v", side.Netns, queueNum, l.Delay.D(), l.Jitter.D()))
		if err := rule("-j", "NFQUEUE", "--queue-num", strconv.Itoa(queueNum), "--queue-bypass"); err != nil {
			return cmds, err
		}
	}
	return cmds, nil
}

func (s *Shaper) startDelayer(ctx context.Context, side Side, l plan.Link) error {
	start := s.StartDelayer
	if start == nil {
		start = delayer.RunIn
	}
	dctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan result, 1)}
	ready := make(chan int, 1)
	c := delayer.Config{Queue: queueNum, Delay: l.Delay.D(), Jitter: l.Jitter.D(), Seed: s.Seed + uint64(len(side.Host)),
		Ready: func(tid int) { ready <- tid }}
	go func() {
		st, err := start(dctx, "/var/run/netns/"+side.Netns, c)
		r.done <- result{st, err}
	}()
	select {
	case r.tid = <-ready:
	case res := <-r.done:
		cancel()
		if res.err == nil {
			res.err = errors.New("ended before it bound its queue")
		}
		return fmt.Errorf("delayer: %w", res.err)
	case <-ctx.Done():
		cancel()
		<-r.done
		return ctx.Err()
	case <-time.After(10 * time.Second):
		cancel()
		return errors.New("delayer: not ready within 10 s")
	}
	s.mu.Lock()
	if s.delayers == nil {
		s.delayers = map[string]*running{}
	}
	s.delayers[side.Host] = r
	s.mu.Unlock()
	return nil
}

// DelayerCPU is the CPU the running delayers have used so far, summed (0 without
// one): take it before and after a window for the link's own cost over it.
func (s *Shaper) DelayerCPU() (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.delayers) == 0 {
		return 0, false
	}
	var sum time.Duration
	for _, r := range s.delayers {
		if r.tid == 0 {
			continue
		}
		d, err := delayer.ThreadCPU(r.tid)
		if err != nil {
			return 0, false
		}
		sum += d
	}
	return sum, true
}

// Counts reads each side's ingress counters of the current link (nfqueue
// sides only: netem's drops are on egress, read with `tc -s`).
func (s *Shaper) Counts(ctx context.Context) ([]Counts, error) {
	var out []Counts
	for _, side := range s.Sides {
		s.mu.Lock()
		l := s.link
		s.mu.Unlock()
		mech, err := s.Mechanism(ctx, side, l)
		if err != nil {
			return out, err
		}
		switch mech {
		case MechNFQueue:
			o, err := s.iptables(ctx, side, "-L", "PREROUTING", "-v", "-x", "-n")
			if err != nil {
				return out, fmt.Errorf("host %s: iptables -L: %v: %s", side.Host, err, strings.TrimSpace(string(o)))
			}
			c, err := ParseIngressCounts(string(o))
			if err != nil {
				return out, fmt.Errorf("host %s: %w", side.Host, err)
			}
			c.Host = side.Host
			out = append(out, c)
		case MechNetem:
			o, err := s.tc(ctx, side, "-s", "qdisc", "show", "dev", side.Dev)
			if err != nil {
				return out, fmt.Errorf("host %s: tc -s: %v: %s", side.Host, err, strings.TrimSpace(string(o)))
			}
			c, err := ParseNetemCounts(string(o))
			if err != nil {
				return out, fmt.Errorf("host %s: %w", side.Host, err)
			}
			c.Host = side.Host
			out = append(out, c)
		}
	}
	return out, nil
}

// ParseIngressCounts reads `iptables -t raw -L PREROUTING -v -x -n`: the
// counting rule's packets (arrived) and the loss rule's (dropped), rpcbed's
// rules told by their comment.
func ParseIngressCounts(out string) (Counts, error) {
	var c Counts
	seen := false
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, "/* "+comment+" */") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return c, fmt.Errorf("iptables counters: %q: %v", line, err)
		}
		switch {
		case f[2] == "DROP" && strings.Contains(line, "statistic"):
			c.Dropped = n
		case f[2] == "NFQUEUE":
		case !seen:
			c.Arrived, seen = n, true
		}
	}
	if !seen {
		return c, errors.New("iptables counters: no rpcbed counting rule in raw PREROUTING")
	}
	return c, nil
}

// ParseNetemCounts reads `tc -s qdisc show dev DEV`'s netem line: packets sent
// and dropped (on egress: what the far side would have received).
func ParseNetemCounts(out string) (Counts, error) {
	var c Counts
	in := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "qdisc" {
			in = f[1] == "netem"
			continue
		}
		if !in || len(f) < 7 || f[0] != "Sent" {
			continue
		}
		// Sent B bytes P pkt (dropped D, overlimits O requeues Q)
		sent, err1 := strconv.ParseUint(f[3], 10, 64)
		dropped, err2 := strconv.ParseUint(strings.TrimSuffix(f[6], ","), 10, 64)
		if err1 != nil || err2 != nil {
			return c, fmt.Errorf("tc -s: %q: cannot read sent and dropped", line)
		}
		c.Arrived, c.Dropped = sent+dropped, dropped
		return c, nil
	}
	return c, errors.New("tc -s: no netem qdisc with counters")
}

// Clear takes every side's shaping off: the delayers stopped (what they hold
// accepted), rpcbed's iptables rules and the root qdisc removed. Safe to call
// on every exit path, more than once. It returns the delayers' figures.
func (s *Shaper) Clear() map[string]delayer.Stats {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, side := range s.Sides {
		s.tc(ctx, side, "qdisc", "del", "dev", side.Dev, "root")
		if side.Netns != "" {
			s.removeRules(ctx, side)
		}
	}
	s.mu.Lock()
	ds := s.delayers
	s.delayers = nil
	s.link = plan.Link{}
	s.mu.Unlock()
	stats := map[string]delayer.Stats{}
	for _, host := range slices.Sorted(maps.Keys(ds)) {
		r := ds[host]
		r.cancel()
		select {
		case res := <-r.done:
			stats[host] = res.st
		case <-time.After(10 * time.Second):
		}
	}
	return stats
}

// removeRules deletes rpcbed's rules from side's raw PREROUTING, last first.
func (s *Shaper) removeRules(ctx context.Context, side Side) {
	o, err := s.iptables(ctx, side, "-S", "PREROUTING")
	if err != nil {
		return
	}
	lines := strings.Split(string(o), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "-A PREROUTING") || !strings.Contains(l, comment) {
			continue
		}
		args := strings.Fields(strings.Replace(l, "-A", "-D", 1))
		for j := range args { // -S quotes the comment
			args[j] = strings.Trim(args[j], `"`)
		}
		s.iptables(ctx, side, args...)
	}
}
