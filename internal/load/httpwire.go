package load

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
)

// The HTTP/1.1 wire of load-generator mode (-check length with -k): the request is
// rendered once per connection, and only the head of each response is parsed (the
// status line, Content-Length, Transfer-Encoding, Connection and X-Token; every
// other header is skipped), as wrk does. -check full stays on net/http's codec
// (http.go), as Go callers use it.

// Limits of what a response may claim, so that a hostile or broken server cannot
// make the reader hold or wait for more than it should.
const (
	maxHead = 16 << 10 // status line and headers
	maxBody = 1 << 30  // Content-Length; go-server's largest answer is about 11 MB
)

// respHead is what length mode reads from a response head.
type respHead struct {
	status  int
	length  int64  // Content-Length
	close   bool   // the server closes the connection after this response
	token   []byte // X-Token's value; aliases the parsed buffer
	headLen int    // bytes of the status line, the headers and the blank line
}

// errHeadShort: the buffer does not hold the whole head yet.
var errHeadShort = errors.New("response head incomplete")

// parseHead parses the response head at the start of b into h. It returns
// errHeadShort while the head is incomplete (and shorter than maxHead), or an
// error that says what is wrong with it.
//
// It reads the head once, line by line: one IndexByte for each line's end and
// one for its colon, and only the four headers it needs are compared by name
// (after their length). Every line must end in CRLF. (Searching for the blank
// line first and then splitting, as an earlier version did, cost about 4000
// instructions per response in callgrind, two thirds of the loop's.)
func parseHead(b []byte, h *respHead) error {
	lim := b[:min(len(b), maxHead)]
	*h = respHead{length: -1}
	eol := bytes.IndexByte(lim, '\n')
	if eol < 0 {
		return headShort(b)
	}
	if eol == 0 || lim[eol-1] != '\r' {
		return fmt.Errorf("malformed status line %q", clip(lim[:eol]))
	}
	line := lim[:eol-1]
	pos := eol + 1

	// HTTP/1.1 200 OK; the reason phrase may be empty or missing.
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || (line[7] != '0' && line[7] != '1') ||
		line[8] != ' ' || (len(line) > 12 && line[12] != ' ') {
		return fmt.Errorf("malformed status line %q", clip(line))
	}
	http10 := line[7] == '0'
	c0, c1, c2 := line[9]-'0', line[10]-'0', line[11]-'0' // bytes: below '0' wraps above 9
	if c0 > 9 || c1 > 9 || c2 > 9 {
		return fmt.Errorf("malformed status code in %q", clip(line))
	}
	h.status = int(c0)*100 + int(c1)*10 + int(c2)
	if h.status < 200 {
		return fmt.Errorf("unexpected interim status in %q", clip(line))
	}
	keepAlive10 := false

	for {
		eol := bytes.IndexByte(lim[pos:], '\n')
		if eol < 0 {
			return headShort(b)
		}
		end := pos + eol // the line's LF
		if eol == 0 || lim[end-1] != '\r' {
			return fmt.Errorf("malformed header line %q (no CR before its LF)", clip(lim[pos:end]))
		}
		line := lim[pos : end-1]
		pos = end + 1
		if len(line) == 0 {
			break // the blank line
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || line[0] == ' ' || line[0] == '\t' {
			return fmt.Errorf("malformed header line %q", clip(line))
		}
		name := line[:colon]
		if hasSpaceTab(name) {
			return fmt.Errorf("malformed header name %q", clip(name))
		}
		// Only these four are read; their names differ in length.
		switch len(name) {
		case len("content-length"), len("transfer-encoding"), len("connection"), len("x-token"):
		default:
			continue
		}
		value := trimSpaceTab(line[colon+1:])
		switch {
		case foldEq(name, "content-length"):
			n, err := parseLength(value)
			if err != nil {
				return err
			}
			if h.length >= 0 && h.length != n {
				return fmt.Errorf("two Content-Length headers: %d and %d", h.length, n)
			}
			h.length = n
		case foldEq(name, "transfer-encoding"):
			return fmt.Errorf("Transfer-Encoding %q: load-generator mode reads Content-Length bodies only (use -check full)", clip(value))
		case foldEq(name, "connection"):
			switch {
			case foldEq(value, "close"):
				h.close = true
			case foldEq(value, "keep-alive"):
				keepAlive10 = true
			}
		case foldEq(name, "x-token"):
			h.token = value
		}
	}
	h.headLen = pos
	if http10 && !keepAlive10 {
		h.close = true
	}
	if h.length < 0 {
		if h.status == 204 || h.status == 304 {
			h.length = 0
		} else {
			return errors.New("response has no Content-Length: load-generator mode reads Content-Length bodies only (use -check full)")
		}
	}
	return nil
}

// headShort is the error for a head whose blank line is not in b: wait for more,
// unless maxHead bytes came without it.
func headShort(b []byte) error {
	if len(b) >= maxHead {
		return fmt.Errorf("response head longer than %d bytes", maxHead)
	}
	return errHeadShort
}

// hasSpaceTab tells whether b holds a space or a tab, eight bytes at a time
// (a byte-by-byte loop over every header name cost about 400 instructions per
// response in callgrind).
func hasSpaceTab(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(b) >= 8 {
		v := binary.LittleEndian.Uint64(b)
		sp, tab := v^(' '*ones), v^('\t'*ones) // a zero byte where b has one
		if ((sp-ones)&^sp|(tab-ones)&^tab)&highs != 0 {
			return true
		}
		b = b[8:]
	}
	for _, c := range b {
		if c == ' ' || c == '\t' {
			return true
		}
	}
	return false
}

// trimSpaceTab is bytes.Trim(v, " \t") without its set.
func trimSpaceTab(v []byte) []byte {
	i, j := 0, len(v)
	for i < j && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	for j > i && (v[j-1] == ' ' || v[j-1] == '\t') {
		j--
	}
	return v[i:j]
}

var (
	crlf     = []byte("\r\n")
	crlfcrlf = []byte("\r\n\r\n")
)

// parseLength reads a Content-Length value: decimal digits only, at most maxBody.
func parseLength(v []byte) (int64, error) {
	if len(v) == 0 || len(v) > 10 {
		return 0, fmt.Errorf("bad Content-Length %q", clip(v))
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad Content-Length %q", clip(v))
		}
		n = n*10 + int64(c-'0')
	}
	if n > maxBody {
		return 0, fmt.Errorf("Content-Length %d is over the %d-byte limit", n, maxBody)
	}
	return n, nil
}

