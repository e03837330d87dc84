package report

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// minimal is the smallest text Parse accepts.
const minimal = `Time taken for tests:   1.000 seconds
Complete requests:      10
Requests per second:    10.00 [#/sec] (mean)
`

func writeFull(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, fullReport()); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// replaceLine swaps the line starting with prefix for repl ("" deletes it).
func replaceLine(t *testing.T, text, prefix, repl string) string {
	t.Helper()
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			if repl == "" {
				return strings.Join(append(lines[:i:i], lines[i+1:]...), "\n")
			}
			lines[i] = repl
			return strings.Join(lines, "\n")
		}
	}
	t.Fatalf("no line starts with %q", prefix)
	return ""
}

func TestParseErrors(t *testing.T) {
	full := writeFull(t)
	tests := []struct {
		name string
		in   string
		want string // the error text
	}{
		{"empty", "", `missing "Complete requests:" line`},
		{"no rps", strings.Replace(minimal, "Requests per second", "Requests per sec", 1), `missing "Requests per second:" line`},
		{"no time", "Complete requests: 1\nRequests per second: 1.00 [#/sec] (mean)\n", `missing "Time taken for tests:" line`},
		{"bad rps", strings.Replace(minimal, "10.00", "abc", 1), `line 3: "Requests per second:    abc [#/sec] (mean)": bad number`},
		{"bad rps no unit", "Requests per second:    abc\n", `line 1: "Requests per second:    abc": bad number`},
		{"rps no unit", "Requests per second:    12.5\n", `line 1: "Requests per second:    12.5": want "[#/sec] (mean)" after the value`},
		{"time per request unit", "Time per request:       1.000 [ms]\n", `line 1: "Time per request:       1.000 [ms]": want "[ms] (mean)" or "[ms] (mean, across all concurrent requests)" after the value`},
		{"nan", strings.Replace(minimal, "1.000 seconds", "NaN seconds", 1), `line 1: "Time taken for tests:   NaN seconds": bad number`},
		{"exponent", strings.Replace(minimal, "1.000 seconds", "1e3 seconds", 1), `line 1: "Time taken for tests:   1e3 seconds": bad number`},
		{"bad count", strings.Replace(minimal, "10\n", "1O\n", 1), `line 2: "Complete requests:      1O": bad number`},
		{"plus count", strings.Replace(minimal, "10\n", "+10\n", 1), `line 2: "Complete requests:      +10": bad number`},
		{"repeated", minimal + "Complete requests:      10\n", `line 4: "Complete requests:      10": repeated line`},
		{"bad breakdown", minimal + "Failed requests: 1\n   (Connect: 0, Receive: x, Length: 0, Exceptions: 1)\n",
			`line 5: "   (Connect: 0, Receive: x, Length: 0, Exceptions: 1)": bad number`},
		{"unknown failure kind", minimal + "   (Connect: 0, Timeout: 1)\n", `line 4: "   (Connect: 0, Timeout: 1)": unknown failure kind "Timeout"`},
		{"document length", minimal + "Document Length:        12 kb\n", `line 4: "Document Length:        12 kb": want "N bytes" or "Variable"`},
		{"bad row", minimal + "\nConnection Times (ms)\nTotal:  1 2 3 4\n", `line 6: "Total:  1 2 3 4": want min mean sd median max`},
		{"row sd", minimal + "\nConnection Times (ms)\nTotal:  1 2 x 4 5\n", `line 6: "Total:  1 2 x 4 5": bad number`},
		{"out of place", minimal + "\nConnection Times (ms)\nServer Port: 80\n", `line 6: "Server Port: 80": "Server Port:" line after "Connection Times (ms)"`},
		{"second report", full + full, `line 73: "Server Software:        rpcbed-go-server": "Server Software:" line after "rpcbed report v1"`},
		{"bad percentile", minimal + pctHeading + "\n  50%     x\n", `line 5: "  50%     x": bad number`},
		{"percent range", minimal + pctHeading + "\n 150%     3\n", `line 5: " 150%     3": percent out of 0..100`},
		{"repeated percentile", minimal + pctHeading + "\n  50%     3\n  50%     4\n", `line 6: "  50%     4": repeated percentile`},
		{"no percent sign", minimal + pctHeading + "\n  50     3\n", `line 5: "  50     3": want N%  MS`},
		{"rpcbed version", minimal + "\nrpcbed report v2\n", `line 5: "rpcbed report v2": unsupported rpcbed report version (this parser reads rpcbed report v1)`},
		{"rpcbed missing key", replaceLine(t, full, "Latency p99.9:", ""), `rpcbed block: missing "Latency p99.9:" line`},
		{"rpcbed errors", replaceLine(t, full, "Errors:", "Errors:                 exceptions"), `line 64: "Errors:                 exceptions": want kind=count, got "exceptions"`},
		{"rpcbed errors count", replaceLine(t, full, "Errors:", "Errors:                 length=x"), `line 64: "Errors:                 length=x": bad number`},
		{"rpcbed errors repeated", replaceLine(t, full, "Errors:", "Errors:                 a=1 a=2"), `line 64: "Errors:                 a=1 a=2": repeated kind "a"`},
		{"rpcbed versions", replaceLine(t, full, "Versions:", "Versions:               go="), `line 65: "Versions:               go=": want name=version, got "go="`},
		{"rpcbed connections", replaceLine(t, full, "Connections:", "Connections:            4 (each)"), `line 52: "Connections:            4 (each)": want "K (shared)" or "K (per worker)"`},
		{"rpcbed warm-up", replaceLine(t, full, "Warm-up:", "Warm-up:                2.000 s, 5 calls excluded"), `line 55: "Warm-up:                2.000 s, 5 calls excluded": want "S seconds, N calls excluded"`},
		{"rpcbed client", replaceLine(t, full, "Client:", "Client:                 go php"), `line 48: "Client:                 go php": want one word`},
		{"rpcbed ab label", full + "Complete requests:      10\n", `line 66: "Complete requests:      10": "Complete requests:" line after "rpcbed report v1"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.in))
			if err == nil {
				t.Fatalf("Parse: no error; want %q", tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("Parse: got %q; want %q", err, tc.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Errorf("Parse: error %T is not a *ParseError", err)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	ab, err := os.ReadFile("testdata/ab-go-datalist-200-c50-k.txt")
	if err != nil {
		t.Fatal(err)
	}
	want, err := Parse(bytes.NewReader(ab))
	if err != nil {
		t.Fatal(err)
	}
	body := string(ab[strings.Index(string(ab), "Server Software:"):])
	long := "LOG: header received:\n" + strings.Repeat("x", 3*maxLine) + "\nServer: ignored\n"
	tests := []struct {
		name string
		in   string
	}{
		{"as captured", string(ab)},
		{"crlf", strings.ReplaceAll(string(ab), "\n", "\r\n")},
		{"no banner", body},
		{"no final newline", strings.TrimSuffix(string(ab), "\n")},
		{"stderr mixed in", "apr_socket_recv: Connection reset by peer (104)\nCompleted 100 requests\n" + body},
		{"long verbose lines", long + body},
		{"ssl lines", strings.Replace(string(ab), "Server Port:            49757\n",
			"Server Port:            49757\nSSL/TLS Protocol:       TLSv1.3,TLS_AES_256_GCM_SHA384,2048,256\nServer Temp Key:        X25519 253 bits\nTLS Server Name:        localhost\n", 1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tc.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Parse = %+v; want %+v", got, want)
			}
		})
	}
}

// TestParseOldBreakdown reads ab 2.0's breakdown, which has no Receive.
func TestParseOldBreakdown(t *testing.T) {
	r, err := Parse(strings.NewReader(minimal + "Failed requests:        5\n   (Connect: 1, Length: 3, Exceptions: 1)\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Failures{Connect: 1, Length: 3, Exceptions: 1}); r.FailedBy != want || r.Failed != 5 {
		t.Errorf("Failed, FailedBy = %d, %+v; want 5, %+v", r.Failed, r.FailedBy, want)
	}
}
