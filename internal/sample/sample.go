// Package sample reads a server's counters (its /stats, through a reader the
// caller gives) and the machine's /proc/stat every 100 ms while a client runs,
// and interpolates both series at a measured window's ends.
package sample

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// Every is the sampling period of the server's /stats and /proc/stat.
const Every = 100 * time.Millisecond

// Server is one read of the server's counters.
type Server struct {
	T     float64 // Unix seconds: the server's time_unix_s, else the driver's clock
	CPU   float64 // seconds, user + system
	Calls int64   // proto x call requests
	JITMs float64 // the server's accumulated JIT compile time (ms), -1 when it reports none
}

// Machine is one read of /proc/stat's first line, in seconds summed over
// every CPU.
type Machine struct {
	T                 float64
	Busy, Idle, Steal float64
	// Link is the link's delayers' CPU seconds so far (LinkOK: read).
	Link   float64
	LinkOK bool
}

// Machines is a series of /proc/stat reads.
type Machines []Machine

// MachineDelta is the machine's busy and steal CPU seconds over a window.

type MachineDelta struct {
	Busy, Steal float64
	Link        float64
	LinkOK      bool
}

// Over is the machine's busy and steal CPU seconds between t0 and t1.
func (s Machines) Over(t0, t1 float64) (MachineDelta, error) {
	at := func(t float64) (busy, steal float64, err error) {
		i, f, err := bracket(len(s), func(k int) float64 { return s[k].T }, t)
		if err != nil {
			return 0, 0, err
		}
		a, b := s[i], s[min(i+1, len(s)-1)]
		return a.Busy + f*(b.Busy-a.Busy), a.Steal + f*(b.Steal-a.Steal), nil
	}
	b0, s0, err := at(t0)
	if err != nil {
		return MachineDelta{}, err
	}
	b1, s1, err := at(t1)
	if err != nil {
		return MachineDelta{}, err
	}
	d := MachineDelta{Busy: b1 - b0, Steal: s1 - s0}
	i0, f0, _ := bracket(len(s), func(k int) float64 { return s[k].T }, t0)
	i1, f1, _ := bracket(len(s), func(k int) float64 { return s[k].T }, t1)
	a0, a1 := s[i0], s[min(i0+1, len(s)-1)]
	z0, z1 := s[i1], s[min(i1+1, len(s)-1)]
	if a0.LinkOK && a1.LinkOK && z0.LinkOK && z1.LinkOK {
		d.Link = (z0.Link + f1*(z1.Link-z0.Link)) - (a0.Link + f0*(a1.Link-a0.Link))
		d.LinkOK = true
	}
	return d, nil
}

// bracket finds k with T(k) <= t <= T(k+1) and the fraction of the way t lies
// between them; t must lie within the series.
func bracket(n int, T func(int) float64, t float64) (int, float64, error) {
	if n < 2 {
		return 0, 0, fmt.Errorf("%d samples", n)
	}
	if t < T(0) || t > T(n-1) {
		return 0, 0, fmt.Errorf("time %.6f outside the samples [%.6f, %.6f]", t, T(0), T(n-1))
	}
	for k := 0; k+1 < n; k++ {
		if t <= T(k+1) {
			d := T(k+1) - T(k)
			if d <= 0 {
				return k, 0, nil
			}
			return k, (t - T(k)) / d, nil
		}
	}
	return n - 2, 1, nil
}

// Interpolate is the server's CPU and calls between t0 and t1, each series
// linearly interpolated at both ends (calls unrounded: a fraction of a call
// where a window's end falls between two samples).
func Interpolate(s []Server, t0, t1 float64) (cpu float64, calls float64, err error) {
	c0, n0, err := At(s, t0)
	if err != nil {
		return 0, 0, err
	}
	c1, n1, err := At(s, t1)
	if err != nil {
		return 0, 0, err
	}
	return c1.CPU - c0.CPU, n1 - n0, nil
}

