package matrix

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/swarm"
)

// TestSplitLoad: k6's segments — task i of n gets the whole numbers of
// [i/n, (i+1)/n) of the concurrency and the connections, which add up to both.
func TestSplitLoad(t *testing.T) {
	for _, tc := range []struct {
		c, conns, n int
		want        []Share
	}{
		{50, 50, 2, []Share{{25, 25}, {25, 25}}},
		{50, 50, 1, []Share{{50, 50}}},
		{50, 4, 3, []Share{{16, 1}, {17, 1}, {17, 2}}},
		{7, 7, 3, []Share{{2, 2}, {2, 2}, {3, 3}}},
		{2, 1, 2, []Share{{1, 1}, {1, 1}}}, // a task gets at least one connection
	} {
		got := SplitLoad(tc.c, tc.conns, tc.n)
		if len(got) != len(tc.want) {
			t.Fatalf("SplitLoad(%d, %d, %d): got %v; want %v", tc.c, tc.conns, tc.n, got, tc.want)
		}
		sum := 0
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("SplitLoad(%d, %d, %d)[%d]: got %v; want %v", tc.c, tc.conns, tc.n, i, got[i], tc.want[i])
			}
			sum += got[i].Concurrency
		}
		if sum != tc.c {
			t.Errorf("SplitLoad(%d, %d, %d): concurrency adds up to %d; want %d", tc.c, tc.conns, tc.n, sum, tc.c)
		}
	}
}

const clusterSpec = `clients: {go: [grpc]}
items: [200]
concurrency: [50]
cluster:
  engine: swarm
  form:
    - {engine: unix:///s.sock, address: 198.18.1.1, pool: server}
    - {engine: unix:///c1.sock, address: 198.18.1.2, pool: clients}
    - {engine: unix:///c2.sock, address: 198.18.1.3, pool: clients}
  driver: 198.19.1.2
  pools: {server: 1, clients: 2}
`

// TestClusterSpec: the node dimension names the cells, a spec round-trips, and
// every mistake is refused naming its field.
func TestClusterSpec(t *testing.T) {
	s, err := ParseSpec([]byte(clusterSpec + "  nodes: [2, 1]\n"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range s.Plan() {
		names = append(names, c.Name())
	}
	if got, want := strings.Join(names, " "), "go-grpc-datalist-200-c50-1node go-grpc-datalist-200-c50-2nodes"; got != want {
		t.Errorf("plan: got %s; want %s", got, want)
	}
	b, err := MarshalSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseSpec(b)
	if err != nil {
		t.Fatalf("round trip: %v\n%s", err, b)
	}
	if len(back.Cluster.Form) != 3 || back.Cluster.Driver != "198.19.1.2" || back.Cluster.Pools["clients"] != 2 {
		t.Errorf("round trip: got %+v", back.Cluster)
	}
	s, err = ParseSpec([]byte(clusterSpec))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Plan()[0].Name(); got != "go-grpc-datalist-200-c50-2nodes" {
		t.Errorf("default nodes: got %s; want the clients pool's 2", got)
	}
	for _, tc := range []struct {
		name, from, to, field string
	}{
		{"engine", "engine: swarm", "engine: kubernetes", "cluster.engine"},
		{"both", "  driver:", "  manager: unix:///m.sock\n  driver:", "cluster"},
		{"driver", "driver: 198.19.1.2", "driver: nowhere", "cluster.driver"},
		{"pool", "clients: 2}", "clients: 2, db: 1}", "cluster.pools"},
		{"short form", "clients: 2}", "clients: 3}", "cluster.form"},
		{"manager first", "pool: server}", "pool: clients}", "cluster.form[0]"},
		{"nodes", "  driver:", "  nodes: [3]\n  driver:", "cluster.nodes"},
		{"min", "  driver:", "  min_nodes: 5\n  driver:", "cluster.min_nodes"},
		{"split", "concurrency: [50]", "concurrency: [1]", "concurrency"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(strings.Replace(clusterSpec, tc.from, tc.to, 1)))
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Errorf("got %v; want an error on %s", err, tc.field)
			}
		})
	}
	if _, err := ParseSpec([]byte(clusterSpec + "hosts: {a: {engine: unix:///a, address: 1.2.3.4, roles: [go]}}\n")); err == nil {
		t.Error("cluster with hosts: got no error")
	}
}

