package claims

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/results"
)

// driftRuns is rounds runs of each of cells, round r's value the cell's truth
// times a drift every cell shares in that round (the machine's speed then,
// sd drift) times the run's own noise (sd own). rounded: each run carries its
// round (Run.Round), else none (the comparison can then only be unpaired).
func driftRuns(r *rand.Rand, truth map[string]float64, rounds int, drift, own float64, rounded bool) map[string][]Run {
	out := map[string][]Run{}
	keys := slices.Sorted(maps.Keys(truth))
	for i := 1; i <= rounds; i++ {
		d := math.Exp(drift * r.NormFloat64())
		for _, k := range keys {
			v := truth[k]
			m := Run{Report: report.Report{RequestsPerSecond: v * d * math.Exp(own*r.NormFloat64()), Rpcbed: &report.Extra{}}}
			if rounded {
				m.Round = i
			}
			out[k] = append(out[k], m)
		}
	}
	return out
}

// With the machine drifting by 20 % between rounds and the rows' own noise at
// 3 %, Ice 1.3x Thrift and far ahead of the others at every level: judged on
// the rounds' ratios the lead is "yes" and Ice leads at every level; the same
// values with no rounds on record (unpaired: each row's median with the drift
// in its spread) show Ice ahead at every level in at most 2, and the pooled
// lead less often. Over 40 seeded runs.
func TestJavaPairedByRound(t *testing.T) {
	e := &Java2015{}
	if err := e.Read(published); err != nil {
		t.Fatal(err)
	}
	truth := map[string]float64{"ice": 13000, "thrift": 10000, "dubbo": 4000, "grpc": 3000}
	count := map[bool]map[string]int{true: {}, false: {}}
	for seed := range uint64(40) {
		for _, rounded := range []bool{true, false} {
			r := rand.New(rand.NewPCG(seed, 38))
			e.Runs = map[JKey][]Run{}
			for _, c := range e.Levels {
				for fw, rs := range driftRuns(r, truth, 3, 0.2, 0.03, rounded) {
					e.Runs[JKey{fw, c}] = rs
				}
			}
			e.Looks = 0
			for _, f := range e.Judge(Setup{}).Findings {
				if f.Rule == "java-ice-over-thrift" || f.Rule == "java-ice-leads" {
					count[rounded][f.Rule+" "+f.Holds]++
				}
			}
		}
	}
	t.Logf("paired: %v; unpaired: %v", count[true], count[false])
	if n := count[true]["java-ice-over-thrift "+results.Yes]; n < 38 {
		t.Errorf("paired: ice over thrift yes in %d of 40; want at least 38", n)
	}
	if n := count[true]["java-ice-leads "+results.Yes]; n < 38 {
		t.Errorf("paired: ice leads at every level in %d of 40; want at least 38", n)
	}
	if n := count[false]["java-ice-over-thrift "+results.Yes]; n > 30 {
		t.Errorf("unpaired: ice over thrift yes in %d of 40; the case should show the drift widening it", n)
	}
	if n := count[false]["java-ice-leads "+results.Yes]; n > 2 {
		t.Errorf("unpaired: ice leads at every level in %d of 40; the case should show the drift widening it", n)
	}
}

// go-grpc-thrift-aerospike's margins are read from each round's ratio: gRPC
// 10 % ahead of Thrift, a drift of 15 % between rounds, own noise 2 %, 5
// rounds: the throughput claims are "yes" at both levels when paired, and the
// same values unpaired leave at least one inconclusive.
func TestGRPCThriftPairedByRound(t *testing.T) {
	e := &GRPCThrift{}
	if err := e.Read(published); err != nil {
		t.Fatal(err)
	}
	got := map[bool][]string{}
	for _, rounded := range []bool{true, false} {
		r := rand.New(rand.NewPCG(3, 38))
		e.Runs = map[GTKey][]Run{}
		for _, c := range e.Levels {
			for proto, rs := range driftRuns(r, map[string]float64{"grpc": 11000, "thrift": 10000}, 5, 0.15, 0.02, rounded) {
				for i := range rs {
					rs[i].Wall, rs[i].ServerKnown, rs[i].ServerCPU, rs[i].ServerN = 1, true, 0.8, int64(rs[i].Report.RequestsPerSecond)
				}
				e.Runs[GTKey{proto, c}] = rs
			}
		}
		for _, f := range e.Judge(Setup{}).Findings {
			if f.Rule == "grpc-thrift-throughput-c50" || f.Rule == "grpc-thrift-throughput-c800" {
				got[rounded] = append(got[rounded], f.Holds+" "+f.Measured)
			}
		}
	}
	t.Logf("paired %v; unpaired %v", got[true], got[false])
	for _, v := range got[true] {
		if v[:len(results.Yes)] != results.Yes {
			t.Errorf("paired: %s; want yes", v)
		}
	}
	inconclusive := 0
	for _, v := range got[false] {
		if len(v) >= len(results.NotDistinguished) && v[:len(results.NotDistinguished)] == results.NotDistinguished {
			inconclusive++
		}
	}
	if inconclusive == 0 {
		t.Errorf("unpaired: %v; the case should leave one inconclusive", got[false])
	}
}

