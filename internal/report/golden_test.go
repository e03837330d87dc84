package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ from the code")

// TestGolden parses every testdata/NAME.txt and compares the report, as indented
// JSON, with testdata/NAME.json. Drop a client's output in as NAME.txt and run
// `go test ./internal/report -run TestGolden -update` to create its JSON; review it.
// Besides the JSON, every report must survive Write -> Parse unchanged, and a
// report with an rpcbed block (a client's, not ab's) must be byte for byte what
// Write prints for it: that is how a PHP or Java client's layout is checked.
func TestGolden(t *testing.T) {
	ins, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(ins) == 0 {
		t.Fatal("no testdata/*.txt")
	}
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".txt")
		t.Run(name, func(t *testing.T) {
			text, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Parse(bytes.NewReader(text))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got, err := json.MarshalIndent(r, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := strings.TrimSuffix(in, ".txt") + ".json"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Parse(%s) as JSON:\n%s\nwant (%s):\n%s", in, got, golden, want)
			}

			var buf bytes.Buffer
			if err := Write(&buf, r); err != nil {
				t.Fatal(err)
			}
			printed := buf.String()
			back, err := Parse(&buf)
			if err != nil {
				t.Fatalf("Parse(Write(r)): %v\n%s", err, printed)
			}
			if !reflect.DeepEqual(back, r) {
				t.Errorf("Parse(Write(r)) = %+v; want %+v", back, r)
			}
			if r.Rpcbed != nil {
				if line, got, want := firstDiff(printed, string(text)); line > 0 {
					t.Errorf("%s is not what Write prints for its report: line %d: got %q; want %q (from Write)",
						in, line, got, want)
				}
			}
		})
	}
}

// firstDiff returns the first line (1-based) where a and b differ, with both
// lines; 0 when they are equal.
func firstDiff(want, got string) (int, string, string) {
	if want == got {
		return 0, "", ""
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; ; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl || i >= len(w) || i >= len(g) {
			return i + 1, gl, wl
		}
	}
}

// fullReport is a report of the Go client's shape with every line in use.
func fullReport() Report {
	return Report{
		ServerSoftware:      "rpcbed-go-server",
		ServerHostname:      "127.0.0.1",
		ServerPort:          50051,
		DocumentPath:        "/rpcbed.data.Data/DataList?n=200",
		DocumentLength:      5527,
		Concurrency:         50,
		TimeTakenSeconds:    2.013,
		Complete:            10000,
		Failed:              3,
		FailedBy:            Failures{Exceptions: 3},
		KeepAlive:           10000,
		Non2xx:              3,
		TotalTransferred:    55270000,
		HTMLTransferred:     55270000,
		RequestsPerSecond:   4967.71,
		TimePerRequestMs:    10.065,
		TimePerRequestAllMs: 0.201,
		TransferRateKBps:    26812.91,
		Processing:          ConnRow{Min: 1, Mean: 10, SD: 2.1, Median: 10, Max: 31},
		Waiting:             ConnRow{Min: 1, Mean: 10, SD: 2.1, Median: 10, Max: 31},
		Total:               ConnRow{Min: 1, Mean: 10, SD: 2.1, Median: 10, Max: 31},
		Percentiles: []Percentile{{50, 10}, {66, 11}, {75, 11}, {80, 12}, {90, 13},
			{95, 14}, {98, 16}, {99, 18}, {100, 31}},
		Rpcbed: &Extra{
			Client: "go", Protocol: "grpc", Call: "datalist", Items: 200,
			Connections: 1, SharedConnections: true, Loop: "closed",
			WarmupSeconds: 2, WarmupCalls: 812,
			P50Us: 9812, P90Us: 12840, P99Us: 17990, P999Us: 29100, MeanUs: 10065.2, MaxUs: 31022,
			CPUUserSeconds: 1.23, CPUSystemSeconds: 0.41,
			Errors:   map[string]int64{"exceptions": 3},
			Versions: map[string]string{"go": "go1.26.8", "grpc": "1.85.0"},
			Check:    CheckFull, Runtime: "go", CPUScope: ScopeWindow,
			WindowStart: 1764577000.123456, WindowEnd: 1764577002.136456, WarmupSettled: SettledYes,
		},
	}
}

// TestWriteGolden pins Write's layout: testdata/write-full.txt is the example of
// docs/report-format.md, printed by Write.
func TestWriteGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, fullReport()); err != nil {
		t.Fatal(err)
	}
	const golden = "testdata/write-full.txt"
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if line, got, w := firstDiff(string(want), buf.String()); line > 0 {
		t.Errorf("Write: line %d: got %q; want %q (%s)", line, got, w, golden)
	}
}
