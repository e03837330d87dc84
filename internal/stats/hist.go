package stats

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// A latency record is one client process's latencies over its measured window:
// an HdrHistogram in its V2 compressed encoding, base64 (the report's "Latency
// histogram:" line, docs/report-format.md). Every client writes it with one
// geometry, so records from any client language and any node merge exactly: the
// merged histogram is the one a single process recording every call would hold.
const (
	// LatencyLowest and LatencyHighest are the range in microseconds: 1 us to one
	// hour (open-loop latencies count from the intended start, so they can
	// exceed a call's timeout). A client clamps a longer latency to the highest.
	LatencyLowest  int64 = 1
	LatencyHighest int64 = 3_600_000_000
	// LatencyDigits is the precision: a value is known to within 1 part in 1000
	// (exact below 2048 us).
	LatencyDigits = 3
)

// NewLatency returns an empty histogram of the latency records' geometry.
func NewLatency() *hdrhistogram.Histogram {
	return hdrhistogram.New(LatencyLowest, LatencyHighest, LatencyDigits)
}

// EncodeLatency is h's latency record.
func EncodeLatency(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("latency record: %w", err)
	}
	return string(b), nil
}

// DecodeLatency reads one latency record. It refuses a record of another geometry
// (its buckets would not line up with the others', so no merge could be exact) or
// a corrupt one.
func DecodeLatency(record string) (*hdrhistogram.Histogram, error) {
	if record == "" {
		return nil, errors.New("latency record: empty")
	}
	if err := checkGeometry(record); err != nil {
		return nil, fmt.Errorf("latency record: %w", err)
	}
	h, err := hdrhistogram.Decode([]byte(record))
	if err != nil {
		return nil, fmt.Errorf("latency record: %w", err)
	}
	if lo, hi, d := h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures(); lo != LatencyLowest || hi != LatencyHighest || d != LatencyDigits {
		return nil, fmt.Errorf("latency record: geometry %d..%d us at %d digits; want %d..%d us at %d digits",
			lo, hi, d, LatencyLowest, LatencyHighest, LatencyDigits)
	}
	return h, nil
}

// checkGeometry reads the geometry from a record's header before anything is
// allocated for it: the decoder sizes its counts from the header, so a hostile
// record declaring 1..2^63 at 5 digits would cost ~50 MB to refuse afterwards.
// A record it cannot read that far is left to the decoder's errors.
func checkGeometry(record string) error {
	// 8 bytes of outer header (cookie, length), then a zlib stream whose first
	// 40 bytes are the inner header (cookie, payload length, offset, digits,
	// lowest, highest, ratio).
	raw, err := base64.StdEncoding.DecodeString(record)
	if err != nil || len(raw) < 8 {
		return nil
	}
	z, err := zlib.NewReader(bytes.NewReader(raw[8:]))
	if err != nil {
		return nil
	}
	defer z.Close()
	var h [40]byte
	if _, err := io.ReadFull(z, h[:]); err != nil {
		return nil
	}
	digits := int64(int32(binary.BigEndian.Uint32(h[12:16])))
	lo, hi := int64(binary.BigEndian.Uint64(h[16:24])), int64(binary.BigEndian.Uint64(h[24:32]))
	if lo != LatencyLowest || hi != LatencyHighest || digits != LatencyDigits {
		return fmt.Errorf("geometry %d..%d us at %d digits; want %d..%d us at %d digits",
			lo, hi, digits, LatencyLowest, LatencyHighest, LatencyDigits)
	}
	return nil
}

// MergeLatency decodes every record and adds their counts bucket by bucket: the
// merge is exact (no count moves to another bucket, none is dropped). The i-th
// record's error names it by its index.
func MergeLatency(records ...string) (*hdrhistogram.Histogram, error) {
	if len(records) == 0 {
		return nil, errors.New("latency records: none to merge")
	}
	merged := NewLatency()
	for i, r := range records {
		h, err := DecodeLatency(r)
		if err != nil {
			return nil, fmt.Errorf("record %d of %d: %w", i+1, len(records), err)
		}
		if dropped := merged.Merge(h); dropped != 0 {
			return nil, fmt.Errorf("record %d of %d: %d values out of range", i+1, len(records), dropped)
		}
	}
	return merged, nil
}

// Latency is what a latency record says, as matrix.json keeps it: the record
// itself (so a later merge, across client tasks or nodes, stays possible) and the
// percentiles read from it.
type Latency struct {
	// Record is the encoded histogram (EncodeLatency), merged when the figures
	// come from several client processes.
	Record string `json:"record"`
	// Sources is how many records were merged into Record (1: one client process).
	Sources int     `json:"sources"`
	Count   int64   `json:"count"`
	P50Us   int64   `json:"p50_us"`
	P90Us   int64   `json:"p90_us"`
	P99Us   int64   `json:"p99_us"`
	P999Us  int64   `json:"p999_us"`
	MaxUs   int64   `json:"max_us"`
	MeanUs  float64 `json:"mean_us"`
}

// LatencyOf merges records (one per client process) and reads the percentiles
// from the merged histogram: never an average of per-process percentiles.
func LatencyOf(records ...string) (Latency, error) {
	h, err := MergeLatency(records...)
	if err != nil {
		return Latency{}, err
	}
	enc := records[0]
	if len(records) > 1 {
		if enc, err = EncodeLatency(h); err != nil {
			return Latency{}, err
		}
	}
	l := Figures(h)
	l.Record, l.Sources = enc, len(records)
	return l, nil
}

// Figures reads a histogram's percentiles as HdrHistogram defines them (the
// highest value equivalent to the value at rank LatencyRank), as the go and java
// clients' "Latency pNN:" lines do.
func Figures(h *hdrhistogram.Histogram) Latency {
	l := Latency{Count: h.TotalCount()}
	if l.Count == 0 {
		return l
	}
	l.P50Us = h.ValueAtQuantile(50)
	l.P90Us = h.ValueAtQuantile(90)
	l.P99Us = h.ValueAtQuantile(99)
	l.P999Us = h.ValueAtQuantile(99.9)
	l.MaxUs = h.Max()
	l.MeanUs = h.Mean()
	return l
}

// LatencyRank is the 1-based rank HdrHistogram reads percentile pct (0..100) at
// among n values: pct/100*n rounded half up, within 1..n. The raw value at this
// rank of the sorted latencies lies in the bucket the histogram answers with.
func LatencyRank(pct float64, n int64) int64 {
	r := int64(pct/100*float64(n) + 0.5)
	return max(1, min(r, n))
}

// latencyGeometry answers bucket questions without a record (made on first use:
// its counts are 184 KiB, and most programs importing stats never ask).
var latencyGeometry = sync.OnceValue(NewLatency)

// SameBucket tells whether two latencies (us) fall in one bucket of the latency
// records' geometry: the histogram cannot tell them apart.
func SameBucket(a, b int64) bool { return latencyGeometry().ValuesAreEquivalent(a, b) }
