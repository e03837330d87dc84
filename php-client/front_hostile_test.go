package phpclient_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/testbed"
)

// phpFront is front.php served by bin/php-front on a free port, its stderr (php -S's
// request log and PHP's error log) in a file.
type phpFront struct {
	addr   string
	log    string
	cmd    *exec.Cmd
	exited <-chan struct{}
}

// frontSetup finds php and its extensions and starts go-server, or skips (fails
// when RPCBED_REQUIRE contains "php"). It returns the backend addresses by protocol.
func frontSetup(t *testing.T) (php testbed.PHP, backends map[string]string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the PHP front runs real processes")
	}
	php = testbed.NeedPHP(t)
	return php, testbed.GoServer(t)
}

// startPHPFront runs bin/php-front with two workers (env adds or overrides
// variables). It gets its own process group, and the whole group is stopped at the
// end, whatever a test did to its first process.
func startPHPFront(t *testing.T, php testbed.PHP, backends map[string]string, env ...string) *phpFront {
	t.Helper()
	f := &phpFront{addr: testbed.FreeAddr(t), log: filepath.Join(t.TempDir(), "front.log")}
	logf, err := os.Create(f.log)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	f.cmd = exec.Command(filepath.Join(filepath.Dir(php.Script), "php-front"))
	f.cmd.Env = append(append(os.Environ(), php.Env()...), "LISTEN="+f.addr, "PHP_CLI_SERVER_WORKERS=2",
		"RPCBED_GRPC_ADDR="+backends["grpc"], "RPCBED_THRIFT_ADDR="+backends["thrift"], "RPCBED_HTTP_ADDR="+backends["http"])
	f.cmd.Env = append(f.cmd.Env, env...)
	// A file, not a pipe: PHP has written a request's warnings before it answers.
	f.cmd.Stdout, f.cmd.Stderr = logf, logf
	f.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := f.cmd.Start(); err != nil {
		t.Fatalf("start php-front: %v", err)
	}
	exited := make(chan struct{})
	f.exited = exited
	go func() { f.cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-f.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			syscall.Kill(-f.cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		// The workers are not the parent's to wait for: stop what is left of the group.
		syscall.Kill(-f.cmd.Process.Pid, syscall.SIGKILL)
	})
	c := &http.Client{Timeout: 5 * time.Second}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("php-front exited at start:\n%s", f.logText())
		default:
		}
		if resp, err := c.Get("http://" + f.addr + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return f
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("php-front did not answer /healthz on %s within 30s:\n%s", f.addr, f.logText())
		}
	}
}

func (f *phpFront) logText() string {
	b, _ := os.ReadFile(f.log)
	return string(b)
}

// A warning, notice or fatal error raised in the front's own PHP code.
var phpError = regexp.MustCompile(`PHP (Warning|Notice|Fatal error|Parse error|Deprecated):.* in /\S*php-client/`)

