package report

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rpcbed/rpcbed/internal/stats"
)

// ParseError says which line Parse could not read, or which mandatory line it did
// not find (Line 0).
type ParseError struct {
	Line int    // 1-based; 0 when a mandatory line is missing
	Text string // the line as read
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d: %q: %s", e.Line, e.Text, e.Msg)
}

// maxLine bounds a line Parse looks at; longer lines (ab -v bodies) are skipped.
// The longest line Parse reads is "Latency histogram:": a record of the latency
// geometry is at most 23552 counts of at most 9 bytes, deflated and in base64.
const maxLine = 512 << 10

// Parse reads ApacheBench 2.3 output or an rpcbed client's report. It works line by
// line: a line whose label (the text before its first colon) is in the table of
// known labels for the current section is parsed by that label's setter; any other
// line (banner, progress, warnings, SSL lines, stderr mixed in) is ignored.
// Sections open on ab's headings: "Connection Times (ms)", "Percentage of the
// requests ...", and the rpcbed block's Marker.
//
// A report is whole or refused (a cut one must never pass for a result): every line
// ab 2.3 always prints for a run with timed requests is mandatory (the head from
// "Server Software:" to "Transfer rate:", the failure breakdown when requests
// failed, the four Connection Times rows, the percentile table through its 100%
// row when more than one request completed or an rpcbed block follows), every v1.0
// key of the rpcbed block once its marker was seen, the six v1.1 keys all or none,
// and the text must end with a newline (a last line without one was cut). ab -d
// output (no percentile table) is therefore refused.
func Parse(r io.Reader) (Report, error) {
	p := parser{}
	br := bufio.NewReaderSize(r, maxLine)
	n, off := 0, 0
	var cut []byte // the last line, when it has no newline
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Too long to be a line we know: skip to its end.
			n++
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return Report{}, fmt.Errorf("line %d: %w", n, err)
			}
			continue
		}
		if len(line) > 0 {
			n++
			if msg := p.binary(line, off); msg != "" {
				return Report{}, &ParseError{Msg: msg}
			}
			off += len(line)
			if line[len(line)-1] != '\n' {
				cut = line
			}
			line = bytes.TrimSuffix(line, []byte{'\n'})
			line = bytes.TrimSuffix(line, []byte{'\r'})
			if perr := p.line(line); perr != "" {
				return Report{}, &ParseError{Line: n, Text: string(line), Msg: perr}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return Report{}, fmt.Errorf("line %d: %w", n+1, err)
		}
	}
	if p.nothing() {
		if n == 0 {
			return Report{}, &ParseError{Msg: "not a report: the input is empty"}
		}
		return Report{}, &ParseError{Msg: "not a report: no line of Apache Bench's or an rpcbed client's report in it (docs/report-format.md)"}
	}
	if cut != nil {
		return Report{}, &ParseError{Line: n, Text: string(bytes.TrimSuffix(cut, []byte{'\r'})),
			Msg: "no newline at the end: the report is cut short"}
	}
	if msg := p.missing(); msg != "" {
		return Report{}, &ParseError{Msg: msg}
	}
	return p.r, nil
}

// ParseClient reads an rpcbed client's report as the driver needs it: as Parse,
// and the rpcbed block with its v1.1 keys is required too. A client's report cut
// before its block reads as whole ab output to Parse, and one cut right after
// "Versions:" as a whole v1.0 report; every rpcbed client prints v1.1.
func ParseClient(r io.Reader) (Report, error) {
	rep, err := Parse(r)
	switch {
	case err != nil:
		return Report{}, err
	case rep.Rpcbed == nil:
		return Report{}, &ParseError{Msg: fmt.Sprintf("missing the rpcbed block (%q and its keys)", Marker)}
	case !rep.Rpcbed.V11():
		return Report{}, &ParseError{Msg: `rpcbed block: missing the v1.1 keys ("Check:" to "Warm-up settled:")`}
	}
	return rep, nil
}

// nothing is whether no line so far was one of a report's.
func (p *parser) nothing() bool {
	return p.seen == 0 && p.sec == secHead && !p.breakdown && p.r.Rpcbed == nil
}

