// Package aerospiketest gives tests an Aerospike server: the one AEROSPIKE_HOSTS
// names (CI starts ../shared/aerospike/start.sh and exports it), or a private asd
// from the same package on free ports that a test may stop and start again.
//
// Without a server the tests skip with the reason; when RPCBED_REQUIRE names
// aerospike (CI) they fail instead.
package aerospiketest

import (
	"github.com/rpcbed/rpcbed/internal/runner"

	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Required reports whether RPCBED_REQUIRE names aerospike.
func Required() bool {
	for _, f := range strings.FieldsFunc(os.Getenv("RPCBED_REQUIRE"), func(r rune) bool { return r == ',' || r == ' ' }) {
		if f == "aerospike" {
			return true
		}
	}
	return false
}

// skip skips t with why, or fails it when CI requires Aerospike.
func skip(t testing.TB, why string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s (RPCBED_REQUIRE=%s insists on aerospike)", why, os.Getenv("RPCBED_REQUIRE"))
	}
	t.Skipf("%s (set RPCBED_REQUIRE=aerospike to fail instead)", why)
}

// Hosts returns AEROSPIKE_HOSTS, or skips t when it is not set.
func Hosts(t testing.TB) string {
	t.Helper()
	h := os.Getenv("AEROSPIKE_HOSTS")
	if h == "" {
		skip(t, "aerospike store not tested: AEROSPIKE_HOSTS is not set (start ../shared/aerospike/start.sh and export AEROSPIKE_HOSTS=127.0.0.1:3000)")
	}
	return h
}

// PackageDir is the Aerospike server package (bin/asd, etc/aerospike.conf.template):
// $RPCBED_AEROSPIKE_PKG, else ../shared/aerospike beside the repository root.
func PackageDir() (string, error) {
	if d := os.Getenv("RPCBED_AEROSPIKE_PKG"); d != "" {
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(d), "shared", "aerospike"), nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no go.mod above " + wd)
		}
	}
}

// Server is a private asd: its own directory and free ports.
type Server struct {
	Hosts string // 127.0.0.1:PORT
	asd   string
	conf  string
	dir   string
	cmd   *exec.Cmd
	done  chan struct{}
}

// Start starts a private asd, or skips t when the package is not at hand. The
// server is stopped when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	pkg, err := PackageDir()
	if err == nil {
		_, err = os.Stat(filepath.Join(pkg, "bin", "asd"))
	}
	if err != nil {
		skip(t, fmt.Sprintf("no Aerospike server package: %v (set RPCBED_AEROSPIKE_PKG to the folder holding bin/asd)", err))
	}
	tmpl, err := os.ReadFile(filepath.Join(pkg, "etc", "aerospike.conf.template"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, d := range []string{"etc", "work/usr/udf/lua", "work/smd", "run", "log"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The template binds 3000-3002; this server takes three free ports instead, so
	// stopping it never touches the shared server.
	ports, err := runner.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	conf := strings.NewReplacer("@AS_DIR@", dir, "@PROTO_FD_MAX@", "1024").Replace(string(tmpl))
	for i, p := range []string{"3000", "3001", "3002"} {
		re := regexp.MustCompile(`(?m)^(\s*port\s+)` + p + `\s*$`)
		if !re.MatchString(conf) {
			t.Fatalf("config template: no line `port %s` to replace", p)
		}
		conf = re.ReplaceAllString(conf, "${1}"+strconv.Itoa(ports[i]))
	}
	s := &Server{Hosts: "127.0.0.1:" + strconv.Itoa(ports[0]), asd: filepath.Join(pkg, "bin", "asd"),
		conf: filepath.Join(dir, "etc", "aerospike.conf"), dir: dir}
	if err := os.WriteFile(s.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.kill() })
	s.Up(t)
	return s
}

// Up starts asd (again) and waits until it serves clients (60 s at most).
func (s *Server) Up(t testing.TB) {
	t.Helper()
	if s.cmd != nil {
		t.Fatal("aerospiketest: Up while running")
	}
	log, err := os.OpenFile(filepath.Join(s.dir, "log", "console.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command(s.asd, "--config-file", s.conf, "--foreground")
	cmd.Dir, cmd.Stdout, cmd.Stderr = s.dir, log, log
	// Killed with the test binary, should it die before its clean-ups run.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func(done chan struct{}) { cmd.Wait(); close(done) }(s.done)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if gen, err := partitionGeneration(s.Hosts); err == nil && gen >= 0 {
			return
		}
		select {
		case <-s.done:
			s.cmd = nil
			t.Fatalf("asd exited during start-up; see %s", s.logTail())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.kill()
			t.Fatalf("asd not ready on %s within 60 s; %s", s.Hosts, s.logTail())
		}
	}
}

// Down stops asd (SIGTERM, SIGKILL after 20 s) and waits until it has exited.
func (s *Server) Down(t testing.TB) {
	t.Helper()
	if s.cmd == nil {
		t.Fatal("aerospiketest: Down while stopped")
	}
	s.kill()
}

func (s *Server) kill() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Process.Signal(syscall.SIGCONT) // a stalled asd must see the TERM
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "log", "aerospike.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	c, _ := os.ReadFile(filepath.Join(s.dir, "log", "console.log"))
	if len(c) > 1000 {
		c = c[len(c)-1000:]
	}
	return fmt.Sprintf("aerospike.log tail:\n%s\nconsole.log tail:\n%s", b, c)
}

// partitionGeneration asks the node for its partition generation over the info
// protocol (8-byte header: version 2, type 1, 48-bit length). It is -1 until the
// node has formed its cluster; clients refuse the node until then.
func partitionGeneration(addr string) (int, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	req := "partition-generation\n"
	hdr := []byte{2, 1, 0, 0, 0, 0, 0, byte(len(req))}
	if _, err := c.Write(append(hdr, req...)); err != nil {
		return 0, err
	}
	r := bufio.NewReader(c)
	var h [8]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, err
	}
	n := int(h[2])<<40 | int(h[3])<<32 | int(h[4])<<24 | int(h[5])<<16 | int(h[6])<<8 | int(h[7])
	if n > 4096 {
		return 0, fmt.Errorf("info reply of %d bytes", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, err
	}
	f := strings.Fields(string(body))
	if len(f) != 2 || f[0] != "partition-generation" {
		return 0, fmt.Errorf("info reply %q", body)
	}
	return strconv.Atoi(f[1])
}

// Signal sends sig to the running asd (SIGSTOP/SIGCONT stall and resume it).
func (s *Server) Signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if s.cmd == nil {
		t.Fatal("aerospiketest: Signal while stopped")
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	if sig != syscall.SIGSTOP {
		return
	}
	// kill(2) returns before every thread has stopped; a loaded machine can run a
	// thread a while longer. Wait until each is in state T (20 s at most).
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if allStopped(s.cmd.Process.Pid) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("asd's threads did not all stop within 20 s of SIGSTOP")
		}
	}
}

// allStopped reports whether every thread of pid is stopped (state T or t).
func allStopped(pid int) bool {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			return false
		}
		// pid (comm) state ...: comm may hold spaces and parentheses; the state
		// follows the last ')'.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 || i+2 >= len(b) || (b[i+2] != 'T' && b[i+2] != 't') {
			return false
		}
	}
	return true
}
