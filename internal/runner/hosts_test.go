package runner

import (
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWaitFrom: a check container on the engine reaches a listener of this
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

// TestDockerOverSSH: an ssh:// engine is reached through `ssh HOST -- docker
// system dial-stdio`; here a stand-in for ssh runs that relay against the local
// engine, and a container runs and reports through it (attach included, as a worker).
func TestDockerOverSSH(t *testing.T) {
	local := newDocker(t)
	if !local.HasImage(ImageGo) {
		skipOrFail(t, "docker", "image rpcbed/go is not built (make images)")
	}
	if _, err := exec.LookPath("docker"); err != nil {
		skipOrFail(t, "docker", "no docker CLI for dial-stdio")
	}
	fake := filepath.Join(t.TempDir(), "fake-ssh")
	// Every argument up to "--" is ssh's; what follows is the remote command.
	script := "#!/bin/sh\nwhile [ \"$1\" != -- ]; do echo \"$1\" >>\"$0.args\"; shift; done; shift; exec \"$@\"\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RPCBED_SSH", fake)
	d, err := NewDockerAt("ssh://me@engine.example:2222")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	args, _ := os.ReadFile(fake + ".args")
	if got, want := strings.Fields(string(args))[:3], []string{"-p", "2222", "me@engine.example"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("ssh arguments: got %q; want %q", got, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := d.Run(ctx, Task{Name: "over-ssh", Image: ImageGo, Args: []string{"/bin/bash", "-c", "echo hello over ssh"}})
	if err != nil || r.ExitCode != 0 || strings.TrimSpace(string(r.Stdout)) != "hello over ssh" {
		t.Errorf("run over ssh: got %q, exit %d, %v", r.Stdout, r.ExitCode, err)
	}
	w, err := d.StartWorker(ctx, Task{Name: "over-ssh-worker", Image: ImageGo, Args: []string{"/bin/bash", "-c", "read l; echo got $l"}})
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w.Stdin(), "ping\n")
	b := make([]byte, 64)
	n, _ := io.ReadAtLeast(w.Stdout(), b, len("got ping"))
	if got := strings.TrimSpace(string(b[:n])); got != "got ping" {
		t.Errorf("worker over ssh: got %q; want got ping", got)
	}
	w.Stop(context.Background())
}

func TestNewDockerAtBadSSH(t *testing.T) {
	if _, err := NewDockerAt("ssh://"); err == nil {
		t.Error("ssh:// without a host: got no error")
	}
}
