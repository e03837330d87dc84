package server_test

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/auth"
	"github.com/rpcbed/rpcbed/internal/server"
	"github.com/rpcbed/rpcbed/internal/service"
	"github.com/rpcbed/rpcbed/internal/store"

	"github.com/rpcbed/rpcbed/internal/testbed"
)

// TestMain doubles as a go-server child process: tests that need the server's own
// RSS or its own file-descriptor limit run it as a subprocess of the test binary.
func TestMain(m *testing.M) {
	if os.Getenv("RPCBED_SERVER_CHILD") != "" {
		os.Exit(serveChild())
	}
	os.Exit(m.Run())
}

// serveChild serves every listener on a free port, prints the three addresses,
// and stops when stdin closes. RPCBED_SERVER_NOFILE sets its RLIMIT_NOFILE.
func serveChild() int {
	if v := os.Getenv("RPCBED_SERVER_NOFILE"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err == nil {
			err = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: n, Max: n})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "child: RLIMIT_NOFILE:", err)
			return 1
		}
	}
	a, _ := auth.New([]byte("test-secret"), time.Minute)
	svc := service.New(service.Config{Store: store.NewMemory(), Auth: a, CheckAuth: true})
	s, err := server.Start(server.Config{
		GRPCAddr: "127.0.0.1:0", ThriftAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0",
		StoreKind: "memory", CheckAuth: true, Log: log.New(os.Stderr, "child: ", log.Lmicroseconds),
	}, svc)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	fmt.Printf("%s %s %s\n", s.GRPCAddr, s.ThriftAddr, s.HTTPAddr)
	go func() {
		if err := <-s.Err(); err != nil {
			fmt.Fprintln(os.Stderr, "child: listener stopped:", err)
		}
	}()
	io.Copy(io.Discard, os.Stdin)
	s.Close()
	return 0
}

// child is a go-server running as a subprocess.
type child struct {
	pid                int
	grpc, thrift, http net.Addr
	stderr             *testbed.SyncBuffer
}

// startChild starts a child go-server with env added; it is stopped (and killed if
// it does not stop within 5 s) when the test ends.
func startChild(t *testing.T, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "RPCBED_SERVER_CHILD=1"), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &child{stderr: &testbed.SyncBuffer{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.pid = cmd.Process.Pid
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("child stderr:\n%s", tail(c.stderr.String(), 4000))
		}
	})
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- l
		io.Copy(io.Discard, stdout)
	}()
	var l string
	select {
	case l = <-line:
	case <-time.After(20 * time.Second):
		t.Fatalf("child printed no addresses; stderr:\n%s", c.stderr.String())
	}
	f := strings.Fields(l)
	if len(f) != 3 {
		t.Fatalf("child printed %q; want three addresses; stderr:\n%s", l, c.stderr.String())
	}
	addrs := make([]net.Addr, 3)
	for i, a := range f {
		if addrs[i], err = net.ResolveTCPAddr("tcp", a); err != nil {
			t.Fatal(err)
		}
	}
	c.grpc, c.thrift, c.http = addrs[0], addrs[1], addrs[2]
	return c
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// status reads a field of /proc/PID/status in bytes (VmRSS, VmHWM) or as a count.
func (c *child) status(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			f := strings.Fields(v)
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			if len(f) > 1 && f[1] == "kB" {
				n <<= 10
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, c.pid)
	return 0
}

// fds is how many files the child has open.
func (c *child) fds(t *testing.T) int {
	t.Helper()
	e, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", c.pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(e)
}

// waitFor polls cond every 20 ms for up to d; it reports whether cond held.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// buildGoServer builds go-server into a temporary directory, without -race
// whatever this test binary was built with (the race detector multiplies memory
// and CPU), and returns its path.
func buildGoServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "go-server")
	build := exec.Command("go", "build", "-o", bin, "../../go-server")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build go-server: %v\n%s", err, out)
	}
	return bin
}

// startGoServer runs the go-server program bin with every listener on a free port
// and args added; it is stopped when the test ends.
func startGoServer(t *testing.T, bin string, args ...string) *child {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-grpc", "127.0.0.1:0", "-thrift", "127.0.0.1:0", "-http", "127.0.0.1:0", "-drain", "1s"}, args...)...)
	c := &child{stderr: &testbed.SyncBuffer{}}
	cmd.Stderr = c.stderr
	// It dies with the test binary, whatever ends that.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.pid = cmd.Process.Pid
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("go-server stderr:\n%s", tail(c.stderr.String(), 4000))
		}
	})
	addr := func(proto string) net.Addr {
		var a net.Addr
		waitFor(30*time.Second, func() bool {
			for _, l := range strings.Split(c.stderr.String(), "\n") {
				if _, rest, ok := strings.Cut(l, "listening proto="+proto+" addr="); ok {
					a, _ = net.ResolveTCPAddr("tcp", strings.TrimSpace(rest))
					return true
				}
			}
			return false
		})
		if a == nil {
			t.Fatalf("go-server logged no %s address; stderr:\n%s", proto, c.stderr.String())
		}
		return a
	}
	c.grpc, c.thrift, c.http = addr("grpc"), addr("thrift"), addr("http")
	return c
}
