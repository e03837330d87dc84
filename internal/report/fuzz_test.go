package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/stats"
)

// FuzzParse: no input panics; an error names a real line of the input (or, for a
// missing mandatory line, says so); a report that parses can be written, parsed
// again and stays the same after that one normalisation, and is valid JSON; a
// latency record it kept decodes and holds no more calls than completed.
// reportLine matches a line a report could be recognised by: a label and its
// colon, a section heading or a percentile row.
var reportLine = regexp.MustCompile(`(?m)^[A-Za-z (][^:\n]*:|^ *[0-9]+%|Connection Times|Percentage of the requests`)

func FuzzParse(f *testing.F) {
	ins, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		f.Fatal(err)
	}
	for _, in := range ins {
		text, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(text)
	}
	f.Add([]byte(minimal))
	f.Add([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	f.Add([]byte("\x7fELF\x02\x01\x01\x00"))
	f.Add([]byte("Server Software:        x\n\xff\xfe"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(bytes.NewReader(data))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %q is not a *ParseError", err, err)
			}
			if strings.Contains(pe.Msg, "cut short") && !reportLine.Match(data) {
				t.Fatalf("%q: cut short, with no line of a report in it; want not a report", err)
			}
			if pe.Line == 0 {
				if !strings.Contains(pe.Msg, "missing") && !strings.HasPrefix(pe.Msg, "not a report: ") {
					t.Fatalf("error without a line: %q", pe.Msg)
				}
				return
			}
			lines := strings.Split(string(data), "\n")
			if pe.Line > len(lines) {
				t.Fatalf("error names line %d of %d: %q", pe.Line, len(lines), err)
			}
			if want := strings.TrimSuffix(lines[pe.Line-1], "\r"); pe.Text != want {
				t.Fatalf("error names line %d as %q; the line is %q", pe.Line, pe.Text, want)
			}
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("error %q does not start with its line", err)
			}
			return
		}
		if r.Rpcbed != nil && r.Rpcbed.LatencyHistogram != "" {
			h, err := stats.DecodeLatency(r.Rpcbed.LatencyHistogram)
			if err != nil {
				t.Fatalf("kept a latency record that does not decode: %v", err)
			}
			if h.TotalCount() > r.Complete {
				t.Fatalf("kept a latency record of %d calls; %d complete", h.TotalCount(), r.Complete)
			}
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatalf("json.Marshal(Parse(data)): %v", err)
		}
		var b bytes.Buffer
		if err := Write(&b, r); err != nil {
			t.Fatal(err)
		}
		text := b.String()
		r2, err := Parse(&b)
		if err != nil {
			t.Fatalf("Parse(Write(Parse(data))): %v\n%s", err, text)
		}
		b.Reset()
		if err := Write(&b, r2); err != nil {
			t.Fatal(err)
		}
		r3, err := Parse(&b)
		if err != nil {
			t.Fatalf("Parse(Write(r2)): %v", err)
		}
		if !reflect.DeepEqual(r2, r3) {
			t.Fatalf("Write/Parse not stable:\n%+v\n%+v", r2, r3)
		}
	})
}
