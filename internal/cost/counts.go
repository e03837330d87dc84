package cost

import (
	"errors"
	"fmt"
)

// Geometry is the simulated cache every cost run uses, CodSpeed's and iai's: the
// same on every machine, so the misses do not depend on the host's caches.
var Geometry = struct{ I1, D1, LL string }{
	I1: "32768,8,64", D1: "32768,8,64", LL: "8388608,16,64",
}

// Counts is what a stretch of running cost, summed over every process and thread
// that ran it. Misses are callgrind's simulated ones (Geometry).
type Counts struct {
	Ir   float64 `json:"instructions"` // instructions executed
	Dr   float64 `json:"data_reads"`
	Dw   float64 `json:"data_writes"`
	I1mr float64 `json:"i1_misses"` // L1 instruction-cache read misses
	D1mr float64 `json:"d1_read_misses"`
	D1mw float64 `json:"d1_write_misses"`
	ILmr float64 `json:"ll_i_misses"` // last-level misses (instruction reads)
	DLmr float64 `json:"ll_read_misses"`
	DLmw float64 `json:"ll_write_misses"`
	// Syscalls is callgrind's sysCount (--collect-systime): the system calls made.
	Syscalls float64 `json:"syscalls"`
}

// event names as callgrind prints them on its events: line, in Counts' order.
var eventNames = []string{"Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw", "sysCount"}

func (c *Counts) fields() []*float64 {
	return []*float64{&c.Ir, &c.Dr, &c.Dw, &c.I1mr, &c.D1mr, &c.D1mw, &c.ILmr, &c.DLmr, &c.DLmw, &c.Syscalls}
}

// CountsOf gives a profile's totals as Counts (events the file lacks are 0).
func CountsOf(p *Profile) Counts {
	var c Counts
	for i, f := range c.fields() {
		*f = float64(p.Event(eventNames[i]))
	}
	return c
}

// Add returns c + d.
func (c Counts) Add(d Counts) Counts {
	df := d.fields()
	for i, f := range c.fields() {
		*f += *df[i]
	}
	return c
}

// Scale returns c × k.
func (c Counts) Scale(k float64) Counts {
	for _, f := range c.fields() {
		*f *= k
	}
	return c
}

// L1Misses are the first-level misses of every kind: they hit LL or RAM.
func (c Counts) L1Misses() float64 { return c.I1mr + c.D1mr + c.D1mw }

// LLMisses are the last-level misses: they go to RAM.
func (c Counts) LLMisses() float64 { return c.ILmr + c.DLmr + c.DLmw }

// Cycles is iai's (and iai-callgrind's) estimate of the cycles spent:
//
//	L1 hits + 5 × LL hits + 35 × RAM hits
//
// where L1 hits = Ir + Dr + Dw − L1 misses, LL hits = L1 misses − LL misses,
// RAM hits = LL misses. It is an estimate from a simulated cache, not a measured
// time: no pipeline, no branch prediction, no prefetcher, no kernel work.
func (c Counts) Cycles() float64 {
	l1 := c.L1Misses()
	ll := c.LLMisses()
	return (c.Ir + c.Dr + c.Dw - l1) + 5*(l1-ll) + 35*ll
}

// Segment is one measured stretch: the counts of a run that made Calls calls,
// and the wire bytes the other side saw over it.
type Segment struct {
	Calls  int64
	Counts Counts
	// BytesIn and BytesOut are the measured side's bytes read and written on the
	// wire over the segment (socket payload, not TCP/IP headers).
	BytesIn, BytesOut float64
	// Layers are the instructions per layer (Layers.Split of the segment's
	// profiles).
	Layers map[string]float64
	// TimeDriven are the instructions of the time-driven threads, left out of
	// Counts (SplitTimeDriven).
	TimeDriven float64
	// Bookkeeping are LayerBookkeeping's instructions, left out of Counts.
	Bookkeeping float64
	// GC are the garbage collector's counts (LayerGC), apart from Counts.
	GC Counts
	// Seconds is the client's measured time (its report's "Time taken"): how
	// fast the calls went under callgrind.
	Seconds float64
	// GCCycles are the garbage-collection cycles the segment ran (GCCycles;
	// on the server side go-server's own count, MemStats.NumGC).
	GCCycles float64
	// HeapBytes and HeapObjects are what go-server's runtime allocated over
	// the segment (MemStats.TotalAlloc and Mallocs), LiveHeap its heap after
	// the collection the segment started from (HeapAlloc): server side only.
	HeapBytes, HeapObjects, LiveHeap float64

	// Threads are the per-thread sums, kept in segment.json.
	Threads any
}

