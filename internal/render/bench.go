package render

import (
	"bufio"
	"fmt"
	"io"
	"runtime"

	"github.com/rpcbed/rpcbed/internal/results"
)

// benchUnits are the figures each repeat writes, with benchstat's unit metadata.
var benchUnits = []struct {
	unit   string
	better string
	value  func(results.Metrics) float64
}{
	{"req/s", "higher", results.RPS},
	{"p50-us", "lower", results.P50},
	{"p99-us", "lower", results.P99},
	{"client-cpu-us/op", "lower", results.ClientCPU},
	{"server-cpu-us/op", "lower", results.ServerCPU},
	{"B/resp", "lower", results.BytesPerResponse},
}

// Bench writes the run in Go's benchmark format, one line per repeat, so
// `benchstat old/bench.txt new/bench.txt` compares two runs:
//
//	BenchmarkMatrix/go-grpc-datalist-200-c50  12000  81234 ns/op  12310 req/s ...
//
// ns/op is the mean time per request across all concurrent requests (1e9/req/s);
// the iteration count is the complete requests.
func Bench(w io.Writer, run *results.Run) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "goos: linux\ngoarch: %s\npkg: github.com/rpcbed/rpcbed/matrix\n", runtime.GOARCH)
	if run.Machine.CPU != "" {
		fmt.Fprintf(bw, "cpu: %s\n", run.Machine.CPU)
	}
	fmt.Fprintf(bw, "run: %s\nrunner: %s\n", run.ID, orDash(run.Runner))
	if run.Commit != "" {
		fmt.Fprintf(bw, "commit: %s\n", run.Commit)
	}
	for _, u := range benchUnits {
		fmt.Fprintf(bw, "Unit %s better=%s\n", u.unit, u.better)
	}
	for _, c := range run.Cells {
		for _, r := range c.Repeats {
			if r.Report == nil || r.Metrics.RPS <= 0 {
				continue
			}
			m := r.Metrics
			fmt.Fprintf(bw, "BenchmarkMatrix/%s \t%d\t%.0f ns/op", c.Name, max(m.Complete, 1), 1e9/m.RPS)
			for _, u := range benchUnits {
				fmt.Fprintf(bw, "\t%s %s", trimFloat(u.value(m)), u.unit)
			}
			bw.WriteString("\n")
		}
	}
	return bw.Flush()
}

func trimFloat(v float64) string {
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.2f", v)
}
