// Package phpclient_test runs the PHP load client (php-client/bin/client.php) for
// every protocol x call against real servers and reads its report with the Go
// parser: the PHP client's side of the report contract.
//
// It skips when php or grpc.so (php-client/build-ext.sh) is missing, unless
// RPCBED_REQUIRE contains "php" (CI sets it); then it fails. The Ice cells need the
// Java Ice baseline (java-client/target/java-client.jar) and skip without it,
// unless RPCBED_REQUIRE contains "ice", or both "php" and "java".
package phpclient_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/report"
)

func requires(words ...string) bool {
	req := os.Getenv("RPCBED_REQUIRE")
	for _, w := range words {
		if !strings.Contains(req, w) {
			return false
		}
	}
	return true
}

// missing skips the test, or fails it when the environment promises the piece.
func missing(t *testing.T, required bool, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if required {
		t.Fatalf("%s (RPCBED_REQUIRE=%q)", msg, os.Getenv("RPCBED_REQUIRE"))
	}
	t.Skip(msg)
}

var listening = regexp.MustCompile(`listening proto=(\w+) addr=(\S+)`)

// startServer runs a server that prints "listening proto=P addr=A" on stderr once
// per listener, and returns proto -> addr when all want protocols are up.
func startServer(t *testing.T, want []string, name string, args ...string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, name, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", name, err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		wg.Wait()
	})

	addrs := make(chan [2]string)
	var logMu sync.Mutex
	var log bytes.Buffer
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(addrs)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logMu.Lock()
			log.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				addrs <- [2]string{m[1], m[2]}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()

	got := map[string]string{}
	timeout := time.After(90 * time.Second)
	for len(got) < len(want) {
		select {
		case a, ok := <-addrs:
			if !ok {
				logMu.Lock()
				defer logMu.Unlock()
				t.Fatalf("%s exited before listening on %v:\n%s", name, want, log.String())
			}
			got[a[0]] = a[1]
		case <-timeout:
			logMu.Lock()
			defer logMu.Unlock()
			t.Fatalf("%s did not listen on %v within 90s:\n%s", name, want, log.String())
		}
	}
	// Keep draining stderr so the server never blocks on a full pipe.
	go func() {
		for range addrs {
		}
	}()
	return got
}

func TestPHPClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the PHP client runs real processes")
	}
	req := requires("php")
	php, err := exec.LookPath("php")
	if err != nil {
		missing(t, req, "php is not installed: apt-get install php-cli php-curl php-google-protobuf php-thrift php-zeroc-ice (make setup-php)")
	}
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(here)
	grpcExt := os.Getenv("RPCBED_GRPC_EXT")
	if grpcExt == "" {
		grpcExt = filepath.Join(here, "ext", "build", "grpc.so")
	}
	if _, err := os.Stat(grpcExt); err != nil {
		missing(t, req, "%s is missing: run php-client/build-ext.sh (make setup-php)", grpcExt)
	}
	pbExt := os.Getenv("RPCBED_PROTOBUF_EXT")
	if pbExt == "" {
		pbExt = filepath.Join(here, "ext", "build", "protobuf.so")
	}
	if _, err := os.Stat(pbExt); err != nil {
		missing(t, req, "%s is missing: run php-client/build-ext.sh (make setup-php)", pbExt)
	}

	bin := filepath.Join(t.TempDir(), "go-server")
	build := exec.Command("go", "build", "-o", bin, "./go-server")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./go-server: %v\n%s", err, out)
	}
	addrs := startServer(t, []string{"grpc", "thrift", "http"}, bin,
		"-grpc", "127.0.0.1:0", "-thrift", "127.0.0.1:0", "-http", "127.0.0.1:0")

	jar := filepath.Join(root, "java-client", "target", "java-client.jar")
	iceReason := ""
	if _, err := os.Stat(jar); err != nil {
		iceReason = fmt.Sprintf("the Ice cells need the Java Ice baseline server: %s is missing (build java-client first)", jar)
	} else if java, err := exec.LookPath("java"); err != nil {
		iceReason = "the Ice cells need java to run " + jar
	} else {
		ice := startServer(t, []string{"ice"}, java, "-jar", jar, "serve", "-proto", "ice", "-port", "0")
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
				args := []string{"-n", filepath.Join(here, "bin", "client.php"), "-runtime", rt,
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
						missing(t, requires("ice") || requires("php", "java"), "%s", iceReason)
					}
					args = append(args, "-addr", addrs[proto])
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
					defer cancel()
					cmd := exec.CommandContext(ctx, php, args...)
					cmd.Env = append(os.Environ(), "RPCBED_GRPC_EXT="+grpcExt)
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
