package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// capacityRun runs `rpcbed capacity ARGS...` and returns its exit code and output.
func capacityRun(args ...string) (int, string, string) {
	var o, e bytes.Buffer
	code := run(context.Background(), append([]string{"capacity"}, args...), stdio{strings.NewReader(""), &o, &e})
	return code, o.String(), e.String()
}

// TestCapacityAgreeAndRender: a capacity run agrees with itself (exit 0), is
// rendered again from its capacity.json, and bad arguments are usage errors.
func TestCapacityAgreeAndRender(t *testing.T) {
	fixture := filepath.Join("..", "..", "internal", "capacity", "testdata")
	code, out, errs := capacityRun("agree", fixture, fixture)
	if code != 0 || !strings.Contains(out, "8 of 8 knees inside each other's interval") || !strings.Contains(out, ": met") {
		t.Errorf("agree with itself: exit %d, %q %q; want 0 and 8 of 8, met", code, out, errs)
	}
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(fixture, "capacity.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "capacity.json"), b, 0o644)
	if code, _, errs := capacityRun("render", dir); code != 0 {
		t.Fatalf("render: exit %d: %s", code, errs)
	}
	for _, f := range []string{"capacity.md", "capacity.csv", "plots/go-grpc-datalist-200-c50.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("render wrote no %s: %v", f, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "capacity.md"))
	want, _ := os.ReadFile(filepath.Join(fixture, "capacity.md"))
	if !bytes.Equal(md, want) {
		t.Error("capacity.md rendered from capacity.json differs from the golden")
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"agree", fixture}, 2},
		{[]string{"agree", fixture, t.TempDir()}, 2},
		{[]string{"render"}, 2},
		{[]string{"-spec", filepath.Join(t.TempDir(), "none.yaml")}, 2},
		{[]string{"-bogus"}, 2},
		{[]string{"stray"}, 2},
		{[]string{"-h"}, 0},
	} {
		if code, _, _ := capacityRun(tc.args...); code != tc.code {
			t.Errorf("capacity %q: exit %d; want %d", tc.args, code, tc.code)
		}
	}
}

// TestCapacityOverTLS searches go-grpc in plaintext and over TLS end to end on
// the local runner (go-server and go-client built): the TLS cell's server is the
// group's tls twin, every run negotiated TLS 1.3 (a run that did not would give
// no figures), and capacity.md sets its knee against its plaintext twin's. A
// generous SLO and few, short runs: a function test, not a measurement.
func TestCapacityOverTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs go-server and go-client")
	}
	t.Run("local", func(t *testing.T) { capacityOverTLS(t, "local", buildGo(t)) })
	// In containers the servers and the client workers read the certificates
	// through a bind mount.
	t.Run("docker", func(t *testing.T) {
		needDockerImages(t)
		capacityOverTLS(t, "docker", "../..")
	})
}

func capacityOverTLS(t *testing.T, runnerName, root string) {
	spec := filepath.Join(t.TempDir(), "capacity.yaml")
	os.WriteFile(spec, []byte(`clients: {go: [grpc]}
items: [2]
concurrency: [4]
security: [plaintext, tls]
client: {cpuset: ""}
server: {cpuset: ""}
slo: {p99: 500ms, errors: 1%}
capacity: {start: 100, max_rate: 400, factor: 2, precision: 50%, accuracy: 10%, measure: 300ms, warmup: 100ms, cooldown: 0s, rounds: 2, deadline: 20s, prime: {go: 300ms}}
`), 0o644)
	dir := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var o, e bytes.Buffer
	if code := run(ctx, []string{"capacity", "-spec", spec, "-out", dir, "-runner", runnerName, "-root", root, "-q"}, stdio{strings.NewReader(""), &o, &e}); code != 0 {
		t.Fatalf("rpcbed capacity: exit %d\n%s", code, e.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "capacity.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Cells []struct {
			Name  string
			Error string
			Runs  []struct {
				TLS   string `json:"tls"`
				Error string `json:"error"`
			} `json:"runs"`
			Knees []struct {
				Status string `json:"status"`
			} `json:"knees"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, c := range r.Cells {
		names[c.Name] = true
		if c.Error != "" || len(c.Runs) == 0 || len(c.Knees) != 1 {
			t.Errorf("%s: error %q, %d runs, %d knees; want runs and one knee", c.Name, c.Error, len(c.Runs), len(c.Knees))
			continue
		}
		want := ""
		if strings.HasSuffix(c.Name, "@tls") {
			want = "TLSv1.3"
		}
		for i, run := range c.Runs {
			if run.Error != "" || run.TLS != want {
				t.Errorf("%s run %d: tls %q, error %q; want %q and none", c.Name, i, run.TLS, run.Error, want)
			}
		}
	}
	if !names["go-grpc-datalist-2-c4"] || !names["go-grpc-datalist-2-c4@tls"] {
		t.Errorf("cells %v; want go-grpc-datalist-2-c4 and its @tls twin", names)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "capacity.md"))
	if !strings.Contains(string(md), "| vs plaintext |") {
		t.Errorf("capacity.md has no vs plaintext column:\n%s", md)
	}
	if _, err := os.Stat(filepath.Join(dir, "raw", "server-go-server+tls.txt")); err != nil {
		t.Errorf("the tls twin's output was not kept: %v", err)
	}
	// A primed cell is primed in the closed loop, then in the open loop at
	// twice its start (capacity.OpenPrime), before its search: the raw runs
	// of both primes are kept, un-counted.
	for _, f := range []string{"go-grpc-datalist-2-c4-prime1.txt", "go-grpc-datalist-2-c4-prime200-2.txt"} {
		b, err := os.ReadFile(filepath.Join(dir, "raw", f))
		if err != nil {
			t.Errorf("the prime's run %s was not kept: %v", f, err)
			continue
		}
		open := regexp.MustCompile(`(?m)^Loop:\s+open$`).Match(b)
		if open != strings.Contains(f, "prime200") {
			t.Errorf("%s: its report says the open loop: %v; want it only of the open-loop prime", f, open)
		}
	}
}
