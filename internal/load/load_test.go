package load

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"google.golang.org/grpc"

	"github.com/rpcbed/rpcbed/internal/gen/pb"
	"github.com/rpcbed/rpcbed/internal/gen/thriftgen"
	"github.com/rpcbed/rpcbed/internal/report"

	"github.com/rpcbed/rpcbed/internal/testbed"
)

var protos = []string{ProtoGRPC, ProtoThrift, ProtoHTTP}

func TestRunEveryProtoCall(t *testing.T) {
	addrs := goServer(t)
	type tc struct {
		name string
		cfg  Config
	}
	var cases []tc
	for _, p := range protos {
		for _, call := range []string{CallDataType, CallDataList} {
			c := Config{Proto: p, Call: call, Concurrency: 4, Requests: 200, KeepAlive: true, Addr: addrs[p]}
			if call == CallDataList {
				c.Items = 20
			}
			cases = append(cases, tc{p + "-" + call, c})
		}
	}
	cases = append(cases,
		tc{"http-no-keepalive", Config{Proto: ProtoHTTP, Call: CallDataType, Concurrency: 2, Requests: 50, Addr: addrs[ProtoHTTP]}},
		tc{"http-check-length", Config{Proto: ProtoHTTP, Call: CallDataList, Items: 2, Concurrency: 4, Requests: 100, KeepAlive: true, Check: CheckLength, Addr: addrs[ProtoHTTP]}},
		tc{"thrift-check-length", Config{Proto: ProtoThrift, Call: CallDataList, Items: 3, Concurrency: 4, Requests: 100, Check: CheckLength, Addr: addrs[ProtoThrift]}},
		tc{"grpc-check-length", Config{Proto: ProtoGRPC, Call: CallDataList, Items: 3, Concurrency: 4, Requests: 100, Check: CheckLength, Addr: addrs[ProtoGRPC]}},
		tc{"grpc-3-conns", Config{Proto: ProtoGRPC, Call: CallDataType, Concurrency: 6, Conns: 3, Requests: 100, Addr: addrs[ProtoGRPC]}},
		tc{"grpc-duration-warmup", Config{Proto: ProtoGRPC, Call: CallDataType, Concurrency: 2, Duration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond, Addr: addrs[ProtoGRPC]}},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Run(context.Background(), c.cfg, io.Discard)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Failed != 0 {
				t.Errorf("failed = %d (%v); want 0", res.Failed, res.Errors())
			}
			if c.cfg.Requests > 0 && res.Complete != c.cfg.Requests {
				t.Errorf("complete = %d; want %d", res.Complete, c.cfg.Requests)
			}
			if res.Complete == 0 {
				t.Errorf("complete = 0; want > 0")
			}
			if c.cfg.Warmup > 0 && res.WarmupCalls == 0 {
				t.Errorf("warm-up calls = 0; want > 0 with -warmup %v", c.cfg.Warmup)
			}
			if got, want := res.Hist.TotalCount(), res.Complete; got != want {
				t.Errorf("latencies recorded = %d; want %d", got, want)
			}
			if res.DocLength <= 0 || res.Bytes != res.DocLength*res.Complete {
				t.Errorf("bytes = %d, document length %d, complete %d; want bytes = length * complete", res.Bytes, res.DocLength, res.Complete)
			}
			rep := res.Report()
			var out bytes.Buffer
			if err := report.Write(&out, rep); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"Complete requests:      " + fmt.Sprint(res.Complete), "Protocol:               " + c.cfg.Proto, "Errors:                 none"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("report lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}

// badItems serves DataList with one item short and DataType with codeId 7, over
// every protocol: the verify call must refuse it.
type badItems struct {
	pb.UnimplementedDataServer
}

func (badItems) DataList(_ context.Context, r *pb.DataListRequest) (*pb.DataListResponse, error) {
	return &pb.DataListResponse{Auth: &pb.AuthReply{Token: "t"}, Items: make([]*pb.Item, max(int(r.N)-1, 0))}, nil
}

func (badItems) DataType(context.Context, *pb.DataTypeRequest) (*pb.DataTypeResponse, error) {
	return &pb.DataTypeResponse{Auth: &pb.AuthReply{Token: "t"}, CodeId: 7}, nil
}

type badThrift struct{}

func (badThrift) DataList(_ context.Context, r *thriftgen.DataListRequest) (*thriftgen.DataListResponse, error) {
	items := make([]*thriftgen.Item, max(int(r.N)-1, 0))
	for i := range items {
		items[i] = &thriftgen.Item{Tags: []string{}}
	}
	return &thriftgen.DataListResponse{Auth: &thriftgen.AuthReply{Token: "t"}, Items: items}, nil
}

func (badThrift) DataType(context.Context, *thriftgen.DataTypeRequest) (*thriftgen.DataTypeResponse, error) {
	return &thriftgen.DataTypeResponse{Auth: &thriftgen.AuthReply{Token: "t"}, CodeId: 7}, nil
}

func badServers(t *testing.T) map[string]string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	pb.RegisterDataServer(gs, badItems{})
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)

	sock, err := thrift.NewTServerSocket("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := sock.Listen(); err != nil {
		t.Fatal(err)
	}
	ts := thrift.NewTSimpleServer4(thriftgen.NewDataProcessor(badThrift{}), sock,
		thrift.NewTFramedTransportFactoryConf(thrift.NewTTransportFactory(), nil), thrift.NewTBinaryProtocolFactoryConf(nil))
	go ts.Serve()
	t.Cleanup(func() { ts.Stop() })

	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Token", "t")
		if r.URL.Path == "/v1/datalist" {
			io.WriteString(w, `{"code":0,"message":"ok","auth":{"token":"t"},"n":3,"items":[{},{}]}`)
			return
		}
		io.WriteString(w, `{"code":0,"message":"ok","auth":{"token":"t"},"codeId":7,"cnName":"x"}`)
	}))
	t.Cleanup(hs.Close)
	return map[string]string{ProtoGRPC: ln.Addr().String(), ProtoThrift: sock.Addr().String(), ProtoHTTP: hs.Listener.Addr().String()}
}

