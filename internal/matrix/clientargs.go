package matrix

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/report"

	"github.com/rpcbed/rpcbed/internal/plan"
)

// A client run's command line, from a cell and its load.

// clientArgs are the flags every rpcbed client takes (go-client's).
func clientArgs(c plan.Cell, addr string, l plan.Load) []string {
	args := []string{"-proto", c.Protocol, "-call", c.Call}
	if c.Call == "datalist" {
		args = append(args, "-items", strconv.Itoa(c.Items))
	}
	args = append(args, "-c", strconv.Itoa(c.Concurrency))
	if l.N > 0 {
		args = append(args, "-n", strconv.FormatInt(l.N, 10))
	}
	if l.Duration > 0 {
		args = append(args, "-t", Seconds(l.Duration.D()))
	}
	switch {
	case l.Warmup.IsAuto():
		args = append(args, "-warmup", "auto", "-warmup-max", Seconds(l.WarmupBound()))
	case l.Warmup > 0:
		args = append(args, "-warmup", Seconds(l.Warmup.D()))
	}
	args = append(args, "-conns", strconv.Itoa(l.ConnsFor(c.Concurrency)))
	if c.Protocol == "http" && c.Connect != plan.PerCall {
		args = append(args, "-k")
	}
	if c.Connect == plan.PerCall {
		args = append(args, "-connect", plan.PerCall)
	}
	return append(args, "-addr", addr)
}

func replaceFlag(args []string, flag, v string) []string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			args[i+1] = v
		}
	}
	return args
}

// Seconds is d as a client's duration flag takes it: seconds with an "s" ("1.5s").
func Seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// runTimeout bounds one client run: its planned time plus room for start-up.
func runTimeout(l plan.Load) time.Duration {
	if l.Timeout > 0 {
		return l.Timeout.D()
	}
	if l.Duration > 0 {
		return l.WarmupBound() + l.Duration.D() + 60*time.Second
	}
	return l.WarmupBound() + 120*time.Second
}

func errorKinds(r *report.Report) string {
	if r.Rpcbed == nil || len(r.Rpcbed.Errors) == 0 {
		return fmt.Sprintf("connect=%d receive=%d length=%d exceptions=%d",
			r.FailedBy.Connect, r.FailedBy.Receive, r.FailedBy.Length, r.FailedBy.Exceptions)
	}
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(r.Rpcbed.Errors)) {
		kv = append(kv, k+"="+strconv.FormatInt(r.Rpcbed.Errors[k], 10))
	}
	return strings.Join(kv, " ")
}
