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