func taskReport(complete int64, rps, cpu, mean float64, p50 int64, start, end float64) *report.Report {
	return &report.Report{Complete: complete, RequestsPerSecond: rps, DocumentLength: 5504,
		Rpcbed: &report.Extra{Connections: 25, CPUUserSeconds: cpu, MeanUs: mean, MaxUs: p50 * 3, P50Us: p50, P99Us: 4 * p50,
			Check: report.CheckFull, CPUScope: report.ScopeWindow, WindowStart: start, WindowEnd: end}}
}

// TestMerge: a split repeat sums what sums — calls, req/s, client CPU, over
// calls for CPU per call — takes the union of the windows on the driver's clock
// (each task's minus its clock offset), flags a skew over 1 % of the window, and
// never averages the tasks' percentiles.
func TestMerge(t *testing.T) {
	e := &executor{run: &Run{Spec: Spec{}}, o: Options{}}
	cr := &clusterRun{e: e}
	reps := []*report.Report{
		taskReport(1000, 500, 0.2, 100, 90, 1000.00, 1002.00),
		taskReport(3000, 1500, 0.4, 60, 50, 1000.53, 1002.53),
	}
	runs := []*taskRun{{rec: TaskRecord{NodeAddr: "198.18.1.2", WindowStartUnix: 1000.00, WindowEndUnix: 1002.00, ClientCPUS: 0.2, Clock: swarm.Clock{}}},
		{rec: TaskRecord{NodeAddr: "198.18.1.3", WindowStartUnix: 1000.03, WindowEndUnix: 1002.03, ClientCPUS: 0.4, Clock: swarm.Clock{OffsetS: 0.5}}}}
	var rep Repeat
	cr.merge(&rep, Cell{Client: "go", Protocol: "grpc", Call: "datalist", Items: 200, Concurrency: 50, Nodes: 2}, runs, reps, nil, nil, nil)
	m, w := rep.Metrics, rep.Window
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"calls", float64(m.Complete), 4000},
		{"req/s", m.RPS, 2000},
		{"client CPU µs/call", m.ClientCPUUs, 0.6e6 / 4000},
		{"mean µs", rep.Report.Rpcbed.MeanUs, (1000*100 + 3000*60) / 4000.0},
		{"max µs", float64(rep.Report.Rpcbed.MaxUs), 270},
		{"window start", w.StartUnix, 1000.00},
		{"window s", w.Seconds, 2.03},
		{"skew s", w.SkewS, 0.03},
		{"p50: not averaged", m.P50Us, 0},
	} {
		if math.Abs(tc.got-tc.want) > 1e-9*math.Max(1, math.Abs(tc.want)) {
			t.Errorf("%s: got %v; want %v", tc.name, tc.got, tc.want)
		}
	}
	if !rep.has(FlagWindowSkew) {
		t.Errorf("a 30 ms skew over a 2 s window (over 1 %%): flags %v; want %s", rep.Flags, FlagWindowSkew)
	}
	if !strings.Contains(strings.Join(rep.Notes, " "), "never averaged") {
		t.Errorf("notes %q: want the missing merged percentiles said", rep.Notes)
	}
	// One task: its own percentiles are the merge's.
	var one Repeat
	cr.merge(&one, Cell{Concurrency: 25, Nodes: 1}, runs[:1], reps[:1], nil, nil, nil)
	if one.Metrics.P50Us != 90 || one.has(FlagWindowSkew) {
		t.Errorf("one task: p50 %v, flags %v; want 90 and no skew", one.Metrics.P50Us, one.Flags)
	}
}
