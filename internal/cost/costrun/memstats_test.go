package costrun

import (
	"net/http"
	"net/http/httptest"
	_ "net/http/pprof"
	"runtime"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/report"
)

// go-server's heap figures come from net/http/pprof's debug=1 heap profile:
// parsed from the real handler, its collection counted.
func TestServerHeap(t *testing.T) {
	srv := httptest.NewServer(http.DefaultServeMux)
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	a, err := serverHeap(t.Context(), addr, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	sink := make([][]byte, 0, 1000)
	for i := 0; i < 1000; i++ {
		sink = append(sink, make([]byte, 1024))
	}
	runtime.KeepAlive(sink)
	b, err := serverHeap(t.Context(), addr, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.numGC < a.numGC+1 {
		t.Errorf("NumGC %v then %v: want the forced collection counted", a.numGC, b.numGC)
	}
	if d := b.totalAlloc - a.totalAlloc; d < 1000*1024 {
		t.Errorf("TotalAlloc grew %v bytes; want at least the 1 MiB allocated", d)
	}
	if b.mallocs-a.mallocs < 1000 || a.heapAlloc <= 0 {
		t.Errorf("Mallocs %v then %v, HeapAlloc %v", a.mallocs, b.mallocs, a.heapAlloc)
	}
	if _, err := parseMemStats(strings.NewReader("heap profile: 0: 0 [0: 0] @ heap/1048576\n# NumGC = 3\n")); err == nil {
		t.Error("a profile without all the MemStats lines parsed")
	}
	if _, err := parseMemStats(strings.NewReader("# NumGC = x\n# TotalAlloc = 1\n# Mallocs = 1\n# HeapAlloc = 1\n")); err == nil {
		t.Error("a bad NumGC parsed")
	}
}

// A run's calls are n and the calls its client made before the window (the
// report's "Warm-up: ..., N calls excluded").
func TestWarmupCalls(t *testing.T) {
	for _, tc := range []struct {
		rep  report.Report
		want int64
	}{
		{report.Report{Rpcbed: &report.Extra{WarmupCalls: 2}}, 2},
		{report.Report{Rpcbed: &report.Extra{}}, 0},
		{report.Report{}, 0}, // plain ab output: no rpcbed block
	} {
		if got := warmupCalls(tc.rep); got != tc.want {
			t.Errorf("warmupCalls(%+v) = %d; want %d", tc.rep.Rpcbed, got, tc.want)
		}
	}
}
