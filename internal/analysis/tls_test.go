package analysis

import (
	"testing"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/results/resultstest"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// A TLS cell is compared with its plaintext cell (the same cell with security
// plaintext), paired by round, on client and server CPU per call, p50 and
// req/s; a plaintext run has no such comparison.
func TestTLSVsPlaintext(t *testing.T) {
	run := resultstest.Synthetic("tls", 1)
	if n := len(Ratios(ViewOf(run).Comparisons, TLSVsPlaintext).Rows); n != 0 {
		t.Fatalf("a plaintext run: %d TLS rows; want 0", n)
	}
	var plain results.CellResult
	for _, c := range run.Cells {
		if c.Name == "go-grpc-datalist-200-c1" {
			plain = c
		}
	}
	tls := plain
	tls.Cell.Security = "tls"
	tls.Name = tls.Cell.Name()
	tls.Repeats = nil
	for _, r := range plain.Repeats {
		// What the client negotiated: without it the cell is tls-mismatch and
		// left out of every comparison (TestTLSMismatchDropsComparisons).
		rep, x := *r.Report, *r.Report.Rpcbed
		x.TLS = &report.TLS{Version: "TLSv1.3", CipherSuite: "TLS_AES_128_GCM_SHA256", Group: "X25519", ALPN: "h2"}
		rep.Rpcbed = &x
		r.Report = &rep
		r.Metrics.ClientCPUUs *= 2
		r.Metrics.ServerCPUUs *= 1.5
		r.Metrics.P50Us *= 1.2
		r.Metrics.RPS *= 0.8
		tls.Repeats = append(tls.Repeats, r)
	}
	tls.Summary = tls.Summarize()
	run.Cells = append(run.Cells, tls)
	tab := Ratios(ViewOf(run).Comparisons, TLSVsPlaintext)
	if len(tab.Rows) != 1 || tab.Rows[0].A != "go-grpc-datalist-200-c1@tls" || tab.Rows[0].B != "go-grpc-datalist-200-c1" {
		t.Fatalf("rows %+v; want go-grpc-datalist-200-c1@tls against go-grpc-datalist-200-c1", tab.Rows)
	}
	for _, tc := range []struct {
		f       FigureIndex
		ratio   float64
		verdict string
	}{{FigClientCPU, 2, stats.Slower}, {FigServerCPU, 1.5, stats.Slower}, {FigP50, 1.2, stats.Slower}, {FigRPS, 0.8, stats.Slower}} {
		c, ok := tab.Rows[0].By[tc.f.Figure().Key]
		if !ok {
			t.Errorf("%s: no comparison", tc.f.Figure().Name)
			continue
		}
		if d := c.Ratio.Center/tc.ratio - 1; d > 0.01 || d < -0.01 || c.Verdict != tc.verdict {
			t.Errorf("%s: ratio %.3f, %s; want %.2f, %s", tc.f.Figure().Name, c.Ratio.Center, c.Verdict, tc.ratio, tc.verdict)
		}
	}
}
