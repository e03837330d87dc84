package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/aerospiketest"

	"github.com/rpcbed/rpcbed/internal/results"
)

// The Go-only experiment end to end, shrunk (-quick): the shape of
// reproduction.md, not its numbers, on each store it can run on; the Setup says
// which one ran.
func TestReproduceGoGRPCThrift(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs go-server and go-client")
	}
	root := buildGo(t)
	for _, tc := range []struct {
		name, aerospike, store string
	}{
		{"memory", "", "Store: go-server's in-memory store: no Aerospike server was given"},
		{"aerospike", "$AEROSPIKE_HOSTS", "Store: Aerospike at "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hosts := tc.aerospike
			if hosts != "" {
				hosts = aerospiketest.Hosts(t)
			}
			dir := filepath.Join(t.TempDir(), "rep")
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			var out, errb bytes.Buffer
			code := run(ctx, []string{"reproduce", "-quick", "-q", "-runner", "local", "-root", root, "-out", dir,
				"-published", "../../results/published", "-redis", "", "-aerospike-hosts", hosts, "-server-cpuset", "", "-client-cpuset", "",
				"go-grpc-thrift-aerospike"}, stdio{nil, &out, &errb})
			if code != 0 {
				t.Fatalf("exit code %d\n%s", code, errb.String())
			}
			md, err := os.ReadFile(filepath.Join(dir, "reproduction.md"))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{
				"## go-grpc-thrift-aerospike", tc.store,
				"| 50 |", "| 800 |", "| published |",
				"gRPC throughput beats Thrift", "30 % more CPU", "barely changes between 50 and 800",
				"| experiment | claim | published | measured (median [spread]) | tolerance | verdict | measured reason |",
				"How this was scaled to this machine",
				// The precision loop ran (one pass in -quick) and says how.
				"Precision rounds: where a claim was still inconclusive", "within a budget of 10m0s for the whole reproduction",
			} {
				if !bytes.Contains(md, []byte(want)) {
					t.Errorf("reproduction.md lacks %q:\n%s", want, md)
				}
			}
			page, err := os.ReadFile(filepath.Join(dir, "reproduction.html"))
			if err != nil || !bytes.Contains(page, []byte("gRPC throughput beats Thrift")) {
				t.Errorf("reproduction.html: %v; want the page with the findings", err)
			}
			var secs []results.Section
			b, _ := os.ReadFile(filepath.Join(dir, "reproduction.json"))
			if err := json.Unmarshal(b, &secs); err != nil || len(secs) != 1 || len(secs[0].Findings) != 4 {
				// One verdict per claim: c=50, c=800, server CPU per call (the busy
				// fraction its supporting figure), resources flat.
				t.Fatalf("reproduction.json: %v, %+v; want one section with 4 findings", err, secs)
			}
			if r := secs[0].Rounds; r == nil || r.BudgetS != 600 || r.MaxPerLevel != 1 || r.Stop == "" {
				t.Errorf("reproduction.json's rounds %+v; want the loop's record (600 s budget, 1 round a level in -quick, why it stopped)", r)
			}
			for _, f := range secs[0].Findings {
				if !slices.Contains(results.Verdicts, f.Holds) || f.Detail == "" || f.Tolerance == "" || f.Measured == "" {
					t.Errorf("finding %q: holds %q, measured %q, tolerance %q, detail %q; want a verdict of %v and every field",
						f.Claim, f.Holds, f.Measured, f.Tolerance, f.Detail, results.Verdicts)
				}
			}
		})
	}
}

func TestReproduceUnknownExperiment(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"reproduce", "-runner", "local", "-out", t.TempDir(), "grpc-vs-carrier-pigeon"}, stdio{nil, &out, &errb})
	if code != 1 || !strings.Contains(errb.String(), "unknown experiment") {
		t.Errorf("got exit code %d, stderr %q; want 1 and unknown experiment", code, errb.String())
	}
}

// A reproduction's network flags: each mistake is exit 2 naming the flag, before
// anything runs.
func TestReproduceNetFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"link without spec", []string{"-link", "lan"}, "-link lan: needs -spec"},
		{"spec without hosts", []string{"-spec", "../../matrix.yaml"}, "hosts: none"},
		{"no such link", []string{"-spec", "../../reproduce-lan.yaml", "-link", "wan"}, "-link wan: not a link between hosts"},
		{"no such spec", []string{"-spec", "no-such.yaml"}, "no-such.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			args := append([]string{"reproduce", "-runner", "local", "-out", t.TempDir()}, tc.args...)
			code := run(context.Background(), append(args, "go-grpc-thrift-aerospike"), stdio{nil, &out, &errb})
			if code != 2 || !strings.Contains(errb.String(), tc.want) {
				t.Errorf("got exit code %d, stderr %q; want 2 and %q", code, errb.String(), tc.want)
			}
		})
	}
}
