package load

import (
	"bytes"
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
	f.Fuzz(func(t *testing.T, b []byte) {
		var h respHead
		err := parseHead(b, &h)
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
