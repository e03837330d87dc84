// Package conformance runs go-client, php-client and java-client with one table of
// argument rows and checks that every client gives the same exit code and the same
// error kind (docs/report-format.md: exit codes, error kinds, flags): -h, an
// unknown flag, a bad -proto or value, -conns below -c on thrift/http, an
// unreachable server, one that hangs or resets, a verify failure, a server that
// rejects the token, one that answers an invalid-argument error, one that declares
// UNAVAILABLE or DEADLINE_EXCEEDED (a declared error is never connect or timeout);
// a TLS server whose certificate is from another CA, expired or for another
// name, or that refuses the client's certificate (exit 3, kind certificate, the
// cause named), on gRPC, Thrift and HTTP against go-server and on Ice and Dubbo
// against the Java baselines (for the clients that speak those);
// every client's worker mode; and (merge_test.go) every client's latency
// record, merged across processes and languages. The servers are internal/fakeserver on
// 127.0.0.1:0 and two misbehaving listeners.
//
// go-client is built from this tree. The PHP rows need php and php-client's
// extensions (make setup-php), the Java rows java and java-client's jar (make
// setup-java): they skip with the reason when a piece is missing, unless
// RPCBED_REQUIRE contains "php" or "java"; then they fail.
package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/fakeserver"
	"github.com/rpcbed/rpcbed/internal/testbed"
	"github.com/rpcbed/rpcbed/internal/tlsbed"
)

// row is one command line every client runs, and what every client must answer.
type row struct {
	name string
	args []string // "{ADDR}" is replaced by the row's server address
	addr string   // which server: "" none, "dead", or a fake behaviour's name
	exit int
	kind string // the "verify: KIND: ..." kind on stderr; "" for none
	// only names the clients that speak the row's protocol (nil: every client).
	only []string
}

// javaProtos are served by the Java baselines only; speaks names the clients of each.
var (
	javaProtos = []string{"ice", "dubbo"}
	speaks     = map[string][]string{"ice": {"php", "java"}, "dubbo": {"java"}}
)

const (
	exitOK          = 0
	exitUsage       = 2
	exitVerify      = 3
	exitUnreachable = 4
)

var protos = []string{"grpc", "thrift", "http"}

