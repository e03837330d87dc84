package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestMain doubles as rpcbed (RPCBED_TEST_AS_RPCBED=1: TestBenchLoadgenFrom) and
// as a launcher (RPCBED_TEST_LAUNCH=1): it runs its arguments as
// a program and prints the program's peak RSS. A program started straight from a
// test shares the test process's memory until it execs (vfork), so its rusage
// counts the test's RSS too; started from this small fresh process, it counts at
// most the launcher's.
func TestMain(m *testing.M) {
	if os.Getenv("RPCBED_TEST_LAUNCH") == "1" {
		os.Exit(launch(os.Args[1:]))
	}
	if os.Getenv("RPCBED_TEST_AS_RPCBED") == "1" { // rpcbed itself, for the scripts' tests
		os.Exit(run(context.Background(), os.Args[1:], stdio{os.Stdin, os.Stdout, os.Stderr}))
	}
	code := m.Run()
	if built.root != "" {
		os.RemoveAll(built.root)
	}
	os.Exit(code)
}

func launch(args []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintln(os.Stderr, "launch:", err)
		return 99
	}
	fmt.Printf("exit=%d maxrss_kb=%d\n", cmd.ProcessState.ExitCode(), cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)
	return 0
}

// launched runs args through the launcher and returns the program's exit code,
// its stderr and its peak RSS in bytes.
func launched(t *testing.T, args ...string) (code int, stderr string, peak int64) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "RPCBED_TEST_LAUNCH=1")
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("launcher: %v: %s", err, errb.String())
	}
	var kb int64
	if _, err := fmt.Sscanf(string(out), "exit=%d maxrss_kb=%d", &code, &kb); err != nil {
		t.Fatalf("launcher printed %q: %v", out, err)
	}
	return code, errb.String(), kb << 10
}
