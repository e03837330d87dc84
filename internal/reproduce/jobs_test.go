package reproduce

import (
	"bytes"
	"flag"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/measure"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/analysis/claims"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// printJob is one run as the golden lists it: name, what runs it, then its
// arguments; addresses and URLs are placeholders.
func printJob(w *bytes.Buffer, key string, j measure.Job) {
	var how []string
	if j.Prog != nil {
		how = append(how, "prog="+j.Prog.Args[0])
		j.Args = j.Prog.Args[1:]
	} else {
		how = append(how, "client="+j.Client)
	}
	if j.AB {
		how = append(how, "ab (local)")
	}
	if j.Worker {
		how = append(how, "worker")
	}
	if j.Proto != "" {
		how = append(how, "sampled="+j.Proto+"/"+j.Call)
	}
	how = append(how, "timeout="+j.Timeout.String())
	if key != "" {
		how = append(how, "key="+key)
	}
	fmt.Fprintf(w, "  %s [%s]: %s\n", j.Name, strings.Join(how, " "), strings.Join(j.Args, " "))
}

// TestJobsGolden prints every run each experiment builds, full and quick, from
// the shipped published figures (results/published): names, clients, worker
// or one-shot, sampled counters, timeouts, flags and the key each figure is
// filed under (go test -run JobsGolden -update rewrites testdata/jobs.golden).
func TestJobsGolden(t *testing.T) {
	addrs := map[string]string{"grpc": "GRPC_ADDR", "thrift": "THRIFT_ADDR", "http": "HTTP_ADDR"}
	var w bytes.Buffer
	for _, quick := range []bool{false, true} {
		gt := &grpcThrift{}
		if err := gt.Read("../../results/published"); err != nil {
			t.Fatal(err)
		}
		gt.configure(quick)
		fmt.Fprintf(&w, "go-grpc-thrift-aerospike quick=%v\n", quick)
		for _, j := range grpcThriftJobs(gt.GRPCThrift, quick, addrs) {
			printJob(&w, fmt.Sprintf("%s/c%d round %d", j.Key.Proto, j.Key.C, j.Round), j.Job)
		}

		g := &growth{}
		if err := g.Read("../../results/published"); err != nil {
			t.Fatal(err)
		}
		g.configure(quick)
		fmt.Fprintf(&w, "php-go-growth quick=%v\n", quick)
		for _, j := range growthSizeJobs(g.Items, addrs) {
			printJob(&w, fmt.Sprintf("size %s/%d", j.Proto, j.Items), j.Job)
		}
		urls := map[string]string{}
		for _, p := range claims.GrowthPaths {
			urls[p.Name] = "FRONT_" + p.Name + "/v1/datalist"
			for _, j := range growthWarmupJobs(p, g.Items, urls[p.Name], nil) {
				printJob(&w, "warm-up, untimed", j.Job)
			}
		}
		fmt.Fprintf(&w, "php-go-growth bursts, in rounds across the paths, quick=%v\n", quick)
		for _, j := range growthRoundJobs(g.Growth, urls, nil) {
			printJob(&w, fmt.Sprintf("%s/%d round %d", j.Key.Path, j.Key.Items, j.Round), j.Job)
		}

		jv := newJava2015()
		if err := jv.Read("../../results/published"); err != nil {
			t.Fatal(err)
		}
		jv.configure(quick)
		fmt.Fprintf(&w, "java-rpc-2015 quick=%v\n", quick)
		fwAddrs := map[string]string{}
		for _, fw := range claims.JavaFrameworks {
			addr := strings.ToUpper(fw) + "_ADDR"
			fwAddrs[fw] = addr
			printJob(&w, "first second", javaFirstJob(fw, addr))
			if !quick { // a quick run neither primes nor waits for the JITs
				for _, j := range javaPrimeJobs(fw, addr, jv.Levels) {
					printJob(&w, "prime, unrecorded", j)
				}
				for _, round := range []int{1, 2} {
					for _, j := range javaRestJobs(fw, addr, jv.Levels, round) {
						printJob(&w, fmt.Sprintf("rest round %d (while the JITs compile), unrecorded", round), j)
					}
				}
			}
		}
		fmt.Fprintf(&w, "java-rpc-2015 rows, in rounds across the frameworks, quick=%v\n", quick)
		for _, j := range javaRowJobs(jv.Java2015, fwAddrs, quick) {
			printJob(&w, fmt.Sprintf("%s/c%d round %d", j.Key.FW, j.Key.C, j.Round), j.Job)
		}
	}
	golden := filepath.Join("testdata", "jobs.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, w.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -run JobsGolden -update writes it)", err)
	}
	if !bytes.Equal(w.Bytes(), want) {
		t.Errorf("the experiments' jobs differ from %s (go test -update if the change is meant):\n%s", golden, lineDiff(string(want), w.String()))
	}
}

// lineDiff names the first lines that differ.
func lineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	n := 0
	for i := 0; i < max(len(wl), len(gl)) && n < 10; i++ {
		var a, c string
		if i < len(wl) {
			a = wl[i]
		}
		if i < len(gl) {
			c = gl[i]
		}
		if a != c {
			fmt.Fprintf(&b, "line %d:\n  want %s\n  got  %s\n", i+1, a, c)
			n++
		}
	}
	return b.String()
}