// At is the series linearly interpolated at t: the bracketing samples' CPU
// and JIT time in a Server, and the calls as a float.
func At(s []Server, t float64) (Server, float64, error) {
	i, f, err := bracket(len(s), func(k int) float64 { return s[k].T }, t)
	if err != nil {
		return Server{}, 0, err
	}
	a, b := s[i], s[min(i+1, len(s)-1)]
	v := Server{T: t, CPU: a.CPU + f*(b.CPU-a.CPU), JITMs: -1}
	if a.JITMs >= 0 && b.JITMs >= 0 {
		v.JITMs = a.JITMs + f*(b.JITMs-a.JITMs)
	}
	return v, float64(a.Calls) + f*float64(b.Calls-a.Calls), nil
}

// JITOver is a JVM server's JIT compile time (ms) between t0 and t1, interpolated
// as Interpolate does; ok is false when the server reports none.
func JITOver(s []Server, t0, t1 float64) (ms float64, ok bool) {
	j0, _, err0 := At(s, t0)
	j1, _, err1 := At(s, t1)
	if err0 != nil || err1 != nil || j0.JITMs < 0 || j1.JITMs < 0 {
		return 0, false
	}
	return math.Max(0, j1.JITMs-j0.JITMs), true
}

// Sampler reads the server's /stats and /proc/stat every Every until stop.
type Sampler struct {
	read    func(context.Context) (Server, error)
	linkCPU func() (time.Duration, bool)
	stopc   chan struct{}
	done    chan struct{}
	samples []Server
	machine Machines
	lastErr error
}

// Start takes the first samples before it returns, so the series starts
// before the client does. read reads the server (nil: none is sampled);
// linkCPU, the link's delayers' CPU, read with every machine sample (nil: none).
func Start(ctx context.Context, read func(context.Context) (Server, error), linkCPU func() (time.Duration, bool)) *Sampler {
	s := &Sampler{read: read, linkCPU: linkCPU, stopc: make(chan struct{}), done: make(chan struct{})}
	s.take(ctx)
	go func() {
		defer close(s.done)
		t := time.NewTicker(Every)
		defer t.Stop()
		for {
			select {
			case <-s.stopc:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				s.take(ctx)
			}
		}
	}()
	return s
}

func (s *Sampler) take(ctx context.Context) {
	if m, err := ReadProcStat(); err == nil {
		if s.linkCPU != nil {
			if d, ok := s.linkCPU(); ok {
				m.Link, m.LinkOK = d.Seconds(), true
			}
		}
		s.machine = append(s.machine, m)
	}
	if s.read == nil {
		return
	}
	if v, err := s.read(ctx); err == nil {
		s.samples = append(s.samples, v)
	} else {
		s.lastErr = err
	}
}

// Stop ends the sampling after one last sample and returns both series.
func (s *Sampler) Stop(ctx context.Context) ([]Server, Machines) {
	close(s.stopc)
	<-s.done
	s.take(ctx)
	return s.samples, s.machine
}

// userHZ is the unit of /proc/stat (USER_HZ is 100 on Linux).
const userHZ = 100

// ReadProcStat reads the first ("cpu") line of /proc/stat.
func ReadProcStat() (Machine, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return Machine{}, err
	}
	defer f.Close()
	t := float64(time.Now().UnixMicro()) / 1e6
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return Machine{}, errors.New("/proc/stat: empty")
	}
	return ParseProcStat(sc.Text(), t)
}

// ParseProcStat reads "cpu user nice system idle iowait irq softirq steal guest
// guest_nice" (guest time is already inside user and nice).
func ParseProcStat(line string, t float64) (Machine, error) {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return Machine{}, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var v [8]float64
	for i := range v {
		x, err := strconv.ParseFloat(f[1+i], 64)
		if err != nil {
			return Machine{}, fmt.Errorf("/proc/stat: %v", err)
		}
		v[i] = x / userHZ
	}
	user, nice, system, idle, iowait, irq, softirq, steal := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
	return Machine{T: t, Busy: user + nice + system + irq + softirq, Idle: idle + iowait, Steal: steal}, nil
}
