package matrix

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/stats"

	"github.com/rpcbed/rpcbed/internal/results"
)

// TestRepeatKeepsLatencyRecord: a cell file (cells/*.json, and matrix.json, which
// holds the same repeats) keeps each repeat's latency record verbatim, so repeats
// of client tasks, nodes or languages can be merged after the run.
func TestRepeatKeepsLatencyRecord(t *testing.T) {
	var cell results.CellResult
	var recs []string
	for i, golden := range []string{"go-client-hist-grpc-datalist-200-c8", "php-hist-grpc-datalist-200-c4"} {
		f, err := os.Open("../report/testdata/" + golden + ".txt")
		if err != nil {
			t.Fatal(err)
		}
		r, err := report.ParseClient(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r.Rpcbed.LatencyHistogram)
		cell.Repeats = append(cell.Repeats, results.Repeat{Index: i + 1, Report: &r})
	}
	b, err := json.Marshal(cell)
	if err != nil {
		t.Fatal(err)
	}
	var back results.CellResult
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, rep := range back.Repeats {
		kept = append(kept, rep.Report.Rpcbed.LatencyHistogram)
	}
	want, err := stats.LatencyOf(recs...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := stats.LatencyOf(kept...)
	if err != nil {
		t.Fatalf("merging the records a cell file kept: %v", err)
	}
	if got != want {
		t.Errorf("merged from the cell file %+v; want %+v", got, want)
	}
	if got.Count != back.Repeats[0].Report.Complete+back.Repeats[1].Report.Complete {
		t.Errorf("merged %d calls; the two reports completed %d and %d", got.Count, back.Repeats[0].Report.Complete, back.Repeats[1].Report.Complete)
	}
}
