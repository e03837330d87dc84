// Package testbed is what the integration tests share: RPCBED_REQUIRE's skip-or-fail
// rule, the repository root, go-server (as a process, or in this process) and the
// Java baselines started on free ports, where the PHP and Java clients are, raw
// HTTP/1.1 exchanges for hostile-input tests, and a hang guard. Only tests import it.
//
// A piece a test needs but this machine lacks (php, the PHP extensions, java, the
// jar) skips the test with the reason and how to build it, unless RPCBED_REQUIRE
// names the piece (CI sets it); then the test fails.
package testbed

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/auth"
	"github.com/rpcbed/rpcbed/internal/server"
	"github.com/rpcbed/rpcbed/internal/service"
	"github.com/rpcbed/rpcbed/internal/store"
)

// Required reports whether RPCBED_REQUIRE (a comma- or space-separated list, e.g.
// "redis,php,java") names every one of words.
func Required(words ...string) bool {
	have := map[string]bool{}
	for _, f := range strings.FieldsFunc(os.Getenv("RPCBED_REQUIRE"), func(r rune) bool { return r == ',' || r == ' ' }) {
		have[f] = true
	}
	for _, w := range words {
		if !have[w] {
			return false
		}
	}
	return true
}

// Missing skips t with the message, or fails it when required (the environment
// promised the piece).
func Missing(t testing.TB, required bool, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if required {
		t.Fatalf("%s (RPCBED_REQUIRE=%q)", msg, os.Getenv("RPCBED_REQUIRE"))
	}
	t.Skip(msg)
}

// Root is the repository root: the nearest folder above the test's own with a go.mod.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod above %s", dir)
		}
	}
}