func rows() []row {
	rs := []row{
		{name: "help", args: []string{"-h"}, exit: exitOK},
		{name: "help-long", args: []string{"-help"}, exit: exitOK},
		{name: "unknown-flag", args: []string{"-proto", "grpc", "-call", "datatype", "-n", "1", "-no-such-flag", "-addr", "{ADDR}"}, addr: "dead", exit: exitUsage},
		{name: "bad-proto", args: []string{"-proto", "soap", "-call", "datatype", "-n", "1", "-addr", "{ADDR}"}, addr: "dead", exit: exitUsage},
		{name: "bad-call", args: []string{"-proto", "grpc", "-call", "datasets", "-n", "1", "-addr", "{ADDR}"}, addr: "dead", exit: exitUsage},
		{name: "no-addr", args: []string{"-proto", "grpc", "-call", "datatype", "-n", "1"}, exit: exitUsage},
		{name: "bad-warmup", args: []string{"-proto", "grpc", "-call", "datatype", "-n", "1", "-warmup", "later", "-addr", "{ADDR}"}, addr: "dead", exit: exitUsage},
		{name: "bad-start-at", args: []string{"-proto", "grpc", "-call", "datatype", "-n", "1", "-start-at", "soon", "-addr", "{ADDR}"}, addr: "dead", exit: exitUsage},
		{name: "start-at-in-ms", args: []string{"-proto", "grpc", "-call", "datatype", "-n", "1", "-start-at", "1767225600000", "-addr", "{ADDR}"}, addr: "dead", exit: exitUsage},
		{name: "zero-callers", args: []string{"-proto", "grpc", "-call", "datatype", "-c", "0", "-n", "1", "-addr", "{ADDR}"}, addr: "dead", exit: exitUsage},
		{name: "items-too-many", args: []string{"-proto", "grpc", "-call", "datalist", "-items", "100001", "-n", "1", "-addr", "{ADDR}"}, addr: "dead", exit: exitUsage},
		{name: "thrift-conns-below-c", args: []string{"-proto", "thrift", "-call", "datatype", "-c", "2", "-conns", "1", "-n", "2", "-addr", "{ADDR}"}, addr: "dead", exit: exitUsage},
		{name: "http-conns-below-c", args: []string{"-proto", "http", "-call", "datatype", "-c", "2", "-conns", "1", "-n", "2", "-addr", "{ADDR}"}, addr: "dead", exit: exitUsage},
	}
	for _, p := range append(protos[:len(protos):len(protos)], javaProtos...) {
		call := func(kind string) []string {
			a := []string{"-proto", p, "-call", "datalist", "-items", "3", "-c", "1", "-n", "5", "-timeout", "5s", "-addr", "{ADDR}"}
			if kind == "datatype" {
				a = []string{"-proto", p, "-call", "datatype", "-c", "1", "-n", "5", "-timeout", "5s", "-addr", "{ADDR}"}
			}
			return a
		}
		tlsCall := append(call("datatype"), "-security", "tls", "-cacert", "{CA}")
		tlsRows := []row{
			{name: p + "-tls-wrong-ca", args: tlsCall, addr: "tls-wrongca", exit: exitVerify, kind: "certificate"},
			{name: p + "-tls-expired", args: tlsCall, addr: "tls-expired", exit: exitVerify, kind: "certificate"},
			{name: p + "-tls-wrong-name", args: tlsCall, addr: "tls-wrongname", exit: exitVerify, kind: "certificate"},
			{name: p + "-mtls-cert-refused", args: append(call("datatype"), "-security", "mtls", "-cacert", "{CA}", "-cert", "{CERT}", "-key", "{KEY}"),
				addr: "mtls", exit: exitVerify, kind: "certificate"},
			{name: p + "-tls-answers", args: tlsCall, addr: "tls", exit: exitOK},
		}
		if slices.Contains(javaProtos, p) {
			// Ice and Dubbo: the certificate rows, against the Java baselines.
			for i := range tlsRows {
				tlsRows[i].only = speaks[p]
			}
			rs = append(rs, tlsRows...)
			continue
		}
		rs = append(rs,
			row{name: p + "-unreachable", args: call("datatype"), addr: "dead", exit: exitUnreachable, kind: "connect"},
			row{name: p + "-verify-wrong-count", args: call("datalist"), addr: "wrong", exit: exitVerify, kind: "length"},
			row{name: p + "-verify-wrong-code", args: call("datatype"), addr: "wrong", exit: exitVerify, kind: "length"},
			row{name: p + "-token-rejected", args: call("datatype"), addr: "unauthenticated", exit: exitVerify, kind: "unauthenticated"},
			row{name: p + "-invalid-argument", args: call("datalist"), addr: "invalid", exit: exitVerify, kind: "invalid_argument"},
			row{name: p + "-declared-unavailable", args: call("datatype"), addr: "unavailable", exit: exitVerify, kind: "exceptions"},
			row{name: p + "-declared-deadline", args: call("datatype"), addr: "deadline", exit: exitVerify, kind: "exceptions"},
			// A server that accepts and never answers: gRPC never gets its HTTP/2
			// connection (connect), Thrift and HTTP wait out -timeout (timeout).
			row{name: p + "-server-hangs", args: withTimeout(call("datatype"), "1s"), addr: "hang", exit: exitUnreachable,
				kind: map[string]string{"grpc": "connect", "thrift": "timeout", "http": "timeout"}[p]},
			// One that reads the request and resets the connection: for gRPC before
			// the HTTP/2 connection is up (connect), for Thrift and HTTP while the
			// client waits for the reply (receive).
			row{name: p + "-server-resets", args: call("datatype"), addr: "reset", exit: exitUnreachable,
				kind: map[string]string{"grpc": "connect", "thrift": "receive", "http": "receive"}[p]},
		)
		// A certificate the client must refuse, or a client certificate the
		// server refuses: exit 3, kind certificate, the cause on stderr.
		rs = append(rs, tlsRows...)
	}
	return rs
}

// tlsCauses is the cause each certificate row's stderr must name.
var tlsCauses = map[string]string{"tls-wrongca": "unknown CA", "tls-expired": "expired certificate", "tls-wrongname": "wrong name", "mtls": "client certificate refused"}

