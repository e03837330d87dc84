package coststats

import (
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/cost"
)

func run(cells ...cost.CellRun) *cost.Result {
	return &cost.Result{Version: cost.ResultVersion, Cells: cells}
}

func cell(name, side string, ir, cycles float64) cost.CellRun {
	client := strings.SplitN(name, "-", 2)[0]
	if strings.HasPrefix(name, "php-pure-") {
		client = "php-pure"
	}
	return cost.CellRun{Cell: name, Client: client, Side: side, Status: cost.StatusOK, PerCall: cost.PerCall{Counts: cost.Counts{Ir: ir}, Cycles: cycles}}
}

func TestWithin(t *testing.T) {
	base := run(cell("go-a", cost.SideClient, 100, 1), cell("php-b", cost.SideClient, 100, 1), cell("php-pure-c", cost.SideClient, 100, 1), cell("java-d", cost.SideClient, 100, 1))
	nw := run(cell("go-a", cost.SideClient, 100.5, 1), cell("php-b", cost.SideClient, 102, 1), cell("php-pure-c", cost.SideClient, 99.2, 1), cell("java-d", cost.SideClient, 150, 1))
	g := Gate(base, nw, 0.02)
	if in, total := g.Within(0.01, "go", "php", "php-pure"); in != 2 || total != 3 {
		t.Errorf("Within(1 %%, go php php-pure) = %d of %d; want 2 of 3", in, total)
	}
	if in, total := g.Within(0.01, "php"); in != 0 || total != 1 {
		t.Errorf("Within(1 %%, php) = %d of %d; want 0 of 1 (php-pure is not php)", in, total)
	}
	if in, total := g.Within(0.01); in != 2 || total != 4 {
		t.Errorf("Within(1 %%) = %d of %d; want 2 of 4", in, total)
	}
}

// The gated figure leaves the collector out: a collection cycle that landed in
// one run's window moves the whole cost, not the instructions the goal counts.
func TestWithinWithGC(t *testing.T) {
	withGC := func(c cost.CellRun, gc float64) cost.CellRun { c.PerCall.GC.Ir = gc; return c }
	base := run(withGC(cell("go-a", cost.SideServer, 400_000, 1), 0), withGC(cell("go-b", cost.SideServer, 100_000, 1), 9_000))
	nw := run(withGC(cell("go-a", cost.SideServer, 401_000, 1), 186_000), withGC(cell("go-b", cost.SideServer, 100_200, 1), 9_100))
	g := Gate(base, nw, 0.02)
	if !g.Pass() {
		t.Errorf("the gate failed on the collector's work: %+v", g.Regressions)
	}
	if in, total := g.Within(0.01); in != 2 || total != 2 {
		t.Errorf("Within = %d of %d; want 2 of 2", in, total)
	}
	if in, total := g.WithinWithGC(0.01); in != 1 || total != 2 {
		t.Errorf("WithinWithGC = %d of %d; want 1 of 2 (go-a's window held a cycle)", in, total)
	}
}

// The TLS cells' share, the goal's second figure: CELL@tls on either side.
func TestWithinTLS(t *testing.T) {
	base := run(cell("go-a@tls", cost.SideClient, 100, 1), cell("go-a@tls", cost.SideServer, 100, 1), cell("go-a", cost.SideClient, 100, 1),
		cell("go-b@lan+tls", cost.SideClient, 100, 1), cell("go-c@mtls", cost.SideClient, 100, 1))
	nw := run(cell("go-a@tls", cost.SideClient, 100.5, 1), cell("go-a@tls", cost.SideServer, 103, 1), cell("go-a", cost.SideClient, 100, 1),
		cell("go-b@lan+tls", cost.SideClient, 100, 1), cell("go-c@mtls", cost.SideClient, 100, 1))
	g := Gate(base, nw, 0.02).Security("tls")
	if in, total := g.Within(0.01, "go"); in != 2 || total != 3 {
		t.Errorf("TLS cells within 1 %%: %d of %d; want 2 of 3 (go-a@tls twice, go-b@lan+tls; not mtls, not plaintext)", in, total)
	}
}
