package stats

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// latencies draws n log-normal-ish latencies (us) spread over 50 us .. 2 s, so the
// records span many buckets of every width.
func latencies(seed uint64, n int) []int64 {
	r := rand.New(rand.NewPCG(seed, 27))
	v := make([]int64, n)
	for i := range v {
		x := int64(50 * (1 + r.ExpFloat64()*r.ExpFloat64()*40))
		v[i] = min(x, 2_000_000)
	}
	return v
}

func record(t testing.TB, vs []int64) string {
	t.Helper()
	h := NewLatency()
	for _, v := range vs {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := EncodeLatency(h)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// TestMergeExact: records of N processes merge into exactly the histogram one
// process recording every call holds, and its percentiles are the raw ones
// within one bucket.
func TestMergeExact(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sizes []int
	}{
		{"one", []int{5000}},
		{"two", []int{3000, 4000}},
		{"uneven", []int{1, 10, 25000}},
		{"empty-and-full", []int{0, 2000}},
		{"five", []int{700, 700, 700, 700, 701}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var all []int64
			var recs []string
			for i, n := range tc.sizes {
				vs := latencies(uint64(i+1), n)
				all = append(all, vs...)
				recs = append(recs, record(t, vs))
			}
			merged, err := MergeLatency(recs...)
			if err != nil {
				t.Fatal(err)
			}
			single := NewLatency()
			for _, v := range all {
				single.RecordValue(v)
			}
			if !merged.Equals(single) {
				t.Fatalf("merged histogram differs from one recording every value")
			}
			l, err := LatencyOf(recs...)
			if err != nil {
				t.Fatal(err)
			}
			if l.Count != int64(len(all)) || l.Sources != len(recs) {
				t.Fatalf("count %d sources %d; want %d and %d", l.Count, l.Sources, len(all), len(recs))
			}
			slices.Sort(all)
			for _, q := range []struct {
				pct float64
				got int64
			}{{50, l.P50Us}, {90, l.P90Us}, {99, l.P99Us}, {99.9, l.P999Us}, {100, l.MaxUs}} {
				raw := all[LatencyRank(q.pct, int64(len(all)))-1]
				if !SameBucket(q.got, raw) {
					t.Errorf("p%v = %d us; raw %d us is in another bucket", q.pct, q.got, raw)
				}
			}
			back, err := DecodeLatency(l.Record)
			if err != nil || !back.Equals(single) {
				t.Fatalf("DecodeLatency(merged record): %v (equal %v)", err, err == nil && back.Equals(single))
			}
		})
	}
}

func TestDecodeLatencyRefuses(t *testing.T) {
	other := hdrhistogram.New(1, 60_000_000, 3)
	other.RecordValue(10)
	otherEnc, _ := other.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	good := record(t, []int64{100, 200})
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "empty"},
		{"not-base64", "HIST!!", "illegal base64"},
		{"cut", good[:len(good)-8], ""},
		{"geometry", string(otherEnc), "geometry 1..60000000 us"},
		{"short", "SElTVA==", "too short"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeLatency(tc.in)
			if err == nil {
				t.Fatalf("DecodeLatency(%q) = nil error", tc.in)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q; want it to say %q", err, tc.want)
			}
		})
	}
	if _, err := MergeLatency(good, string(otherEnc)); err == nil || !strings.HasPrefix(err.Error(), "record 2 of 2:") {
		t.Fatalf("MergeLatency with a bad second record: %v; want it named", err)
	}
	if _, err := MergeLatency(); err == nil {
		t.Fatal("MergeLatency() = nil error")
	}
}

func TestLatencyRank(t *testing.T) {
	for _, tc := range []struct {
		pct  float64
		n    int64
		want int64
	}{
		{50, 1, 1}, {50, 2, 1}, {50, 3, 2}, {50, 1234, 617}, {99.9, 1000, 999},
		{99.9, 10, 10}, {0, 10, 1}, {100, 10, 10}, {99, 150, 149},
	} {
		if got := LatencyRank(tc.pct, tc.n); got != tc.want {
			t.Errorf("LatencyRank(%v, %d) = %d; want %d", tc.pct, tc.n, got, tc.want)
		}
		// The rank is the one the histogram reads: with distinct exact values
		// (below 2048 us) the value at the rank is the percentile itself.
		h := NewLatency()
		for v := int64(1); v <= tc.n; v++ {
			h.RecordValue(v)
		}
		if got := h.ValueAtQuantile(tc.pct); got != LatencyRank(tc.pct, tc.n) {
			t.Errorf("histogram of 1..%d at p%v = %d; LatencyRank says %d", tc.n, tc.pct, got, LatencyRank(tc.pct, tc.n))
		}
	}
}

func TestSameBucket(t *testing.T) {
	for _, tc := range []struct {
		a, b int64
		want bool
	}{
		{2047, 2047, true}, {2046, 2047, false}, {2048, 2049, true}, {2049, 2050, false},
		{1_000_000, 1_000_100, true}, {1_000_000, 1_001_000, false},
	} {
		if got := SameBucket(tc.a, tc.b); got != tc.want {
			t.Errorf("SameBucket(%d, %d) = %v; want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// FuzzDecodeLatency: no record panics the decoder; one that decodes re-encodes
// to a record that decodes to the same histogram.
func FuzzDecodeLatency(f *testing.F) {
	f.Add(record(f, []int64{1, 2, 3, 5000, 1_000_000}))
	f.Add("HISTFAAAACR42pNpmSzMwMDAxQABzFCaEUzOmNJg/wEiMGHiUgYAeBQFfg==")
	f.Fuzz(func(t *testing.T, in string) {
		h, err := DecodeLatency(in)
		if err != nil {
			return
		}
		enc, err := EncodeLatency(h)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeLatency(enc)
		if err != nil || !back.Equals(h) {
			t.Fatalf("re-encoded record: %v", err)
		}
	})
}

// TestRecordsOfOtherWriters: a record php-client's native writer printed
// (php-client/tests/LatencyRecordTest.php pins it) decodes to exactly the
// histogram Go records of the same values. Java's records are read in
// internal/report's goldens (java-hist-*) and the merge test.
func TestRecordsOfOtherWriters(t *testing.T) {
	const php = "HISTFAAAACp42pNpmSzMwMDAxQABzFCaEURcm7yEwf4DRICX4608E8v+PkYmAI2jBwg="
	h, err := DecodeLatency(php)
	if err != nil {
		t.Fatal(err)
	}
	want := NewLatency()
	for _, v := range []int64{7, 7, 7, 7, 2047, 2048, 2049, 1000447} {
		want.RecordValue(v)
	}
	if !h.Equals(want) {
		t.Fatalf("php's record decodes to %v; want %v", h.Distribution(), want.Distribution())
	}
}

// TestDecodeLatencyWideGeometry: a record declaring the widest geometry is
// refused from its header, before the decoder allocates its counts.
func TestDecodeLatencyWideGeometry(t *testing.T) {
	wide := hdrhistogram.New(1, 1<<62, 5)
	wide.RecordValue(1 << 61)
	enc, err := wide.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = DecodeLatency(string(enc))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "geometry 1..4611686018427387904 us at 5 digits") {
		t.Fatalf("DecodeLatency(1..2^62 at 5 digits): %v; want the geometry refused", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("refusing it allocated %d bytes; want it refused from the header (< 1 MiB)", got)
	}
}
