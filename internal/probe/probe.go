// Package probe times the machine itself, apart from any RPC: a compute and a
// memory probe pinned to one CPU (the driver runs the compute one around every
// repeat), a sustained probe of many slots, and the noise of its windows. It is
// what `rpcbed probe` prints and what a repeat's probe times (results.Probe) are.
package probe

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rpcbed/rpcbed/internal/stats"
)

// The CPU probe: a fixed piece of CPU work the driver times on the client's and
// the server's core before and after every repeat, while both sides are idle.
// Steal and outside CPU (from /proc/stat) miss a virtual machine whose cores
// just run slower for a while; the probe's time shows it, in the same run as
// the figures it may explain (docs/method.md, section 6).
const (
	// probeRounds SHA-256 sums of probeBlock bytes: about 6 ms on the build machine.
	probeRounds = 2000
	probeBlock  = 4096
)

// timedOn runs work on a thread pinned to cpu (-1: wherever the scheduler runs
// it) and returns how long work took. The thread is its own and exits with it,
// so the pinning never leaks to another goroutine.
func timedOn(cpu int, work func()) (time.Duration, error) {
	type result struct {
		d   time.Duration
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if cpu >= 0 {
			var set unix.CPUSet
			set.Set(cpu)
			if err := unix.SchedSetaffinity(0, &set); err != nil {
				ch <- result{err: err}
				return
			}
		}
		t := time.Now()
		work()
		ch <- result{d: time.Since(t)}
	}()
	r := <-ch
	return r.d, r.err
}

// CPU times the compute probe (probeRounds SHA-256 sums) on cpu (-1: unpinned).
func CPU(cpu int) (time.Duration, error) {
	buf := make([]byte, probeBlock)
	return timedOn(cpu, func() {
		for i := 0; i < probeRounds; i++ {
			s := sha256.Sum256(buf)
			buf[i%probeBlock] ^= s[0]
		}
	})
}

// FirstCPU is the lowest CPU a cpuset names ("1", "0-1", "2,3"), -1 for none
// or one it cannot read.
func FirstCPU(cpuset string) int {
	lo := -1
	for _, part := range strings.Split(cpuset, ",") {
		a, _, _ := strings.Cut(strings.TrimSpace(part), "-")
		n, err := strconv.Atoi(a)
		if err != nil || n < 0 {
			continue
		}
		if lo < 0 || n < lo {
			lo = n
		}
	}
	return lo
}

// The memory probe: a dependent random walk over a buffer larger than the
// caches, so its time follows the machine's memory speed (which the compute
// probe, working in L1, does not see): `rpcbed probe` times both.
const (
	probeMemEntries = 8 << 20 // uint32s: 32 MiB
	// MemSteps: steps of one memory probe, about 10-15 ms on the build machine.
	MemSteps = 40000
)

// The cache probe: the same walk over 2 MiB, twice a core's L2 on the build
// machine and well inside its shared last-level cache, so its time follows how
// much of that cache the machine's other tenants leave this one (a working set
// like an interpreter's or a JIT's). The driver times it beside the compute
// probe before and after every repeat (docs/method.md, section 6).
const (
	probeCacheEntries = 512 << 10 // uint32s: 2 MiB
	// CacheSteps: steps of one cache probe, about 2.5 ms on the build machine.
	CacheSteps = 40000
)

// walk is one random cycle through every entry of a buffer, built at its first
// use.
type walk struct {
	once    sync.Once
	entries int
	next    []uint32
}

var (
	memWalk   = &walk{entries: probeMemEntries}
	cacheWalk = &walk{entries: probeCacheEntries}
)

// Memory times steps of the memory walk on cpu (-1: unpinned). The buffer
// (one random cycle through every entry) is built at the first call.
func Memory(cpu, steps int) (time.Duration, error) { return memWalk.timed(cpu, steps) }

// Cache times CacheSteps steps of the cache walk on cpu (-1: unpinned).
func Cache(cpu int) (time.Duration, error) { return cacheWalk.timed(cpu, CacheSteps) }