func TestExitCodes(t *testing.T) {
	bad := badServers(t)
	dead := testbed.FreeAddr(t)
	type tc struct {
		name     string
		args     []string
		want     int
		stderrIs string
	}
	var cases []tc
	for _, p := range protos {
		cases = append(cases,
			tc{p + "-verify-items", []string{"-proto", p, "-call", "datalist", "-items", "3", "-n", "10", "-addr", bad[p]}, report.ExitVerify, "verify: length: " + p},
			tc{p + "-verify-items-text", []string{"-proto", p, "-call", "datalist", "-items", "3", "-n", "10", "-addr", bad[p]}, report.ExitVerify, "got 2 items; want 3"},
			tc{p + "-verify-code", []string{"-proto", p, "-call", "datatype", "-n", "10", "-addr", bad[p]}, report.ExitVerify, "got codeId 7; want 101"},
			tc{p + "-unreachable", []string{"-proto", p, "-call", "datatype", "-c", "2", "-n", "10", "-timeout", "2s", "-addr", dead}, report.ExitUnreachable, "verify: connect: cannot reach"},
		)
	}
	cases = append(cases,
		tc{"no-proto", []string{"-call", "datatype", "-n", "1", "-addr", dead}, report.ExitUsage, "-proto"},
		tc{"bad-proto", []string{"-proto", "ice", "-call", "datatype", "-n", "1", "-addr", dead}, report.ExitUsage, "-proto"},
		tc{"bad-call", []string{"-proto", "grpc", "-call", "datasets", "-n", "1", "-addr", dead}, report.ExitUsage, "-call"},
		tc{"items-too-many", []string{"-proto", "grpc", "-call", "datalist", "-items", "100001", "-n", "1", "-addr", dead}, report.ExitUsage, "-items"},
		tc{"items-on-datatype", []string{"-proto", "grpc", "-call", "datatype", "-items", "2", "-n", "1", "-addr", dead}, report.ExitUsage, "-items"},
		tc{"no-n-no-t", []string{"-proto", "grpc", "-call", "datatype", "-addr", dead}, report.ExitUsage, "-n"},
		tc{"c-above-n", []string{"-proto", "grpc", "-call", "datatype", "-c", "5", "-n", "2", "-addr", dead}, report.ExitUsage, "greater than -n"},
		tc{"c-zero", []string{"-proto", "grpc", "-call", "datatype", "-c", "0", "-n", "2", "-addr", dead}, report.ExitUsage, "-c"},
		tc{"conns-above-c", []string{"-proto", "grpc", "-call", "datatype", "-c", "2", "-conns", "3", "-n", "2", "-addr", dead}, report.ExitUsage, "-conns"},
		tc{"conns-zero", []string{"-proto", "grpc", "-call", "datatype", "-c", "2", "-conns", "-1", "-n", "2", "-addr", dead}, report.ExitUsage, "-conns"},
		tc{"http-conns-below-c", []string{"-proto", "http", "-call", "datatype", "-c", "2", "-conns", "1", "-n", "2", "-addr", dead}, report.ExitUsage, "want -conns = -c"},
		tc{"thrift-conns-below-c", []string{"-proto", "thrift", "-call", "datatype", "-c", "4", "-conns", "2", "-n", "4", "-addr", dead}, report.ExitUsage, "want -conns = -c"},
		tc{"bad-check", []string{"-proto", "grpc", "-call", "datatype", "-n", "1", "-check", "bytes", "-addr", dead}, report.ExitUsage, "-check"},
		tc{"bad-warmup", []string{"-proto", "grpc", "-call", "datatype", "-n", "1", "-warmup", "later", "-addr", dead}, report.ExitUsage, "or auto"},
		tc{"warmup-max-negative", []string{"-proto", "grpc", "-call", "datatype", "-n", "1", "-warmup", "auto", "-warmup-max", "-1", "-addr", dead}, report.ExitUsage, "-warmup-max"},
		tc{"usage-on-stderr", []string{"-proto", "grpc", "-bogus"}, report.ExitUsage, "exit codes:"},
		tc{"bad-duration", []string{"-proto", "grpc", "-call", "datatype", "-t", "soon", "-addr", dead}, report.ExitUsage, "duration"},
		tc{"negative-rate", []string{"-proto", "grpc", "-call", "datatype", "-n", "1", "-rate", "-1", "-addr", dead}, report.ExitUsage, "-rate"},
		tc{"no-addr", []string{"-proto", "grpc", "-call", "datatype", "-n", "1"}, report.ExitUsage, "-addr"},
		tc{"addr-no-port", []string{"-proto", "grpc", "-call", "datatype", "-n", "1", "-addr", "localhost"}, report.ExitUsage, "-addr"},
		tc{"unknown-flag", []string{"-proto", "grpc", "-bogus"}, report.ExitUsage, "bogus"},
		tc{"extra-arg", []string{"-proto", "grpc", "-call", "datatype", "-n", "1", "-addr", dead, "extra"}, report.ExitUsage, "unexpected"},
		tc{"bad-thrift-transport", []string{"-proto", "thrift", "-call", "datatype", "-n", "1", "-thrift-transport", "zlib", "-addr", dead}, report.ExitUsage, "-thrift-transport"},
		tc{"help", []string{"-h"}, report.ExitOK, ""},
		tc{"help-long", []string{"-help"}, report.ExitOK, ""},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			got := testbed.Within(t, 30*time.Second, func() int { return Main(c.args, &stdout, &stderr) })
			if got != c.want {
				t.Errorf("exit = %d; want %d (stderr: %s)", got, c.want, stderr.String())
			}
			if c.want != report.ExitOK && stdout.Len() > 0 {
				t.Errorf("stdout = %q; want no report", stdout.String())
			}
			if c.want == report.ExitOK && (!strings.Contains(stdout.String(), "exit codes:") || stderr.Len() > 0) {
				t.Errorf("-h: stdout %q, stderr %q; want the usage on stdout only", stdout.String(), stderr.String())
			}
			if !strings.Contains(stderr.String(), c.stderrIs) {
				t.Errorf("stderr = %q; want it to mention %q", stderr.String(), c.stderrIs)
			}
		})
	}
}

