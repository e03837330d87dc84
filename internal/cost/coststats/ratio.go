package coststats

import (
	"strings"

	"github.com/rpcbed/rpcbed/internal/cost"
	"github.com/rpcbed/rpcbed/internal/plan"
)

// Ratio is a PHP client's cost per call over go's on the same protocol and size.
type Ratio struct {
	Client, Protocol     string
	Items                int
	Instructions, Cycles float64
}

// PHPOverGo gives php's and php-pure's client-side cost as a multiple of go's.
func PHPOverGo(r *cost.Result) []Ratio {
	m := r.Lookup()
	var out []Ratio
	for _, c := range r.Cells {
		if c.Side != cost.SideClient || c.Status != cost.StatusOK || plan.LanguageOf(c.Client) != "php" {
			continue
		}
		g, ok := m[strings.Replace(c.Cell, c.Client+"-", "go-", 1)+"/"+cost.SideClient]
		if !ok || g.Status != cost.StatusOK || g.PerCall.Ir == 0 {
			continue
		}
		// The whole cost, the collector's included: a language's call as it runs.
		pw, gw := c.PerCall.WithGC(), g.PerCall.WithGC()
		out = append(out, Ratio{c.Client, c.Protocol, c.Items, pw.Ir / gw.Ir, pw.Cycles() / gw.Cycles()})
	}
	return out
}
