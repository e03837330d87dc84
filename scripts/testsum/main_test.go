package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// The pass-through and the summary of a recorded `go test -json` stream (three
// packages: passes, a skip and a skipped subtest, a failure, no test files).
func TestGolden(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "stream.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s, err := Read(bytes.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	out.WriteString("==== summary\n")
	s.Write(&out)
	golden := filepath.Join("testdata", "out.golden")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != string(want) {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	for _, tc := range []struct {
		name      string
		got, want int
	}{{"passed", s.Passed, 4}, {"failed", s.Failed, 1}, {"skipped", s.Skipped, 2}, {"packages", s.Packages, 3}} {
		if tc.got != tc.want {
			t.Errorf("%s: got %d; want %d", tc.name, tc.got, tc.want)
		}
	}
}

// Input that is not go test's: every line passes through, nothing is counted.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"Action":"skip","Package":"p","Test":"T"}` + "\n" + `{"Action":"output"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var out bytes.Buffer
		Read(bytes.NewReader(b), &out)
	})
}
