package claims

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// GRPCThrift is go-grpc-thrift-aerospike: the Go client against go-server, gRPC
// against Thrift, DataType through the store, at the published 50 and 800
// clients. Read fills the published claims and levels; the run fills the rest.
type GRPCThrift struct {
	Claim   map[string]float64
	Levels  []int
	Store   string // the store that ran: aerospike, redis or memory
	Dur     time.Duration
	Repeats int
	Runs    map[GTKey][]Run
	Failed  Failures
	// Looks is how many looks reproduce's precision loop may take at the
	// claims once it adds rounds (0 on the base repeats): the claims are then
	// judged at stats.LooksLevel(Looks) (Confidence).
	Looks int
}

// GTKey is one cell of go-grpc-thrift-aerospike: a protocol at a concurrency.
type GTKey struct {
	Proto string
	C     int
}

// The rules of go-grpc-thrift-aerospike. Each band is the published figure
// widened by the stated tolerance; "beats" and "more" claims must also clear the
// repeats' spread (Differs).
var (
	// gRPC beat Thrift by 3 % (worst) to 17 % (best): yes when the margin at a
	// level lies in 3..17 % widened by 5 points either side but stays above 0
	// (+0..+22 %); partly up to +40 % (gRPC wins by far more than published) ; a
	// negative margin is no.
	ruleThroughput = Band{Yes: [2]float64{0, 22}, Partly: [2]float64{0, 40}, Unit: "%", Differs: at(0)}
	// "about 30 %" more server CPU at 50 clients, read as 30 ± 15 points; partly
	// for any other extra up to three times the claim.
	ruleExtraCPU = Band{Yes: [2]float64{15, 45}, Partly: [2]float64{0, 90}, Unit: "%", Differs: at(0)}
	// Resource use "barely changed" from 50 to 800 clients: the server's busy
	// fraction moves by at most ±10 %; partly up to ±25 %.
	ruleBarely = Band{Yes: [2]float64{-10, 10}, Partly: [2]float64{-25, 25}, Unit: "%"}
)

// Read reads the published claims (go-grpc-thrift-aerospike_claims.csv).
func (e *GRPCThrift) Read(published string) error {
	rows, err := readCSV(filepath.Join(published, "go-grpc-thrift-aerospike_claims.csv"))
	if err != nil {
		return err
	}
	e.Claim = map[string]float64{}
	for _, c := range rows {
		if c["claim"] == "client_concurrency_tested" {
			for _, f := range splitList(c["value"]) {
				if n, err := strconv.Atoi(f); err == nil {
					e.Levels = append(e.Levels, n)
				}
			}
			continue
		}
		v, err := strconv.ParseFloat(c["value"], 64)
		if err != nil {
			return fmt.Errorf("go-grpc-thrift-aerospike_claims.csv: %s: %w", c["claim"], err)
		}
		e.Claim[c["claim"]] = v
	}
	for _, k := range []string{"grpc_over_thrift_throughput_best_pct", "grpc_over_thrift_throughput_worst_pct", "grpc_server_extra_cpu_pct_vs_thrift_at_50_clients"} {
		if _, ok := e.Claim[k]; !ok {
			return fmt.Errorf("go-grpc-thrift-aerospike_claims.csv: no %s", k)
		}
	}
	if len(e.Levels) < 2 {
		return fmt.Errorf("go-grpc-thrift-aerospike_claims.csv: client_concurrency_tested lists %v; want two levels", e.Levels)
	}
	return nil
}

