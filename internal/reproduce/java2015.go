package reproduce

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/matrix"
)

// javaFrameworks in the published table's order.
var javaFrameworks = []string{"ice", "dubbo", "thrift", "grpc"}

// javaCallsScale divides the published 300 000 calls per client: at this machine's
// rates the published counts would take hours (30 M calls at c=100).
const javaCallsScale = 1000

// javaRowCap bounds one row's measured time: a framework that answers in tens of
// milliseconds per call (see the matrix) would otherwise take minutes per row.
const javaRowCap = 15 * time.Second

// javaRPC2015: Java client and Java servers, ice/dubbo/thrift/grpc, 1..100 clients,
// each making a scaled-down number of DataType calls; tps = calls / elapsed.
func javaRPC2015(ctx context.Context, o Options) (Section, error) {
	sec := Section{}
	rows, err := readCSV(filepath.Join(o.Published, "java-rpc-2015_tps.csv"))
	if err != nil {
		return sec, err
	}
	type pk struct {
		fw      string
		clients int
	}
	pub := map[pk]map[string]string{}
	var levels []int
	perClient := 300000
	for _, r := range rows {
		c, _ := strconv.Atoi(r["clients"])
		pub[pk{r["framework"], c}] = r
		if !containsInt(levels, c) {
			levels = append(levels, c)
		}
		if v, err := strconv.Atoi(r["calls_per_client"]); err == nil {
			perClient = v
		}
	}
	calls := perClient / javaCallsScale
	warm := time.Second
	if o.Quick {
		calls, warm = 20, 0
		levels = levels[:2]
	}
	sec.Setup = []string{
		"Published: Java 8 clients and servers, Ice 3.6, dubbox 2.8.4, Thrift 0.9.2, gRPC-java 0.7.1; 300 000 calls per client.",
		fmt.Sprintf("Here: java-client against the Java baselines (`java-client serve -proto P`), today's libraries (see the versions below), JDK 17; server pinned to CPU %s, client to CPU %s.", o.ServerCPUSet, o.ClientCPUSet),
		fmt.Sprintf("Scaled down: %d calls per client (1/%d of the published %d), or %v of measured time if that ends first, after %v of warm-up; one run per row, as published. Call: DataType (one small request and response).", calls, javaCallsScale, perClient, javaRowCap, warm),
		"tps = complete calls / measured seconds (the report's Requests per second).",
	}
	tps := map[pk]float64{}
	srvCPU := map[pk]float64{}
	runs := map[pk]measured{}
	versions := map[string]string{}
	for _, fw := range javaFrameworks {
		srv, err := matrix.StartServer(ctx, o.Runner, "java-"+fw, matrix.ServerConfig{
			Programs: o.Programs, Resources: matrix.Resources{CPUSet: o.ServerCPUSet}, Store: "memory", Auth: true,
		})
		if err != nil {
			return sec, err
		}
		for _, c := range levels {
			name := fmt.Sprintf("java2015-%s-c%d", fw, c)
			fmt.Fprintf(o.Log, "  %s\n", name)
			args := []string{"-proto", fw, "-call", "datatype", "-c", strconv.Itoa(c), "-n", strconv.Itoa(calls), "-per-client", "-t", secs(javaRowCap), "-addr", srv.Addrs[fw]}
			if warm > 0 {
				args = append(args, "-warmup", secs(warm))
			}
			m, err := runClient(ctx, o, o.Runner, srv, fw, "datatype", name, o.Programs.Client("java", args...), o.ClientCPUSet, 10*time.Minute)
			if err != nil {
				srv.Svc.Stop(context.Background())
				return sec, err
			}
			tps[pk{fw, c}] = m.Report.RequestsPerSecond
			runs[pk{fw, c}] = m
			srvCPU[pk{fw, c}] = m.serverCPUPerCall()
			if m.Report.Rpcbed != nil {
				for k, v := range m.Report.Rpcbed.Versions {
					versions[k] = v
				}
			}
		}
		srv.Svc.Stop(context.Background())
	}
	var vs []string
	for _, k := range []string{"java", "ice", "dubbo", "thrift", "grpc"} {
		if v, ok := versions[k]; ok {
			vs = append(vs, k+" "+v)
		}
	}
	if len(vs) > 0 {
		sec.Setup = append(sec.Setup, "Versions measured: "+strings.Join(vs, ", ")+".")
	}

	sec.Table = [][]string{{"clients", "framework", "published tps", "measured tps", "published ice / fw", "measured ice / fw", "server CPU µs/call"}}
	for _, c := range levels {
		for _, fw := range javaFrameworks {
			p, _ := strconv.ParseFloat(pub[pk{fw, c}]["tps"], 64)
			pi, _ := strconv.ParseFloat(pub[pk{"ice", c}]["tps"], 64)
			sec.Table = append(sec.Table, []string{strconv.Itoa(c), fw, pub[pk{fw, c}]["tps"], f0(tps[pk{fw, c}]),
				ratio(pi, p), ratio(tps[pk{"ice", c}], tps[pk{fw, c}]), f1(srvCPU[pk{fw, c}])})
		}
	}

	// Finding 1: Ice leads at every concurrency.
	f := Finding{Claim: "Ice leads at every concurrency"}
	var lead, notLead []string
	for _, c := range levels {
		order := rankDesc(map[string]float64{"ice": tps[pk{"ice", c}], "dubbo": tps[pk{"dubbo", c}], "thrift": tps[pk{"thrift", c}], "grpc": tps[pk{"grpc", c}]})
		if strings.HasPrefix(order, "ice ") {
			lead = append(lead, strconv.Itoa(c))
		} else {
			notLead = append(notLead, fmt.Sprintf("%d clients: %s", c, order))
		}
	}
	f.Holds, f.Detail = holds(lead, notLead, "Ice first at "+strings.Join(lead, ", ")+" clients.")
	if len(notLead) > 0 {
		for _, c := range []int{levels[0], levels[len(levels)-1]} {
			w := strings.SplitN(rankDesc(map[string]float64{"ice": tps[pk{"ice", c}], "dubbo": tps[pk{"dubbo", c}], "thrift": tps[pk{"thrift", c}], "grpc": tps[pk{"grpc", c}]}), " > ", 2)[0]
			if w != "ice" {
				f.Detail += fmt.Sprintf(" At %d clients %s beat ice: ", c, w) + versus(w, "ice", runs[pk{w, c}], runs[pk{"ice", c}])
			}
		}
	}
	sec.Findings = append(sec.Findings, f)

	// Finding 2: Thrift second, gRPC last.
	f = Finding{Claim: "Thrift is second and gRPC last (1.3-1.6x, 3.2-4.4x and 4.5-6x behind Ice for Thrift, Dubbo and gRPC)"}
	var okL, badL []string
	for _, c := range levels {
		order := rankDesc(map[string]float64{"ice": tps[pk{"ice", c}], "dubbo": tps[pk{"dubbo", c}], "thrift": tps[pk{"thrift", c}], "grpc": tps[pk{"grpc", c}]})
		fs := strings.Split(order, " > ")
		if len(fs) == 4 && fs[1] == "thrift" && fs[3] == "grpc" {
			okL = append(okL, strconv.Itoa(c))
		} else {
			badL = append(badL, fmt.Sprintf("%d clients: %s", c, order))
		}
	}
	f.Holds, f.Detail = holds(okL, badL, "Order ice > thrift > dubbo > grpc at "+strings.Join(okL, ", ")+" clients.")
	if len(badL) > 0 {
		c := levels[len(levels)-1]
		f.Detail += fmt.Sprintf(" At %d clients, thrift against ice: ", c) + versus("thrift", "ice", runs[pk{"thrift", c}], runs[pk{"ice", c}])
	}
	sec.Findings = append(sec.Findings, f)

	// Finding 3: Ice's lead grows with concurrency.
	lo, hi := levels[0], levels[len(levels)-1]
	f = Finding{Claim: "Ice's lead grows with concurrency"}
	var grew, shrank []string
	for _, fw := range []string{"thrift", "dubbo", "grpc"} {
		a, b := tps[pk{"ice", lo}]/tps[pk{fw, lo}], tps[pk{"ice", hi}]/tps[pk{fw, hi}]
		s := fmt.Sprintf("ice/%s %.2fx at %d -> %.2fx at %d", fw, a, lo, b, hi)
		if b > a {
			grew = append(grew, s)
		} else {
			shrank = append(shrank, s)
		}
	}
	f.Holds, f.Detail = holds(grew, shrank, "Grew: "+strings.Join(grew, "; ")+".")
	if len(shrank) > 0 {
		f.Detail += fmt.Sprintf(" With the client on one core, %d client threads share it: the client, not the server, sets the pace as concurrency rises, which flattens every ratio.", hi)
	}
	sec.Findings = append(sec.Findings, f)
	return sec, nil
}

// holds grades a finding from the cases where it held and those where it did not.
func holds(ok, bad []string, okDetail string) (string, string) {
	switch {
	case len(bad) == 0:
		return "yes", okDetail
	case len(ok) == 0:
		return "no", "Measured: " + strings.Join(bad, "; ") + "."
	default:
		return "partly", okDetail + " Not at: " + strings.Join(bad, "; ") + "."
	}
}

// rankDesc orders names by value, highest first: "a > b > c".
func rankDesc(v map[string]float64) string {
	neg := map[string]float64{}
	for k, x := range v {
		neg[k] = -x
	}
	return strings.ReplaceAll(rank(neg), " < ", " > ")
}