func withTimeout(args []string, d string) []string {
	out := slices.Clone(args)
	for i := range out {
		if out[i] == "-timeout" {
			out[i+1] = d
		}
	}
	return out
}

// misbehave listens on 127.0.0.1:0 and hands every accepted connection to f until
// the test ends, when the listener and every connection are closed.
func misbehave(t *testing.T, f func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go f(c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// servers starts one fake server per behaviour the rows name, a dead address,
// and go-servers serving TLS with bad certificates; files are the certificate
// files the rows' {CA}, {CERT} and {KEY} stand for; java starts (once, on first
// use) the Java baseline serving an Ice or Dubbo TLS row's certificates.
func servers(t *testing.T) (srv map[string]fakeserver.Addrs, files map[string]string, java func(addr, proto string) string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	s := map[string]fakeserver.Addrs{"dead": {"grpc": dead, "thrift": dead, "http": dead}}
	hang := misbehave(t, func(c net.Conn) { io.Copy(io.Discard, c) }) // reads, never answers
	reset := misbehave(t, func(c net.Conn) {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		c.Read(make([]byte, 4096)) // the request (or the HTTP/2 preface)
		c.(*net.TCPConn).SetLinger(0)
		c.Close() // RST
	})
	s["hang"] = fakeserver.Addrs{"grpc": hang, "thrift": hang, "http": hang}
	s["reset"] = fakeserver.Addrs{"grpc": reset, "thrift": reset, "http": reset}
	for name, b := range map[string]fakeserver.Behaviour{
		"wrong":           fakeserver.WrongCount,
		"unauthenticated": fakeserver.Declare(16),
		"invalid":         fakeserver.Declare(3),
		"unavailable":     fakeserver.Declare(14),
		"deadline":        fakeserver.Declare(4),
	} {
		s[name] = fakeserver.Start(t, b)
	}
	good, bad, err := tlsbed.GenerateBad(t.TempDir(), tlsbed.DefaultHosts)
	if err != nil {
		t.Fatal(err)
	}
	other, err := tlsbed.Generate(t.TempDir(), tlsbed.ECDSA, tlsbed.DefaultHosts)
	if err != nil {
		t.Fatal(err)
	}
	certs := map[string][3]string{
		"tls":           {good.ServerCert, good.ServerKey, ""},
		"tls-wrongca":   {bad.WrongCA[0], bad.WrongCA[1], ""},
		"tls-expired":   {bad.Expired[0], bad.Expired[1], ""},
		"tls-wrongname": {bad.WrongName[0], bad.WrongName[1], ""},
		"mtls":          {good.ServerCert, good.ServerKey, good.CA},
	}
	for name, f := range certs {
		cfg, err := tlsbed.ServerConfig(f[0], f[1], f[2], "1.2")
		if err != nil {
			t.Fatal(err)
		}
		s[name] = testbed.InProcessTLS(t, cfg)
	}
	var mu sync.Mutex
	started := map[string]string{}
	java = func(addr, proto string) string {
		mu.Lock()
		defer mu.Unlock()
		if a, ok := started[addr+" "+proto]; ok {
			return a
		}
		j, why := testbed.FindJava(t)
		if why != "" {
			return "" // the row's client is java or php: neither runs it without the jar
		}
		f := certs[addr]
		args := []string{"-tls-cert", f[0], "-tls-key", f[1], "-tls-min", "1.2"}
		if f[2] != "" {
			args = append(args, "-tls-client-ca", f[2])
		}
		// On the test's t: the server outlives the row that started it.
		_, addrs := testbed.JavaBaseline(t, j, proto, args...)
		started[addr+" "+proto] = addrs[proto]
		return addrs[proto]
	}
	// {CERT} and {KEY}: a client certificate of another CA, which mtls refuses.
	return s, map[string]string{"{CA}": good.CA, "{CERT}": other.ClientCert, "{KEY}": other.ClientKey}, java
}

// client is how to start one load client: the command before the row's args.
type client struct {
	name string
	cmd  []string
	env  []string
	skip string // why this client cannot run here; "" when it can
}

func clients(t *testing.T) []client {
	t.Helper()
	cs := []client{{name: "go", cmd: []string{testbed.Build(t, "./go-client")}}}
	php, why := testbed.FindPHP(t)
	cs = append(cs, client{name: "php", cmd: php.Command(), env: php.Env(), skip: why})
	java, why := testbed.FindJava(t)
	return append(cs, client{name: "java", cmd: java.Command(), skip: why})
}

// verifyLine is the error line docs/report-format.md prescribes for a failed verify.
var verifyLine = regexp.MustCompile(`(?m)^verify: ([a-z_]+): `)

// answer is what one client answered to one row.
type answer struct {
	exit           int
	kind           string
	stdout, stderr string
}

func run(t *testing.T, c client, args []string) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.cmd[0], append(c.cmd[1:len(c.cmd):len(c.cmd)], args...)...)
	cmd.Env = append(os.Environ(), c.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	o := answer{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		o.exit = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s %v: %v", c.name, args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("%s %v: still running after 90s", c.name, args)
	}
	if m := verifyLine.FindStringSubmatch(o.stderr); m != nil {
		o.kind = m[1]
	}
	return o
}

// check says what is wrong with o for r, or "".
func check(r row, o answer) string {
	var bad []string
	if o.exit != r.exit {
		bad = append(bad, fmt.Sprintf("exit %d; want %d", o.exit, r.exit))
	}
	if o.kind != r.kind {
		bad = append(bad, fmt.Sprintf("error kind %q; want %q", o.kind, r.kind))
	}
	switch {
	case r.exit == exitOK && strings.TrimSpace(o.stdout) == "":
		bad = append(bad, "no usage on stdout")
	case r.exit == exitUsage && strings.TrimSpace(o.stderr) == "":
		bad = append(bad, "nothing on stderr")
	case r.exit != exitOK && o.stdout != "":
		bad = append(bad, fmt.Sprintf("stdout %.200q; want nothing (no report)", o.stdout))
	}
	return strings.Join(bad, ", ")
}

func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the conformance test runs every client's process")
	}
	srv, files, java := servers(t)
	rs := rows()
	for _, c := range clients(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // the clients side by side; each client's rows one after another
			if c.skip != "" {
				testbed.Missing(t, testbed.Required(c.name), "%s: the %s rows are not run (RPCBED_REQUIRE=%s makes this a failure)", c.skip, c.name, c.name)
			}
			for _, r := range rs {
				t.Run(r.name, func(t *testing.T) {
					if r.only != nil && !slices.Contains(r.only, c.name) {
						t.Skipf("%s-client does not speak %s", c.name, protoOf(r.args))
					}
					args := make([]string, len(r.args))
					for i, a := range r.args {
						if a == "{ADDR}" && slices.Contains(javaProtos, protoOf(r.args)) {
							a = java(r.addr, protoOf(r.args))
						} else if a == "{ADDR}" {
							a = srv[r.addr][protoOf(r.args)]
						}
						if f, ok := files[a]; ok {
							a = f
						}
						args[i] = a
					}
					o := run(t, c, args)
					if bad := check(r, o); bad != "" {
						t.Errorf("%s %s: %s\nstderr:\n%s", c.name, strings.Join(args, " "), bad, tail(o.stderr))
					}
					if cause := tlsCauses[r.addr]; cause != "" && !strings.Contains(o.stderr, "verify: certificate: "+cause) {
						t.Errorf("%s %s: stderr does not name the cause %q:\n%s", c.name, strings.Join(args, " "), cause, tail(o.stderr))
					}
				})
			}
		})
	}
}

