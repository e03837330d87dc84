package cost

import (
	"bytes"
	"strings"
	"testing"
)

func run(cells ...CellRun) *Result { return &Result{Version: ResultVersion, Cells: cells} }

func cell(name, side string, ir, cycles float64) CellRun {
	client := strings.SplitN(name, "-", 2)[0]
	if strings.HasPrefix(name, "php-pure-") {
		client = "php-pure"
	}
	return CellRun{Cell: name, Client: client, Side: side, Status: StatusOK, PerCall: PerCall{Counts: Counts{Ir: ir}, Cycles: cycles}}
}

func TestGate(t *testing.T) {
	base := run(cell("go-grpc-datalist-2-c1", SideClient, 100_000, 150_000), cell("php-grpc-datalist-2-c1", SideServer, 200_000, 300_000))
	for _, tc := range []struct {
		name    string
		new     *Result
		max     float64
		pass    bool
		printed string
	}{
		{"same", run(cell("go-grpc-datalist-2-c1", SideClient, 100_000, 150_000), cell("php-grpc-datalist-2-c1", SideServer, 200_000, 300_000)), 0.02, true, "PASS"},
		{"within noise", run(cell("go-grpc-datalist-2-c1", SideClient, 101_500, 151_000), cell("php-grpc-datalist-2-c1", SideServer, 199_000, 300_500)), 0.02, true, "PASS"},
		{"cheaper", run(cell("go-grpc-datalist-2-c1", SideClient, 50_000, 70_000), cell("php-grpc-datalist-2-c1", SideServer, 200_000, 300_000)), 0.02, true, "PASS"},
		{"instructions +3 %", run(cell("go-grpc-datalist-2-c1", SideClient, 103_000, 151_000), cell("php-grpc-datalist-2-c1", SideServer, 200_000, 300_000)), 0.02, false, "go-grpc-datalist-2-c1/client"},
		{"cycles +3 % only", run(cell("go-grpc-datalist-2-c1", SideClient, 100_000, 154_500), cell("php-grpc-datalist-2-c1", SideServer, 200_000, 300_000)), 0.02, false, "+3.00%"},
		{"+3 % under -max 5", run(cell("go-grpc-datalist-2-c1", SideClient, 103_000, 154_500), cell("php-grpc-datalist-2-c1", SideServer, 200_000, 300_000)), 0.05, true, "PASS"},
		{"a cell missing", run(cell("go-grpc-datalist-2-c1", SideClient, 100_000, 150_000)), 0.02, false, "php-grpc-datalist-2-c1/server"},
		{"a cell failed", run(cell("go-grpc-datalist-2-c1", SideClient, 100_000, 150_000), CellRun{Cell: "php-grpc-datalist-2-c1", Side: SideServer, Status: StatusFailed}), 0.02, false, "missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := Gate(base, tc.new, tc.max)
			if g.Pass() != tc.pass {
				t.Errorf("Pass() = %v; want %v", g.Pass(), tc.pass)
			}
			var b bytes.Buffer
			g.Print(&b)
			if !strings.Contains(b.String(), tc.printed) {
				t.Errorf("printed:\n%s\nwant it to contain %q", b.String(), tc.printed)
			}
		})
	}
}

func TestWithin(t *testing.T) {
	base := run(cell("go-a", SideClient, 100, 1), cell("php-b", SideClient, 100, 1), cell("php-pure-c", SideClient, 100, 1), cell("java-d", SideClient, 100, 1))
	nw := run(cell("go-a", SideClient, 100.5, 1), cell("php-b", SideClient, 102, 1), cell("php-pure-c", SideClient, 99.2, 1), cell("java-d", SideClient, 150, 1))
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
