package reproduce

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/rpcbed/rpcbed/internal/matrix"
)

// goGRPCThrift: Go client, gRPC vs Thrift, DataType through the store, c = 50 and
// 800; throughput and server CPU per call.
func goGRPCThrift(ctx context.Context, o Options) (Section, error) {
	sec := Section{}
	claims, err := readCSV(filepath.Join(o.Published, "go-grpc-thrift-aerospike_claims.csv"))
	if err != nil {
		return sec, err
	}
	claim := map[string]float64{}
	for _, c := range claims {
		v, _ := strconv.ParseFloat(c["value"], 64)
		claim[c["claim"]] = v
	}
	// The store: Aerospike, as published, when hosts are given; Redis when it
	// answers; go-server's memory store otherwise.
	store := "memory"
	switch {
	case o.AerospikeHosts != "":
		store = "aerospike"
	case o.RedisAddr != "":
		if c, err := net.DialTimeout("tcp", o.RedisAddr, time.Second); err == nil {
			c.Close()
			store = "redis"
		}
	}
	dur, warm, repeats := 3*time.Second, time.Second, 3
	if o.Quick {
		dur, warm, repeats = 300*time.Millisecond, 0, 1
	}
	sec.Setup = []string{
		"Published: Go client and Go server on two 2 x E5-2630 machines, Aerospike beside the client; c = 50 and 800.",
		"Here: go-client against go-server on one 2-core machine, server pinned to CPU " + o.ServerCPUSet + ", client to CPU " + o.ClientCPUSet + ", over 127.0.0.1.",
		storeWords(store, o),
		fmt.Sprintf("Each cell: DataType, %v measured after %v warm-up, median of %d runs; server CPU per call from go-server's /stats.", dur, warm, repeats),
	}
	srv, err := matrix.StartServer(ctx, o.Runner, "go-server", matrix.ServerConfig{
		Programs: o.Programs, Resources: matrix.Resources{CPUSet: o.ServerCPUSet}, Store: store, RedisAddr: o.RedisAddr, AerospikeHosts: o.AerospikeHosts, Auth: true,
	})
	if err != nil {
		return sec, err
	}
	defer srv.Svc.Stop(context.Background())

	type key struct {
		proto string
		c     int
	}
	type agg struct{ rps, cpu, srvUtil, cliUtil, cliCPU float64 }
	res := map[key]agg{}
	rep := map[key]measured{} // the run with the median throughput
	for _, c := range []int{50, 800} {
		for _, proto := range []string{"grpc", "thrift"} {
			var rps, cpu, su, cu, cc []float64
			var runs []measured
			for r := 1; r <= repeats; r++ {
				args := []string{"-proto", proto, "-call", "datatype", "-c", strconv.Itoa(c),
					"-t", secs(dur), "-addr", srv.Addrs[proto]}
				if warm > 0 {
					args = append(args, "-warmup", secs(warm))
				}
				name := fmt.Sprintf("aerospike-go-%s-datatype-c%d-r%d", proto, c, r)
				fmt.Fprintf(o.Log, "  %s\n", name)
				m, err := runClient(ctx, o, o.Runner, srv, proto, "datatype", name, o.Programs.Client("go", args...), o.ClientCPUSet, dur+warm+60*time.Second)
				if err != nil {
					return sec, err
				}
				runs = append(runs, m)
				rps = append(rps, m.Report.RequestsPerSecond)
				cpu = append(cpu, m.serverCPUPerCall())
				su = append(su, m.serverUtil())
				cu = append(cu, m.clientUtil())
				calls := float64(m.Report.Complete)
				if m.Report.Rpcbed != nil && calls > 0 {
					cc = append(cc, (m.Report.Rpcbed.CPUUserSeconds+m.Report.Rpcbed.CPUSystemSeconds)*1e6/calls)
				}
			}
			res[key{proto, c}] = agg{medianOf(rps), medianOf(cpu), medianOf(su), medianOf(cu), medianOf(cc)}
			rep[key{proto, c}] = medianRun(runs)
		}
	}
	sec.Table = [][]string{{"c", "grpc req/s", "thrift req/s", "grpc vs thrift throughput", "grpc server CPU µs/call", "thrift server CPU µs/call", "grpc vs thrift server CPU/call", "server core busy grpc / thrift", "client CPU µs/call grpc / thrift"}}
	for _, c := range []int{50, 800} {
		g, t := res[key{"grpc", c}], res[key{"thrift", c}]
		sec.Table = append(sec.Table, []string{strconv.Itoa(c), f0(g.rps), f0(t.rps), pct(g.rps, t.rps), f1(g.cpu), f1(t.cpu), pct(g.cpu, t.cpu),
			fmt.Sprintf("%.0f%% / %.0f%%", g.srvUtil*100, t.srvUtil*100), f1(g.cliCPU) + " / " + f1(t.cliCPU)})
	}
	sec.Table = append(sec.Table, []string{"published", "-", "-",
		fmt.Sprintf("+%.0f%% (worst) to +%.0f%% (best)", claim["grpc_over_thrift_throughput_worst_pct"], claim["grpc_over_thrift_throughput_best_pct"]),
		"-", "-", fmt.Sprintf("+%.0f%% at c=50", claim["grpc_server_extra_cpu_pct_vs_thrift_at_50_clients"]), "-", "-"})

	// Finding 1: gRPC throughput beat Thrift by 3-17 %.
	g50, t50, g800, t800 := res[key{"grpc", 50}], res[key{"thrift", 50}], res[key{"grpc", 800}], res[key{"thrift", 800}]
	d50, d800 := (g50.rps/t50.rps-1)*100, (g800.rps/t800.rps-1)*100
	f := Finding{Claim: fmt.Sprintf("gRPC throughput beats Thrift by %.0f %% (worst) to %.0f %% (best)",
		claim["grpc_over_thrift_throughput_worst_pct"], claim["grpc_over_thrift_throughput_best_pct"])}
	f.Detail = fmt.Sprintf("Measured gRPC vs Thrift: %+.0f %% at c=50, %+.0f %% at c=800.", d50, d800)
	switch {
	case d50 > 0 && d800 > 0:
		f.Holds = "yes"
	case d50 > 0 || d800 > 0:
		f.Holds = "partly"
	default:
		f.Holds = "no"
	}
	if f.Holds != "yes" {
		c := 50
		if d50 > 0 {
			c = 800
		}
		f.Detail += fmt.Sprintf(" At c=%d: ", c) + versus("thrift", "grpc", rep[key{"thrift", c}], rep[key{"grpc", c}])
	}
	sec.Findings = append(sec.Findings, f)

	// Finding 2: gRPC server ~30 % more CPU than Thrift at 50 clients.
	extra := (g50.cpu/t50.cpu - 1) * 100
	f = Finding{Claim: fmt.Sprintf("at 50 clients the gRPC server uses about %.0f %% more CPU than the Thrift server", claim["grpc_server_extra_cpu_pct_vs_thrift_at_50_clients"])}
	f.Detail = fmt.Sprintf("Measured per call at c=50: gRPC %.1f µs, Thrift %.1f µs of server CPU (%+.0f %%); per second the gRPC server core was %.0f %% busy, Thrift's %.0f %%.",
		g50.cpu, t50.cpu, extra, g50.srvUtil*100, t50.srvUtil*100)
	switch {
	case extra >= 10:
		f.Holds = "yes"
	case extra > 0:
		f.Holds = "partly"
	default:
		f.Holds = "no"
		f.Detail += " Here the Thrift server is the costlier per call."
	}
	sec.Findings = append(sec.Findings, f)

	// Finding 3: resource use barely changed between 50 and 800 clients.
	cg, ct := (g800.cpu/g50.cpu-1)*100, (t800.cpu/t50.cpu-1)*100
	f = Finding{Claim: "resource use barely changes between 50 and 800 clients"}
	f.Detail = fmt.Sprintf("Server CPU per call from c=50 to c=800: gRPC %+.0f %%, Thrift %+.0f %%.", cg, ct)
	switch {
	case math.Abs(cg) <= 20 && math.Abs(ct) <= 20:
		f.Holds = "yes"
	case math.Abs(cg) <= 20 || math.Abs(ct) <= 20:
		f.Holds = "partly"
	default:
		f.Holds = "no"
	}
	if f.Holds != "yes" {
		f.Detail += fmt.Sprintf(" Per second the server core was %.0f %% busy at c=50 and %.0f %% at c=800 with gRPC, %.0f %% and %.0f %% with Thrift: with more callers in flight the server batches more work per wake-up, so its cost per call moves.",
			g50.srvUtil*100, g800.srvUtil*100, t50.srvUtil*100, t800.srvUtil*100)
	}
	sec.Findings = append(sec.Findings, f)
	return sec, nil
}

// medianRun is the run with the median throughput.
func medianRun(runs []measured) measured {
	if len(runs) == 0 {
		return measured{}
	}
	s := slices.Clone(runs)
	slices.SortFunc(s, func(a, b measured) int {
		return cmp.Compare(a.Report.RequestsPerSecond, b.Report.RequestsPerSecond)
	})
	return s[len(s)/2]
}

// storeWords is the Setup line that says which store ran.
func storeWords(store string, o Options) string {
	const path = "; the lookup/lock/write/read-back path of docs/contract.md is the same."
	switch store {
	case "aerospike":
		return "Store: Aerospike at " + o.AerospikeHosts + " (namespace test, set data_type_def), as published."
	case "redis":
		return "Store: Redis at " + o.RedisAddr + " (a real networked store on 127.0.0.1): no Aerospike server was given (AEROSPIKE_HOSTS or -aerospike-hosts)" + path
	}
	return "Store: go-server's in-memory store: no Aerospike server was given (AEROSPIKE_HOSTS or -aerospike-hosts) and no Redis answered" + path
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s" }