// binary says why line, at byte off of the input, makes the input binary data
// rather than a report, or "": a NUL byte or bytes that are not UTF-8 before any
// line of a report. (After one, such a line is one the parser does not know,
// or a known field's bad value.)
func (p *parser) binary(line []byte, off int) string {
	if !p.nothing() {
		return ""
	}
	what := ""
	if i := bytes.IndexByte(line, 0); i >= 0 {
		what, off = "a NUL byte", off+i
	} else if !utf8.Valid(line) {
		for i := 0; i < len(line); {
			r, size := utf8.DecodeRune(line[i:])
			if r == utf8.RuneError && size <= 1 {
				what, off = "bytes that are not UTF-8", off+i
				break
			}
			i += size
		}
	}
	if what == "" {
		return ""
	}
	return fmt.Sprintf("not a report: binary data (%s at byte %d); want the text of Apache Bench's or an rpcbed client's report", what, off)
}

type section int

const (
	secHead   section = iota // ab's figures
	secConn                  // "Connection Times (ms)"
	secPct                   // "Percentage of the requests served ..."
	secRpcbed                // after Marker
	nsec
)

const (
	connHeading = "Connection Times (ms)"
	pctHeading  = "Percentage of the requests served within a certain time (ms)"
)

var sectionName = [nsec]string{"ab figures", connHeading, pctHeading, Marker}

type parser struct {
	r         Report
	sec       section
	seen      uint64 // bit i: fields[i] was set
	breakdown bool
}

// setter parses a line's value (unit removed, spaces trimmed) into the report and
// returns what is wrong with it, or "".
type setter func(p *parser, v string) string

type field struct {
	sec   section
	label string // the text before the colon
	unit  string // what must follow the value, "" for none
	set   setter
}

var fields = slices.Concat(v10Fields, v11Fields, optionalFields)

// isV11 tells whether fields[i] is a v1.1 key.
func isV11(i int) bool { return i >= len(v10Fields) && i < len(v10Fields)+len(v11Fields) }

// isOptional tells whether fields[i] is a key a report may leave out.
func isOptional(i int) bool { return i >= len(v10Fields)+len(v11Fields) }

