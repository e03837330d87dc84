package openloop

import (
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

func TestReadVegetaCSVBadInput(t *testing.T) {
	cases := []struct{ name, in, err string }{
		{"empty", "", "no results"},
		{"few columns", "1,200,3\n", "want at least 9"},
		{"not a number", "x,200,1,0,0,,,,0\n", "as numbers"},
		{"negative latency", "1,200,-1,0,0,,,,0\n", "as numbers"},
		{"bad quoting", "1,200,\"1,0,0,,,,0\n", "quote"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadVegetaCSV(strings.NewReader(tc.in), 1000)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("got %v; want an error with %q", err, tc.err)
			}
		})
	}
	if _, err := ReadVegetaCSV(strings.NewReader(fourHits), 0); err == nil {
		t.Error("rate 0: got no error")
	}
}

func FuzzReadVegetaCSV(f *testing.F) {
	f.Add([]byte(fourHits), 1000.0)
	f.Fuzz(func(t *testing.T, b []byte, rate float64) {
		s, err := ReadVegetaCSV(strings.NewReader(string(b)), rate)
		if err == nil && (s.Requests <= 0 || s.Failed > s.Requests || s.P50Us > s.P99Us) {
			t.Fatalf("inconsistent summary %+v", s)
		}
	})
}