// TestServerDies kills the connection to the server mid-run: the run must end
// (bounded, well before its -t) and still print its report with the failures.
func TestServerDies(t *testing.T) {
	addrs := goServer(t)
	for _, p := range protos {
		t.Run(p, func(t *testing.T) {
			px := testbed.StartProxy(t, addrs[p])
			args := []string{"-proto", p, "-call", "datatype", "-c", "4", "-t", "60s", "-timeout", "2s", "-k", "-addr", px.Addr()}
			var stdout, stderr bytes.Buffer
			px.KillAfter(64 << 10)
			code := testbed.Within(t, 45*time.Second, func() int { return Main(args, &stdout, &stderr) })
			if code != report.ExitOK {
				t.Fatalf("exit = %d; want 0 (stderr: %s)", code, stderr.String())
			}
			rep := stdout.String()
			if !strings.Contains(rep, "Failed requests:") || strings.Contains(rep, "Failed requests:        0\n") {
				t.Errorf("report shows no failures:\n%s", rep)
			}
			if !strings.Contains(rep, "   (Connect: ") {
				t.Errorf("report lacks the failure breakdown:\n%s", rep)
			}
			if !strings.Contains(stderr.String(), "ending the run") {
				t.Errorf("stderr = %q; want the reason the run ended", stderr.String())
			}
		})
	}
}

