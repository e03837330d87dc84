package costrun

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/cost"
)

// setup records what the figures depend on.
func setup(ctx context.Context, o Options) cost.Setup {
	s := cost.Setup{
		ValgrindArgs: ValgrindArgs(),
		Env:          o.goEnv(),
		LoadBefore:   loadavg(),
		Pinning:      pinning(o),
		ReadDelay:    o.Spec.ReadDelay,
		Layers:       cost.LayerOrder,
		ServerRuns: "each server-side cell makes one unmeasured call first (go-server's table of converted items grows to the cell's size and protocol outside both runs); " +
			"go-server under callgrind runs a full collection (runtime.GC, -pprof's heap?gc=1) before each run, then its counters are zeroed (callgrind_control -z) and dumped after it (-d); " +
			"its runtime's MemStats (collections, bytes and objects allocated) are read before and after each run",
		GC: "the garbage collector's work (Go's mark, sweep, scavenger, assists, write-barrier buffers; the Zend cycle collector) is counted apart from the instructions and cycles per call and reported beside them (gc): a collection lands in a run's window at a moment the pacer picks from timing",
	}
	s.Valgrind = firstLine(output(ctx, "valgrind", "--version"))
	s.GuestCPU = GuestCPU(ctx)
	s.HostCPU = hostCPU()
	s.Kernel = firstLine(output(ctx, "uname", "-sr"))
	s.Go = firstLine(output(ctx, "go", "version"))
	s.PHP = firstLine(output(ctx, "php", "-n", "-r", "echo PHP_VERSION;"))
	return s
}

func pinning(o Options) string {
	var p []string
	if o.ClientCPU != "" {
		p = append(p, "client on CPU "+o.ClientCPU)
	}
	if o.ServerCPU != "" {
		p = append(p, "server on CPU "+o.ServerCPU)
	}
	if o.parallel() {
		p = append(p, "two cells at once: the server side's go-server under callgrind on CPU "+o.ServerCPU+
			", client-side cells under callgrind on CPU "+o.ClientCPU+" and, after the server side, on CPU "+o.ServerCPU+
			" (their native peers on the other CPU)")
	}
	if _, err := exec.LookPath("setarch"); err == nil {
		p = append(p, "ASLR off under callgrind (setarch -R)")
	}
	if len(p) == 0 {
		return "none"
	}
	return strings.Join(p, ", ")
}

// GuestCPU is the CPU glibc sees under valgrind, from ld.so --list-diagnostics:
// valgrind answers CPUID with one of its own models, chosen by what the host
// supports, so every AVX2 host looks the same to the measured programs (glibc's
// memcpy variant and thresholds, Go's internal/cpu).
func GuestCPU(ctx context.Context) string {
	out := output(ctx, "valgrind", "-q", "--tool=none", "/lib64/ld-linux-x86-64.so.2", "--list-diagnostics")
	keep := []string{"basic.kind", "basic.family", "basic.model", "isa_1", "data_cache_size", "shared_cache_size", "non_temporal_threshold", "rep_movsb_threshold"}
	var parts []string
	for _, l := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimPrefix(l, "x86.cpu_features."), "=")
		if ok && slices.Contains(keep, k) {
			parts = append(parts, k+"="+v)
		}
	}
	if len(parts) == 0 {
		return "unknown (ld.so --list-diagnostics gave nothing under valgrind)"
	}
	return strings.Join(parts, " ")
}

func hostCPU() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.TrimSpace(string(b))
}

func output(ctx context.Context, name string, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil && len(out) == 0 {
		return ""
	}
	return string(out)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}
