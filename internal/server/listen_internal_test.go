package server

import (
	"bytes"
	"errors"
	"log"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
)

// fakeListener returns its errors in turn, then a connection.
type fakeListener struct {
	net.Listener
	errs []error
}

func (f *fakeListener) Accept() (net.Conn, error) {
	if len(f.errs) > 0 {
		err := f.errs[0]
		f.errs = f.errs[1:]
		return nil, err
	}
	c, _ := net.Pipe()
	return c, nil
}

func (f *fakeListener) Close() error { return nil }

func acceptErr(errno syscall.Errno) error {
	return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
}

func TestRetryListener(t *testing.T) {
	tests := []struct {
		name     string
		errs     []error
		wantErr  bool
		wantLogs int
	}{
		{"no error", nil, false, 0},
		{"EMFILE passes", []error{acceptErr(syscall.EMFILE), acceptErr(syscall.EMFILE)}, false, 2},
		{"ENFILE and EINTR pass", []error{acceptErr(syscall.ENFILE), acceptErr(syscall.EINTR)}, false, 2},
		{"ECONNRESET ends Accept (net retries ECONNABORTED itself)", []error{acceptErr(syscall.ECONNRESET)}, true, 0},
		{"a closed listener ends Accept", []error{net.ErrClosed}, true, 0},
		{"EBADF ends Accept", []error{acceptErr(syscall.EBADF)}, true, 0},
		{"an error without Temporary ends Accept", []error{errors.New("boom")}, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			l := newRetryListener(&fakeListener{errs: tc.errs}, "x", log.New(&logs, "", 0))
			c, err := l.Accept()
			if (err != nil) != tc.wantErr {
				t.Fatalf("Accept = %v, %v; want error %v", c, err, tc.wantErr)
			}
			if c != nil {
				c.Close()
			}
			if got := strings.Count(logs.String(), "x: accept: "); got != tc.wantLogs {
				t.Errorf("logged %d retries; want %d:\n%s", got, tc.wantLogs, logs.String())
			}
		})
	}
	t.Run("Close stops a retry wait", func(t *testing.T) {
		errs := make([]error, 100)
		for i := range errs {
			errs[i] = acceptErr(syscall.EMFILE)
		}
		l := newRetryListener(&fakeListener{errs: errs}, "x", log.New(&bytes.Buffer{}, "", 0))
		done := make(chan error)
		go func() { _, err := l.Accept(); done <- err }()
		l.Close()
		if err := <-done; err == nil {
			t.Errorf("Accept after Close succeeded; want the pending error")
		}
	})
}