// stillServes is the normal call that must work after every hostile case, and the
// check that the case made the front's PHP code raise no warning.
func (f *phpFront) stillServes(t *testing.T, proto string, logFrom int) {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second} // a hang guard, not a timing assertion
	resp, err := c.Get("http://" + f.addr + "/v1/datalist?n=2&proto=" + proto)
	if err != nil {
		t.Fatalf("normal call after hostile input: %v\nfront log:\n%s", err, testbed.Tail(f.logText(), 2000))
	}
	defer resp.Body.Close()
	var l struct {
		Code  int   `json:"code"`
		N     int   `json:"n"`
		Items []any `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil || resp.StatusCode != http.StatusOK || l.N != 2 || len(l.Items) != 2 {
		t.Fatalf("normal call after hostile input = %d, n=%d, %d items, %v; want 200 with 2 items", resp.StatusCode, l.N, len(l.Items), err)
	}
	if log := f.logText(); len(log) > logFrom {
		if m := phpError.FindString(log[logFrom:]); m != "" {
			t.Errorf("front.php raised %q", m)
		}
	}
}

func TestPHPFrontHostile(t *testing.T) {
	php, backends := frontSetup(t)
	f := startPHPFront(t, php, backends)
	badArgs := "want n=0..100000 and proto="
	manyVars := strings.Repeat("a=1&", 1500) // past PHP's max_input_vars (1000)

	requests := []testbed.Refusal{
		{"unknown route", "GET", "/v2/nothing", 404, "no route /v2/nothing"},
		{"route with trailing slash", "GET", "/v1/datalist/?n=2", 404, "no route"},
		{"the router script itself", "GET", "/front.php?n=2", 404, "no route"},
		{"another PHP file", "GET", "/autoload.php", 404, "no route"},
		{"wrong method", "POST", "/v1/datalist?n=2", 404, "no route"},
		{"n missing", "GET", "/v1/datalist", 400, badArgs},
		{"n empty", "GET", "/v1/datalist?n=", 400, badArgs},
		{"n not a number", "GET", "/v1/datalist?n=ten", 400, badArgs},
		{"n float", "GET", "/v1/datalist?n=1.5", 400, badArgs},
		{"n exponent", "GET", "/v1/datalist?n=1e3", 400, badArgs},
		{"n hex", "GET", "/v1/datalist?n=0x10", 400, badArgs},
		{"n NUL", "GET", "/v1/datalist?n=2%00", 400, badArgs},
		{"n negative", "GET", "/v1/datalist?n=-1", 400, badArgs},
		{"n one too many", "GET", "/v1/datalist?n=100001", 400, badArgs},
		{"n overflows int64", "GET", "/v1/datalist?n=99999999999999999999999", 400, badArgs},
		{"n of 10000 digits", "GET", "/v1/datalist?n=" + strings.Repeat("9", 10000), 400, badArgs},
		{"n bad escape", "GET", "/v1/datalist?n=%zz", 400, badArgs},
		{"n truncated escape", "GET", "/v1/datalist?n=2%", 400, badArgs},
		{"n an array", "GET", "/v1/datalist?n[]=2", 400, badArgs},
		{"n a map", "GET", "/v1/datalist?n[a][b]=2", 400, badArgs},
		{"proto unknown", "GET", "/v1/datalist?n=2&proto=dubbo", 400, badArgs},
		{"proto upper case", "GET", "/v1/datalist?n=2&proto=GRPC", 400, badArgs},
		{"proto empty", "GET", "/v1/datalist?n=2&proto=", 400, badArgs},
		{"proto NUL", "GET", "/v1/datalist?n=2&proto=grpc%00", 400, badArgs},
		{"proto path", "GET", "/v1/datalist?n=2&proto=../../etc/passwd", 400, badArgs},
		{"proto an array", "GET", "/v1/datalist?n=2&proto[]=grpc", 400, badArgs},
		{"too many query variables", "GET", "/v1/datalist?" + manyVars + "n=2", 400, badArgs}, // n is past the limit: dropped
	}
	for _, tc := range requests {
		t.Run(tc.Name, func(t *testing.T) {
			from := len(f.logText())
			testbed.CheckRefusal(t, f.addr, tc, 30*time.Second)
			f.stillServes(t, "grpc", from)
		})
	}

	ok := testbed.Request("/v1/datalist?n=2", "")
	// bin/front-guard.php passes on heads of up to 96 KiB (php -S itself reads about
	// 80 KiB) and answers a longer one 431, unless it has to reset the connection
	// first because the client is still sending.
	const legal, tooLong = 60 << 10, 1 << 20
	raw := []struct {
		name       string
		send       string
		closeWrite bool
		want       []string // fmt.Sprint of the statuses; any one of these
	}{
		// php -S drops a request it cannot parse without an answer.
		{"garbage", "\x00\xff\x10garbage\r\n\r\n", false, []string{"[]"}},
		{"TLS hello", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", false, []string{"[]"}},
		{"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", false, []string{"[501]"}},
		{"noise without a newline", strings.Repeat("A", 64<<10), true, []string{"[]"}},
		{"truncated request", "GET /v1/datalist?n=2 HTTP/1.1\r\nHo", true, []string{"[]"}},
		// php -S answers one request per connection and calls a pipelined one malformed.
		{"request then garbage", ok + "\x00\x01\x02\x03\r\n\r\n", false, []string{"[]", "[200]"}},
		{"three pipelined requests", ok + ok + ok, false, []string{"[]", "[200]"}},
		{"long legal query", testbed.Request("/v1/datalist?n=2&pad="+strings.Repeat("q", legal), ""), false, []string{"[200]"}},
		{"oversized query", testbed.Request("/v1/datalist?n=2&pad="+strings.Repeat("q", tooLong), ""), false, []string{"[]", "[431]"}},
		{"oversized headers", testbed.Request("/v1/datalist?n=2", "X-Big: "+strings.Repeat("b", tooLong)+"\r\n"), false, []string{"[]", "[431]"}},
		// php -S allocates the claimed length before front.php runs: the guard refuses it.
		{"huge Content-Length", testbed.Request("/v1/datalist?n=2", "Content-Length: 1099511627776\r\n") + "abc", true, []string{"[413]"}},
		{"3 GiB POST", "POST /v1/datalist?n=2 HTTP/1.1\r\nHost: x\r\nContent-Length: 3221225472\r\n\r\n" + strings.Repeat("z", 4096), true, []string{"[413]"}},
		{"chunked body", "POST /v1/datalist?n=2 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", true, []string{"[413]"}},
		{"two Content-Lengths", testbed.Request("/v1/datalist?n=2", "Content-Length: 1\r\nContent-Length: 2\r\n") + "ab", true, []string{"[400]"}},
		{"Content-Length not a number", testbed.Request("/v1/datalist?n=2", "Content-Length: -1\r\n"), true, []string{"[400]"}},
		{"body on GET", testbed.Request("/v1/datalist?n=2", "Content-Length: 11\r\n") + "hello world", false, []string{"[200]"}},
		{"short body on GET", testbed.Request("/v1/datalist?n=2", "Content-Length: 100\r\n") + "short", true, []string{"[]"}},
		{"HTTP/1.0 request", "GET /v1/datalist?n=2 HTTP/1.0\r\n\r\n", false, []string{"[200]"}},
	}
	for _, tc := range raw {
		t.Run(tc.name, func(t *testing.T) {
			from := len(f.logText())
			got := fmt.Sprint(testbed.RawExchange(t, f.addr, []byte(tc.send), tc.closeWrite, 30*time.Second))
			found := false
			for _, w := range tc.want {
				found = found || got == w
			}
			if !found {
				t.Errorf("responses = %s; want one of %v", got, tc.want)
			}
			f.stillServes(t, "grpc", from)
		})
	}

	// php -S has no header timeout: a stalled client keeps its connection, but each
	// worker polls all its connections, so the others are still served.
	t.Run("slow headers", func(t *testing.T) {
		from := len(f.logText())
		for i := 0; i < 8; i++ {
			conn, err := net.Dial("tcp", f.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			io.WriteString(conn, "GET /v1/datalist?n=2 HTTP/1.1\r\nHost: x\r\n") // and never finish
		}
		f.stillServes(t, "grpc", from)
	})

	// A client gone before or during the answer must not break the worker's
	// connection to the backend.
	for _, proto := range []string{"grpc", "thrift", "http"} {
		for _, readBack := range []int{0, 16 << 10} {
			t.Run(fmt.Sprintf("%s gone after %d bytes of n=5000", proto, readBack), func(t *testing.T) {
				from := len(f.logText())
				for i := 0; i < 3; i++ {
					conn, err := net.Dial("tcp", f.addr)
					if err != nil {
						t.Fatal(err)
					}
					conn.SetDeadline(time.Now().Add(60 * time.Second))
					io.WriteString(conn, testbed.Request("/v1/datalist?n=5000&proto="+proto, ""))
					if readBack > 0 {
						if _, err := io.ReadFull(conn, make([]byte, readBack)); err != nil {
							t.Fatalf("reading the first %d bytes of n=5000: %v", readBack, err)
						}
					}
					conn.(*net.TCPConn).SetLinger(0) // hang up hard: a reset
					conn.Close()
				}
				f.stillServes(t, proto, from)
			})
		}
	}
}

// A Content-Length php -S cannot allocate makes the worker that reads it exit
// ("Out of memory"); workers are not replaced, so a few such requests stopped the
// front. That is php -S's HTTP parser, before front.php runs (pemalloc of the
// claimed length, php/php-src#22003), so bin/front-guard.php refuses such a request
// before php -S sees it: many of them, then a normal call on the same port.
func TestPHPFrontHugeContentLength(t *testing.T) {
	php, backends := frontSetup(t)
	f := startPHPFront(t, php, backends)
	for i := 0; i < 16; i++ { // twice the published 8 workers, far more than the test's 2
		got := fmt.Sprint(testbed.RawExchange(t, f.addr, []byte(testbed.Request("/v1/datalist?n=2", "Content-Length: 1000000000000\r\n")+"abc"), true, 30*time.Second))
		if got != "[413]" {
			t.Fatalf("request %d claiming 1 TB: responses %s; want [413]\nfront log:\n%s", i, got, testbed.Tail(f.logText(), 2000))
		}
	}
	if strings.Contains(f.logText(), "Out of memory") {
		t.Errorf("a php -S worker ran out of memory:\n%s", testbed.Tail(f.logText(), 2000))
	}
	f.stillServes(t, "grpc", 0)
}
