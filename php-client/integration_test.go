// Package phpclient_test runs the PHP load client (php-client/bin/client.php) for
// every protocol x call against real servers and reads its report with the Go
// parser: the PHP client's side of the report contract.
//
// It skips when php or its extensions (grpc.so, protobuf.so: php-client/build-ext.sh)
// are missing, unless RPCBED_REQUIRE contains "php" (CI sets it); then it fails
// (internal/testbed). The Ice cells need the
// Java Ice baseline (java-client/target/java-client.jar) and skip without it,
// unless RPCBED_REQUIRE contains "ice", or both "php" and "java".
package phpclient_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/fakeserver"
	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/testbed"
)

func TestPHPClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the PHP client runs real processes")
	}
	php := testbed.NeedPHP(t)
	addrs := testbed.GoServer(t)

	iceReason := ""
	if java, why := testbed.FindJava(t); why != "" {
		iceReason = "the Ice cells need the Java Ice baseline server: " + why
	} else {
		_, ice := testbed.JavaBaseline(t, java, "ice")
		addrs["ice"] = ice["ice"]
	}

	// What decodes, per runtime (docs/report-format.md Runtime, Versions): c loads
	// the protobuf C extension and the Thrift accelerator, pure neither.
	runtimeVersions := map[string]map[string][]string{
		"c":    {"grpc": {"protobuf-c"}, "thrift": {"thrift_protocol"}},
		"pure": {"grpc": {"protobuf-php"}, "thrift": nil},
	}
	unwanted := map[string]map[string][]string{
		"c":    {"grpc": {"protobuf-php"}},
		"pure": {"grpc": {"protobuf-c"}, "thrift": {"thrift_protocol"}},
	}
	const n = 50
	for _, rt := range []string{"c", "pure"} {
		for _, proto := range []string{"grpc", "thrift", "http", "ice"} {
			for _, call := range []string{"datatype", "datalist"} {
				args := []string{"-runtime", rt,
					"-proto", proto, "-call", call, "-c", "2", "-n", fmt.Sprint(n), "-warmup", "0.1", "-k",
					"-timeout", "10s"}
				client := "php"
				if rt == "pure" {
					client = "php-pure"
				}
				name := fmt.Sprintf("%s-%s-%s-c2", client, proto, call)
				if call == "datalist" {
					args = append(args, "-items", "20")
					name = fmt.Sprintf("%s-%s-%s-20-c2", client, proto, call)
				}
				t.Run(name, func(t *testing.T) {
					if proto == "ice" && iceReason != "" {
						testbed.Missing(t, testbed.Required("ice") || testbed.Required("php", "java"), "%s", iceReason)
					}
					args = append(args, "-addr", addrs[proto])
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
					defer cancel()
					line := php.Command(args...)
					cmd := exec.CommandContext(ctx, line[0], line[1:]...)
					cmd.Env = append(os.Environ(), php.Env()...)
					var stdout, stderr bytes.Buffer
					cmd.Stdout, cmd.Stderr = &stdout, &stderr
					if err := cmd.Run(); err != nil {
						t.Fatalf("php %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr.String())
					}
					r, err := report.Parse(&stdout)
					if err != nil {
						t.Fatalf("report.Parse: %v\nstdout:\n%s", err, stdout.String())
					}
					if r.Complete != n {
						t.Errorf("complete = %d; want %d", r.Complete, n)
					}
					if r.Failed != 0 {
						t.Errorf("failed = %d (%+v); want 0\nstderr:\n%s", r.Failed, r.FailedBy, stderr.String())
					}
					if r.Rpcbed == nil {
						t.Fatal("no rpcbed block")
					}
					x := r.Rpcbed
					if x.Client != "php" || x.Protocol != proto || x.Call != call {
						t.Errorf("client/protocol/call = %s/%s/%s; want php/%s/%s", x.Client, x.Protocol, x.Call, proto, call)
					}
					if r.DocumentLength <= 0 {
						t.Errorf("document length = %d; want > 0", r.DocumentLength)
					}
					if x.Runtime != "" && x.Runtime != rt {
						t.Errorf("Runtime = %q; want %q", x.Runtime, rt)
					}
					for _, k := range runtimeVersions[rt][proto] {
						if x.Versions[k] == "" {
							t.Errorf("Versions %v: no %s; want it with -runtime %s", x.Versions, k, rt)
						}
					}
					for _, k := range unwanted[rt][proto] {
						if x.Versions[k] != "" {
							t.Errorf("Versions %v: %s=%s; want none with -runtime %s", x.Versions, k, x.Versions[k], rt)
						}
					}
				})
			}
		}
	}
}