var v10Fields = []field{
	{secHead, "Server Software", "", str(func(p *parser) *string { return &p.r.ServerSoftware })},
	{secHead, "Server Hostname", "", str(func(p *parser) *string { return &p.r.ServerHostname })},
	{secHead, "Server Port", "", integer(func(p *parser) *int { return &p.r.ServerPort })},
	{secHead, "Document Path", "", str(func(p *parser) *string { return &p.r.DocumentPath })},
	{secHead, "Document Length", "", setDocumentLength},
	{secHead, "Concurrency Level", "", integer(func(p *parser) *int { return &p.r.Concurrency })},
	{secHead, "Time taken for tests", "seconds", float(func(p *parser) *float64 { return &p.r.TimeTakenSeconds })},
	{secHead, "Complete requests", "", count(func(p *parser) *int64 { return &p.r.Complete })},
	{secHead, "Failed requests", "", count(func(p *parser) *int64 { return &p.r.Failed })},
	{secHead, "Write errors", "", count(func(p *parser) *int64 { return &p.r.WriteErrors })},
	{secHead, "Non-2xx responses", "", count(func(p *parser) *int64 { return &p.r.Non2xx })},
	{secHead, "Keep-Alive requests", "", count(func(p *parser) *int64 { return &p.r.KeepAlive })},
	{secHead, "Total transferred", "bytes", count(func(p *parser) *int64 { return &p.r.TotalTransferred })},
	{secHead, "HTML transferred", "bytes", count(func(p *parser) *int64 { return &p.r.HTMLTransferred })},
	{secHead, "Requests per second", "[#/sec] (mean)", float(func(p *parser) *float64 { return &p.r.RequestsPerSecond })},
	{secHead, "Time per request", "[ms] (mean)", float(func(p *parser) *float64 { return &p.r.TimePerRequestMs })},
	{secHead, "Time per request", "[ms] (mean, across all concurrent requests)", float(func(p *parser) *float64 { return &p.r.TimePerRequestAllMs })},
	{secHead, "Transfer rate", "[Kbytes/sec] received", float(func(p *parser) *float64 { return &p.r.TransferRateKBps })},

	{secConn, "Connect", "", row(func(p *parser) *ConnRow { return &p.r.Connect })},
	{secConn, "Processing", "", row(func(p *parser) *ConnRow { return &p.r.Processing })},
	{secConn, "Waiting", "", row(func(p *parser) *ConnRow { return &p.r.Waiting })},
	{secConn, "Total", "", row(func(p *parser) *ConnRow { return &p.r.Total })},

	{secRpcbed, "Client", "", word(func(p *parser) *string { return &p.r.Rpcbed.Client })},
	{secRpcbed, "Protocol", "", word(func(p *parser) *string { return &p.r.Rpcbed.Protocol })},
	{secRpcbed, "Call", "", word(func(p *parser) *string { return &p.r.Rpcbed.Call })},
	{secRpcbed, "Items", "", integer(func(p *parser) *int { return &p.r.Rpcbed.Items })},
	{secRpcbed, "Connections", "", setConnections},
	{secRpcbed, "Loop", "", word(func(p *parser) *string { return &p.r.Rpcbed.Loop })},
	{secRpcbed, "Target rate", "[#/sec]", integer(func(p *parser) *int { return &p.r.Rpcbed.TargetRate })},
	{secRpcbed, "Warm-up", "calls excluded", setWarmup},
	{secRpcbed, "Latency p50", "[us]", count(func(p *parser) *int64 { return &p.r.Rpcbed.P50Us })},
	{secRpcbed, "Latency p90", "[us]", count(func(p *parser) *int64 { return &p.r.Rpcbed.P90Us })},
	{secRpcbed, "Latency p99", "[us]", count(func(p *parser) *int64 { return &p.r.Rpcbed.P99Us })},
	{secRpcbed, "Latency p99.9", "[us]", count(func(p *parser) *int64 { return &p.r.Rpcbed.P999Us })},
	{secRpcbed, "Latency mean", "[us]", float(func(p *parser) *float64 { return &p.r.Rpcbed.MeanUs })},
	{secRpcbed, "Latency max", "[us]", count(func(p *parser) *int64 { return &p.r.Rpcbed.MaxUs })},
	{secRpcbed, "Client CPU user", "[s]", float(func(p *parser) *float64 { return &p.r.Rpcbed.CPUUserSeconds })},
	{secRpcbed, "Client CPU system", "[s]", float(func(p *parser) *float64 { return &p.r.Rpcbed.CPUSystemSeconds })},
	{secRpcbed, "Errors", "", setErrors},
	{secRpcbed, "Versions", "", setVersions},
}

// v11Fields are the keys report v1.1 added (docs/report-format.md): all six or
// none, so a v1.0 report still parses.
var v11Fields = []field{
	{secRpcbed, "Check", "", oneOf(func(p *parser) *string { return &p.r.Rpcbed.Check }, CheckFull, CheckLength)},
	{secRpcbed, "Runtime", "", word(func(p *parser) *string { return &p.r.Rpcbed.Runtime })},
	{secRpcbed, "CPU scope", "", oneOf(func(p *parser) *string { return &p.r.Rpcbed.CPUScope }, ScopeWindow, ScopeProcess)},
	{secRpcbed, "Window start", "[s]", unixTime(func(p *parser) *float64 { return &p.r.Rpcbed.WindowStart })},
	{secRpcbed, "Window end", "[s]", unixTime(func(p *parser) *float64 { return &p.r.Rpcbed.WindowEnd })},
	{secRpcbed, "Warm-up settled", "", oneOf(func(p *parser) *string { return &p.r.Rpcbed.WarmupSettled }, SettledYes, SettledNo, SettledFixed)},
}

