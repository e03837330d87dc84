package analysis

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/results/resultstest"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// Every figure sits at its own index: Figures[FigP99] is p99.
func TestFiguresByIndex(t *testing.T) {
	if len(Figures) != int(figureCount) {
		t.Fatalf("got %d figures; want %d", len(Figures), figureCount)
	}
	for i, f := range Figures {
		if f.Index != FigureIndex(i) {
			t.Errorf("Figures[%d] is %s with index %d", i, f.Name, f.Index)
		}
		if (f.Unit == "ms") != strings.HasSuffix(f.Column, "_ms") {
			t.Errorf("%s: column %s does not name its unit %s", f.Name, f.Column, f.Unit)
		}
	}
	for _, tc := range []struct {
		i    FigureIndex
		name string
	}{{FigRPS, "req/s"}, {FigP50, "p50"}, {FigP99, "p99"}, {FigClientCPU, "client CPU/call"}, {FigServerCPU, "server CPU/call"}} {
		if got := tc.i.Figure().Name; got != tc.name {
			t.Errorf("figure %d: got %s; want %s", tc.i, got, tc.name)
		}
	}
}

// ratios.csv reads back to the records it was written from, and two runs'
// ratio files give Calibrate's flips.
func TestRatiosCSVRoundTrip(t *testing.T) {
	run := resultstest.Synthetic("x", 1)
	v := ViewOf(run)
	recs := v.Records()
	if len(recs) == 0 {
		t.Fatal("no ratios")
	}
	var b bytes.Buffer
	if err := WriteRatiosCSV(&b, recs); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRatiosCSV(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(recs) {
		t.Fatalf("got %d rows; want %d", len(got), len(recs))
	}
	for i := range recs {
		if got[i] != recs[i] {
			t.Errorf("row %d: got %+v; want %+v", i, got[i], recs[i])
		}
	}
	_, want := Calibrate(run, run)
	flips := FlipsOf(recs, recs)
	if len(flips) != len(want) {
		t.Fatalf("FlipsOf: %d kinds; Calibrate %d", len(flips), len(want))
	}
	for i := range want {
		if flips[i].Compared != want[i].Compared || flips[i].SameVerdict != want[i].SameVerdict || flips[i].Figure != want[i].Figure {
			t.Errorf("FlipsOf %d: got %+v; want %+v", i, flips[i], want[i])
		}
	}
	// A verdict turned over in B is a flip.
	b2 := append([]RatioRecord(nil), recs...)
	for i := range b2 {
		if b2[i].Verdict == stats.Faster {
			b2[i].Verdict = stats.Slower
			break
		}
	}
	n := 0
	for _, f := range FlipsOf(recs, b2) {
		n += len(f.Flipped)
	}
	if n != 1 {
		t.Errorf("one verdict turned over: got %d flips; want 1", n)
	}
}

func TestReadRatiosCSVErrors(t *testing.T) {
	head := strings.Join(RatioColumns, ",") + "\n"
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "empty"},
		{"no column", "kind,a,b\n", "no figure column"},
		{"bad ratio", head + "client-vs-go,a,b,rps,true,x,1,2,faster,3,,\n", "line 2: ratio \"x\""},
		{"negative", head + "client-vs-go,a,b,rps,true,1,-1,2,faster,3,,\n", "line 2: ratio_low"},
		{"bad paired", head + "client-vs-go,a,b,rps,yes,1,1,2,faster,3,,\n", "line 2: paired"},
		{"no cell", head + "client-vs-go,,b,rps,true,1,1,2,faster,3,,\n", "must not be empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadRatiosCSV(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v; want an error naming %q", err, tc.want)
			}
		})
	}
}

func FuzzReadRatiosCSV(f *testing.F) {
	f.Add(strings.Join(RatioColumns, ",") + "\nclient-vs-go,a,b,rps,true,1.2,1.1,1.3,faster,3,,noisy\n")
	f.Add("kind\n\"")
	f.Fuzz(func(t *testing.T, in string) {
		recs, err := ReadRatiosCSV(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, r := range recs {
			if r.A == "" || r.Ratio < 0 || r.Low < 0 || r.High < 0 || r.Rounds < 0 {
				t.Fatalf("accepted a bad row: %+v", r)
			}
		}
	})
}

// The view computes each cell's summary once, and its flagged cells are the
// ones whose summary carries a flag.
func TestViewFlagged(t *testing.T) {
	run := resultstest.Synthetic("x", 1)
	v := ViewOf(run)
	n := 0
	for _, c := range run.Cells {
		if len(c.Summarized().Flags) > 0 {
			n++
		}
	}
	if got := len(v.FlaggedCells()); got != n || n == 0 {
		t.Errorf("got %d flagged cells; want %d (and some)", got, n)
	}
}
