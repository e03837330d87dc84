// Command testsum reads `go test -json` on stdin and prints what plain `go test`
// prints (each package's ok/FAIL/? line, the output of failed tests), then writes
// a summary: how many tests passed, failed and were skipped, and each skip's
// reason. `make test` shows it at the end with the other suites' summaries.
//
//	go test -json ./... | go run ./scripts/testsum -summary FILE
//
// The exit code is 1 when a test or package failed, 0 otherwise.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// Summary is what a run came to.
type Summary struct {
	Passed, Failed, Skipped int
	Packages                int
	FailedPackages          []string
	Skips                   []Skip
}

// Skip is one skipped test and the reason it logged.
type Skip struct{ Package, Test, Reason string }

// Read passes the plain `go test` output of the stream r to w and sums it up.
func Read(r io.Reader, w io.Writer) (Summary, error) {
	var s Summary
	buf := map[string][]string{} // package + test -> its output so far
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(w, "%s\n", line) // not an event (e.g. a build error): as is
			continue
		}
		id := e.Package + " " + e.Test
		switch {
		case e.Action == "output" && e.Test == "":
			if e.Output != "PASS\n" && !strings.HasPrefix(e.Output, "=== ") {
				io.WriteString(w, e.Output)
			}
		case e.Action == "output":
			buf[id] = append(buf[id], e.Output)
		case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
			s.Packages++
			if e.Action == "fail" {
				s.FailedPackages = append(s.FailedPackages, e.Package)
			}
		case e.Action == "pass":
			s.Passed++
			delete(buf, id)
		case e.Action == "fail":
			s.Failed++
			// As plain go test: the --- FAIL line first, then what the test logged.
			out := buf[id]
			sort.SliceStable(out, func(i, j int) bool {
				return strings.HasPrefix(out[i], "--- FAIL") && !strings.HasPrefix(out[j], "--- FAIL")
			})
			for _, o := range out {
				if !strings.HasPrefix(o, "=== ") {
					io.WriteString(w, o)
				}
			}
			delete(buf, id)
		case e.Action == "skip":
			s.Skipped++
			s.Skips = append(s.Skips, Skip{Package: e.Package, Test: e.Test, Reason: reason(buf[id])})
			delete(buf, id)
		}
	}
	sort.Slice(s.Skips, func(i, j int) bool {
		if s.Skips[i].Package != s.Skips[j].Package {
			return s.Skips[i].Package < s.Skips[j].Package
		}
		return s.Skips[i].Test < s.Skips[j].Test
	})
	return s, sc.Err()
}

// reason is what a skipped test logged, on one line, without go test's framing.
func reason(out []string) string {
	var parts []string
	for _, o := range out {
		o = strings.TrimSpace(o)
		if o == "" || strings.HasPrefix(o, "=== ") || strings.HasPrefix(o, "--- SKIP") {
			continue
		}
		parts = append(parts, o)
	}
	if len(parts) == 0 {
		return "no reason given"
	}
	return strings.Join(parts, " / ")
}

// Write prints the summary: one line of counts, then a line per skip.
func (s Summary) Write(w io.Writer) {
	status := "passed"
	if s.Failed > 0 || len(s.FailedPackages) > 0 {
		status = "FAILED"
	}
	fmt.Fprintf(w, "go: %s: %d tests passed, %d failed, %d skipped in %d packages\n", status, s.Passed, s.Failed, s.Skipped, s.Packages)
	for _, p := range s.FailedPackages {
		fmt.Fprintf(w, "  failed package %s\n", p)
	}
	for _, k := range s.Skips {
		fmt.Fprintf(w, "  skipped %s %s: %s\n", strings.TrimPrefix(k.Package, "github.com/rpcbed/rpcbed/"), k.Test, k.Reason)
	}
}

func main() {
	summary := flag.String("summary", "", "also write the summary to this file")
	flag.Parse()
	s, err := Read(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(1)
	}
	if *summary != "" {
		f, err := os.Create(*summary)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			os.Exit(1)
		}
		s.Write(f)
		if err := f.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "testsum:", err)
			os.Exit(1)
		}
	} else {
		s.Write(os.Stdout)
	}
	if s.Failed > 0 || len(s.FailedPackages) > 0 {
		os.Exit(1)
	}
}