// optionalFields are keys a report may leave out: "JIT compile:" (java-client, the
// JVM's compile time within the window), "Latency histogram:" (every client
// since it was added; absent from older saved runs), "TLS:" with "TLS
// handshakes:" (a client that used TLS) and "Connections opened:" (-connect
// per-call).
var optionalFields = []field{
	{secRpcbed, "JIT compile", "[ms]", func(p *parser, v string) string {
		n, msg := parseCount(v)
		if msg != "" {
			return msg
		}
		if n < 0 {
			return "want milliseconds, not negative"
		}
		p.r.Rpcbed.JITCompileMs = &n
		return ""
	}},
	{secRpcbed, "Latency histogram", "[us]", setLatencyHistogram},
	{secRpcbed, "TLS", "", setTLS},
	{secRpcbed, "TLS handshakes", "", setTLSHandshakes},
	{secRpcbed, "Connections opened", "", func(p *parser, v string) string {
		n, msg := parseCount(v)
		if msg != "" {
			return msg
		}
		if n < 0 {
			return "want a count, not negative"
		}
		p.r.Rpcbed.ConnectionsOpened = &n
		return ""
	}},
}

// setTLS reads "TLSv1.3 TLS_AES_128_GCM_SHA256 X25519 ALPN=h2": four words,
// the last ALPN=.
func setTLS(p *parser, v string) string {
	f := strings.Fields(v)
	if len(f) != 4 || !strings.HasPrefix(f[3], "ALPN=") || len(f[3]) == len("ALPN=") {
		return "want VERSION CIPHER-SUITE GROUP ALPN=PROTOCOL (- for what the client cannot tell)"
	}
	t := p.tls()
	t.Version, t.CipherSuite, t.Group, t.ALPN = f[0], f[1], f[2], f[3][len("ALPN="):]
	return ""
}

// setTLSHandshakes reads "N (resumed R)", R at most N.
func setTLSHandshakes(p *parser, v string) string {
	const want = "want N (resumed R)"
	n, rest, ok := strings.Cut(v, " ")
	r, ok2 := strings.CutPrefix(rest, "(resumed ")
	r, ok3 := strings.CutSuffix(r, ")")
	if !ok || !ok2 || !ok3 {
		return want
	}
	hs, msg := parseCount(n)
	if msg != "" {
		return msg
	}
	res, msg := parseCount(r)
	if msg != "" {
		return msg
	}
	if hs < 0 || res < 0 || res > hs {
		return "want 0 <= resumed <= handshakes"
	}
	t := p.tls()
	t.Handshakes, t.Resumed = hs, res
	return ""
}

func (p *parser) tls() *TLS {
	if p.r.Rpcbed.TLS == nil {
		p.r.Rpcbed.TLS = &TLS{}
	}
	return p.r.Rpcbed.TLS
}

// setLatencyHistogram keeps the record verbatim (a merge reads it later) once it
// decodes with the records' geometry and holds no more calls than completed.
func setLatencyHistogram(p *parser, v string) string {
	h, err := stats.DecodeLatency(v)
	if err != nil {
		return err.Error()
	}
	// "Complete requests:" is a head line, so it was read before the rpcbed block.
	if n := h.TotalCount(); n > p.r.Complete {
		return fmt.Sprintf("latency record holds %d calls, more than the %d complete requests", n, p.r.Complete)
	}
	p.r.Rpcbed.LatencyHistogram = v
	return ""
}

// byLabel maps a label to its indexes in fields (two for "Time per request").
var byLabel = func() map[string][]int {
	if len(fields) > 64 {
		panic("report: more fields than parser.seen has bits")
	}
	m := make(map[string][]int, len(fields))
	for i, f := range fields {
		m[f.label] = append(m[f.label], i)
	}
	return m
}()

// optionalHead are the ab head lines ab prints only sometimes.
var optionalHead = map[string]bool{"Write errors": true, "Non-2xx responses": true, "Keep-Alive requests": true}

// headOrder is the order missing() names absent head lines in: the three that say
// most first, then ab's own order.
var headOrder = func() []int {
	first := []string{"Complete requests", "Time taken for tests", "Requests per second"}
	var order []int
	for _, l := range first {
		order = append(order, byLabel[l][0])
	}
	for i, f := range fields {
		if f.sec == secHead && !optionalHead[f.label] && !slices.Contains(order, i) {
			order = append(order, i)
		}
	}
	return order
}()

