package costrender

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/cost"
	"github.com/rpcbed/rpcbed/internal/cost/coststats"
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

func TestGate(t *testing.T) {
	base := run(cell("go-grpc-datalist-2-c1", cost.SideClient, 100_000, 150_000), cell("php-grpc-datalist-2-c1", cost.SideServer, 200_000, 300_000))
	for _, tc := range []struct {
		name    string
		new     *cost.Result
		max     float64
		pass    bool
		printed string
	}{
		{"same", run(cell("go-grpc-datalist-2-c1", cost.SideClient, 100_000, 150_000), cell("php-grpc-datalist-2-c1", cost.SideServer, 200_000, 300_000)), 0.02, true, "PASS"},
		{"within noise", run(cell("go-grpc-datalist-2-c1", cost.SideClient, 101_500, 151_000), cell("php-grpc-datalist-2-c1", cost.SideServer, 199_000, 300_500)), 0.02, true, "PASS"},
		{"cheaper", run(cell("go-grpc-datalist-2-c1", cost.SideClient, 50_000, 70_000), cell("php-grpc-datalist-2-c1", cost.SideServer, 200_000, 300_000)), 0.02, true, "PASS"},
		{"instructions +3 %", run(cell("go-grpc-datalist-2-c1", cost.SideClient, 103_000, 151_000), cell("php-grpc-datalist-2-c1", cost.SideServer, 200_000, 300_000)), 0.02, false, "go-grpc-datalist-2-c1/client"},
		{"cycles +3 % only", run(cell("go-grpc-datalist-2-c1", cost.SideClient, 100_000, 154_500), cell("php-grpc-datalist-2-c1", cost.SideServer, 200_000, 300_000)), 0.02, false, "+3.00%"},
		{"+3 % under -max 5", run(cell("go-grpc-datalist-2-c1", cost.SideClient, 103_000, 154_500), cell("php-grpc-datalist-2-c1", cost.SideServer, 200_000, 300_000)), 0.05, true, "PASS"},
		{"a cell missing", run(cell("go-grpc-datalist-2-c1", cost.SideClient, 100_000, 150_000)), 0.02, false, "php-grpc-datalist-2-c1/server"},
		{"a cell failed", run(cell("go-grpc-datalist-2-c1", cost.SideClient, 100_000, 150_000), cost.CellRun{Cell: "php-grpc-datalist-2-c1", Side: cost.SideServer, Status: cost.StatusFailed}), 0.02, false, "missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := coststats.Gate(base, tc.new, tc.max)
			if g.Pass() != tc.pass {
				t.Errorf("Pass() = %v; want %v", g.Pass(), tc.pass)
			}
			var b bytes.Buffer
			PrintGate(&b, g)
			if !strings.Contains(b.String(), tc.printed) {
				t.Errorf("printed:\n%s\nwant it to contain %q", b.String(), tc.printed)
			}
		})
	}
}

func TestPrintReproducibility(t *testing.T) {
	a := run(cell("go-grpc-datalist-2-c1", cost.SideClient, 100_000, 1), cell("php-grpc-datalist-2-c1", cost.SideClient, 100_000, 1),
		cell("go-grpc-datalist-2-c1", cost.SideServer, 100_000, 1), cell("php-pure-grpc-datalist-2-c1", cost.SideClient, 100_000, 1))
	b := run(cell("go-grpc-datalist-2-c1", cost.SideClient, 100_500, 1), cell("php-grpc-datalist-2-c1", cost.SideClient, 97_000, 1),
		cell("go-grpc-datalist-2-c1", cost.SideServer, 99_900, 1), cell("php-pure-grpc-datalist-2-c1", cost.SideClient, 100_000, 1))
	var out bytes.Buffer
	PrintReproducibility(&out, coststats.Gate(a, b, 0.02), 0.01)
	got := out.String()
	for _, want := range []string{
		"3 of 4 go and php cells and sides (75.0 %) within ±1 %",
		"NOT MET",
		"go, client side:           1 of   1",
		"php, client side:          0 of   1",
		"go, server side:           1 of   1",
		"100,000         97,000   -3.00 %",
		"with the garbage collector's instructions added (not the goal): 3 of 4 within ±1 %",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("printed:\n%s\nwant it to contain %q", got, want)
		}
	}
	if strings.Index(got, "php-grpc-datalist-2-c1/client") > strings.Index(got, "go-grpc-datalist-2-c1/client ") {
		t.Errorf("the cell furthest apart is not printed first:\n%s", got)
	}
}

func TestNoNegativeFigure(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{fig(1234.4), "1,234"}, {fig(-0.4), "0"}, {fig(-467), NoFigure},
		{fig1(2.25), "2.2"}, {fig1(-3564.2), NoFigure}, {fig1(-0.04), "0.0"},
		{pct(-0.3, 100), "0 %"}, {pct(-5, 100), NoFigure}, {pct(43, 100), "43 %"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q; want %q", tc.got, tc.want)
		}
	}
}
