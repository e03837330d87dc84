package server

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rpcbed/rpcbed/internal/service"
)

// Stats is GET /stats: what the driver diffs around each cell.
type Stats struct {
	Server     string                              `json:"server"`
	Store      string                              `json:"store"`
	Auth       bool                                `json:"auth"`
	UptimeS    float64                             `json:"uptime_s"`
	Calls      map[string]map[string]service.Count `json:"calls"`
	CPUUserS   float64                             `json:"cpu_user_s"`
	CPUSystemS float64                             `json:"cpu_system_s"`
	RSSBytes   int64                               `json:"rss_bytes"`
	MaxRSS     int64                               `json:"max_rss_bytes"`
	Goroutines int                                 `json:"goroutines"`
	GOMAXPROCS int                                 `json:"gomaxprocs"`
	Versions   map[string]string                   `json:"versions"`
	// Answers is the answer budget: bytes reserved now, its size, and the calls
	// that waited for it or gave up waiting (README: Limits).
	Answers AnswerStats `json:"answers"`
	// TLS is each listener's completed TLS handshakes (absent without TLS).
	TLS map[string]TLSCount `json:"tls,omitempty"`
	// TimeUnixS is when the counters were read (Unix seconds): the driver
	// interpolates CPU and calls to the client's measured window with it.
	TimeUnixS float64 `json:"time_unix_s"`
}

// AnswerStats is the answer budget's state.
type AnswerStats struct {
	HeldBytes   int64 `json:"held_bytes"`
	BudgetBytes int64 `json:"budget_bytes"`
	Waits       int64 `json:"waits"`
	Refusals    int64 `json:"refusals"`
	// Cut counts the connections closed for not reading their answers.
	Cut int64 `json:"cut"`
}

// Versions returns the Go runtime's and the RPC libraries' versions.
func Versions() map[string]string {
	v := map[string]string{"go": runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	names := map[string]string{
		"google.golang.org/grpc":                      "grpc",
		"google.golang.org/protobuf":                  "protobuf",
		"github.com/apache/thrift":                    "thrift",
		"github.com/redis/go-redis/v9":                "go-redis",
		"github.com/aerospike/aerospike-client-go/v8": "aerospike",
	}
	for _, d := range bi.Deps {
		if n, ok := names[d.Path]; ok {
			v[n] = d.Version
		}
	}
	return v
}

func processCPU() (user, sys float64, maxRSS int64) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0, 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime), tv(ru.Stime), ru.Maxrss * 1024
}

// currentRSS reads VmRSS from /proc (0 where there is no /proc).
func currentRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func (s *Server) stats() Stats {
	now := float64(time.Now().UnixMicro()) / 1e6
	user, sys, maxRSS := processCPU()
	var tlsCount map[string]TLSCount
	if s.cfg.TLS != nil {
		tlsCount = s.tlsCount.snapshot()
	}
	return Stats{TimeUnixS: now, TLS: tlsCount,
		Server: "rpcbed-go-server", Store: s.cfg.StoreKind, Auth: s.cfg.CheckAuth,
		UptimeS: time.Since(s.started).Seconds(), Calls: s.svc.Stats.Snapshot(),
		CPUUserS: user, CPUSystemS: sys, RSSBytes: currentRSS(), MaxRSS: maxRSS,
		Goroutines: runtime.NumGoroutine(), GOMAXPROCS: runtime.GOMAXPROCS(0), Versions: s.versions,
		Answers: AnswerStats{HeldBytes: s.answers.total.held.Load(), BudgetBytes: s.answers.total.size,
			Waits: s.answers.waits.Load(), Refusals: s.answers.refusals.Load(), Cut: s.answers.cuts.Load()},
	}
}
