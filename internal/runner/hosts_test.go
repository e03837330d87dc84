package runner

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// TestWaitFrom: a probe container on the engine reaches a listener of this
// process (host networking: the engine's namespace is ours) and reports a port
// nobody listens on by its address.
func TestWaitFrom(t *testing.T) {
	d := newDocker(t)
	if !d.HasImage(ImageGo) {
		skipOrFail(t, "docker", "image rpcbed/go is not built (make images)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := closed.Addr().String()
	closed.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := d.WaitFrom(ctx, ImageGo, 10*time.Second, l.Addr().String()); err != nil {
		t.Errorf("open port: %v", err)
	}
	err = d.WaitFrom(ctx, ImageGo, time.Second, l.Addr().String(), dead)
	if err == nil || !strings.Contains(err.Error(), dead) {
		t.Errorf("closed port: got %v; want an error naming %s", err, dead)
	}
	if err := d.WaitFrom(ctx, ImageGo, time.Second, "no-port"); err == nil {
		t.Error("an address without a port: got no error")
	}
}

// TestCopyImageSameEngine: copying to an engine that has the image already is
// a no-op; a missing image is an error naming it.
func TestCopyImageSameEngine(t *testing.T) {
	d := newDocker(t)
	if !d.HasImage(ImageGo) {
		skipOrFail(t, "docker", "image rpcbed/go is not built (make images)")
	}
	ctx := context.Background()
	copied, err := CopyImage(ctx, d, d, ImageGo)
	if err != nil || copied {
		t.Errorf("same engine: got copied=%v, %v; want false, nil", copied, err)
	}
	if _, err := CopyImage(ctx, d, d, "rpcbed/nothing:here"); err == nil || !strings.Contains(err.Error(), "rpcbed/nothing:here") {
		t.Errorf("missing image: got %v", err)
	}
}

func TestNewDockerAtRefusesSSH(t *testing.T) {
	if _, err := NewDockerAt("ssh://me@host"); err == nil || !strings.Contains(err.Error(), "unix://") {
		t.Errorf("got %v; want a refusal pointing at a forwarded unix:// socket", err)
	}
}
