package report_test

import (
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rpcbed/rpcbed/internal/report"
)

// A load client records each call's latency in microseconds, then lets
// FromSamples derive ab's figures and Write print them.
func ExampleFromSamples() {
	h := hdrhistogram.New(1, 60_000_000, 3)
	for i := range int64(1000) {
		h.RecordValue(900 + i) // 0.9 .. 1.899 ms
	}
	r := report.FromSamples(report.Samples{
		ServerSoftware: "rpcbed-go-server", ServerHostname: "127.0.0.1", ServerPort: 50051,
		DocumentPath: "/rpcbed.data.Data/DataType", DocumentLength: 60,
		Concurrency: 10, Elapsed: 250 * time.Millisecond, Complete: 1000,
		KeepAlive: true, Bytes: 60000, Latency: h,
		Rpcbed: &report.Extra{Client: "go", Protocol: "grpc", Call: "datatype",
			Connections: 1, SharedConnections: true, Loop: "closed"},
	})
	fmt.Println(r.RequestsPerSecond, r.TimePerRequestMs, r.Total, r.Percentiles[0], r.Rpcbed.P50Us)
	// Output: 4000 2.5 {1 1 0.3 1 2} {50 1} 1399
}