func (p *parser) line(line []byte) string {
	t := bytes.TrimSpace(line)
	switch {
	case len(t) == 0:
		return ""
	case string(t) == connHeading:
		return p.open(secConn)
	case string(t) == pctHeading:
		return p.open(secPct)
	case string(t) == Marker:
		if msg := p.open(secRpcbed); msg != "" {
			return msg
		}
		p.r.Rpcbed = &Extra{}
		return ""
	case bytes.HasPrefix(t, []byte("rpcbed report v")):
		return "unsupported rpcbed report version (this parser reads " + Marker + ")"
	case p.sec == secHead && bytes.HasPrefix(t, []byte("(Connect:")):
		return p.setBreakdown(string(t))
	case p.sec == secPct && t[0] >= '0' && t[0] <= '9':
		return p.setPercentile(string(t))
	}

	colon := bytes.IndexByte(line, ':')
	if colon < 0 {
		return ""
	}
	idx, ok := byLabel[string(line[:colon])]
	if !ok {
		return ""
	}
	f := fields[idx[0]]
	if f.sec > p.sec {
		return "" // a later section's label before that section: not ours
	}
	if f.sec < p.sec {
		return fmt.Sprintf("%q line after %q", f.label+":", sectionName[p.sec])
	}
	v := string(bytes.TrimSpace(line[colon+1:]))
	i, v, msg := match(idx, v)
	if msg != "" {
		return msg
	}
	if p.seen&(1<<i) != 0 {
		return "repeated line"
	}
	p.seen |= 1 << i
	return fields[i].set(p, v)
}

// match picks, among the fields sharing a label, the one whose unit ends v, and
// returns v without its unit.
func match(idx []int, v string) (int, string, string) {
	for _, i := range idx {
		u := fields[i].unit
		if u == "" {
			return i, v, ""
		}
		if rest, ok := strings.CutSuffix(v, u); ok {
			return i, strings.TrimSpace(rest), ""
		}
	}
	if num, _, _ := strings.Cut(v, " "); !isNumber(num) {
		return 0, "", "bad number"
	}
	units := make([]string, len(idx))
	for k, i := range idx {
		units[k] = strconv.Quote(fields[i].unit)
	}
	return 0, "", "want " + strings.Join(units, " or ") + " after the value"
}

func (p *parser) open(s section) string {
	if p.sec >= s {
		return fmt.Sprintf("section %q after %q", sectionName[s], sectionName[p.sec])
	}
	p.sec = s
	return ""
}

func (p *parser) missing() string {
	for _, i := range headOrder {
		if p.seen&(1<<i) == 0 {
			return fmt.Sprintf("missing %q line", fields[i].label+":")
		}
	}
	if p.r.Failed > 0 && !p.breakdown {
		return `missing "(Connect: N, Receive: N, Length: N, Exceptions: N)" line after "Failed requests:"`
	}
	for i, f := range fields {
		if f.sec == secConn && p.seen&(1<<i) == 0 {
			return fmt.Sprintf("missing %q row in %q", f.label+":", connHeading)
		}
	}
	if p.sec >= secPct || p.r.Complete > 1 || p.r.Rpcbed != nil {
		if !slices.ContainsFunc(p.r.Percentiles, func(q Percentile) bool { return q.Percent == 100 }) {
			return fmt.Sprintf("missing \" 100%%\" row in %q", pctHeading)
		}
	}
	if p.r.Rpcbed == nil {
		return ""
	}
	v11 := false
	for i := range fields {
		if isV11(i) && p.seen&(1<<i) != 0 {
			v11 = true
		}
	}
	if tl, hs := byLabel["TLS"][0], byLabel["TLS handshakes"][0]; (p.seen&(1<<tl) == 0) != (p.seen&(1<<hs) == 0) {
		return `rpcbed block: "TLS:" and "TLS handshakes:" come together`
	}
	for i, f := range fields {
		if f.sec == secRpcbed && !isOptional(i) && (!isV11(i) || v11) && p.seen&(1<<i) == 0 {
			if isV11(i) {
				return fmt.Sprintf("rpcbed block: missing %q line (a v1.1 report has all six v1.1 keys)", f.label+":")
			}
			return fmt.Sprintf("rpcbed block: missing %q line", f.label+":")
		}
	}
	return ""
}