// foldEq tells whether b equals the lower-case ASCII string s, ignoring case.
func foldEq(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// clip keeps an error message short whatever a server sent.
func clip(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// renderRequest appends the GET request of cfg, with token when it is not empty,
// to dst. It sends what go-client's net/http requests send: Host, User-Agent,
// X-Client-Id and X-Token.
func renderRequest(dst []byte, cfg *Config, token []byte) []byte {
	dst = append(dst, "GET "...)
	dst = append(dst, cfg.httpPath()...)
	dst = append(dst, " HTTP/1.1\r\nHost: "...)
	dst = append(dst, cfg.Addr...)
	dst = append(dst, "\r\nUser-Agent: rpcbed-go-client\r\nX-Client-Id: "...)
	dst = append(dst, cfg.ClientID...)
	if len(token) > 0 {
		dst = append(dst, "\r\nX-Token: "...)
		dst = append(dst, token...)
	}
	return append(dst, "\r\n\r\n"...)
}

// statusOutcome maps a non-2xx status to the failure kinds of http.go.
func statusOutcome(status int) outcome {
	err := errors.New("HTTP " + strconv.Itoa(status))
	switch status {
	case 401:
		return fail(kindUnauthenticated, err)
	case 400:
		return fail(kindInvalidArgument, err)
	}
	return fail(kindExceptions, err)
}