// TestRows keeps the table honest: every row is unique and names a server when
// its args need one.
func TestRows(t *testing.T) {
	names := map[string]bool{}
	for _, r := range rows() {
		if names[r.name] {
			t.Errorf("row %q twice", r.name)
		}
		names[r.name] = true
		if hasAddr := strings.Contains(strings.Join(r.args, " "), "{ADDR}"); hasAddr != (r.addr != "") {
			t.Errorf("row %q: {ADDR} in args %v but server %q", r.name, r.args, r.addr)
		}
	}
}

func protoOf(args []string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-proto" {
			if p := args[i+1]; slices.Contains(protos, p) || slices.Contains(javaProtos, p) {
				return p
			}
		}
	}
	return "grpc" // a bad -proto row: any address will do
}

func tail(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return strings.Join(lines, "\n")
}

// TestWorkerConformance: every client's worker mode (docs/report-format.md,
// "Worker mode") answers the same commands the same way: the ready line, a good
// run (its report, then done exit=0), an unknown command (done exit=2), a run
// that fails to verify (no report, done exit=3, the verify line between its
// begin and end markers), and quit.
func TestWorkerConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the conformance test runs every client's process")
	}
	right := fakeserver.Start(t, fakeserver.Right)
	wrong := fakeserver.Start(t, fakeserver.WrongCount)
	for _, c := range clients(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.skip != "" {
				testbed.Missing(t, testbed.Required(c.name), "%s: the %s worker is not run", c.skip, c.name)
			}
			stdin := strings.Join([]string{
				"run\tok.1\t-proto\thttp\t-call\tdatalist\t-items\t3\t-c\t1\t-n\t5\t-timeout\t5s\t-addr\t" + right["http"],
				"bogus\tb.1",
				"run\tbad.1\t-proto\tthrift\t-call\tdatalist\t-items\t3\t-c\t1\t-n\t5\t-timeout\t5s\t-addr\t" + wrong["thrift"],
				"quit",
				"",
			}, "\n")
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, c.cmd[0], append(c.cmd[1:len(c.cmd):len(c.cmd)], "worker")...)
			cmd.Env = append(os.Environ(), c.env...)
			cmd.Stdin = strings.NewReader(stdin)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.WaitDelay = 5 * time.Second
			if err := cmd.Run(); err != nil {
				t.Fatalf("%s worker: %v\nstderr:\n%s", c.name, err, tail(stderr.String()))
			}
			out := stdout.String()
			ready := regexp.MustCompile(`^#rpcbed-worker ready ` + c.name + ` [0-9]+\n`)
			if !ready.MatchString(out) {
				t.Fatalf("stdout does not start with the ready line:\n%.300s", out)
			}
			out = out[ready.FindStringIndex(out)[1]:]
			done := regexp.MustCompile(`(?m)^#rpcbed-worker done (\S+) exit=(\d+)\n`)
			var got []string
			var reports []string
			for {
				m := done.FindStringSubmatchIndex(out)
				if m == nil {
					break
				}
				reports = append(reports, out[:m[0]])
				got = append(got, out[m[2]:m[3]]+" exit="+out[m[4]:m[5]])
				out = out[m[1]:]
			}
			if want := []string{"ok.1 exit=0", "b.1 exit=2", "bad.1 exit=3"}; strings.Join(got, ", ") != strings.Join(want, ", ") {
				t.Fatalf("done lines %q; want %q\nstderr:\n%s", got, want, tail(stderr.String()))
			}
			if out != "" {
				t.Errorf("stdout after the last done line: %.200q", out)
			}
			if !strings.Contains(reports[0], "\nrpcbed report v1\n") || !strings.Contains(reports[0], "Complete requests:      5\n") {
				t.Errorf("run ok.1: want its report (5 complete) before its done line, got:\n%s", reports[0])
			}
			// Every client writes its latency record (docs/report-format.md), the
			// report's last line; TestLatencyMerge checks what it holds.
			if !regexp.MustCompile(`\nLatency histogram: {6}HISTF\S+ \[us\]\n$`).MatchString(reports[0]) {
				t.Errorf("run ok.1: the report does not end with its \"Latency histogram:\" line:\n%s", tail(reports[0]))
			}
			if reports[1] != "" || reports[2] != "" {
				t.Errorf("stdout before the done lines of b.1 and bad.1: %q, %q; want nothing", reports[1], reports[2])
			}
			errs := stderr.String()
			b, e := strings.Index(errs, "#rpcbed-worker begin bad.1\n"), strings.Index(errs, "#rpcbed-worker end bad.1\n")
			if b < 0 || e < b || !verifyLine.MatchString(errs[b:e]) || verifyLine.FindStringSubmatch(errs[b:e])[1] != "length" {
				t.Errorf("stderr: want \"verify: length: ...\" between the begin and end markers of bad.1:\n%s", tail(errs))
			}
		})
	}
}
