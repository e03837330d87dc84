package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/stats"
)

const testdata = "../../internal/report/testdata/"

// rpcbed runs the command in-process.
func rpcbed(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, stdio{strings.NewReader(stdin), &out, &errb})
	return code, out.String(), errb.String()
}

func TestParseCommand(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	good := testdata + "ab-go-datalist-200-c50-k.txt"
	full := testdata + "write-full.txt"
	text, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	badText := strings.Replace(string(text), "Requests per second:    3333.45", "Requests per second:    abc", 1)
	if err := os.WriteFile(bad, []byte(badText), 0o644); err != nil {
		t.Fatal(err)
	}
	badLine := 1 + strings.Count(badText[:strings.Index(badText, "Requests per second")], "\n")

	tests := []struct {
		name      string
		args      []string
		stdin     string
		code      int
		nreports  int    // -1: one object; n: an array of n (nil for failures)
		failed    []int  // indexes that are null in the array
		stderrHas string // "" = stderr must be empty
	}{
		{"one file", []string{"parse", good}, "", 0, -1, nil, ""},
		{"stdin", []string{"parse", "-"}, string(text), 0, -1, nil, ""},
		{"several", []string{"parse", good, full, "-"}, string(text), 0, 3, nil, ""},
		{"bad file only", []string{"parse", bad}, "", 1, 0, nil,
			bad + ":" + strconv.Itoa(badLine) + `: "Requests per second:    abc [#/sec] (mean)": bad number`},
		{"bad file among good", []string{"parse", good, bad, full}, "", 1, 3, []int{1},
			bad + ":" + strconv.Itoa(badLine) + ":"},
		{"missing line", []string{"parse", "-"}, "Complete requests: 3\n", 1, 0, nil,
			`<stdin>: missing "Time taken for tests:" line`},
		{"binary garbage", []string{"parse", "-"}, "\x7fELF\x02\x01\x01\x00\x00\x00\xfe\xed", 1, 0, nil,
			`<stdin>: not a report: binary data (a NUL byte at byte 7)`},
		{"text garbage", []string{"parse", "-"}, "<html>\n<body>hello", 1, 0, nil,
			`<stdin>: not a report: no line of Apache Bench's or an rpcbed client's report in it`},
		{"no such file", []string{"parse", filepath.Join(dir, "nope.txt"), good}, "", 1, 2, []int{0}, "nope.txt"},
		{"no files", []string{"parse"}, "", 2, 0, nil, "usage: rpcbed parse"},
		{"no command", nil, "", 2, 0, nil, "usage: rpcbed <command>"},
		{"unknown command", []string{"frobnicate"}, "", 2, 0, nil, `unknown command "frobnicate"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := rpcbed(t, tc.stdin, tc.args...)
			if code != tc.code {
				t.Errorf("exit code: got %d; want %d (stderr %q)", code, tc.code, errs)
			}
			if tc.stderrHas == "" && errs != "" || !strings.Contains(errs, tc.stderrHas) {
				t.Errorf("stderr: got %q; want it to contain %q", errs, tc.stderrHas)
			}
			switch {
			case tc.nreports < 0:
				var r report.Report
				if err := json.Unmarshal([]byte(out), &r); err != nil {
					t.Fatalf("stdout is not one report: %v\n%s", err, out)
				}
				if r.Complete == 0 {
					t.Errorf("report has no complete requests:\n%s", out)
				}
			case tc.nreports == 0:
				if tc.code != 2 && out != "" {
					t.Errorf("stdout: got %q; want nothing", out)
				}
			default:
				var rs []*report.Report
				if err := json.Unmarshal([]byte(out), &rs); err != nil {
					t.Fatalf("stdout is not an array of reports: %v\n%s", err, out)
				}
				if len(rs) != tc.nreports {
					t.Fatalf("got %d reports; want %d", len(rs), tc.nreports)
				}
				for i, r := range rs {
					wantNil := slices.Contains(tc.failed, i)
					if (r == nil) != wantNil {
						t.Errorf("report %d: got %v; want null %v", i, r, wantNil)
					}
				}
			}
		})
	}
}

// TestParseMerge: -merge prints the files' latency records merged, with the
// merged percentiles; a file without a record is named and refused.
func TestParseMerge(t *testing.T) {
	goRep, phpRep, javaRep := testdata+"go-client-hist-grpc-datalist-200-c8.txt", testdata+"php-hist-grpc-datalist-200-c4.txt",
		testdata+"java-hist-http-datatype-c2.txt"
	var recs []string
	var complete int64
	for _, f := range []string{goRep, phpRep, javaRep} {
		r, err := parseFile(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r.Rpcbed.LatencyHistogram)
		complete += r.Complete
	}
	want, err := stats.LatencyOf(recs...)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := rpcbed(t, "", "parse", "-merge", goRep, phpRep, javaRep)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, errs)
	}
	var got stats.Latency
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("stdout is not a latency: %v\n%s", err, out)
	}
	if got != want || got.Count != complete || got.Sources != 3 {
		t.Errorf("merged %+v; want %+v (%d calls from 3 records)", got, want, complete)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"ab", []string{goRep, testdata + "ab-go-datalist-200-c50.txt"}, "ab-go-datalist-200-c50.txt: no latency record"},
		{"old client", []string{goRep, testdata + "go-client-v11-http-datalist-20-c4-k.txt"}, "go-client-v11-http-datalist-20-c4-k.txt: no latency record"},
		{"bad file", []string{goRep, "nope.txt"}, "nope.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := rpcbed(t, "", append([]string{"parse", "-merge"}, tc.args...)...)
			if code != 1 || out != "" || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 1, nothing, and %q", code, out, errs, tc.want)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	code, out, _ := rpcbed(t, "", "help")
	if code != 0 || !strings.Contains(out, "parse") {
		t.Errorf("rpcbed help: code %d, stdout %q; want 0 and the command list", code, out)
	}
	code, _, errs := rpcbed(t, "", "parse", "-h")
	if code != 0 || !strings.Contains(errs, "usage: rpcbed parse") {
		t.Errorf("rpcbed parse -h: code %d, stderr %q; want 0 and the usage", code, errs)
	}
}

var (
	rpsLine = regexp.MustCompile(`(?m)^Requests per second:\s+(\S+) \[#/sec\] \(mean\)$`)
	pctLine = regexp.MustCompile(`(?m)^\s+(\d+)%\s+(\d+)`)
)

// TestParseMatchesAB: on real ab runs against go-server, `rpcbed parse` prints the
// requests/s and percentiles ab printed. The expected values are read from ab's
// text by a regexp, independently of the parser.
func TestParseMatchesAB(t *testing.T) {
	files, err := filepath.Glob(testdata + "ab-go-*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no real ab goldens: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			code, out, errs := rpcbed(t, "", "parse", f)
			if code != 0 {
				t.Fatalf("rpcbed parse %s: exit %d: %s", f, code, errs)
			}
			var got struct {
				RPS         json.Number `json:"requests_per_second"`
				Percentiles []struct {
					Percent int   `json:"percent"`
					Ms      int64 `json:"ms"`
				} `json:"percentiles"`
			}
			d := json.NewDecoder(strings.NewReader(out))
			d.UseNumber()
			if err := d.Decode(&got); err != nil {
				t.Fatal(err)
			}
			m := rpsLine.FindSubmatch(text)
			if m == nil {
				t.Fatalf("no Requests per second line in %s", f)
			}
			rps, _ := got.RPS.Float64()
			if s := strconv.FormatFloat(rps, 'f', 2, 64); s != string(m[1]) {
				t.Errorf("requests/s: got %s; ab printed %s", s, m[1])
			}
			var want []string
			for _, p := range pctLine.FindAllSubmatch(text, -1) {
				want = append(want, string(p[1])+"%="+string(p[2]))
			}
			var have []string
			for _, p := range got.Percentiles {
				have = append(have, strconv.Itoa(p.Percent)+"%="+strconv.FormatInt(p.Ms, 10))
			}
			if strings.Join(have, " ") != strings.Join(want, " ") {
				t.Errorf("percentiles: got %v; ab printed %v", have, want)
			}
		})
	}
}
