package coststats

import (
	"strings"

	"github.com/rpcbed/rpcbed/internal/cost"
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
		if c.Side != cost.SideClient || c.Status != cost.StatusOK || (c.Client != "php" && c.Client != "php-pure") {
			continue
		}
		g, ok := m[strings.Replace(c.Cell, c.Client+"-", "go-", 1)+"/"+cost.SideClient]
		if !ok || g.Status != cost.StatusOK || g.PerCall.Ir == 0 {
			continue
		}
		out = append(out, Ratio{c.Client, c.Protocol, c.Items, c.PerCall.Ir / g.PerCall.Ir, c.PerCall.Cycles / g.PerCall.Cycles})
	}
	return out
}
