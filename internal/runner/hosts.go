package runner

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"
)

// NewDockerAt connects to the engine at endpoint — unix:///path, tcp://host:port
// or ssh://[user@]host[:port], as the Docker client takes them — and fails when it
// does not answer. A multi-host run holds one per host.
func NewDockerAt(endpoint string) (*Docker, error) {
	if endpoint == "" {
		return NewDocker()
	}
	var pool *dockertest.Pool
	var err error
	if strings.HasPrefix(endpoint, "ssh://") {
		pool, err = newSSHPool(endpoint)
	} else {
		pool, err = dockertest.NewPool(endpoint)
	}
	if err != nil {
		return nil, fmt.Errorf("docker %s: %w", endpoint, err)
	}
	if err := pool.Client.Ping(); err != nil {
		return nil, fmt.Errorf("docker %s: no engine answers: %w", endpoint, err)
	}
	return &Docker{pool: pool, live: map[string]string{}, endpoint: endpoint}, nil
}

// Endpoint is the engine's address ("" for the default one).
func (d *Docker) Endpoint() string { return d.endpoint }

// ImageID is the engine's id of image ("" when it has none).
func (d *Docker) ImageID(image string) string {
	repo, tag := splitImage(image)
	im, err := d.pool.Client.InspectImage(repo + ":" + tag)
	if err != nil {
		return ""
	}
	return im.ID
}

// CopyImage copies image from one engine to another (docker save | docker load)
// unless the target already has the same image id. copied says whether it did.
func CopyImage(ctx context.Context, from, to *Docker, image string) (copied bool, err error) {
	repo, tag := splitImage(image)
	ref := repo + ":" + tag
	want := from.ImageID(ref)
	if want == "" {
		return false, fmt.Errorf("image %s is not on the source engine (make images)", ref)
	}
	if to.ImageID(ref) == want {
		return false, nil
	}
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := from.pool.Client.ExportImage(dc.ExportImageOptions{Name: ref, OutputStream: pw, Context: ctx, InactivityTimeout: time.Minute})
		pw.CloseWithError(err)
		errc <- err
	}()
	lerr := to.pool.Client.LoadImage(dc.LoadImageOptions{InputStream: pr, OutputStream: io.Discard, Context: ctx})
	pr.CloseWithError(io.ErrClosedPipe)
	if eerr := <-errc; eerr != nil {
		return false, fmt.Errorf("save %s: %w", ref, eerr)
	}
	if lerr != nil {
		return false, fmt.Errorf("load %s into %s: %w", ref, to.endpoint, lerr)
	}
	if got := to.ImageID(ref); got != want {
		return false, fmt.Errorf("load %s into %s: got image id %q; want %q", ref, to.endpoint, got, want)
	}
	return true, nil
}

// checkScript connects to every host:port argument in turn with bash's /dev/tcp,
// retrying every 100 ms, until all accept or $deadline seconds passed.
const checkScript = `deadline=$1; shift
end=$((SECONDS + deadline))
for a in "$@"; do
  until (exec 3<>"/dev/tcp/${a%:*}/${a##*:}") 2>/dev/null; do
    [ $SECONDS -lt $end ] || { echo "no answer from $a within ${deadline}s" >&2; exit 1; }
    sleep 0.1
  done
done`

// WaitFrom waits until every address accepts a TCP connection as seen from d's
// host: a short container on d (host networking) makes the connections, so the
// check crosses the same link the clients will. image is any image d has (bash is
// in each of rpcbed's).
func (d *Docker) WaitFrom(ctx context.Context, image string, within time.Duration, addrs ...string) error {
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("check %q: %w", a, err)
		}
	}
	secs := int(within.Seconds())
	if secs < 1 {
		secs = 1
	}
	args := append([]string{"/bin/bash", "-c", checkScript, "check", strconv.Itoa(secs)}, addrs...)
	r, err := d.Run(ctx, Task{Name: "check", Image: image, Args: args, Timeout: within + 30*time.Second})
	if err != nil {
		return fmt.Errorf("check from %s: %w", d.endpoint, err)
	}
	if r.ExitCode != 0 {
		return fmt.Errorf("check from %s: %s", d.endpoint, Tail(r.Stderr, 400))
	}
	return nil
}
