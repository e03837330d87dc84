package report

import (
	"bytes"
	"errors"
	"math/bits"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rpcbed/rpcbed/internal/stats"
)

// abHead is three head lines: the error tests append to it the line they break.
const abHead = `Time taken for tests:   1.000 seconds
Complete requests:      10
Requests per second:    10.00 [#/sec] (mean)
`

// minimal is the smallest text Parse accepts: ab's output for one request (no
// percentile table), without banner.
const minimal = `Server Software:        x
Server Hostname:        127.0.0.1
Server Port:            80

Document Path:          /
Document Length:        10 bytes

Concurrency Level:      1
Time taken for tests:   1.000 seconds
Complete requests:      1
Failed requests:        0
Total transferred:      10 bytes
HTML transferred:       10 bytes
Requests per second:    1.00 [#/sec] (mean)
Time per request:       1000.000 [ms] (mean)
Time per request:       1000.000 [ms] (mean, across all concurrent requests)
Transfer rate:          0.01 [Kbytes/sec] received

Connection Times (ms)
              min  mean[+/-sd] median   max
Connect:        0    0   0.0      0       0
Processing:     1    1   0.0      1       1
Waiting:        1    1   0.0      1       1
Total:          1    1   0.0      1       1
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

// recordOf is a latency record holding n calls of us microseconds.
func recordOf(t *testing.T, us, n int64) string {
	t.Helper()
	h := stats.NewLatency()
	if err := h.RecordValues(us, n); err != nil {
		t.Fatal(err)
	}
	rec, err := stats.EncodeLatency(h)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// otherGeometry is a record of a geometry other than the latency records'.
func otherGeometry(t *testing.T) string {
	h := hdrhistogram.New(1, 60_000_000, 3)
	h.RecordValue(10)
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseErrors(t *testing.T) {
	full := writeFull(t)
	rec3 := recordOf(t, 9812, 3)
	tests := []struct {
		name string
		in   string
		want string // the error text
	}{
		{"empty", "", `not a report: the input is empty`},
		// Binary input is not a report, not a cut-short one.
		{"png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", `not a report: binary data (bytes that are not UTF-8 at byte 0); want the text of Apache Bench's or an rpcbed client's report`},
		{"gzip", "\x1f\x8b\x08\x00\x00\x00\x00\x00", `not a report: binary data (a NUL byte at byte 3); want the text of Apache Bench's or an rpcbed client's report`},
		{"not utf-8", "abc\n\xff\xfe garbage", `not a report: binary data (bytes that are not UTF-8 at byte 4); want the text of Apache Bench's or an rpcbed client's report`},
		{"text, not a report", "hello\nworld", `not a report: no line of Apache Bench's or an rpcbed client's report in it (docs/report-format.md)`},
		{"binary after a report line", "Server Software:        x\n\x00\x01", `line 2: "\x00\x01": no newline at the end: the report is cut short`},
		{"no rps", strings.Replace(abHead, "Requests per second", "Requests per sec", 1), `missing "Requests per second:" line`},
		{"no time", "Complete requests: 1\nRequests per second: 1.00 [#/sec] (mean)\n", `missing "Time taken for tests:" line`},
		{"bad rps", strings.Replace(abHead, "10.00", "abc", 1), `line 3: "Requests per second:    abc [#/sec] (mean)": bad number`},
		{"bad rps no unit", "Requests per second:    abc\n", `line 1: "Requests per second:    abc": bad number`},
		{"rps no unit", "Requests per second:    12.5\n", `line 1: "Requests per second:    12.5": want "[#/sec] (mean)" after the value`},
		{"time per request unit", "Time per request:       1.000 [ms]\n", `line 1: "Time per request:       1.000 [ms]": want "[ms] (mean)" or "[ms] (mean, across all concurrent requests)" after the value`},
		{"nan", strings.Replace(abHead, "1.000 seconds", "NaN seconds", 1), `line 1: "Time taken for tests:   NaN seconds": bad number`},
		{"exponent", strings.Replace(abHead, "1.000 seconds", "1e3 seconds", 1), `line 1: "Time taken for tests:   1e3 seconds": bad number`},
		{"bad count", strings.Replace(abHead, "10\n", "1O\n", 1), `line 2: "Complete requests:      1O": bad number`},
		{"plus count", strings.Replace(abHead, "10\n", "+10\n", 1), `line 2: "Complete requests:      +10": bad number`},
		{"repeated", abHead + "Complete requests:      10\n", `line 4: "Complete requests:      10": repeated line`},
		{"bad breakdown", abHead + "Failed requests: 1\n   (Connect: 0, Receive: x, Length: 0, Exceptions: 1)\n",
			`line 5: "   (Connect: 0, Receive: x, Length: 0, Exceptions: 1)": bad number`},
		{"unknown failure kind", abHead + "   (Connect: 0, Timeout: 1)\n", `line 4: "   (Connect: 0, Timeout: 1)": unknown failure kind "Timeout"`},
		{"document length", abHead + "Document Length:        12 kb\n", `line 4: "Document Length:        12 kb": want "N bytes" or "Variable"`},
		{"bad row", abHead + "\nConnection Times (ms)\nTotal:  1 2 3 4\n", `line 6: "Total:  1 2 3 4": want min mean sd median max`},
		{"row sd", abHead + "\nConnection Times (ms)\nTotal:  1 2 x 4 5\n", `line 6: "Total:  1 2 x 4 5": bad number`},
		{"out of place", abHead + "\nConnection Times (ms)\nServer Port: 80\n", `line 6: "Server Port: 80": "Server Port:" line after "Connection Times (ms)"`},
		{"second report", full + full, `line 79: "Server Software:        rpcbed-go-server": "Server Software:" line after "rpcbed report v1"`},
		{"bad percentile", abHead + pctHeading + "\n  50%     x\n", `line 5: "  50%     x": bad number`},
		{"percent range", abHead + pctHeading + "\n 150%     3\n", `line 5: " 150%     3": percent out of 0..100`},
		{"repeated percentile", abHead + pctHeading + "\n  50%     3\n  50%     4\n", `line 6: "  50%     4": repeated percentile`},
		{"no percent sign", abHead + pctHeading + "\n  50     3\n", `line 5: "  50     3": want N%  MS`},
		{"rpcbed version", abHead + "\nrpcbed report v2\n", `line 5: "rpcbed report v2": unsupported rpcbed report version (this parser reads rpcbed report v1)`},
		{"rpcbed missing key", replaceLine(t, full, "Latency p99.9:", ""), `rpcbed block: missing "Latency p99.9:" line`},
		{"rpcbed errors", replaceLine(t, full, "Errors:", "Errors:                 exceptions"), `line 64: "Errors:                 exceptions": want kind=count, got "exceptions"`},
		{"rpcbed errors count", replaceLine(t, full, "Errors:", "Errors:                 length=x"), `line 64: "Errors:                 length=x": bad number`},
		{"rpcbed errors repeated", replaceLine(t, full, "Errors:", "Errors:                 a=1 a=2"), `line 64: "Errors:                 a=1 a=2": repeated kind "a"`},
		{"rpcbed versions", replaceLine(t, full, "Versions:", "Versions:               go="), `line 65: "Versions:               go=": want name=version, got "go="`},
		{"rpcbed connections", replaceLine(t, full, "Connections:", "Connections:            4 (each)"), `line 52: "Connections:            4 (each)": want "K (shared)" or "K (per worker)"`},
		{"rpcbed warm-up", replaceLine(t, full, "Warm-up:", "Warm-up:                2.000 s, 5 calls excluded"), `line 55: "Warm-up:                2.000 s, 5 calls excluded": want "S seconds, N calls excluded"`},
		{"rpcbed client", replaceLine(t, full, "Client:", "Client:                 go php"), `line 48: "Client:                 go php": want one word`},
		{"rpcbed ab label", full + "Complete requests:      10\n", `line 72: "Complete requests:      10": "Complete requests:" line after "rpcbed report v1"`},

		// A report lacking a section it must have (issue 18 item 10).
		{"cut after rps", full[:strings.Index(full, "Time per request:")], `missing "Time per request:" line`},
		{"no transfer rate", replaceLine(t, full, "Transfer rate:", ""), `missing "Transfer rate:" line`},
		{"no server port", replaceLine(t, minimal, "Server Port:", ""), `missing "Server Port:" line`},
		{"failed without breakdown", replaceLine(t, full, "   (Connect:", ""),
			`missing "(Connect: N, Receive: N, Length: N, Exceptions: N)" line after "Failed requests:"`},
		{"no total row", replaceLine(t, full, "Total:", ""), `missing "Total:" row in "Connection Times (ms)"`},
		{"no connection times", full[:strings.Index(full, "\nConnection Times")+1], `missing "Connect:" row in "Connection Times (ms)"`},
		{"percentiles cut", replaceLine(t, full, " 100%", ""), `missing " 100%" row in "Percentage of the requests served within a certain time (ms)"`},
		{"no percentiles, 2 requests", strings.Replace(minimal, "Complete requests:      1\n", "Complete requests:      2\n", 1),
			`missing " 100%" row in "Percentage of the requests served within a certain time (ms)"`},
		{"cut inside versions", full[:strings.Index(full, "grpc=1.85.0")+8],
			`line 65: "Versions:               go=go1.26.8 grpc=1.8": no newline at the end: the report is cut short`},
		{"no newline", strings.TrimSuffix(full, "\n"), `line 71: "Warm-up settled:        yes": no newline at the end: the report is cut short`},
		{"v1.1 key missing", replaceLine(t, full, "Window end:", ""), `rpcbed block: missing "Window end:" line (a v1.1 report has all six v1.1 keys)`},
		{"v1.1 check", replaceLine(t, full, "Check:", "Check:                  fast"), `line 66: "Check:                  fast": want full, length`},
		{"v1.1 scope", replaceLine(t, full, "CPU scope:", "CPU scope:              run"), `line 68: "CPU scope:              run": want window, process`},
		{"v1.1 settled", replaceLine(t, full, "Warm-up settled:", "Warm-up settled:        maybe"), `line 71: "Warm-up settled:        maybe": want yes, no, fixed`},
		{"v1.1 window unit", replaceLine(t, full, "Window start:", "Window start:           1764577000.123456"),
			`line 69: "Window start:           1764577000.123456": want "[s]" after the value`},
		{"v1.1 window negative", replaceLine(t, full, "Window start:", "Window start:           -1.000000 [s]"),
			`line 69: "Window start:           -1.000000 [s]": want Unix seconds, not negative`},
		{"jit bad number", full + "JIT compile:            x [ms]\n", `line 72: "JIT compile:            x [ms]": bad number`},
		{"jit negative", full + "JIT compile:            -3 [ms]\n", `line 72: "JIT compile:            -3 [ms]": want milliseconds, not negative`},
		{"jit unit", full + "JIT compile:            12\n", `line 72: "JIT compile:            12": want "[ms]" after the value`},
		{"jit repeated", full + "JIT compile:            1 [ms]\nJIT compile:            2 [ms]\n", `line 73: "JIT compile:            2 [ms]": repeated line`},
		{"tls words", full + "TLS:                    TLSv1.3 X25519 ALPN=h2\nTLS handshakes:         0 (resumed 0)\n", `line 72: "TLS:                    TLSv1.3 X25519 ALPN=h2": want VERSION CIPHER-SUITE GROUP ALPN=PROTOCOL (- for what the client cannot tell)`},
		{"tls no alpn", full + "TLS:                    TLSv1.3 TLS_AES_128_GCM_SHA256 X25519 h2\nTLS handshakes:         0 (resumed 0)\n", `line 72: "TLS:                    TLSv1.3 TLS_AES_128_GCM_SHA256 X25519 h2": want VERSION CIPHER-SUITE GROUP ALPN=PROTOCOL (- for what the client cannot tell)`},
		{"tls alone", full + "TLS:                    TLSv1.3 TLS_AES_128_GCM_SHA256 X25519 ALPN=h2\n", `rpcbed block: "TLS:" and "TLS handshakes:" come together`},
		{"handshakes alone", full + "TLS handshakes:         3 (resumed 1)\n", `rpcbed block: "TLS:" and "TLS handshakes:" come together`},
		{"resumed above handshakes", full + "TLS handshakes:         3 (resumed 4)\n", `line 72: "TLS handshakes:         3 (resumed 4)": want 0 <= resumed <= handshakes`},
		{"handshakes shape", full + "TLS handshakes:         3 resumed 1\n", `line 72: "TLS handshakes:         3 resumed 1": want N (resumed R)`},
		{"connections opened", full + "Connections opened:     -1\n", `line 72: "Connections opened:     -1": want a count, not negative`},
		{"histogram unit", full + "Latency histogram:      " + rec3 + "\n", `line 72: "Latency histogram:      ` + rec3 + `": bad number`},
		{"histogram base64", full + "Latency histogram:      HIST%% [us]\n",
			`line 72: "Latency histogram:      HIST%% [us]": latency record: illegal base64 data at input byte 4`},
		{"histogram geometry", full + "Latency histogram:      " + otherGeometry(t) + " [us]\n",
			`line 72: "Latency histogram:      ` + otherGeometry(t) + ` [us]": latency record: geometry 1..60000000 us at 3 digits; want 1..3600000000 us at 3 digits`},
		{"histogram cut", full + "Latency histogram:      " + rec3[:len(rec3)-12] + " [us]\n",
			`line 72: "Latency histogram:      ` + rec3[:len(rec3)-12] + ` [us]": latency record: the compressed contents buffer is smaller than the lengthOfCompressedContents. got 31 want 38`},
		{"histogram more calls", full + "Latency histogram:      " + recordOf(t, 100, 10001) + " [us]\n",
			`line 72: "Latency histogram:      ` + recordOf(t, 100, 10001) + ` [us]": latency record holds 10001 calls, more than the 10000 complete requests`},
		{"histogram repeated", full + "Latency histogram:      " + rec3 + " [us]\nLatency histogram:      " + rec3 + " [us]\n",
			`line 73: "Latency histogram:      ` + rec3 + ` [us]": repeated line`},
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

func TestParseClient(t *testing.T) {
	if _, err := ParseClient(strings.NewReader(minimal)); err == nil || err.Error() != `missing the rpcbed block ("rpcbed report v1" and its keys)` {
		t.Errorf("ParseClient(ab output): got %v; want the missing block", err)
	}
	v10 := fullReport()
	v10.Rpcbed.Check, v10.Rpcbed.Runtime, v10.Rpcbed.CPUScope, v10.Rpcbed.WarmupSettled = "", "", "", ""
	v10.Rpcbed.WindowStart, v10.Rpcbed.WindowEnd = 0, 0
	var b bytes.Buffer
	if err := Write(&b, v10); err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(bytes.NewReader(b.Bytes())); err != nil {
		t.Errorf("Parse(a v1.0 report): %v", err)
	}
	if _, err := ParseClient(&b); err == nil || !strings.Contains(err.Error(), "v1.1 keys") {
		t.Errorf("ParseClient(a v1.0 report): got %v; want the missing v1.1 keys", err)
	}
	full := writeFull(t)
	got, err := ParseClient(strings.NewReader(full))
	if err != nil {
		t.Fatal(err)
	}
	if want := fullReport(); !reflect.DeepEqual(got, want) {
		t.Errorf("ParseClient = %+v; want %+v", got, want)
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
	r, err := Parse(strings.NewReader(strings.Replace(minimal, "Failed requests:        0\n",
		"Failed requests:        5\n   (Connect: 1, Length: 3, Exceptions: 1)\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Failures{Connect: 1, Length: 3, Exceptions: 1}); r.FailedBy != want || r.Failed != 5 {
		t.Errorf("Failed, FailedBy = %d, %+v; want 5, %+v", r.Failed, r.FailedBy, want)
	}
}

// TestParseRefusesPrefixes cuts real reports at every byte: only the whole report
// parses (issue 18 item 10: a cut one must never pass for a result). ab's output
// is read with Parse, a client's with ParseClient, as the driver reads it.
func TestParseRefusesPrefixes(t *testing.T) {
	for _, name := range []string{
		"write-full", // report v1.1, Write's layout
		"go-client-v11-grpc-datalist-200-c8-conns2-auto", // go-client
		"php-v11-grpc-datalist-200-c4-auto",              // php-client
		"java-v11-http-datatype-c2",                      // java-client
		"ab-go-datalist-200-c50-k",                       // real ab, progress lines
		"ab-go-n1",                                       // real ab, one request: no percentile table
		"ab-tiny-warning",                                // real ab, a warning inside the report
	} {
		t.Run(name, func(t *testing.T) {
			text, err := os.ReadFile("testdata/" + name + ".txt")
			if err != nil {
				t.Fatal(err)
			}
			parse := Parse
			if !strings.HasPrefix(name, "ab-") {
				parse = ParseClient
			}
			if _, err := parse(bytes.NewReader(text)); err != nil {
				t.Fatalf("the whole report: %v", err)
			}
			for n := 0; n < len(text); n++ {
				if _, err := parse(bytes.NewReader(text[:n])); err == nil {
					t.Errorf("a cut after %d of %d bytes parses: ...%q", n, len(text), text[max(0, n-40):n])
				}
			}
		})
	}
}

// TestParseLargestRecord: the longest "Latency histogram:" line a client can
// print (every bucket of the geometry holding a count that does not compress)
// is read, not skipped as an over-long line.
func TestParseLargestRecord(t *testing.T) {
	h := stats.NewLatency()
	r := rand.New(rand.NewPCG(27, 1))
	var total int64
	for v := int64(0); v <= stats.LatencyHighest; {
		n := 1 + r.Int64N(1<<40)
		if err := h.RecordValues(v, n); err != nil {
			t.Fatal(err)
		}
		total += n
		step := int64(1)
		if v >= 2048 {
			step = int64(1) << (bits.Len64(uint64(v)) - 11)
		}
		v += step
	}
	rec, err := stats.EncodeLatency(h)
	if err != nil {
		t.Fatal(err)
	}
	full := fullReport()
	full.Complete = total
	full.Rpcbed.LatencyHistogram = rec
	var b bytes.Buffer
	if err := Write(&b, full); err != nil {
		t.Fatal(err)
	}
	got, err := Parse(&b)
	if err != nil {
		t.Fatalf("Parse of a %d-byte record: %v", len(rec), err)
	}
	if got.Rpcbed.LatencyHistogram != rec {
		t.Fatalf("the %d-byte record was not kept", len(rec))
	}
	t.Logf("largest record: %d bytes of base64 (maxLine %d)", len(rec), maxLine)
}