func (w *walk) timed(cpu, steps int) (time.Duration, error) {
	w.once.Do(func() {
		r := rand.New(rand.NewPCG(1, 2))
		perm := r.Perm(w.entries)
		w.next = make([]uint32, w.entries)
		for i := range perm {
			w.next[perm[i]] = uint32(perm[(i+1)%len(perm)])
		}
	})
	next, p := w.next, uint32(0)
	d, err := timedOn(cpu, func() {
		q := uint32(0) // a local: the walk's only store is its register
		for range steps {
			q = next[q]
		}
		p = q
	})
	if p == ^uint32(0) { // never: keeps the walk from being optimised away
		d = 0
	}
	return d, err
}

// Sustained runs work back to back on cpu (-1: unpinned) for total/slot
// slots, counting how many times it completes in each, and returns each slot's
// rate (works per second; a work that outlasts its slot ends the slot late). Unlike the short probes it keeps the core busy, as a client or server
// under load does; WindowNoise tells how much its rate moves over windows of a
// given length. ctx ends it early with the slots so far.
func Sustained(ctx context.Context, cpu int, total, slot time.Duration, work func()) ([]float64, error) {
	if slot <= 0 || total < slot {
		return nil, fmt.Errorf("probe: slot %s, total %s: want 0 < slot <= total", slot, total)
	}
	slots := int(total / slot)
	rates := make([]float64, 0, slots)
	_, err := timedOn(cpu, func() {
		for len(rates) < slots && ctx.Err() == nil {
			t0 := time.Now()
			n := 0
			for time.Since(t0) < slot {
				work()
				n++
			}
			rates = append(rates, float64(n)/time.Since(t0).Seconds())
		}
	})
	return rates, err
}

// WindowSD is how much a sustained rate moves over windows of one length: the
// standard deviation of the windows' log rates (relative: 0.2 is 20 %), over
// Windows consecutive windows of Slots slots each. White is what it would be
// if the slots were independent: the one-slot sd over √Slots.
type WindowSD struct {
	Slots, Windows int
	SD, White      float64
}

// WindowNoise is WindowSD for each width (in slots) with at least 4 whole windows
// in rates; widths below 1 are skipped.
func WindowNoise(rates []float64, widths []int) []WindowSD {
	var out []WindowSD
	for _, k := range widths {
		l := windowLogs(rates, len(rates), k)
		if len(l) < 4 {
			continue
		}
		_, sd := stats.MeanSD(l)
		w := WindowSD{Slots: k, Windows: len(l), SD: sd, White: math.NaN()}
		switch {
		case k == 1:
			w.White = sd
		case len(out) > 0 && out[0].Slots == 1:
			w.White = out[0].SD / math.Sqrt(float64(k))
		}
		out = append(out, w)
	}
	return out
}

// WindowCorrelation is the correlation of two sustained probes' log rates over
// windows of k slots, slot by slot in time (both probes ran at once); NaN with
// fewer than 4 windows in common or a series that does not move.
func WindowCorrelation(a, b []float64, k int) float64 {
	n := min(len(a), len(b))
	x, y := windowLogs(a, n, k), windowLogs(b, n, k)
	if len(x) < 4 || len(y) != len(x) {
		return math.NaN()
	}
	mx, _ := stats.MeanSD(x)
	my, _ := stats.MeanSD(y)
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	if sxx < 1e-12 || syy < 1e-12 { // logs that do not move (rounding aside)
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// windowLogs is the log of the mean rate over each whole window of k slots in the
// first n of rates; nil for k below 1 or a window without work (no log).
func windowLogs(rates []float64, n, k int) []float64 {
	if k < 1 {
		return nil
	}
	var l []float64
	for i := 0; i+k <= n; i += k {
		s := 0.0
		for _, r := range rates[i : i+k] {
			s += r
		}
		if s <= 0 {
			return nil
		}
		l = append(l, math.Log(s/float64(k)))
	}
	return l
}