// Build builds the repository's main package pkg (e.g. "./go-server") into a
// temporary folder and returns the binary.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	build := exec.Command("go", "build", "-o", bin, pkg)
	build.Dir = Root(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// GoServer starts go-server ($RPCBED_GO_SERVER, else built from this tree) with
// gRPC, Thrift and HTTP on free ports and returns their addresses by protocol.
func GoServer(t testing.TB) map[string]string {
	t.Helper()
	bin := os.Getenv("RPCBED_GO_SERVER")
	if bin == "" {
		bin = Build(t, "./go-server")
	}
	return Start(t, []string{"grpc", "thrift", "http"}, bin,
		"-grpc", "127.0.0.1:0", "-thrift", "127.0.0.1:0", "-http", "127.0.0.1:0")
}

// Java is the java binary and java-client's jar.
type Java struct{ Bin, Jar string }

// Command is the command line that runs the jar with args.
func (j Java) Command(args ...string) []string {
	return append([]string{j.Bin, "-jar", j.Jar}, args...)
}

// FindJava finds java and java-client/target/java-client.jar, or says why not.
func FindJava(t testing.TB) (Java, string) {
	t.Helper()
	jar := filepath.Join(Root(t), "java-client", "target", "java-client.jar")
	bin, err := exec.LookPath("java")
	if err != nil {
		return Java{}, "java is not installed (make setup-java)"
	}
	if _, err := os.Stat(jar); err != nil {
		return Java{}, jar + " is missing (make setup-java)"
	}
	return Java{Bin: bin, Jar: jar}, ""
}

// NeedJava is FindJava that skips t when java or the jar is missing (fails when
// RPCBED_REQUIRE names java).
func NeedJava(t testing.TB) Java {
	t.Helper()
	j, why := FindJava(t)
	if why != "" {
		Missing(t, Required("java"), "%s", why)
	}
	return j
}

// JavaBaseline starts the jar's baseline server for proto ("ice", "dubbo", "grpc",
// "thrift", "http") on a free port, with extra serve flags, and returns the
// addresses it listens on by name (proto, and "stats" with -stats-port), and the
// process.
func JavaBaseline(t testing.TB, j Java, proto string, extra ...string) (*exec.Cmd, map[string]string) {
	t.Helper()
	want := []string{proto}
	for _, a := range extra {
		if a == "-stats-port" {
			want = append(want, "stats")
		}
	}
	args := append([]string{"-jar", j.Jar, "serve", "-proto", proto, "-port", "0"}, extra...)
	return StartProc(t, want, j.Bin, args...)
}

// PHP is the php binary, php-client's bin/client.php and the three extensions it
// loads (grpc.so, protobuf.so, the patched ice.so: make setup-php).
type PHP struct {
	Bin, Script                  string
	GRPCExt, ProtobufExt, IceExt string // IceExt: php-zeroc-ice's extension patched for PHP 8.2
}

// Env is what the PHP client's environment adds: where the extensions are.
func (p PHP) Env() []string {
	return []string{"RPCBED_GRPC_EXT=" + p.GRPCExt, "RPCBED_PROTOBUF_EXT=" + p.ProtobufExt, "RPCBED_ICE_EXT=" + p.IceExt}
}

// Command is the command line that runs bin/client.php with args.
func (p PHP) Command(args ...string) []string {
	return append([]string{p.Bin, "-n", p.Script}, args...)
}

// FindPHP finds php and the extensions ($RPCBED_GRPC_EXT and $RPCBED_PROTOBUF_EXT,
// else php-client/ext/build), or says why not.
func FindPHP(t testing.TB) (PHP, string) {
	t.Helper()
	dir := filepath.Join(Root(t), "php-client")
	p := PHP{Script: filepath.Join(dir, "bin", "client.php"),
		GRPCExt: os.Getenv("RPCBED_GRPC_EXT"), ProtobufExt: os.Getenv("RPCBED_PROTOBUF_EXT"), IceExt: os.Getenv("RPCBED_ICE_EXT")}
	if p.GRPCExt == "" {
		p.GRPCExt = filepath.Join(dir, "ext", "build", "grpc.so")
	}
	if p.ProtobufExt == "" {
		p.ProtobufExt = filepath.Join(dir, "ext", "build", "protobuf.so")
	}
	if p.IceExt == "" {
		p.IceExt = filepath.Join(dir, "ext", "build", "ice.so")
	}
	bin, err := exec.LookPath("php")
	if err != nil {
		return PHP{}, "php is not installed: apt-get install php-cli php-curl php-google-protobuf php-thrift php-zeroc-ice (make setup-php)"
	}
	p.Bin = bin
	for _, ext := range []string{p.GRPCExt, p.ProtobufExt, p.IceExt} {
		if _, err := os.Stat(ext); err != nil {
			return PHP{}, ext + " is missing: run php-client/build-ext.sh (make setup-php)"
		}
	}
	return p, ""
}

// NeedPHP is FindPHP that skips t when a piece is missing (fails when
// RPCBED_REQUIRE names php).
func NeedPHP(t testing.TB) PHP {
	t.Helper()
	p, why := FindPHP(t)
	if why != "" {
		Missing(t, Required("php"), "%s", why)
	}
	return p
}

var listening = regexp.MustCompile(`listening proto=(\w+) addr=(\S+)`)

// Start runs a server that prints "listening proto=P addr=A" on stderr once per
// listener (go-server, the Java baselines) and returns proto -> addr once every
// one of want listens.
func Start(t testing.TB, want []string, name string, args ...string) map[string]string {
	t.Helper()
	_, addrs := StartProc(t, want, name, args...)
	return addrs
}

// StartProc is Start that also returns the process. At cleanup the process gets
// SIGTERM and must exit 0 within 15 s (both go-server and the Java servers stop
// cleanly on it); else it is killed and the test fails.
func StartProc(t testing.TB, want []string, name string, args ...string) (*exec.Cmd, map[string]string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	var waitErr error
	var mu sync.Mutex
	var log bytes.Buffer
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
			if waitErr != nil {
				t.Errorf("%s after SIGTERM: %v", filepath.Base(name), waitErr)
			}
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("%s did not stop within 15 s of SIGTERM", filepath.Base(name))
		}
		if t.Failed() {
			// What the server said is often why: an OutOfMemoryError that killed a
			// pool thread, or where its threads were when a stop could not finish.
			mu.Lock()
			t.Logf("%s's stderr, last lines:\n%s", filepath.Base(name), tail(log.String(), 300))
			mu.Unlock()
		}
	})
	addrs := make(map[string]string)
	ready := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { waitErr = cmd.Wait() }()
		sc := bufio.NewScanner(stderr)
		closed := false
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			log.WriteString(line + "\n")
			if m := listening.FindStringSubmatch(line); m != nil {
				addrs[m[1]] = m[2]
			}
			all := true
			for _, p := range want {
				all = all && addrs[p] != ""
			}
			mu.Unlock()
			if all && !closed {
				close(ready)
				closed = true
			}
		}
		io.Copy(io.Discard, stderr) // keep draining: the server never blocks on a full pipe
	}()
	select {
	case <-ready:
	case <-done:
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("%s exited before listening on %v; stderr:\n%s", filepath.Base(name), want, log.String())
	case <-time.After(90 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("%s not listening on %v after 90 s; stderr:\n%s", filepath.Base(name), want, log.String())
	}
	mu.Lock()
	defer mu.Unlock()
	out := make(map[string]string, len(addrs))
	for k, v := range addrs {
		out[k] = v
	}
	return cmd, out
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// Request is an HTTP/1.1 GET of target with extra header lines ("K: v\r\n").
func Request(target, extra string) string {
	return "GET " + target + " HTTP/1.1\r\nHost: x\r\n" + extra + "\r\n"
}

// RawExchange writes b to addr (in the background: the server may stop reading
// before the end), half-closes when closeWrite, and returns the status code of
// every response that came back before the server closed the connection. guard
// bounds the whole exchange: a server that neither answers nor closes within it
// fails the test.
func RawExchange(t testing.TB, addr string, b []byte, closeWrite bool, guard time.Duration) []int {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(guard))
	go func() {
		if _, err := conn.Write(b); err == nil && closeWrite {
			conn.(*net.TCPConn).CloseWrite()
		}
	}()
	br := bufio.NewReader(conn)
	var codes []int
	for {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the server neither answered nor closed the connection (responses so far %v)", codes)
			}
			return codes // EOF or reset: the server closed
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
	}
}