// Judge grades every published claim from the runs.
func (e *GRPCThrift) Judge(o Setup) results.Section {
	sec := results.Section{
		Setup: []string{
			"Published: Go client and Go server on two 2 x E5-2630 machines, Aerospike beside the client; c = 50 and 800.",
			"Here: go-client (worker mode, `-warmup auto`) against go-server " + across(o) + ", server pinned to CPU " + orAny(o.ServerCPUSet) + ", client to CPU " + orAny(o.ClientCPUSet) + ".",
			storeWords(e.Store, o),
			fmt.Sprintf("Each cell: DataType, %v measured after a settled warm-up, %d rounds, each of both levels with gRPC and Thrift one after the other in a fresh random order; server CPU from go-server's /stats and client CPU from the client's report, both over the client's measured window; every margin from the rounds' ratios (paired: the drift between rounds cancels).", e.Dur, e.Repeats),
		},
		Scaled: "The published run had two 12-core machines; here client and server get one core each on one machine, so the busy fractions below are of one core. Concurrency is as published (50 and 800 goroutines); the store is Aerospike only when AEROSPIKE_HOSTS names one.",
	}
	sec.Setup = append(sec.Setup, e.Failed.Setup()...)
	lo, hi := e.Levels[0], e.Levels[len(e.Levels)-1]
	f := func(proto string, c int, m func(Run) float64) Figure {
		return figsAt(e.Runs[GTKey{proto, c}], m, e.Confidence())
	}
	fb := func(proto string, c int, m func(Run) float64) Figure {
		return busyAt(e.Runs[GTKey{proto, c}], m, e.Confidence())
	}
	// The comparisons, paired by round: gRPC over Thrift at each level, and
	// each protocol's higher level over its lower.
	var protos []cellPair
	for _, c := range e.Levels {
		protos = append(protos, cellPair{e.Runs[GTKey{"grpc", c}], e.Runs[GTKey{"thrift", c}]})
	}
	var moves []cellPair
	for _, proto := range []string{"grpc", "thrift"} {
		moves = append(moves, cellPair{e.Runs[GTKey{proto, hi}], e.Runs[GTKey{proto, lo}]})
	}
	throughput := func(i int) Figure { return pairedMargin(protos, i, rps, e.Confidence(), figsAt) }
	sec.Table = [][]string{{"c", "grpc req/s", "thrift req/s", "grpc vs thrift throughput", "server busy grpc / thrift", "server CPU µs/call grpc / thrift", "client busy grpc / thrift", "client CPU µs/call grpc / thrift"}}
	for i, c := range e.Levels {
		sec.Table = append(sec.Table, []string{strconv.Itoa(c),
			f("grpc", c, rps).Show("", 0), f("thrift", c, rps).Show("", 0), throughput(i).Show("%", 1),
			pctOf(fb("grpc", c, srvBusy)) + " / " + pctOf(fb("thrift", c, srvBusy)),
			f("grpc", c, srvPerCall).Show("", 1) + " / " + f("thrift", c, srvPerCall).Show("", 1),
			pctOf(fb("grpc", c, cliBusy)) + " / " + pctOf(fb("thrift", c, cliBusy)),
			f("grpc", c, cliPerCall).Show("", 1) + " / " + f("thrift", c, cliPerCall).Show("", 1)})
	}

	// Throughput: one rule per published level.
	best, worst := e.Claim["grpc_over_thrift_throughput_best_pct"], e.Claim["grpc_over_thrift_throughput_worst_pct"]
	for i, c := range e.Levels {
		r := Rule{Name: fmt.Sprintf("grpc-thrift-throughput-c%d", c), Prec: 1, Band: ruleThroughput,
			Claim:     fmt.Sprintf("gRPC throughput beats Thrift by %.0f-%.0f %% (at c=%d)", worst, best, c),
			Published: fmt.Sprintf("+%.0f..+%.0f %%", worst, best)}
		g, t := f("grpc", c, rps), f("thrift", c, rps)
		sec.Findings = append(sec.Findings, r.Verdict(throughput(i),
			fmt.Sprintf("Measured %s req/s (gRPC) against %s (Thrift) at c=%d; the margin from the rounds' ratios (both protocols ran in each round).", g.Show("", 0), t.Show("", 0), c),
			e.bottleneck(c, o)))
	}

	// Server CPU at 50 clients: one verdict, on CPU per call (the work each
	// server spends on the same call); the busy fraction the write-up read is a
	// supporting figure (bounded by the core, it cannot show +30 % where a
	// server is already past 1/1.3 of it).
	extra := e.Claim["grpc_server_extra_cpu_pct_vs_thrift_at_50_clients"]
	r0 := Rule{Name: "grpc-thrift-server-cpu", Prec: 1, Band: ruleExtraCPU,
		Claim:     fmt.Sprintf("at %d clients the gRPC server uses about %.0f %% more CPU than the Thrift server (CPU per call)", lo, extra),
		Published: fmt.Sprintf("+%.0f %%", extra)}
	g, t := f("grpc", lo, srvPerCall), f("thrift", lo, srvPerCall)
	gb, tb := fb("grpc", lo, srvBusy), fb("thrift", lo, srvBusy)
	cpu := fmt.Sprintf("Server CPU per call at c=%d: gRPC %s µs, Thrift %s µs (go-server /stats over the window). Supporting figure, the busy fraction the write-up compared: gRPC %s, Thrift %s, %s.",
		lo, g.Show("", 1), t.Show("", 1), pctOf(gb), pctOf(tb), Margin(gb, tb).Show("%", 1))
	if tb.Known && tb.Median*(1+extra/100) > 1 {
		cpu += fmt.Sprintf(" Thrift's server was %s busy: %.0f %% more would be past its core, so the busy fraction cannot show the claim.", pctOf(tb), extra)
	}
	sec.Findings = append(sec.Findings, r0.Verdict(pairedMargin(protos, 0, srvPerCall, e.Confidence(), figsAt), cpu, ""))

	// Resource use between 50 and 800 clients: the server's busy fraction; the
	// larger move of the two protocols is the figure.
	r := Rule{Name: "grpc-thrift-resources-flat", Prec: 1, Band: ruleBarely,
		Claim:     fmt.Sprintf("resource use barely changes between %d and %d clients", lo, hi),
		Published: "barely changed"}
	var worstMove Figure
	var detail string
	for i, proto := range []string{"grpc", "thrift"} {
		mv := pairedMargin(moves, i, srvBusy, e.Confidence(), busyAt)
		detail += fmt.Sprintf("%s server busy %s at c=%d, %s at c=%d (%s); per call %s and %s µs. ", proto,
			pctOf(fb(proto, lo, srvBusy)), lo, pctOf(fb(proto, hi, srvBusy)), hi, mv.Show("%", 1),
			f(proto, lo, srvPerCall).Show("", 1), f(proto, hi, srvPerCall).Show("", 1))
		if !mv.Known {
			worstMove = Figure{}
			break
		}
		if proto == "grpc" || math.Abs(mv.Median) > math.Abs(worstMove.Median) {
			worstMove = mv
		}
	}
	sec.Findings = append(sec.Findings, r.Verdict(worstMove, "The larger move of the two protocols is judged. "+detail, ""))
	return sec
}