func TestOpenLoop(t *testing.T) {
	addrs := goServer(t)
	for _, p := range protos {
		t.Run(p, func(t *testing.T) {
			cfg := Config{Proto: p, Call: CallDataType, Concurrency: 4, Rate: 200, Duration: time.Second, Warmup: 200 * time.Millisecond, KeepAlive: true, Addr: addrs[p]}
			res, err := Run(context.Background(), cfg, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			rep := res.Report()
			if rep.Rpcbed.Loop != "open" || rep.Rpcbed.TargetRate != 200 {
				t.Errorf("loop %q rate %d; want open 200", rep.Rpcbed.Loop, rep.Rpcbed.TargetRate)
			}
			// Sanity only: the schedule allows at most rate * duration calls (plus
			// one per caller at the edge); a loaded test machine may fall behind.
			if res.Complete < 50 || res.Complete > 200+4 {
				t.Errorf("complete = %d; want about 200 (50..204)", res.Complete)
			}
			if res.Failed != 0 {
				t.Errorf("failed = %d (%v); want 0", res.Failed, res.Errors())
			}
			if res.WarmupCalls == 0 {
				t.Errorf("warm-up calls = 0; want > 0")
			}
		})
	}
}

func TestOpenLoopCount(t *testing.T) {
	addrs := goServer(t)
	cfg := Config{Proto: ProtoGRPC, Call: CallDataList, Items: 5, Concurrency: 3, Rate: 500, Requests: 100, Addr: addrs[ProtoGRPC]}
	res, err := Run(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete != 100 {
		t.Errorf("complete = %d; want 100", res.Complete)
	}
}

// TestJSON checks -json writes the same report the text carries.
func TestJSON(t *testing.T) {
	addrs := goServer(t)
	file := filepath.Join(t.TempDir(), "r.json")
	var stdout bytes.Buffer
	code := Main([]string{"-proto", "grpc", "-call", "datalist", "-items", "20", "-c", "2", "-n", "40", "-addr", addrs[ProtoGRPC], "-json", file}, &stdout, io.Discard)
	if code != 0 {
		t.Fatalf("exit = %d; want 0", code)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Complete != 40 || rep.Rpcbed == nil || rep.Rpcbed.Items != 20 || rep.DocumentPath != "/rpcbed.data.Data/DataList?n=20" {
		t.Errorf("json report = %+v; want 40 calls of DataList?n=20", rep)
	}
}

func TestParseSeconds(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{"30", 30 * time.Second, false},
		{"1.5", 1500 * time.Millisecond, false},
		{"250ms", 250 * time.Millisecond, false},
		{"2m", 2 * time.Minute, false},
		{"-1", 0, true},
		{"-1s", 0, true},
		{"25h", 0, true},
		{"NaN", 0, true},
		{"soon", 0, true},
		{"", 0, true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := parseSeconds(c.in)
			if (err != nil) != c.bad {
				t.Fatalf("parseSeconds(%q) error = %v; want error %v", c.in, err, c.bad)
			}
			if got != c.want {
				t.Errorf("parseSeconds(%q) = %v; want %v", c.in, got, c.want)
			}
		})
	}
}

func FuzzParseSeconds(f *testing.F) {
	for _, s := range []string{"30", "1.5", "250ms", "-1", "1e9", "NaN", "Inf", "9223372036854775807ns"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseSeconds(s)
		if err == nil && (d < 0 || d > 24*time.Hour) {
			t.Errorf("parseSeconds(%q) = %v; want 0..24h or an error", s, d)
		}
	})
}

