package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/analysis"
)

// `rpcbed compare -format csv|json` writes ratios.csv's columns, one row per
// cell and figure, B over A; a bad format is named.
func TestCompareFormats(t *testing.T) {
	b := referenceFirstRepeats(t, 2)
	var csvOut, jsonOut, stderr bytes.Buffer
	if code := run(context.Background(), []string{"compare", "-format", "csv", reference, b}, stdio{nil, &csvOut, &stderr}); code != 0 {
		t.Fatalf("compare -format csv: exit %d: %s", code, stderr.String())
	}
	recs, err := analysis.ReadRatiosCSV(&csvOut)
	if err != nil || len(recs) == 0 {
		t.Fatalf("compare -format csv does not read as ratios.csv: %v (%d rows)", err, len(recs))
	}
	if code := run(context.Background(), []string{"compare", reference, b, "-format", "json"}, stdio{nil, &jsonOut, &stderr}); code != 0 {
		t.Fatalf("compare -format json: exit %d: %s", code, stderr.String())
	}
	var js []analysis.RatioRecord
	if err := json.Unmarshal(jsonOut.Bytes(), &js); err != nil {
		t.Fatal(err)
	}
	if len(js) != len(recs) || js[0] != recs[0] {
		t.Errorf("json and csv differ: %d and %d rows, first %+v and %+v", len(js), len(recs), js[0], recs[0])
	}
	for _, r := range recs {
		if r.Kind != "b-vs-a" || r.A != r.B || r.Low > r.Ratio || r.Ratio > r.High {
			t.Errorf("bad row %+v", r)
			break
		}
	}
	stderr.Reset()
	if code := run(context.Background(), []string{"compare", "-format", "xml", reference, b}, stdio{nil, &bytes.Buffer{}, &stderr}); code != 2 || !strings.Contains(stderr.String(), "-format \"xml\"") {
		t.Errorf("-format xml: exit %d, %q; want 2 naming the format", code, stderr.String())
	}
}

// `rpcbed agree` takes its verdict flips from both runs' ratios.csv when they
// have one: the reference against itself flips nothing.
func TestAgreeReadsRatios(t *testing.T) {
	ra, rb, ok := ratioFiles(reference, reference)
	if !ok || len(ra) == 0 || len(ra) != len(rb) {
		t.Fatalf("ratioFiles(reference): ok %v, %d and %d rows", ok, len(ra), len(rb))
	}
	var out, stderr bytes.Buffer
	if code := run(context.Background(), []string{"agree", reference, reference}, stdio{nil, &out, &stderr}); code != 0 {
		t.Fatalf("agree: exit %d: %s", code, stderr.String())
	}
	for _, f := range analysis.FlipsOf(ra, rb) {
		if len(f.Flipped) > 0 || f.Compared == 0 {
			t.Errorf("reference against itself: %+v", f)
		}
	}
}