// Confidence is what the claims' intervals are judged at (Looks).
func (e *GRPCThrift) Confidence() float64 { return stats.LooksLevel(e.Looks) }

// bottleneck says which core limited the cell at c, from the busy fractions of
// both sides over the window, and what each protocol cost per call there.
func (e *GRPCThrift) bottleneck(c int, o Setup) string {
	var s string
	for _, proto := range []string{"grpc", "thrift"} {
		rs := e.Runs[GTKey{proto, c}]
		sb, cb := busy(rs, srvBusy), busy(rs, cliBusy)
		if !sb.Known || !cb.Known {
			return ""
		}
		side := "neither core saturated"
		lb, mb, link := linkWords(rs)
		switch {
		case lb >= results.LinkBusyCeiling:
			side = "the link's delayers were past their ceiling (link-bound)"
		case o.MachineCores > 0 && mb >= results.BoundBusy*float64(o.MachineCores):
			side = fmt.Sprintf("the machine's %d cores were saturated (server, client, the link's delayers and the store together)", o.MachineCores)
		case sb.Median >= results.BoundBusy && sb.Median >= cb.Median:
			side = "the server core saturated"
		case cb.Median >= results.BoundBusy:
			side = "the client core saturated"
		}
		s += fmt.Sprintf("%s: server %s busy, client %s%s (busy fractions over the window): %s; CPU per call server %s µs, client %s µs. ",
			proto, pctOf(sb), pctOf(cb), link, side, figs(rs, srvPerCall).Show("", 1), figs(rs, cliPerCall).Show("", 1))
	}
	return strings.TrimSpace(s)
}

// across is where the server was for the client: over 127.0.0.1, or across a link.
func across(o Setup) string {
	if o.Across == "" {
		return "over 127.0.0.1"
	}
	return "across " + o.Across
}

// linkWords is, over rs, the delayers' and the whole machine's median busy
// cores and the words for them ("" when no run crossed a delayed link): each
// median with its range over the runs, in cores (two delayers may take more
// than one; the machine counts the store and the kernel too).
func linkWords(rs []Run) (link, machine float64, words string) {
	med := func(f func(Run) float64) (float64, string) {
		var v []float64
		for _, m := range rs {
			if b := f(m); !math.IsNaN(b) {
				v = append(v, b)
			}
		}
		if len(v) == 0 {
			return 0, ""
		}
		x := stats.Median(v)
		return x, fmt.Sprintf("%.2f cores (median; %.2f-%.2f over the runs)", x, slices.Min(v), slices.Max(v))
	}
	link, lw := med(linkBusy)
	if lw == "" {
		return 0, 0, ""
	}
	machine, mw := med(machineBusy)
	words = ", the link's delayers " + lw
	if mw != "" {
		words += ", the whole machine " + mw
	}
	return link, machine, words
}

// storeWords is the Setup line that says which store ran.
func storeWords(store string, o Setup) string {
	const path = "; the lookup/lock/write/read-back path of docs/contract.md is the same."
	switch store {
	case "aerospike":
		return "Store: Aerospike at " + o.AerospikeHosts + " (namespace test, set data_type_def), as published."
	case "redis":
		return "Store: Redis at " + o.RedisAddr + " (a real networked store on 127.0.0.1): no Aerospike server was given (AEROSPIKE_HOSTS or -aerospike-hosts)" + path
	}
	return "Store: go-server's in-memory store: no Aerospike server was given (AEROSPIKE_HOSTS or -aerospike-hosts) and no Redis answered" + path
}
