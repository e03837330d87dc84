package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/tlsbed"
)

// rpcbed certs writes a CA and the leaves go-server and the clients read; a
// missing directory argument is usage (exit 2).
func TestCerts(t *testing.T) {
	dir := t.TempDir()
	var o, e strings.Builder
	if code := run(context.Background(), []string{"certs", dir}, stdio{nil, &o, &e}); code != 0 {
		t.Fatalf("rpcbed certs DIR: exit %d; want 0\n%s", code, e.String())
	}
	f, err := tlsbed.ServerConfig(filepath.Join(dir, "server.pem"), filepath.Join(dir, "server-key.pem"), filepath.Join(dir, "ca.pem"), "1.3")
	if err != nil || f == nil {
		t.Fatalf("go-server's TLS config from the files: %v", err)
	}
	if _, err := (tlsbed.Client{CACert: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, "client.pem"), Key: filepath.Join(dir, "client-key.pem")}).Config("127.0.0.1"); err != nil {
		t.Errorf("a client's TLS config from the files: %v", err)
	}
	if code := run(context.Background(), []string{"certs"}, stdio{nil, &o, &e}); code != 2 {
		t.Errorf("rpcbed certs without DIR: exit %d; want 2", code)
	}
}
