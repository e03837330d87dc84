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
