package openloop

import (
	"fmt"
	"strings"
	"testing"
)

// Four hits at 1000/s (due every 1 ms from the first): the third was sent 2 ms
// late and took 1 ms, so from its intended start it took 3 ms.
const fourHits = `1000000000000,200,500000,0,0,,,,0,GET,http://h/x,
1000001000000,200,500000,0,129,,eyJ9,,1,GET,http://h/x,SGVhZA==
1000004000000,200,1000000,0,0,,,,2,GET,http://h/x,
1000003000000,500,"200000",0,0,"Get ""http://h/x"": EOF, again",,,3,GET,http://h/x,
`

// HdrHistogram at 3 significant digits, as go-client's: 3000 µs reads back as 3001.
func TestReadVegetaCSV(t *testing.T) {
	s, err := ReadVegetaCSV(strings.NewReader(fourHits), 1000)
	if err != nil {
		t.Fatal(err)
	}
	want := Summary{Requests: 4, Failed: 1, Seconds: 0.005, Achieved: 800,
		P50Us: 500, P99Us: 3001, P50SentUs: 500, P99SentUs: 1000}
	if s != want {
		t.Errorf("got %+v; want %+v", s, want)
	}
}

// lateFirstHit is an attack at 20000/s as vegeta runs one on an idle machine: its
// pacer sleeps 50 us before the first hit, Go wakes it 1 ms late, the hits due
// meanwhile go out at once, and from then on every hit leaves on time; each takes
// 297 us. vegeta's schedule starts at the attack's start (due: start + (seq+1) *
// 50 us), not at the late first hit.
func lateFirstHit(n int) string {
	const start, interval, lat = int64(1_000_000_000_000), int64(50_000), int64(297_000)
	var b strings.Builder
	for seq := range int64(n) {
		due := start + (seq+1)*interval
		sent := max(due, start+1_000_000+seq) // late ones leave 1 ns apart, in seq order
		fmt.Fprintf(&b, "%d,200,%d,0,0,,,,%d,GET,http://h/x,\n", sent, lat, seq)
	}
	return b.String()
}

// The schedule is taken from every hit, not from the first: with the first hit
// 1 ms late, a schedule from it put every later hit due 950 us after it was, and
// read p50 as 0 (below the p50 from the send, 297 us), as on the quiet machine.
func TestReadVegetaCSVLateFirstHit(t *testing.T) {
	s, err := ReadVegetaCSV(strings.NewReader(lateFirstHit(1000)), 20000)
	if err != nil {
		t.Fatal(err)
	}
	if s.P50Us != 297 || s.P50SentUs != 297 {
		t.Errorf("p50 %d us from the intended start, %d from the send; want 297 and 297", s.P50Us, s.P50SentUs)
	}
	// Hits 0..19 (2 %) waited for the late wake-up, hit k 1000-50*(k+1) us: the
	// 990th of 1000 latencies is hit 10's, 297+450 us.
	if s.P99Us != 747 {
		t.Errorf("p99 %d us from the intended start; want 747", s.P99Us)
	}
	// The window starts at the first hit's due time, 50 us into the attack.
	if want := (float64(1000-1)*50e3 + 297e3) / 1e9; s.Seconds < want-1e-9 || s.Seconds > want+1e-9 {
		t.Errorf("seconds %.9f; want %.9f", s.Seconds, want)
	}
	checkInvariants(t, s)
}

// checkInvariants: what any summary obeys.
func checkInvariants(t *testing.T, s Summary) {
	t.Helper()
	if s.Requests <= 0 || s.Failed < 0 || s.Failed > s.Requests {
		t.Fatalf("counts %+v", s)
	}
	if s.P50Us > s.P99Us || s.P50SentUs > s.P99SentUs {
		t.Fatalf("p50 above p99: %+v", s)
	}
	// No hit leaves before it is due: from the intended start is never shorter.
	if s.P50Us < s.P50SentUs || s.P99Us < s.P99SentUs {
		t.Fatalf("a percentile from the intended start below the one from the send: %+v", s)
	}
	if s.Seconds < 0 {
		t.Fatalf("negative window: %+v", s)
	}
}

func TestReadVegetaCSVBadInput(t *testing.T) {
	cases := []struct{ name, in, err string }{
		{"empty", "", "no results"},
		{"few columns", "1,200,3\n", "want at least 9"},
		{"not a number", "x,200,1,0,0,,,,0\n", "as numbers"},
		{"negative latency", "1,200,-1,0,0,,,,0\n", "as numbers"},
		{"bad quoting", "1,200,\"1,0,0,,,,0\n", "quote"},
		{"end past int64", "9223372036854775000,200,1000,0,0,,,,0\n", "past the year"},
		{"huge seq", "1,200,1,0,0,,,,9223372036854775807\n", "146 years"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadVegetaCSV(strings.NewReader(tc.in), 1000)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("got %v; want an error with %q", err, tc.err)
			}
		})
	}
	for _, rate := range []float64{0, -1, 2e9} {
		if _, err := ReadVegetaCSV(strings.NewReader(fourHits), rate); err == nil {
			t.Errorf("rate %v: got no error", rate)
		}
	}
}

func FuzzReadVegetaCSV(f *testing.F) {
	f.Add([]byte(fourHits), 1000.0)
	f.Add([]byte(lateFirstHit(30)), 20000.0)
	f.Add([]byte("9223372036854775000,200,100,0,0,,,,0\n1,200,1,0,0,,,,4611686018427387\n"), 1000.0)
	f.Fuzz(func(t *testing.T, b []byte, rate float64) {
		s, err := ReadVegetaCSV(strings.NewReader(string(b)), rate)
		if err == nil {
			checkInvariants(t, s)
		}
	})
}
