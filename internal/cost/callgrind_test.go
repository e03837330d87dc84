package cost

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// parseTestFile parses testdata/NAME.
func parseTestFile(t *testing.T, name string) *Profile {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := Parse(f)
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	return p
}

// selfSum adds every function's self cost of event i.
func selfSum(p *Profile, i int) uint64 {
	var s uint64
	for _, v := range p.Self {
		s += v[i]
	}
	return s
}

func TestParseHandmade(t *testing.T) {
	p := parseTestFile(t, "handmade.callgrind")
	// totals: is read, summary: (999) is not: one of the two, never both.
	if got := p.Event("Ir"); got != 1565 {
		t.Errorf("Ir total = %d; want 1565 (the totals: line)", got)
	}
	if p.PID != 4242 || p.Cmd != "./handmade" {
		t.Errorf("pid, cmd = %d, %q; want 4242, ./handmade", p.PID, p.Cmd)
	}
	want := map[string]uint64{
		Key("/usr/lib/x86_64-linux-gnu/libc.so.6", "memcpy"): 155,  // 100 + 50 + 5
		Key("/work/bin/handmade", "main.main"):               210,  // 200 + 7 + 3: the call's 465 is memcpy's
		Key("/work/bin/handmade", "main.work'2"):             1000, // its call to main.main (212) is inclusive
	}
	for k, w := range want {
		obj, fn := SplitKey(k)
		if got := p.Self[k]; got == nil || got[0] != w {
			t.Errorf("self Ir of %s in %s = %v; want %d", fn, obj, got, w)
		}
	}
	if got := selfSum(p, 0); got != 1365 {
		t.Errorf("sum of self Ir = %d; want 1365", got)
	}
	if got := p.Calls[Key("/usr/lib/x86_64-linux-gnu/libc.so.6", "memcpy")]; got != 3 {
		t.Errorf("calls to memcpy = %d; want 3 (cob= names the callee's object)", got)
	}
	if got := p.Calls[Key("/work/bin/handmade", "main.main")]; got != 1 {
		t.Errorf("calls to main.main = %d; want 1", got)
	}
	if p.Caches["LL"] != "8388608 B, 64 B, 16-way associative" {
		t.Errorf("LL cache = %q", p.Caches["LL"])
	}
	if err := CheckGeometry(p); err != nil {
		t.Error(err)
	}
}