// FuzzParseArgs: no command line panics; an accepted one is valid.
func FuzzParseArgs(f *testing.F) {
	f.Add("-proto grpc -call datalist -items 200 -c 50 -n 1000 -addr 127.0.0.1:50051")
	f.Add("-proto http -call datatype -c 5 -t 10 -k -conns 2 -rate 100 -addr [::1]:80")
	f.Add("-proto thrift -call datatype -n 1 -thrift-protocol compact -addr h:1")
	f.Add("-proto grpc -call datatype -n 1 -start-at 1767225600.25 -addr h:1")
	f.Fuzz(func(t *testing.T, line string) {
		cfg, err := ParseArgs(strings.Fields(line))
		if err != nil {
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("ParseArgs accepted %q, but Validate says %v", line, err)
		}
		if cfg.Conns < 1 || cfg.Conns > cfg.Concurrency {
			t.Errorf("ParseArgs(%q): conns %d; want 1..%d", line, cfg.Conns, cfg.Concurrency)
		}
		if !cfg.StartAt.IsZero() && (cfg.StartAt.UnixMicro() <= 0 || time.Until(cfg.StartAt) > maxStartAhead) {
			t.Errorf("ParseArgs(%q): start-at %v; want after 1970 and within %v", line, cfg.StartAt, maxStartAhead)
		}
	})
}

// hangAfter answers its first n calls of either kind, then never answers (until
// the test ends): every later call must end by the per-call deadline, as a
// timeout.
type hangAfter struct {
	pb.UnimplementedDataServer
	n    *atomic.Int64
	stop chan struct{}
}

func (h hangAfter) wait(ctx context.Context) {
	if h.n.Add(-1) < 0 {
		select {
		case <-ctx.Done():
		case <-h.stop:
		}
	}
}

func (h hangAfter) DataType(ctx context.Context, _ *pb.DataTypeRequest) (*pb.DataTypeResponse, error) {
	h.wait(ctx)
	return &pb.DataTypeResponse{Auth: &pb.AuthReply{Token: "t"}, CodeId: WantCode}, nil
}

type hangThrift struct{ hangAfter }

func (h hangThrift) DataType(ctx context.Context, _ *thriftgen.DataTypeRequest) (*thriftgen.DataTypeResponse, error) {
	h.wait(ctx)
	return &thriftgen.DataTypeResponse{Auth: &thriftgen.AuthReply{Token: "t"}, CodeId: WantCode}, nil
}

func (h hangThrift) DataList(ctx context.Context, _ *thriftgen.DataListRequest) (*thriftgen.DataListResponse, error) {
	return nil, &thriftgen.DataError{Code: 13, Message: "not here"}
}

