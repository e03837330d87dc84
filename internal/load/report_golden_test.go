package load

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rpcbed/rpcbed/internal/report"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ from the code")

// The report says which mode ran: `Check: length` for load-generator mode
// (make bench-loadgen), `Check: full` for equal work (the matrix), and is
// otherwise the same report. A fixed Result, so the files are byte for byte.
func TestReportGoldenCheckMode(t *testing.T) {
	for _, check := range []string{CheckFull, CheckLength} {
		t.Run(check, func(t *testing.T) {
			h := hdrhistogram.New(1, histMax, 3)
			for i := range int64(1000) {
				h.RecordValue(800 + i%400)
			}
			start := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
			res := &Result{
				Config: Config{Proto: ProtoHTTP, Call: CallDataType, Concurrency: 50, Conns: 50, Duration: 10 * time.Second,
					KeepAlive: true, Check: check, Addr: "127.0.0.1:8080"},
				ServerSoftware: "rpcbed-go-server", DocLength: 129,
				TimeTaken: 10 * time.Second, Complete: 1000, Bytes: 129000, WarmupCalls: 10, Hist: h,
				WindowStart: start, WindowEnd: start.Add(10 * time.Second),
				CPUUser: 20 * time.Millisecond, CPUSystem: 60 * time.Millisecond, WarmupTime: time.Second, Settled: report.SettledFixed,
			}
			rep := res.Report()
			rep.Rpcbed.Versions = map[string]string{"go": "go1.x"} // not the toolchain of the day
			var out bytes.Buffer
			if err := report.Write(&out, rep); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "report-http-datatype-c50-k-"+check+".txt")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -run TestReportGoldenCheckMode -update writes it)", err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("report differs from %s:\n%s", path, out.String())
			}
			back, err := report.Parse(bytes.NewReader(out.Bytes()))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if back.Rpcbed.Check != check {
				t.Errorf("parsed Check = %q; want %q", back.Rpcbed.Check, check)
			}
		})
	}
}
