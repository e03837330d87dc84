package load

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

const okHead = "HTTP/1.1 200 OK\r\nContent-Length: 129\r\nContent-Type: application/json\r\nServer: rpcbed-go-server\r\nX-Token: tok1\r\n\r\n"

func TestParseHead(t *testing.T) {
	long := "HTTP/1.1 200 OK\r\nX-Pad: " + strings.Repeat("a", maxHead) + "\r\nContent-Length: 1\r\n\r\n"
	cases := []struct {
		name   string
		in     string
		status int
		length int64
		close  bool
		token  string
		err    string // "" = no error; "short" = errHeadShort
	}{
		{name: "go-server", in: okHead + "{...}", status: 200, length: 129, token: "tok1"},
		{name: "no reason", in: "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", status: 200},
		{name: "case and spaces", in: "HTTP/1.1 200 OK\r\ncontent-LENGTH:   7 \r\nx-token:\tt\r\n\r\n", status: 200, length: 7, token: "t"},
		{name: "401", in: "HTTP/1.1 401 Unauthorized\r\nContent-Length: 3\r\n\r\n", status: 401, length: 3},
		{name: "204 without length", in: "HTTP/1.1 204 No Content\r\n\r\n", status: 204},
		{name: "connection close", in: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", status: 200, close: true},
		{name: "http/1.0 closes", in: "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", status: 200, close: true},
		{name: "http/1.0 keep-alive", in: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", status: 200},
		{name: "same length twice", in: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", status: 200, length: 5},

		{name: "incomplete", in: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n", err: "short"},
		{name: "empty", in: "", err: "short"},
		{name: "head too long", in: long, err: "longer than"},
		{name: "endless head", in: "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("b", maxHead), err: "longer than"},
		{name: "not http", in: "SSH-2.0-OpenSSH\r\n\r\n", err: "malformed status line"},
		{name: "http/2", in: "HTTP/2 200\r\n\r\n", err: "malformed status line"},
		{name: "http/1.2", in: "HTTP/1.2 200 OK\r\n\r\n", err: "malformed status line"},
		{name: "letters in status", in: "HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n", err: "malformed status code"},
		{name: "status glued to reason", in: "HTTP/1.1 200OK\r\nContent-Length: 0\r\n\r\n", err: "malformed status line"},
		{name: "interim", in: "HTTP/1.1 100 Continue\r\n\r\n", err: "interim"},
		{name: "negative length", in: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", err: "bad Content-Length"},
		{name: "signed length", in: "HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\n", err: "bad Content-Length"},
		{name: "empty length", in: "HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n", err: "bad Content-Length"},
		{name: "list length", in: "HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n", err: "bad Content-Length"},
		{name: "huge length", in: "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", err: "bad Content-Length"},
		{name: "length over the limit", in: "HTTP/1.1 200 OK\r\nContent-Length: 2000000000\r\n\r\n", err: "over the"},
		{name: "two lengths", in: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", err: "two Content-Length"},
		{name: "no length", in: "HTTP/1.1 200 OK\r\nX-Token: t\r\n\r\n", err: "no Content-Length"},
		{name: "chunked", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", err: "Transfer-Encoding"},
		{name: "chunked and length", in: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", err: "Transfer-Encoding"},
		{name: "header without colon", in: "HTTP/1.1 200 OK\r\nContent-Length 5\r\n\r\n", err: "malformed header line"},
		{name: "folded header", in: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n  continued\r\n\r\n", err: "malformed header line"},
		{name: "space in name", in: "HTTP/1.1 200 OK\r\nContent Length: 5\r\n\r\n", err: "malformed header name"},
		{name: "empty name", in: "HTTP/1.1 200 OK\r\n: 5\r\n\r\n", err: "malformed header line"},
		{name: "bare LF in status line", in: "HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n", err: "malformed status line"},
		{name: "bare LF ends a header", in: "HTTP/1.1 200 OK\r\nContent-Length: 0\n\r\n", err: "no CR before its LF"},
		{name: "bare LF as the blank line", in: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\n", err: "no CR before its LF"},
		{name: "blank line at the limit", in: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: " + strings.Repeat("c", maxHead-43) + "\r\n\r\n", status: 200},
		{name: "blank line past the limit", in: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: " + strings.Repeat("c", maxHead-42) + "\r\n\r\n", err: "longer than"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var h respHead
			err := parseHead([]byte(tc.in), &h)
			switch {
			case tc.err == "short":
				if err != errHeadShort {
					t.Fatalf("got %v; want errHeadShort", err)
				}
				return
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v; want an error with %q", err, tc.err)
				}
				return
			case err != nil:
				t.Fatalf("got %v; want no error", err)
			}
			if h.status != tc.status || h.length != tc.length || h.close != tc.close || string(h.token) != tc.token {
				t.Errorf("got status %d length %d close %v token %q; want %d %d %v %q", h.status, h.length, h.close, h.token, tc.status, tc.length, tc.close, tc.token)
			}
			if want := strings.Index(tc.in, "\r\n\r\n") + 4; h.headLen != want {
				t.Errorf("headLen = %d; want %d", h.headLen, want)
			}
		})
	}
}

// An error message quotes at most 80 bytes of what the server sent.
func TestParseHeadErrorsAreShort(t *testing.T) {
	var h respHead
	err := parseHead([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: "+strings.Repeat("z", 5000)+"\r\n\r\n"), &h)
	if err == nil || len(err.Error()) > 200 {
		t.Fatalf("got %d bytes of error (%.60v); want an error under 200 bytes", len(err.Error()), err)
	}
}

func TestRenderRequest(t *testing.T) {
	cfg := Config{Proto: ProtoHTTP, Call: CallDataList, Items: 20, Addr: "127.0.0.1:8080", ClientID: "me"}
	got := string(renderRequest(nil, &cfg, []byte("tok")))
	want := "GET /v1/datalist?n=20 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: rpcbed-go-client\r\nX-Client-Id: me\r\nX-Token: tok\r\n\r\n"
	if got != want {
		t.Errorf("got %q; want %q", got, want)
	}
	if got := string(renderRequest(nil, &cfg, nil)); strings.Contains(got, "X-Token") {
		t.Errorf("got %q; want no X-Token without a token", got)
	}
}

// FuzzParseHead: whatever a server sends, parseHead returns without panicking,
// and what it accepts is consistent: a head that ends within the input and within
// maxHead, a status of 200-599, a length within 0..maxBody.
func FuzzParseHead(f *testing.F) {
	f.Add([]byte(okHead))
	f.Add([]byte("HTTP/1.0 204 No Content\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551617\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 200 OK\nX: y\r\nContent-Length: 0\r\n\r\n"))
	f.Add([]byte("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nx-TOKEN: \t a b \r\nContent-Length: 007\r\n\r\nbody"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var h respHead
		err := parseHead(b, &h)
		checkAgainstRef(t, b, h, err)
		if err != nil {
			if err == errHeadShort && (len(b) >= maxHead || bytes.Contains(b, crlfcrlf)) {
				t.Fatalf("errHeadShort for %d bytes (terminator present: %v)", len(b), bytes.Contains(b, crlfcrlf))
			}
			return
		}
		if h.headLen > len(b) || h.headLen > maxHead || !bytes.Equal(b[h.headLen-4:h.headLen], crlfcrlf) {
			t.Fatalf("headLen %d of %d bytes", h.headLen, len(b))
		}
		if h.status < 200 || h.status > 999 || h.length < 0 || h.length > maxBody {
			t.Fatalf("status %d length %d", h.status, h.length)
		}
		if !bytes.HasPrefix(b, []byte("HTTP/1.")) {
			t.Fatalf("accepted %q", clip(b))
		}
	})
}

// checkAgainstRef: parseHead reads what the first version read. Where the
// reference accepts a head whose lines all end in CRLF, parseHead accepts it with
// the same fields; whatever parseHead accepts, the reference accepts the same;
// parseHead waits for more (errHeadShort) only where the reference does too.
// (parseHead refuses a bare LF, which the reference took into a line.)
func checkAgainstRef(t *testing.T, b []byte, h respHead, err error) {
	t.Helper()
	var r respHead
	rerr := parseHeadRef(b, &r)
	same := func() bool {
		return h.status == r.status && h.length == r.length && h.close == r.close && bytes.Equal(h.token, r.token) && h.headLen == r.headLen
	}
	switch {
	case err == nil && (rerr != nil || !same()):
		t.Fatalf("%q: parseHead %+v; the reference %+v, %v", clip(b), h, r, rerr)
	case errors.Is(err, errHeadShort) && !errors.Is(rerr, errHeadShort):
		t.Fatalf("%q: parseHead waits for more; the reference says %v", clip(b), rerr)
	case rerr == nil && err != nil && !bytes.Contains(bareLF(b[:r.headLen]), []byte{1}):
		t.Fatalf("%q: parseHead %v; the reference accepts %+v", clip(b), err, r)
	}
}

// bareLF marks with 1 each LF in b not after a CR.
func bareLF(b []byte) []byte {
	m := make([]byte, len(b))
	for i, c := range b {
		if c == '\n' && (i == 0 || b[i-1] != '\r') {
			m[i] = 1
		}
	}
	return m
}

func TestHasSpaceTab(t *testing.T) {
	for n := range 20 {
		for i := range n {
			for _, c := range []byte{' ', '\t'} {
				b := bytes.Repeat([]byte{'a'}, n)
				if hasSpaceTab(b) {
					t.Fatalf("%q: got true", b)
				}
				b[i] = c
				if !hasSpaceTab(b) {
					t.Fatalf("%q: got false", b)
				}
				// Bytes next to ' ' and '\t' in value, and high bytes, are not them.
				for _, o := range []byte{' ' - 1, ' ' + 1, '\t' - 1, '\t' + 1, 0x80, 0xa0, 0x89, 0xff, 0} {
					b[i] = o
					if hasSpaceTab(b) {
						t.Fatalf("%q: got true", b)
					}
				}
			}
		}
	}
}

// Every case of TestParseHead, and a few more, agree with the reference.
func TestParseHeadAgreesWithRef(t *testing.T) {
	ins := []string{okHead, okHead + "{}", "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", "HTTP/1.1 301 Moved\r\nLocation: x\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX-Token:\r\nContent-Length: 1\r\n\r\n", "HTTP/1.1 200 OK\r\nCONNECTION: CLOSE\r\nContent-Length: 1\r\n\r\n"}
	for i := range 40 {
		ins = append(ins, okHead[:i*len(okHead)/40]) // every prefix: incomplete
	}
	for _, in := range ins {
		var h respHead
		err := parseHead([]byte(in), &h)
		checkAgainstRef(t, []byte(in), h, err)
	}
}

// BenchmarkParseHead is go-server's DataType head (callgrind counts the loop's
// instructions per call; this is the parser alone).
func BenchmarkParseHead(b *testing.B) {
	in := []byte("HTTP/1.1 200 OK\r\nContent-Length: 129\r\nContent-Type: application/json\r\nServer: rpcbed-go-server\r\n" +
		"X-Token: AAAAAGsPfYGMhVQAsAZVA7TTzaQ\r\nDate: Wed, 02 Dec 2026 01:58:01 GMT\r\n\r\n" + strings.Repeat("x", 129))
	for _, p := range []struct {
		name  string
		parse func([]byte, *respHead) error
	}{{"parseHead", parseHead}, {"first-version", parseHeadRef}} {
		b.Run(p.name, func(b *testing.B) {
			var h respHead
			for b.Loop() {
				if err := p.parse(in, &h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// parseHeadRef is the first version of parseHead (bytes.Index for the blank
// line, then a split at each CRLF), kept as the reference the fuzz target
// compares parseHead with.
func parseHeadRef(b []byte, h *respHead) error {
	end := bytes.Index(b, crlfcrlf)
	if end < 0 {
		if len(b) >= maxHead {
			return fmt.Errorf("response head longer than %d bytes", maxHead)
		}
		return errHeadShort
	}
	if end+4 > maxHead {
		return fmt.Errorf("response head longer than %d bytes", maxHead)
	}
	*h = respHead{length: -1, headLen: end + 4}
	head := b[:end+2] // every line ends in CRLF
	eol := bytes.Index(head, crlf)
	line := head[:eol]
	head = head[eol+2:]

	// HTTP/1.1 200 OK; the reason phrase may be empty or missing.
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || (line[7] != '0' && line[7] != '1') ||
		line[8] != ' ' || (len(line) > 12 && line[12] != ' ') {
		return fmt.Errorf("malformed status line %q", clip(line))
	}
	http10 := line[7] == '0'
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return fmt.Errorf("malformed status code in %q", clip(line))
		}
	}
	h.status = int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
	if h.status < 200 {
		return fmt.Errorf("unexpected interim status in %q", clip(line))
	}
	keepAlive10 := false

	for len(head) > 0 {
		eol := bytes.Index(head, crlf)
		line := head[:eol]
		head = head[eol+2:]
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || line[0] == ' ' || line[0] == '\t' {
			return fmt.Errorf("malformed header line %q", clip(line))
		}
		name, value := line[:colon], bytes.Trim(line[colon+1:], " \t")
		if bytes.IndexByte(name, ' ') >= 0 || bytes.IndexByte(name, '\t') >= 0 {
			return fmt.Errorf("malformed header name %q", clip(name))
		}
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