// setBreakdown reads "(Connect: 0, Receive: 0, Length: 0, Exceptions: 3)"; older
// ab versions leave out Receive.
func (p *parser) setBreakdown(t string) string {
	if p.breakdown {
		return "repeated line"
	}
	p.breakdown = true
	in, ok := strings.CutPrefix(t, "(")
	if in, ok = strings.CutSuffix(in, ")"); !ok {
		return "want (Connect: N, Receive: N, Length: N, Exceptions: N)"
	}
	f := &p.r.FailedBy
	for part := range strings.SplitSeq(in, ",") {
		name, num, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return "want (Connect: N, Receive: N, Length: N, Exceptions: N)"
		}
		var dst *int64
		switch name {
		case "Connect":
			dst = &f.Connect
		case "Receive":
			dst = &f.Receive
		case "Length":
			dst = &f.Length
		case "Exceptions":
			dst = &f.Exceptions
		default:
			return fmt.Sprintf("unknown failure kind %q", name)
		}
		n, msg := parseCount(strings.TrimSpace(num))
		if msg != "" {
			return msg
		}
		*dst = n
	}
	return ""
}

// setPercentile reads "  50%     10" and " 100%     31 (longest request)".
func (p *parser) setPercentile(t string) string {
	pct, rest, ok := strings.Cut(t, "%")
	if !ok {
		return "want N%  MS"
	}
	percent, msg := parseInt(pct)
	if msg != "" {
		return msg
	}
	if percent < 0 || percent > 100 {
		return "percent out of 0..100"
	}
	ms, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
	v, msg := parseCount(ms)
	if msg != "" {
		return msg
	}
	for _, q := range p.r.Percentiles {
		if q.Percent == percent {
			return "repeated percentile"
		}
	}
	if p.r.Percentiles == nil {
		p.r.Percentiles = make([]Percentile, 0, 9)
	}
	p.r.Percentiles = append(p.r.Percentiles, Percentile{Percent: percent, Ms: v})
	return ""
}

func str(dst func(*parser) *string) setter {
	return func(p *parser, v string) string {
		*dst(p) = v
		return ""
	}
}

// word is a non-empty value without spaces (client, protocol, call, loop).
func word(dst func(*parser) *string) setter {
	return func(p *parser, v string) string {
		if v == "" || strings.ContainsAny(v, " \t") {
			return "want one word"
		}
		*dst(p) = v
		return ""
	}
}

// oneOf is a value out of a fixed set.
func oneOf(dst func(*parser) *string, values ...string) setter {
	return func(p *parser, v string) string {
		if !slices.Contains(values, v) {
			return "want " + strings.Join(values, ", ")
		}
		*dst(p) = v
		return ""
	}
}

// unixTime is a non-negative wall-clock time in Unix seconds.
func unixTime(dst func(*parser) *float64) setter {
	return func(p *parser, v string) string {
		f, msg := parseFloat(v)
		if msg != "" {
			return msg
		}
		if f < 0 {
			return "want Unix seconds, not negative"
		}
		*dst(p) = f
		return ""
	}
}

func integer(dst func(*parser) *int) setter {
	return func(p *parser, v string) string {
		n, msg := parseInt(v)
		if msg != "" {
			return msg
		}
		*dst(p) = n
		return ""
	}
}

func count(dst func(*parser) *int64) setter {
	return func(p *parser, v string) string {
		n, msg := parseCount(v)
		if msg != "" {
			return msg
		}
		*dst(p) = n
		return ""
	}
}

func float(dst func(*parser) *float64) setter {
	return func(p *parser, v string) string {
		f, msg := parseFloat(v)
		if msg != "" {
			return msg
		}
		*dst(p) = f
		return ""
	}
}

// row reads a "Connection Times (ms)" row: min mean sd median max, or ab -S's
// min avg max.
func row(dst func(*parser) *ConnRow) setter {
	return func(p *parser, v string) string {
		var c ConnRow
		var msg string
		switch f := strings.Fields(v); len(f) {
		case 5:
			if c.Min, msg = parseCount(f[0]); msg != "" {
				return msg
			}
			if c.Mean, msg = parseCount(f[1]); msg != "" {
				return msg
			}
			if c.SD, msg = parseFloat(f[2]); msg != "" {
				return msg
			}
			if c.Median, msg = parseCount(f[3]); msg != "" {
				return msg
			}
			if c.Max, msg = parseCount(f[4]); msg != "" {
				return msg
			}
		case 3:
			if c.Min, msg = parseCount(f[0]); msg != "" {
				return msg
			}
			if c.Mean, msg = parseCount(f[1]); msg != "" {
				return msg
			}
			if c.Max, msg = parseCount(f[2]); msg != "" {
				return msg
			}
		default:
			return "want min mean sd median max"
		}
		*dst(p) = c
		return ""
	}
}

