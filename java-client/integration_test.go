// Package javaclient_test runs the Java client (java-client/target/java-client.jar)
// the way the matrix does: gRPC, Thrift and HTTP against go-server, Ice and Dubbo
// against the jar's own baseline servers, every report read by the Go parser. It
// skips without java or the jar (make setup-java), unless RPCBED_REQUIRE names java
// (internal/testbed).
package javaclient_test

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/testbed"
)

// javaClient runs the jar's bench mode and returns its exit code, stdout and stderr.
func javaClient(t *testing.T, j testbed.Java, args ...string) (int, []byte, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	line := j.Command(args...)
	cmd := exec.CommandContext(ctx, line[0], line[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("java-client %v: %v", args, err)
	}
	return code, stdout.Bytes(), stderr.String()
}

func TestJavaClient(t *testing.T) {
	java := testbed.NeedJava(t)
	addrs := testbed.GoServer(t)
	for _, p := range []string{"ice", "dubbo"} {
		_, a := testbed.JavaBaseline(t, java, p)
		addrs[p] = a[p]
	}
	tests := []struct {
		name   string
		proto  string
		call   string
		items  int
		server string // ab's Server Software the client should report
		rate   int    // -rate: open loop when above 0
	}{
		{"grpc-datatype-go", "grpc", "datatype", 0, "", 0},
		{"grpc-datalist-200-go", "grpc", "datalist", 200, "", 0},
		{"thrift-datatype-go", "thrift", "datatype", 0, "", 0},
		{"thrift-datalist-200-go", "thrift", "datalist", 200, "", 0},
		{"http-datatype-go", "http", "datatype", 0, "", 0},
		{"http-datalist-200-go", "http", "datalist", 200, "", 0},
		{"ice-datatype-java", "ice", "datatype", 0, "rpcbed-java-ice", 0},
		{"ice-datalist-200-java", "ice", "datalist", 200, "rpcbed-java-ice", 0},
		{"dubbo-datatype-java", "dubbo", "datatype", 0, "rpcbed-java-dubbo", 0},
		{"dubbo-datalist-200-java", "dubbo", "datalist", 200, "rpcbed-java-dubbo", 0},
		{"grpc-datatype-go-open", "grpc", "datatype", 0, "", 400},
		{"http-datalist-200-go-open", "http", "datalist", 200, "", 400},
		{"dubbo-datatype-java-open", "dubbo", "datatype", 0, "rpcbed-java-dubbo", 400},
	}
	const n = 200
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"-proto", tc.proto, "-call", tc.call, "-c", "4", "-n", "200",
				"-warmup", "0.2", "-addr", addrs[tc.proto]}
			if tc.call == "datalist" {
				args = append(args, "-items", "200")
			}
			if tc.rate > 0 {
				args = append(args, "-rate", strconv.Itoa(tc.rate))
			}
			code, out, stderr := javaClient(t, java, args...)
			if code != 0 {
				t.Fatalf("exit code %d; want 0; stderr:\n%s", code, stderr)
			}
			r, err := report.Parse(bytes.NewReader(out))
			if err != nil {
				t.Fatalf("report.Parse: %v; stdout:\n%s", err, out)
			}
			if r.Complete != n || r.Failed != 0 {
				t.Errorf("complete %d, failed %d; want %d, 0; stderr:\n%s", r.Complete, r.Failed, n, stderr)
			}
			if r.Rpcbed == nil {
				t.Fatal("no rpcbed block")
			}
			x := r.Rpcbed
			if x.Client != "java" || x.Protocol != tc.proto || x.Call != tc.call || x.Items != tc.items {
				t.Errorf("client/protocol/call/items = %s/%s/%s/%d; want java/%s/%s/%d",
					x.Client, x.Protocol, x.Call, x.Items, tc.proto, tc.call, tc.items)
			}
			wantLoop := "closed"
			if tc.rate > 0 {
				wantLoop = "open"
			}
			if x.Loop != wantLoop || x.TargetRate != tc.rate {
				t.Errorf("loop %q, target rate %d; want %q, %d", x.Loop, x.TargetRate, wantLoop, tc.rate)
			}
			// 200 calls at 400/s are due over 0.5 s: the schedule cannot end sooner.
			if tc.rate > 0 && r.TimeTakenSeconds < float64(n-1)/float64(tc.rate) {
				t.Errorf("time taken %.3f s; want at least %.3f s (%d calls at %d/s)", r.TimeTakenSeconds, float64(n-1)/float64(tc.rate), n, tc.rate)
			}
			if tc.server != "" && r.ServerSoftware != tc.server {
				t.Errorf("server software %q; want %q", r.ServerSoftware, tc.server)
			}
			if r.TotalTransferred != n*r.DocumentLength && tc.proto != "http" {
				t.Errorf("total transferred %d; want %d x document length %d", r.TotalTransferred, n, r.DocumentLength)
			}
			if x.Check != report.CheckFull || x.Runtime != "jvm" || x.CPUScope != report.ScopeWindow || x.WarmupSettled != "fixed" {
				t.Errorf("check/runtime/cpu scope/warm-up settled = %s/%s/%s/%s; want full/jvm/window/fixed",
					x.Check, x.Runtime, x.CPUScope, x.WarmupSettled)
			}
			if d := x.WindowEnd - x.WindowStart; d < r.TimeTakenSeconds-0.002 || d > r.TimeTakenSeconds+0.002 {
				t.Errorf("window %.6f .. %.6f (%.6f s); want the time taken, %.3f s", x.WindowStart, x.WindowEnd, d, r.TimeTakenSeconds)
			}
			if x.Versions["java"] == "" {
				t.Errorf("versions %v lack java", x.Versions)
			}
			var buf bytes.Buffer
			if err := report.Write(&buf, r); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), out) {
				t.Errorf("report.Write(Parse(out)) differs from the Java client's layout:\ngot:\n%s\nwant:\n%s", buf.Bytes(), out)
			}
		})
	}
}

func TestJavaClientExitCodes(t *testing.T) {
	java := testbed.NeedJava(t)
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"bad arguments", []string{"-proto", "soap", "-call", "datatype", "-n", "1", "-addr", "127.0.0.1:1"}, 2},
		{"unreachable grpc", []string{"-proto", "grpc", "-call", "datatype", "-n", "1", "-timeout", "3s", "-addr", "127.0.0.1:1"}, 4},
		{"unreachable thrift", []string{"-proto", "thrift", "-call", "datatype", "-n", "1", "-timeout", "3s", "-addr", "127.0.0.1:1"}, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := javaClient(t, java, tc.args...)
			if code != tc.want {
				t.Errorf("exit code %d; want %d; stderr:\n%s", code, tc.want, stderr)
			}
			if len(out) != 0 {
				t.Errorf("stdout %q; want nothing (no report)", out)
			}
		})
	}
}
