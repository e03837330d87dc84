package plan

import (
	"strings"
	"testing"
	"time"
)

// One command line for every run path: a cell's conditions (security,
// connection mode) and a run path's own settings (callers, rate, timeout)
// come out as the clients' flags, in one order.
func TestClientArgs(t *testing.T) {
	cell := func(proto, call, sec, con string) Cell {
		return Cell{Client: "go", Protocol: proto, Call: call, Items: 200, Concurrency: 50, Security: sec, Connect: con}
	}
	tls := ClientRun{Addr: "h:1", Load: Load{N: 10}, CA: "ca.pem", Cert: "c.pem", Key: "k.pem"}
	for _, tc := range []struct {
		name string
		c    Cell
		r    ClientRun
		want string
	}{
		{"a matrix cell", cell("grpc", "datalist", "", ""),
			ClientRun{Addr: "h:1", Load: Load{Duration: Duration(5 * time.Second), Warmup: Auto, WarmupMax: Duration(20 * time.Second), Conns: 4}},
			"-proto grpc -call datalist -items 200 -c 50 -t 5s -warmup auto -warmup-max 20s -conns 4 -addr h:1"},
		{"datatype: no -items; http keeps alive", cell("http", "datatype", "", ""),
			ClientRun{Addr: "h:1", Load: Load{N: 1000, Warmup: Duration(1500 * time.Millisecond)}},
			"-proto http -call datatype -c 50 -n 1000 -warmup 1.5s -conns 50 -k -addr h:1"},
		{"per call: no keep-alive", cell("http", "datatype", "", PerCall), ClientRun{Addr: "h:1", Load: Load{N: 10}},
			"-proto http -call datatype -c 50 -n 10 -conns 50 -connect per-call -addr h:1"},
		{"a verify: one caller, a timeout", cell("thrift", "datatype", "", ""), ClientRun{Addr: "h:1", Load: Load{N: 10}, Callers: 1, Timeout: time.Minute},
			"-proto thrift -call datatype -c 1 -n 10 -conns 50 -timeout 60s -addr h:1"},
		{"an open loop", cell("grpc", "datatype", "", ""), ClientRun{Addr: "h:1", Load: Load{Duration: Duration(time.Second)}, Rate: 800},
			"-proto grpc -call datatype -c 50 -t 1s -conns 50 -rate 800 -addr h:1"},
		{"tls", cell("grpc", "datatype", "tls", ""), tls,
			"-proto grpc -call datatype -c 50 -n 10 -conns 50 -addr h:1 -security tls -cacert ca.pem"},
		{"mtls over TLS 1.2, no resumption, a server name", cell("grpc", "datatype", "mtls+tls12+noresume", ""),
			ClientRun{Addr: "h:1", Load: Load{N: 10}, CA: "ca.pem", Cert: "c.pem", Key: "k.pem", ServerName: "rpcbed-server"},
			"-addr h:1 -security mtls -cacert ca.pem -cert c.pem -key k.pem -servername rpcbed-server -tls-version 1.2 -resume off"},
		{"a cluster task's common start, to the microsecond", cell("grpc", "datatype", "", ""),
			ClientRun{Addr: "h:1", Load: Load{Duration: Duration(time.Second)}, StartAt: time.UnixMicro(1767225600250001)},
			"-t 1s -conns 50 -addr h:1 -start-at 1767225600.250001"},
		{"tls without certificates: no TLS flags", cell("grpc", "datatype", "tls", ""), ClientRun{Addr: "h:1", Load: Load{N: 10}},
			"-conns 50 -addr h:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(tc.c.ClientArgs(tc.r), " ")
			if !strings.HasSuffix(got, tc.want) {
				t.Errorf("got %q; want it to end in %q", got, tc.want)
			}
		})
	}
}
