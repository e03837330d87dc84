package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/aerospiketest"
	"github.com/rpcbed/rpcbed/internal/runner"

	"github.com/rpcbed/rpcbed/internal/results"
)

// `store: aerospike` in a spec: go-server runs on the Aerospike store the spec
// names, with either runner (the Docker runner's go-server reaches it over host
// networking), and DataType cells complete.
func TestMatrixAerospikeStore(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go-server on Aerospike")
	}
	hosts := aerospiketest.Hosts(t)
	spec := "clients: {go: [grpc, http]}\ncalls: [datatype]\nitems: [2]\nconcurrency: [2]\nload: {n: 100}\nrepeats: 1\n" +
		"client: {cpuset: \"\"}\nserver: {cpuset: \"\"}\nstore: aerospike\naerospike_hosts: " + hosts + "\n"
	for _, runnerName := range []string{"local", "docker"} {
		t.Run(runnerName, func(t *testing.T) {
			root := t.TempDir()
			if runnerName == "local" {
				root = buildGo(t)
			} else {
				needDockerImages(t)
			}
			specFile := filepath.Join(t.TempDir(), "aerospike.yaml")
			if err := os.WriteFile(specFile, []byte(spec), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			dir := filepath.Join(t.TempDir(), "run")
			var out, errb bytes.Buffer
			if code := run(ctx, []string{"matrix", "-spec", specFile, "-out", dir, "-runner", runnerName, "-root", root, "-q"}, stdio{nil, &out, &errb}); code != 0 {
				t.Fatalf("rpcbed matrix: exit code %d\nstderr:\n%s", code, errb.String())
			}
			r, err := results.LoadRun(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Cells) != 2 {
				t.Fatalf("got %d cells; want 2", len(r.Cells))
			}
			for _, c := range r.Cells {
				if c.Status != results.StatusOK || len(c.Repeats) != 1 || c.Repeats[0].Metrics.Complete != 100 {
					t.Errorf("%s: status %s (%s); want ok with 100 calls", c.Name, c.Status, c.Error)
				}
			}
			if md, err := os.ReadFile(filepath.Join(dir, "matrix.md")); err != nil || !bytes.Contains(md, []byte("store aerospike")) {
				t.Errorf("matrix.md does not say the store was aerospike: %v", err)
			}
		})
	}
}

func dockerSkip(t *testing.T, why string) {
	t.Helper()
	if strings.Contains(os.Getenv("RPCBED_REQUIRE"), "docker") {
		t.Fatalf("RPCBED_REQUIRE has docker, but %s", why)
	}
	t.Skip(why)
}

// needDockerImages skips t (fails it when RPCBED_REQUIRE has docker) unless a
// Docker engine answers and the images are built.
func needDockerImages(t *testing.T) {
	t.Helper()
	d, err := runner.NewDocker()
	if err != nil {
		dockerSkip(t, "no Docker engine answers: "+err.Error())
	}
	d.Close()
	if err := exec.Command("docker", "image", "inspect", "rpcbed/go:latest").Run(); err != nil {
		dockerSkip(t, "image rpcbed/go:latest is not built (make images)")
	}
}