// A "partly" whose interval straddles an edge of the yes band asks for more
// rounds (Finding.Sharpen); a firm partly, a yes, a no and an inconclusive
// figure do not set it (inconclusive asks for rounds by its verdict).
func TestSharpen(t *testing.T) {
	r := Rule{Name: "x", Band: ruleExtraCPU, Prec: 1}
	for _, tc := range []struct {
		lo, hi  float64
		holds   string
		sharpen bool
	}{
		{5.1, 63.9, results.Partly, true},
		{50, 80, results.Partly, false},
		{2, 14, results.Partly, false},
		{21.7, 37.8, results.Yes, false},
		{-8, 40, results.NotDistinguished, false},
		{95, 120, results.No, false},
	} {
		f := r.Verdict(Figure{Median: (tc.lo + tc.hi) / 2, Lo: tc.lo, Hi: tc.hi, Known: true}, "", "")
		if f.Holds != tc.holds || f.Sharpen != tc.sharpen {
			t.Errorf("[%v..%v]: %s sharpen %v; want %s sharpen %v", tc.lo, tc.hi, f.Holds, f.Sharpen, tc.holds, tc.sharpen)
		}
	}
}

// go-grpc-thrift-aerospike asks for rounds at c=50 for a server-CPU claim that
// is "partly" across the yes band's edge (gRPC +45 % per call, its rounds
// 56-60 µs against Thrift's 40).
func TestGRPCThriftSharpenNeeds(t *testing.T) {
	e := &GRPCThrift{}
	if err := e.Read(published); err != nil {
		t.Fatal(err)
	}
	run := func(round int, us float64) Run {
		return Run{Report: report.Report{RequestsPerSecond: 1000, Complete: 1000, Rpcbed: &report.Extra{}}, Round: round,
			ClientCPU: 0.5, ServerCPU: us * 1000 / 1e6, ServerN: 1000, ServerKnown: true, Wall: 1}
	}
	e.Runs = map[GTKey][]Run{}
	for _, c := range e.Levels {
		for i, us := range []float64{56, 58, 60} {
			e.Runs[GTKey{"grpc", c}] = append(e.Runs[GTKey{"grpc", c}], run(i+1, us))
			e.Runs[GTKey{"thrift", c}] = append(e.Runs[GTKey{"thrift", c}], run(i+1, 40+float64(i)/10))
		}
	}
	var cpu results.Finding
	for _, f := range e.Judge(Setup{}).Findings {
		if f.Rule == "grpc-thrift-server-cpu" {
			cpu = f
		}
	}
	if cpu.Holds != results.Partly || !cpu.Sharpen {
		t.Fatalf("server CPU %s %s sharpen %v; want partly across the yes edge", cpu.Measured, cpu.Holds, cpu.Sharpen)
	}
	found := false
	for _, n := range e.Undecided() {
		found = found || (n.Rule == "grpc-thrift-server-cpu" && n.Level == e.Levels[0])
	}
	if !found {
		t.Errorf("needs %+v; want grpc-thrift-server-cpu at c=%d", e.Undecided(), e.Levels[0])
	}
}

// php-go-growth's message-object share pairs the bursts by their round: with
// rounds on record, bursts filed out of order still pair with their own
// round's; without, by index.
func TestGrowthByRound(t *testing.T) {
	e := &Growth{Items: []int{2, 20, 200}, Ms: map[GKey][]float64{}, Rounds: map[GKey][]int{}}
	// Round r's machine is r times slower; the pure runtime grows 300 ms, the C
	// extension 100, Go 20: the C extension removes (300-100)/(300-20) = 71 %.
	grow := map[string]float64{"php-pure-grpc": 300, "php-grpc": 100, "go-grpc": 20}
	for path, g := range grow {
		for _, r := range []int{3, 1, 2} {
			for _, n := range []int{2, 200} {
				k := GKey{path, n}
				v := 50.0
				if n == 200 {
					v += g
				}
				e.Ms[k] = append(e.Ms[k], v*float64(r))
				e.Rounds[k] = append(e.Rounds[k], r)
			}
		}
	}
	f := e.judgeMessageObjects()
	if !strings.HasPrefix(f.Measured, "71%") {
		t.Errorf("paired by round: %s; want 71%% in every round", f.Measured)
	}
	if got := e.byRound(GKey{"go-grpc", 2}); got[3] != 150 || got[1] != 50 {
		t.Errorf("byRound %v; want round 3 at 150, round 1 at 50", got)
	}
	e.Rounds = nil
	if got := e.byRound(GKey{"go-grpc", 2}); got[1] != 150 || got[3] != 100 {
		t.Errorf("no rounds: byRound %v; want by index from 1", got)
	}
}