func setDocumentLength(p *parser, v string) string {
	if v == "Variable" {
		p.r.VariableLength = true
		return ""
	}
	num, ok := strings.CutSuffix(v, "bytes")
	if !ok {
		return `want "N bytes" or "Variable"`
	}
	n, msg := parseCount(strings.TrimSpace(num))
	if msg != "" {
		return msg
	}
	p.r.DocumentLength = n
	return ""
}

// setConnections reads "K (shared)" or "K (per worker)".
func setConnections(p *parser, v string) string {
	num, kind, _ := strings.Cut(v, " ")
	switch strings.TrimSpace(kind) {
	case "(shared)":
		p.r.Rpcbed.SharedConnections = true
	case "(per worker)":
		p.r.Rpcbed.SharedConnections = false
	default:
		return `want "K (shared)" or "K (per worker)"`
	}
	n, msg := parseInt(num)
	if msg != "" {
		return msg
	}
	p.r.Rpcbed.Connections = n
	return ""
}

// setWarmup reads "2.000 seconds, 812" ("calls excluded" is already cut off).
func setWarmup(p *parser, v string) string {
	secs, calls, ok := strings.Cut(v, "seconds,")
	if !ok {
		return `want "S seconds, N calls excluded"`
	}
	f, msg := parseFloat(strings.TrimSpace(secs))
	if msg != "" {
		return msg
	}
	n, msg := parseCount(strings.TrimSpace(calls))
	if msg != "" {
		return msg
	}
	p.r.Rpcbed.WarmupSeconds, p.r.Rpcbed.WarmupCalls = f, n
	return ""
}

func setErrors(p *parser, v string) string {
	if v == "none" {
		return ""
	}
	m := map[string]int64{}
	for pair := range strings.FieldsSeq(v) {
		k, num, ok := strings.Cut(pair, "=")
		if !ok || k == "" {
			return fmt.Sprintf("want kind=count, got %q", pair)
		}
		if _, dup := m[k]; dup {
			return fmt.Sprintf("repeated kind %q", k)
		}
		n, msg := parseCount(num)
		if msg != "" {
			return msg
		}
		m[k] = n
	}
	if len(m) == 0 {
		return `want kind=count pairs or "none"`
	}
	p.r.Rpcbed.Errors = m
	return ""
}

func setVersions(p *parser, v string) string {
	if v == "none" {
		return ""
	}
	m := map[string]string{}
	for pair := range strings.FieldsSeq(v) {
		k, ver, ok := strings.Cut(pair, "=")
		if !ok || k == "" || ver == "" {
			return fmt.Sprintf("want name=version, got %q", pair)
		}
		if _, dup := m[k]; dup {
			return fmt.Sprintf("repeated name %q", k)
		}
		m[k] = ver
	}
	if len(m) == 0 {
		return `want name=version pairs or "none"`
	}
	p.r.Rpcbed.Versions = m
	return ""
}

func parseCount(s string) (int64, string) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || s[0] == '+' {
		return 0, "bad number"
	}
	return n, ""
}

func parseInt(s string) (int, string) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || s[0] == '+' {
		return 0, "bad number"
	}
	return int(n), ""
}

// parseFloat takes plain decimals only ("12", "-0.5", "4967.71"): no exponents,
// NaN or Inf, which JSON cannot carry and ab never prints.
func parseFloat(s string) (float64, string) {
	digits := strings.TrimPrefix(s, "-")
	whole, frac, dot := strings.Cut(digits, ".")
	if whole == "" || !allDigits(whole) || (dot && (frac == "" || !allDigits(frac))) {
		return 0, "bad number"
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, "bad number"
	}
	return f, ""
}

func isNumber(s string) bool {
	_, msg := parseFloat(s)
	return msg == ""
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
