package main

import (
	"bytes"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/rpcbed/rpcbed/internal/server"
)

func TestFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
		msg  string
	}{
		{"unknown flag", []string{"-nope"}, 2, "flag provided but not defined"},
		{"stray argument", []string{"extra"}, 2, "unexpected arguments"},
		{"unknown store", []string{"-store", "mongo", "-grpc", "", "-thrift", "", "-http", ""}, 2, "unknown kind"},
		{"redis unreachable", []string{"-store", "redis", "-redis-addr", "127.0.0.1:1"}, 2, "redis at 127.0.0.1:1"},
		{"bad thrift transport", []string{"-thrift-transport", "zip", "-grpc", "", "-thrift", "127.0.0.1:0", "-http", ""}, 1, "want framed|buffered"},
		{"help", []string{"-h"}, 0, "usage: go-server"},
		{"tls cert without key", []string{"-tls-cert", "x.pem"}, 2, "-tls-cert and -tls-key: give both"},
		{"tls cert missing", []string{"-tls-cert", "/nonexistent.pem", "-tls-key", "/nonexistent.pem"}, 2, "-tls-cert/-tls-key: open /nonexistent.pem"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			got := run(tc.args, &stderr, func(*server.Server) { t.Fatal("server started") })
			if got != tc.want || !strings.Contains(stderr.String(), tc.msg) {
				t.Errorf("exit %d, stderr %q; want %d and %q", got, stderr.String(), tc.want, tc.msg)
			}
		})
	}
}

// TestServeAndDrain starts the real main on free ports, makes a call, and sends
// itself SIGTERM: the server must drain and exit 0.
func TestServeAndDrain(t *testing.T) {
	var stderr bytes.Buffer
	code := run([]string{"-grpc", "127.0.0.1:0", "-thrift", "127.0.0.1:0", "-http", "127.0.0.1:0"}, &stderr, func(s *server.Server) {
		resp, err := http.Get("http://" + s.HTTPAddr.String() + "/v1/datalist?n=3")
		if err != nil {
			t.Error(err)
		} else if resp.StatusCode != 200 {
			t.Errorf("status %d; want 200", resp.StatusCode)
		}
		syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
	})
	if code != 0 || !strings.Contains(stderr.String(), "stopped") {
		t.Errorf("exit %d; want 0 after draining; stderr:\n%s", code, stderr.String())
	}
}