// Tail is the last n bytes of s.
func Tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// SyncBuffer is a bytes.Buffer safe for the writer goroutine exec starts and the test.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// InProcess starts go-server's three listeners in this process on free ports, auth
// checked (so every test also proves the token round trip), with the Thrift
// listener's transport and protocol ("framed", "binary" as go-server's defaults),
// and returns their addresses by protocol. The server stops at cleanup; a test
// whose server must die under its clients puts a Proxy in front.
func InProcess(t testing.TB, thriftTransport, thriftProtocol string) map[string]string {
	t.Helper()
	return inProcess(t, thriftTransport, thriftProtocol, nil)
}

// InProcessTLS is InProcess serving TLS only on every listener with cfg
// (internal/tlsbed.ServerConfig).
func InProcessTLS(t testing.TB, cfg *tls.Config) map[string]string {
	t.Helper()
	return inProcess(t, "framed", "binary", cfg)
}

func inProcess(t testing.TB, thriftTransport, thriftProtocol string, tlsCfg *tls.Config) map[string]string {
	t.Helper()
	a, err := auth.New(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: store.NewMemory(), Auth: a, CheckAuth: true})
	srv, err := server.Start(server.Config{
		GRPCAddr: "127.0.0.1:0", ThriftAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0",
		ThriftTransport: thriftTransport, ThriftProtocol: thriftProtocol, StoreKind: "memory", CheckAuth: true,
		Log: log.New(io.Discard, "", 0), TLS: tlsCfg,
	}, svc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return map[string]string{
		"grpc":   srv.GRPCAddr.String(),
		"thrift": srv.ThriftAddr.String(),
		"http":   srv.HTTPAddr.String(),
	}
}