// TestPHPWorker drives `php-client worker` as the driver does (docs/report-format.md,
// "Worker mode"): runs of three protocols in one process, a bad command, a verify
// failure, then EOF on stdin, which is quit.
func TestPHPWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the PHP client runs real processes")
	}
	php := testbed.NeedPHP(t)
	addrs := testbed.GoServer(t)
	// A server that answers, but wrongly: DataType's codeId is not 101.
	wrong := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"code":0,"auth":{"token":"t"},"codeId":100,"cnName":"x","items":[]}`)
	}))
	defer wrong.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	line := php.Command("worker")
	cmd := exec.CommandContext(ctx, line[0], line[1:]...)
	cmd.Env = append(os.Environ(), php.Env()...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr testbed.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	// next reads stdout up to the next worker line and returns it with the report before it.
	next := func() (string, string) {
		t.Helper()
		var rep strings.Builder
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("worker stdout closed; stderr:\n%s", stderr.String())
				}
				if strings.HasPrefix(l, "#rpcbed-worker ") {
					return l, rep.String()
				}
				rep.WriteString(l + "\n")
			case <-ctx.Done():
				t.Fatalf("no worker line in time; stderr:\n%s", stderr.String())
			}
		}
	}
	if l, _ := next(); !regexp.MustCompile(`^#rpcbed-worker ready php \d+$`).MatchString(l) {
		t.Fatalf("first line = %q; want #rpcbed-worker ready php PID", l)
	}
	send := func(fields ...string) {
		t.Helper()
		if _, err := io.WriteString(stdin, strings.Join(fields, "\t")+"\n"); err != nil {
			t.Fatal(err)
		}
	}

	for _, proto := range []string{"grpc", "thrift", "http"} {
		id := "r-" + proto
		send("run", id, "-proto", proto, "-call", "datalist", "-items", "20", "-c", "2", "-n", "30", "-k",
			"-warmup", "auto", "-warmup-max", "2s", "-addr", addrs[proto])
		done, rep := next()
		if want := "#rpcbed-worker done " + id + " exit=0"; done != want {
			t.Fatalf("%s: got %q; want %q\nstderr:\n%s", id, done, want, stderr.String())
		}
		r, err := report.Parse(strings.NewReader(rep))
		if err != nil {
			t.Fatalf("%s: report.Parse: %v\n%s", id, err, rep)
		}
		x := r.Rpcbed
		if r.Complete != 30 || r.Failed != 0 || x.Protocol != proto {
			t.Errorf("%s: complete/failed/protocol = %d/%d/%s; want 30/0/%s", id, r.Complete, r.Failed, x.Protocol, proto)
		}
		if x.Check != "full" || x.CPUScope != "window" || x.Runtime != "c" {
			t.Errorf("%s: check/cpu scope/runtime = %s/%s/%s; want full/window/c", id, x.Check, x.CPUScope, x.Runtime)
		}
		if x.WarmupSettled != "yes" && x.WarmupSettled != "no" {
			t.Errorf("%s: warm-up settled = %q; want yes or no (-warmup auto)", id, x.WarmupSettled)
		}
		if !(x.WindowEnd > x.WindowStart && x.WindowStart > 1e9) {
			t.Errorf("%s: window = %f..%f; want Unix seconds, start < end", id, x.WindowStart, x.WindowEnd)
		}
	}

	send("frobnicate")
	if done, rep := next(); done != "#rpcbed-worker done - exit=2" || rep != "" {
		t.Errorf("bad command: got %q (report %q); want #rpcbed-worker done - exit=2 and no report", done, rep)
	}
	send("run", "v1", "-proto", "http", "-call", "datatype", "-n", "3", "-addr", strings.TrimPrefix(wrong.URL, "http://"))
	if done, rep := next(); done != "#rpcbed-worker done v1 exit=3" || rep != "" {
		t.Errorf("verify failure: got %q (report %q); want #rpcbed-worker done v1 exit=3 and no report", done, rep)
	}

	// EOF is quit.
	stdin.Close()
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("worker after EOF: %v; want exit 0\nstderr:\n%s", err, stderr.String())
	}
	// stderr is copied by exec's goroutine: it is whole only once Wait returned
	// (a marker written just after a done line may not have arrived before).
	if !strings.Contains(stderr.String(), "verify: length: DataType: got codeId 100; want 101") {
		t.Errorf("stderr has no verify line:\n%s", stderr.String())
	}
	for _, id := range []string{"r-grpc", "r-thrift", "r-http", "v1"} {
		if !strings.Contains(stderr.String(), "#rpcbed-worker begin "+id+"\n") || !strings.Contains(stderr.String(), "#rpcbed-worker end "+id+"\n") {
			t.Errorf("stderr lacks the begin/end markers of %s", id)
		}
	}
}

// TestPHPVerifyKinds runs php-client against a server that answers what each row
// says (internal/fakeserver) and checks the exit code and the verify line's kind
// (docs/report-format.md): a declared error is never connect or timeout, whatever
// its code, on every protocol.
func TestPHPVerifyKinds(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the PHP client runs real processes")
	}
	php := testbed.NeedPHP(t)
	rows := []struct {
		name string
		b    fakeserver.Behaviour
		exit int
		kind string
	}{
		{"declared unavailable (14)", fakeserver.Declare(14), 3, "exceptions"},
		{"declared deadline exceeded (4)", fakeserver.Declare(4), 3, "exceptions"},
		{"rejects the token (16)", fakeserver.Declare(16), 3, "unauthenticated"},
		{"invalid argument (3)", fakeserver.Declare(3), 3, "invalid_argument"},
		{"internal (13)", fakeserver.Declare(13), 3, "exceptions"},
		{"wrong answer", fakeserver.WrongCount, 3, "length"},
	}
	for _, row := range rows {
		addrs := fakeserver.Start(t, row.b)
		for _, proto := range []string{"grpc", "thrift", "http"} {
			t.Run(proto+"/"+row.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				line := php.Command("-proto", proto, "-call", "datalist", "-items", "3", "-n", "3", "-timeout", "5s", "-addr", addrs[proto])
				cmd := exec.CommandContext(ctx, line[0], line[1:]...)
				cmd.Env = append(os.Environ(), php.Env()...)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				code := 0
				if e, ok := err.(*exec.ExitError); ok {
					code = e.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				if code != row.exit {
					t.Errorf("exit code = %d; want %d\nstderr:\n%s", code, row.exit, stderr.String())
				}
				if want := "verify: " + row.kind + ": "; !strings.Contains(stderr.String(), "\n"+want) && !strings.HasPrefix(stderr.String(), want) {
					t.Errorf("stderr has no %q line:\n%s", want, stderr.String())
				}
				if stdout.Len() != 0 {
					t.Errorf("stdout = %q; want no report", stdout.String())
				}
			})
		}
	}
}
