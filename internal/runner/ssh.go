package runner

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"
)

// An ssh:// engine is reached as the Docker CLI reaches it: every connection is
// `ssh [-p PORT] [USER@]HOST -- docker system dial-stdio`, the remote docker CLI
// relaying the stream to its local engine. ssh's own configuration (keys, agent,
// known_hosts) applies; it must not prompt (BatchMode). RPCBED_SSH names another
// command in ssh's place (tests use one that dials the local engine).

// newSSHPool is a pool whose client talks HTTP over ssh connections to endpoint.
func newSSHPool(endpoint string) (*dockertest.Pool, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("docker %s: want ssh://[user@]host[:port]", endpoint)
	}
	target := u.Hostname()
	if u.User != nil {
		target = u.User.Username() + "@" + target
	}
	argv := []string{"ssh", "-o", "BatchMode=yes"}
	if c := os.Getenv("RPCBED_SSH"); c != "" {
		argv = strings.Fields(c)
	}
	if p := u.Port(); p != "" {
		argv = append(argv, "-p", p)
	}
	argv = append(argv, target, "--", "docker", "system", "dial-stdio")
	// The client needs a tcp:// URL to build its requests; the dialer ignores it.
	client, err := dc.NewClient("tcp://docker-over-ssh.invalid:2375")
	if err != nil {
		return nil, err
	}
	d := sshDialer{argv: argv}
	client.Dialer = d
	client.HTTPClient = &http.Client{Transport: &http.Transport{
		DialContext:     func(ctx context.Context, _, _ string) (net.Conn, error) { return d.DialContext(ctx) },
		IdleConnTimeout: 30 * time.Second,
	}}
	return &dockertest.Pool{Client: client}, nil
}

type sshDialer struct{ argv []string }

func (d sshDialer) Dial(_, _ string) (net.Conn, error) { return d.DialContext(context.Background()) }

func (d sshDialer) DialContext(ctx context.Context) (net.Conn, error) {
	cmd := exec.Command(d.argv[0], d.argv[1:]...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var errb syncBuffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(d.argv, " "), err)
	}
	c := &cmdConn{cmd: cmd, in: in, out: out, errb: &errb}
	if err := ctx.Err(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// cmdConn is a net.Conn over a process's stdin and stdout. Deadlines are not
// kept (the callers bound their requests with contexts, which close the conn).
type cmdConn struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  io.ReadCloser
	errb *syncBuffer
	once sync.Once
}

func (c *cmdConn) Read(p []byte) (int, error) {
	n, err := c.out.Read(p)
	if err == io.EOF && n == 0 {
		if msg := strings.TrimSpace(string(c.errb.Bytes())); msg != "" {
			return 0, fmt.Errorf("%s: %s", c.cmd.Path, Tail([]byte(msg), 400))
		}
	}
	return n, err
}
func (c *cmdConn) Write(p []byte) (int, error) { return c.in.Write(p) }

// CloseWrite is EOF for the remote end, the rest still readable (an attach's
// stdin closing, as a TCP half-close).
func (c *cmdConn) CloseWrite() error { return c.in.Close() }
func (c *cmdConn) Close() error {
	c.once.Do(func() {
		c.in.Close()
		c.out.Close()
		if c.cmd.Process != nil {
			c.cmd.Process.Kill()
		}
		c.cmd.Wait()
	})
	return nil
}
func (c *cmdConn) LocalAddr() net.Addr                { return sshAddr{} }
func (c *cmdConn) RemoteAddr() net.Addr               { return sshAddr{} }
func (c *cmdConn) SetDeadline(t time.Time) error      { return nil }
func (c *cmdConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *cmdConn) SetWriteDeadline(t time.Time) error { return nil }

type sshAddr struct{}

func (sshAddr) Network() string { return "ssh" }
func (sshAddr) String() string  { return "docker-over-ssh" }
