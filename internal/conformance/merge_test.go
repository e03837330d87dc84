package conformance

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/fakeserver"
	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/stats"
	"github.com/rpcbed/rpcbed/internal/testbed"
)

// slowDelay spreads the fake server's answers over 0..12 ms in 150 steps, so the
// latencies fall in buckets 1, 2, 4 and 8 us wide: "within one bucket" is tested
// where buckets are wider than a microsecond, not only in the exact range.
func slowDelay(i int64) time.Duration {
	return time.Duration((i*7919)%150) * 80 * time.Microsecond
}

// mergeArgs is the run every client makes, twice at once (two "nodes").
func mergeArgs(addr string) []string {
	return []string{"-proto", "http", "-call", "datalist", "-items", "3", "-c", "2", "-n", "500", "-k",
		"-timeout", "5s", "-addr", addr}
}

// processRun is one client process's report and the raw latencies it dumped.
type processRun struct {
	rep report.Report
	raw []int64
}

// TestLatencyMerge is the latency records' merge test, per client language: two processes
// of each client run at once against one server, each writes its report's latency
// record and (RPCBED_LATENCY_DUMP) every raw latency the record holds. Then:
//   - every record is exactly the histogram of its raw latencies (go's
//     hdrhistogram-go, java's HdrHistogram, php's native writer: each read by Go);
//   - the two records merged give p50/p99/p999/max within one HdrHistogram bucket
//     of the raw percentiles of both processes' latencies together, at the rank
//     the histogram reads (stats.LatencyRank);
//   - all six records merged (three languages) the same way: the records of
//     every client language merge with each other.
func TestLatencyMerge(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the merge test runs every client's process")
	}
	srv := fakeserver.Start(t, fakeserver.Slow(fakeserver.Right, slowDelay))
	var mu sync.Mutex
	var all []processRun
	t.Run("each", func(t *testing.T) {
		for _, c := range clients(t) {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				if c.skip != "" {
					testbed.Missing(t, testbed.Required(c.name), "%s: the %s merge test is not run", c.skip, c.name)
				}
				runs := make([]processRun, 2)
				errs := make([]error, 2)
				var wg sync.WaitGroup
				for i := range runs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						runs[i], errs[i] = runDumping(t, c, mergeArgs(srv["http"]))
					}()
				}
				wg.Wait()
				for i, err := range errs {
					if err != nil {
						t.Fatalf("%s process %d: %v", c.name, i+1, err)
					}
				}
				for i, r := range runs {
					checkRecord(t, c.name, fmt.Sprintf("%s process %d", c.name, i+1), r)
				}
				checkMerge(t, c.name, runs)
				mu.Lock()
				all = append(all, runs...)
				mu.Unlock()
			})
		}
	})
	if len(all) < 4 {
		t.Skipf("the cross-language merge needs two client languages; %d processes ran", len(all))
	}
	t.Run("across-languages", func(t *testing.T) { checkMerge(t, "all", all) })
}

// runDumping runs one client process with RPCBED_LATENCY_DUMP set and reads back
// its report and its raw latencies.
func runDumping(t *testing.T, c client, args []string) (processRun, error) {
	f, err := os.CreateTemp(t.TempDir(), "latency-*.txt")
	if err != nil {
		return processRun{}, err
	}
	f.Close()
	c.env = append(slices.Clip(c.env), "RPCBED_LATENCY_DUMP="+f.Name())
	o := run(t, c, args)
	if o.exit != exitOK {
		return processRun{}, fmt.Errorf("exit %d\nstderr:\n%s", o.exit, tail(o.stderr))
	}
	rep, err := report.ParseClient(strings.NewReader(o.stdout))
	if err != nil {
		return processRun{}, fmt.Errorf("report: %v", err)
	}
	raw, err := readLatencies(f.Name())
	if err != nil {
		return processRun{}, err
	}
	return processRun{rep: rep, raw: raw}, nil
}

func readLatencies(path string) ([]int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var us []int64
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		v, err := strconv.ParseInt(sc.Text(), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %v", filepath.Base(path), n, err)
		}
		us = append(us, v)
	}
	return us, sc.Err()
}

// checkRecord: the record is the histogram of exactly the raw latencies, and
// the report's percentile lines are read from it (go, java) or from the raw
// latencies by nearest rank (php, docs/report-format.md).
func checkRecord(t *testing.T, client, name string, r processRun) {
	t.Helper()
	x := r.rep.Rpcbed
	if x.LatencyHistogram == "" {
		t.Fatalf("%s: the report has no \"Latency histogram:\" line", name)
	}
	h, err := stats.DecodeLatency(x.LatencyHistogram)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if int64(len(r.raw)) != h.TotalCount() || r.rep.Failed != 0 || h.TotalCount() != r.rep.Complete {
		t.Fatalf("%s: record holds %d calls, dump %d, report %d complete %d failed", name, h.TotalCount(), len(r.raw), r.rep.Complete, r.rep.Failed)
	}
	want := stats.NewLatency()
	for _, v := range r.raw {
		want.RecordValue(v)
	}
	if !h.Equals(want) {
		t.Errorf("%s: the record is not the histogram of its raw latencies", name)
	}
	fromRecord := stats.Figures(h)
	sorted := slices.Sorted(slices.Values(r.raw))
	for _, q := range []struct {
		line    string
		q       float64
		rep, hv int64
	}{{"p50", 0.50, x.P50Us, fromRecord.P50Us}, {"p99", 0.99, x.P99Us, fromRecord.P99Us},
		{"p99.9", 0.999, x.P999Us, fromRecord.P999Us}, {"max", 1, x.MaxUs, fromRecord.MaxUs}} {
		want, from := q.hv, "the record"
		if client == "php" {
			want, from = sorted[max(0, min(int(math.Ceil(q.q*float64(len(sorted))))-1, len(sorted)-1))], "the raw latencies (nearest rank)"
		}
		if q.rep != want {
			t.Errorf("%s: \"Latency %s:\" %d us; %s says %d us", name, q.line, q.rep, from, want)
		}
	}
}

// checkMerge merges the runs' records and compares the merged percentiles with
// the raw percentiles of every run's latencies together.
func checkMerge(t *testing.T, name string, runs []processRun) {
	t.Helper()
	var recs []string
	var raw []int64
	for _, r := range runs {
		recs = append(recs, r.rep.Rpcbed.LatencyHistogram)
		raw = append(raw, r.raw...)
	}
	l, err := stats.LatencyOf(recs...)
	if err != nil {
		t.Fatalf("%s: merge: %v", name, err)
	}
	if l.Count != int64(len(raw)) || l.Sources != len(runs) {
		t.Fatalf("%s: merged %d calls from %d records; want %d from %d", name, l.Count, l.Sources, len(raw), len(runs))
	}
	slices.Sort(raw)
	spread := false
	for _, q := range []struct {
		pct    float64
		merged int64
	}{{50, l.P50Us}, {99, l.P99Us}, {99.9, l.P999Us}, {100, l.MaxUs}} {
		want := raw[stats.LatencyRank(q.pct, int64(len(raw)))-1]
		if !stats.SameBucket(q.merged, want) {
			t.Errorf("%s: merged p%v = %d us; the raw p%v is %d us, in another bucket", name, q.pct, q.merged, q.pct, want)
		}
		spread = spread || want >= 2048
		t.Logf("%s: p%v merged %d us, raw %d us (%d calls, %d records)", name, q.pct, q.merged, want, len(raw), len(recs))
	}
	if !spread {
		t.Errorf("%s: no percentile above 2048 us: the test did not reach buckets wider than 1 us", name)
	}
}