func TestTimeouts(t *testing.T) {
	const answered = 5 // verify + priming + a few
	h := hangAfter{n: new(atomic.Int64), stop: make(chan struct{})}
	t.Cleanup(func() { close(h.stop) })
	addrs := map[string]string{}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	pb.RegisterDataServer(gs, h)
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	addrs[ProtoGRPC] = ln.Addr().String()

	sock, err := thrift.NewTServerSocket("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := sock.Listen(); err != nil {
		t.Fatal(err)
	}
	ts := thrift.NewTSimpleServer4(thriftgen.NewDataProcessor(hangThrift{h}), sock,
		thrift.NewTFramedTransportFactoryConf(thrift.NewTTransportFactory(), nil), thrift.NewTBinaryProtocolFactoryConf(nil))
	go ts.Serve()
	t.Cleanup(func() { sock.Interrupt() })
	addrs[ProtoThrift] = sock.Addr().String()

	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.wait(r.Context())
		w.Header().Set("X-Token", "t")
		io.WriteString(w, `{"code":0,"message":"ok","auth":{"token":"t"},"codeId":101,"cnName":"x"}`)
	}))
	t.Cleanup(hs.Close)
	addrs[ProtoHTTP] = hs.Listener.Addr().String()

	for _, p := range protos {
		t.Run(p, func(t *testing.T) {
			h.n.Store(answered)
			cfg := Config{Proto: p, Call: CallDataType, Concurrency: 2, Duration: 30 * time.Second, Timeout: 300 * time.Millisecond, KeepAlive: true, Addr: addrs[p]}
			res := testbed.Within(t, 25*time.Second, func() *Result {
				res, err := Run(context.Background(), cfg, io.Discard)
				if err != nil {
					t.Errorf("Run: %v", err)
				}
				return res
			})
			if res == nil {
				return
			}
			if res.ByKind[kindTimeout] == 0 {
				t.Errorf("timeouts = 0 (errors %v); want > 0", res.Errors())
			}
			if res.Aborted == "" {
				t.Errorf("the run against a hung server was not ended early")
			}
		})
	}
}

// FuzzCheckJSON: a server's body never panics the verify check, and what it
// accepts has a token and the right content.
func FuzzCheckJSON(f *testing.F) {
	f.Add([]byte(`{"code":0,"message":"ok","auth":{"token":"t"},"codeId":101,"cnName":"x"}`), false, 0)
	f.Add([]byte(`{"code":0,"auth":{"token":"t"},"n":2,"items":[{"id":1},{"id":2}]}`), true, 2)
	f.Add([]byte(`{"items":null}`), true, 0)
	f.Fuzz(func(t *testing.T, body []byte, dataList bool, items int) {
		if checkJSON(body, dataList, items) != nil {
			return
		}
		var b struct {
			Auth struct {
				Token string `json:"token"`
			} `json:"auth"`
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(body, &b); err != nil || b.Auth.Token == "" {
			t.Errorf("checkJSON accepted %q: no token (%v)", body, err)
		}
		if dataList && len(b.Items) != items {
			t.Errorf("checkJSON accepted %q: %d items; want %d", body, len(b.Items), items)
		}
	})
}

func TestThriftVariants(t *testing.T) {
	for _, tr := range []string{"framed", "buffered"} {
		for _, pr := range []string{"binary", "compact"} {
			t.Run(tr+"-"+pr, func(t *testing.T) {
				addr := goServerThrift(t, tr, pr)[ProtoThrift]
				args := []string{"-proto", "thrift", "-call", "datalist", "-items", "3", "-c", "2", "-n", "20", "-thrift-transport", tr, "-thrift-protocol", pr, "-addr", addr}
				var stdout, stderr bytes.Buffer
				if code := Main(args, &stdout, &stderr); code != report.ExitOK {
					t.Fatalf("exit = %d; want 0 (stderr: %s)", code, stderr.String())
				}
				if !strings.Contains(stdout.String(), "Failed requests:        0\n") {
					t.Errorf("report shows failures:\n%s", stdout.String())
				}
				other := map[string]string{"framed": "buffered", "buffered": "framed"}[tr]
				args = []string{"-proto", "thrift", "-call", "datatype", "-n", "1", "-timeout", "2s", "-thrift-transport", other, "-thrift-protocol", pr, "-addr", addr}
				stderr.Reset()
				code := testbed.Within(t, 20*time.Second, func() int { return Main(args, io.Discard, &stderr) })
				if code != report.ExitVerify && code != report.ExitUnreachable {
					t.Errorf("-thrift-transport %s against a %s server: exit = %d; want 3 (stderr: %s)", other, tr, code, stderr.String())
				}
			})
		}
	}
}