// PerCall is a cell's cost of one call on one side.
type PerCall struct {
	Counts
	Cycles   float64            `json:"est_cycles"`
	BytesIn  float64            `json:"bytes_in"`
	BytesOut float64            `json:"bytes_out"`
	Layers   map[string]float64 `json:"layers,omitempty"` // instructions per call by layer
	// TimeDriven are the time-driven threads' instructions per call, left out
	// of every other figure (SplitTimeDriven).
	TimeDriven float64 `json:"time_driven_instructions"`
	// Bookkeeping are the client's latency histogram's instructions per call,
	// left out of every other figure (LayerBookkeeping).
	Bookkeeping float64 `json:"bookkeeping_instructions"`
	// GC is the garbage collector's cost per call (LayerGC): apart from
	// Counts, Cycles and Layers' other layers, because where a collection cycle
	// lands follows the pacer's timing, not the calls (docs/cost.md). With
	// Counts it makes the whole cost (WithGC).
	GC Counts `json:"gc"`
	// HeapBytes and HeapObjects are the bytes and objects go-server's runtime
	// allocated per call, by its own count (server side only).
	HeapBytes   float64 `json:"go_heap_bytes,omitempty"`
	HeapObjects float64 `json:"go_heap_objects,omitempty"`
	// MsPerCall is the wall time of one call under callgrind, (long − short
	// time taken) / calls: the time-driven work grows with it (docs/cost.md).
	MsPerCall float64 `json:"ms_per_call_under_callgrind"`
}

// WithGC is the whole cost per call, the collector's work included: what a
// language's call costs when it is set against another language or a timed
// CPU figure. Counts alone (without the collector) is what reproduces and what
// the gate compares.
func (p PerCall) WithGC() Counts { return p.Counts.Add(p.GC) }

// Marginal is the cost of one call: the difference between a long and a short
// segment over the difference in their calls. What both segments share
// (start-up, connecting, the verify call, exit) cancels; what remains is the
// steady per-call cost.
func Marginal(short, long Segment) (PerCall, error) {
	dn := long.Calls - short.Calls
	if dn <= 0 {
		return PerCall{}, fmt.Errorf("marginal cost: the long run made %d calls, the short one %d: want more calls in the long run", long.Calls, short.Calls)
	}
	k := 1 / float64(dn)
	d := long.Counts.Add(short.Counts.Scale(-1)).Scale(k)
	if d.Ir <= 0 {
		return PerCall{}, errors.New("marginal cost: the long run executed no more instructions than the short one")
	}
	pc := PerCall{Counts: d, Cycles: d.Cycles(), BytesIn: (long.BytesIn - short.BytesIn) * k, BytesOut: (long.BytesOut - short.BytesOut) * k,
		TimeDriven: (long.TimeDriven - short.TimeDriven) * k, Bookkeeping: (long.Bookkeeping - short.Bookkeeping) * k,
		GC:        long.GC.Add(short.GC.Scale(-1)).Scale(k),
		HeapBytes: (long.HeapBytes - short.HeapBytes) * k, HeapObjects: (long.HeapObjects - short.HeapObjects) * k,
		MsPerCall: 1000 * (long.Seconds - short.Seconds) * k}
	if long.Layers != nil {
		pc.Layers = map[string]float64{}
		for l, v := range long.Layers {
			pc.Layers[l] = (v - short.Layers[l]) * k
		}
		for l, v := range short.Layers {
			if _, ok := long.Layers[l]; !ok {
				pc.Layers[l] = -v * k
			}
		}
	}
	return pc, nil
}

// PerRunLayers are the instructions per run by layer that do not grow with the
// calls: the intercept of the line through the two runs (a + b·calls, b the
// marginal), short.Layers − short.Calls × b. Start-up, connecting and exit
// land here, and in the crypto layer the TLS handshake of a run's connection,
// apart from the records each call encrypts (the marginal). Nil when the
// segments carry no layers or the long run made no more calls.
func PerRunLayers(short, long Segment) map[string]float64 {
	dn := long.Calls - short.Calls
	if short.Layers == nil || long.Layers == nil || dn <= 0 {
		return nil
	}
	out := map[string]float64{}
	for _, l := range LayerOrder {
		s, lo := short.Layers[l], long.Layers[l]
		if s == 0 && lo == 0 {
			continue
		}
		out[l] = s - float64(short.Calls)*(lo-s)/float64(dn)
	}
	return out
}