// TestParseGolden reads a real callgrind file (callgrind 3.19 on /bin/echo, the
// cost run's options) and compares what the parser makes of it with a golden.
func TestParseGolden(t *testing.T) {
	p := parseTestFile(t, "echo.callgrind")
	// Callgrind's own invariant: the functions' self costs add up to the total.
	for i, e := range p.Events {
		if e == "sysTime" || e == "sysCpuTime" {
			continue
		}
		if got := selfSum(p, i); got != p.Totals[i] {
			t.Errorf("%s: self costs add up to %d; want the total %d", e, got, p.Totals[i])
		}
	}
	layers0, err := NewLayers(Rules)
	if err != nil {
		t.Fatal(err)
	}
	// echo.callgrind is a C program: no collector, no bookkeeping.
	if got, gc, bk := layers0.Counted([]*Profile{p}); got != CountsOf(p) || gc != (Counts{}) || bk != 0 {
		t.Errorf("Counted = %+v (gc %+v, bookkeeping %v); want the totals %+v", got, gc, bk, CountsOf(p))
	}
	type fnCost struct {
		Object, Function string
		Ir               uint64
	}
	var fns []fnCost
	for k, v := range p.Self {
		o, f := SplitKey(k)
		fns = append(fns, fnCost{filepath.Base(o), f, v[0]})
	}
	sort.Slice(fns, func(i, j int) bool {
		if fns[i].Ir != fns[j].Ir {
			return fns[i].Ir > fns[j].Ir
		}
		return fns[i].Function < fns[j].Function
	})
	layers, err := NewLayers(Rules)
	if err != nil {
		t.Fatal(err)
	}
	c := CountsOf(p)
	got := map[string]any{
		"cmd": p.Cmd, "events": p.Events, "totals": p.Totals, "caches": p.Caches,
		"functions": len(p.Self), "top10": fns[:10], "counts": c, "est_cycles": c.Cycles(),
		"calls_to_malloc": p.Calls[Key("/usr/lib/x86_64-linux-gnu/libc.so.6", "malloc")],
		"allocations":     Allocations([]*Profile{p}),
		"layers":          layers.Split([]*Profile{p}),
	}
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "echo.golden.json")
	if *update {
		if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(want)) != strings.TrimSpace(string(b)) {
		t.Errorf("parse of echo.callgrind differs from %s (go test -update to accept):\n%s", golden, b)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "no events"},
		{"cost before events", "fn=main\n1 2\n", "before the events"},
		{"unnamed id", "events: Ir\nfn=(7)\n1 2\n", "used before it was named"},
		{"no totals", "events: Ir\nfn=main\n1 2\n", "no totals"},
		{"too many values", "events: Ir\nfn=main\n1 2 3\ntotals: 2\n", "2 values for 1 events"},
		{"bad number", "events: Ir\nfn=main\n1 x\ntotals: 2\n", "value \"x\""},
		{"not callgrind", "events: Ir\nhello world\n", "is not a callgrind line"},
		{"calls without count", "events: Ir\nfn=main\ncalls=\n", "without a count"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse(%q) error = %v; want one containing %q", tc.in, err, tc.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"handmade.callgrind"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("events: Ir Dr\nfn=(1) a\n+1 2 3\n* 4\ncalls=2 5\n1 9 9\ntotals: 6 3\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse(strings.NewReader(string(b)))
		if err != nil {
			return
		}
		if len(p.Totals) != len(p.Events) {
			t.Fatalf("%d totals for %d events", len(p.Totals), len(p.Events))
		}
		for k, v := range p.Self {
			if len(v) != len(p.Events) {
				t.Fatalf("%q: %d costs for %d events", k, len(v), len(p.Events))
			}
		}
	})
}

func TestSplitDriver(t *testing.T) {
	php := "/usr/bin/php8.2 -n -d memory_limit=1G client.php -proto thrift"
	ps := []*Profile{
		{Cmd: php, PID: 4100, Thread: 1},              // the worker (forked later)
		{Cmd: php, PID: 4000, Thread: 1},              // the driver
		{Cmd: "/usr/bin/dpkg-query -W", PID: 4200},    // a child it ran: counted
		{Cmd: "bin/go-client -proto grpc", PID: 3000}, // a Go client does not fork
		{Cmd: "bin/go-client -proto grpc", PID: 3000, Thread: 2},
	}
	counted, driver := SplitDriver(ps)
	if len(driver) != 1 || driver[0].PID != 4000 {
		t.Errorf("driver = %+v; want pid 4000", driver)
	}
	if len(counted) != 4 {
		t.Errorf("counted %d profiles; want 4", len(counted))
	}
	if c, d := SplitDriver(ps[:1]); len(c) != 1 || len(d) != 0 {
		t.Errorf("a lone PHP process is its own worker: counted %d, driver %d", len(c), len(d))
	}
}

// Process IDs wrap round at pid_max: the first started is the one after the
// largest gap, not always the lowest (measured: a driver 32304, its caller 454).
func TestFirstPID(t *testing.T) {
	for _, tc := range []struct {
		pids      []int
		max, want int
	}{
		{[]int{19708, 19694}, 32768, 19694},
		{[]int{454, 32304}, 32768, 32304},
		{[]int{32700, 10, 30}, 32768, 32700},
		{[]int{5, 9, 12}, 32768, 5},
		{[]int{4000}, 32768, 4000},
	} {
		if got := FirstPID(tc.pids, tc.max); got != tc.want {
			t.Errorf("FirstPID(%v, %d) = %d; want %d", tc.pids, tc.max, got, tc.want)
		}
	}
}