// Within runs f and returns its result, failing t when f has not returned after d:
// a hang guard, not a timing assertion.
func Within[T any](t testing.TB, d time.Duration, f func() T) T {
	t.Helper()
	ch := make(chan T, 1)
	go func() { ch <- f() }()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("still running after %v: hang", d)
	}
	var zero T
	return zero
}

// FreeAddr is a 127.0.0.1 address nothing listens on (right now).
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Refusal is a request an HTTP front must refuse with a JSON error: a row of a
// test table (an alias, so rows need no field names).
type Refusal = struct {
	Name, Method, Target string
	Want                 int    // status
	WantMsg              string // in the JSON error's message
}

// CheckRefusal sends r to addr and fails t unless the answer has r's status and an
// application/json body {"code":..,"message":..} whose message contains r.WantMsg.
// guard bounds the request.
func CheckRefusal(t testing.TB, addr string, r Refusal, guard time.Duration) {
	t.Helper()
	req, err := http.NewRequest(r.Method, "http://"+addr+r.Target, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Timeout: guard}
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	jerr := json.Unmarshal(body, &e)
	if resp.StatusCode != r.Want || jerr != nil || !strings.Contains(e.Message, r.WantMsg) ||
		resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("%s %s = %d %s %q; want %d, application/json with message %q", r.Method,
			Tail(r.Target, 80), resp.StatusCode, resp.Header.Get("Content-Type"), Tail(string(body), 600), r.Want, r.WantMsg)
	}
}

// Proxy forwards TCP to a server until Kill, which closes the listener and every
// connection at once: the server "dies" for its clients.
type Proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn // client and upstream side of each forwarded connection
	dead  bool

	limit, passed atomic.Int64
	// accepted counts connections; those numbered below staleBelow are stale (Stale).
	accepted, staleBelow atomic.Int64
}

// StartProxy listens on a free port and forwards every connection to upstream; it
// is killed at cleanup.
func StartProxy(t testing.TB, upstream string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.DialTimeout("tcp", upstream, time.Second)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			if p.dead {
				c.Close()
				u.Close()
			}
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			gen := p.accepted.Add(1)
			go func() { io.Copy(&staleWriter{u, p, gen, c}, c); u.Close() }()
			go func() { io.Copy(&killWriter{c, p}, u); c.Close() }()
		}
	}()
	t.Cleanup(p.Kill)
	return p
}

// Addr is where clients connect.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Conns is how many connections the proxy has forwarded.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns) / 2
}

// Cut closes every connection forwarded so far and keeps accepting new ones: the
// server cut its idle connections (an idle timeout), and is still there.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

// Stale makes every connection forwarded so far look open to its client until
// the client sends on it, and then close, unanswered: the server's close that
// the client had not yet seen when it reused the connection. New ones are served.
func (p *Proxy) Stale() { p.staleBelow.Store(p.accepted.Load() + 1) }

// staleWriter forwards a client's bytes unless its connection went stale.
type staleWriter struct {
	w   io.Writer
	p   *Proxy
	gen int64
	c   net.Conn
}

func (s *staleWriter) Write(b []byte) (int, error) {
	if s.gen < s.p.staleBelow.Load() {
		s.c.Close()
		return 0, net.ErrClosed
	}
	return s.w.Write(b)
}

// KillAfter makes the proxy kill every connection once it has passed n bytes from
// the server: "mid-run" measured in answered calls, not in time, so a slow
// machine cannot kill it before the verify call.
func (p *Proxy) KillAfter(n int64) { p.limit.Store(n) }

// killWriter counts bytes going to the client and kills the proxy past the limit.
type killWriter struct {
	w io.Writer
	p *Proxy
}

func (k *killWriter) Write(b []byte) (int, error) {
	n, err := k.w.Write(b)
	if lim := k.p.limit.Load(); lim > 0 && k.p.passed.Add(int64(n)) > lim {
		go k.p.Kill()
	}
	return n, err
}

// Kill closes the listener and every connection.
func (p *Proxy) Kill() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dead = true
	for _, c := range p.conns {
		c.Close()
	}
}
