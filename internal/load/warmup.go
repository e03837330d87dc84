package load

import (
	"fmt"
	"strings"
	"time"
)

// -warmup auto (docs/method.md, "Steady state"): the client runs back-to-back
// windows of settleWindow and ends the warm-up when the throughput of the last
// settleWindows windows lies within ±settleTolerance of their mean, or at
// -warmup-max.
const (
	settleWindow    = 250 * time.Millisecond
	settleWindows   = 3
	settleTolerance = 0.05
)

// settled tells whether the last settleWindows throughputs (calls/s, one per
// window) have settled: every one within ±5 % of their mean, which is above 0
// (a server answering nothing has not warmed up).
func settled(rates []float64) bool {
	if len(rates) < settleWindows {
		return false
	}
	last := rates[len(rates)-settleWindows:]
	var mean float64
	for _, r := range last {
		mean += r
	}
	mean /= settleWindows
	if !(mean > 0) {
		return false
	}
	for _, r := range last {
		if r < mean*(1-settleTolerance) || r > mean*(1+settleTolerance) {
			return false
		}
	}
	return true
}

// warmupFlag is -warmup: a duration (Go syntax or ab's whole seconds) or "auto".
type warmupFlag struct{ cfg *Config }

func (f warmupFlag) String() string {
	if f.cfg == nil || (!f.cfg.WarmupAuto && f.cfg.Warmup == 0) {
		return "0"
	}
	if f.cfg.WarmupAuto {
		return "auto"
	}
	return f.cfg.Warmup.String()
}

func (f warmupFlag) Set(v string) error {
	if strings.TrimSpace(v) == "auto" {
		f.cfg.WarmupAuto, f.cfg.Warmup = true, 0
		return nil
	}
	d, err := parseSeconds(v)
	if err != nil {
		return fmt.Errorf("%v, or auto", err)
	}
	f.cfg.WarmupAuto, f.cfg.Warmup = false, d
	return nil
}
