package load

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/rpcbed/rpcbed/internal/service"
)

// httpTransport: every caller owns its connection (-conns = -c: HTTP/1.1 carries
// one call at a time per connection) and speaks HTTP/1.1 through net/http's own
// codec (Request.Write, ReadResponse) in its goroutine, as Go callers do: every
// -check full run, and the verify call of every run. Without -k every call opens
// a new connection, as ab does. Load-generator mode (-check length with -k) runs
// its timed calls on event loops instead (httploop_linux.go).
//
// Why not http.Transport: its connection pool hands every request to a write
// goroutine and every response back from a read goroutine, about six goroutine
// switches and a dozen allocations per call. On a 2-core machine that client CPU
// is taken from the server being measured.
type httpTransport struct {
	cfg   *Config
	base  string
	owned []*ownConn
}

func newHTTPTransport(cfg *Config) *httpTransport {
	return &httpTransport{cfg: cfg, base: "http://" + cfg.Addr + cfg.httpPath()}
}

func (t *httpTransport) session(w int) session {
	oc := &ownConn{
		addr:      t.cfg.Addr,
		dialer:    &net.Dialer{Timeout: t.cfg.Timeout, KeepAlive: -1},
		timeout:   t.cfg.Timeout,
		keepAlive: t.cfg.KeepAlive,
		cfg:       t.cfg,
	}
	t.owned = append(t.owned, oc)
	req, err := http.NewRequest(http.MethodGet, t.base, nil)
	if err != nil {
		panic(err) // the URL is built from a validated address
	}
	req.Close = !t.cfg.KeepAlive
	c := &httpSession{
		rt:    oc,
		req:   req,
		body:  httpCheck{dataList: t.cfg.Call == CallDataList, items: t.cfg.Items},
		full:  t.cfg.Check == CheckFull,
		token: []string{""},
		buf:   make([]byte, 4<<10), // grows to the body size once
		want:  -1,
	}
	req.Header["X-Client-Id"] = []string{t.cfg.ClientID}
	req.Header["X-Token"] = c.token
	req.Header["User-Agent"] = []string{"rpcbed-go-client"}
	return c
}

func (t *httpTransport) close() {
	for _, oc := range t.owned {
		oc.drop()
	}
}

// httpSession reuses its request, header map, body buffer and decoded body. With
// -check full (the default, docs/method.md) every call decodes the whole JSON body
// into go-server's structs (service.Item for the items) and checks the item count
// or codeId; with -check length it checks the status, the token header and the
// body length against the verified response only, as ab and wrk do. The verify
// call always checks the content.
type httpSession struct {
	rt    *ownConn
	req   *http.Request
	body  httpCheck
	full  bool
	token []string // req.Header["X-Token"], updated in place
	buf   []byte
	want  int64 // body length of the verified response; -1 before verify
}

func (c *httpSession) call(ctx context.Context) outcome {
	o, body, _ := c.do(ctx)
	if o.kind == kindOK && c.full {
		if err := c.body.check(body); err != nil {
			return fail(kindLength, err)
		}
	}
	return o
}

func (c *httpSession) verify(ctx context.Context) (outcome, string) {
	o, body, server := c.do(ctx)
	if o.kind != kindOK {
		return o, server
	}
	if err := c.body.check(body); err != nil {
		return fail(kindLength, err), server
	}
	c.want = o.bytes
	return o, server
}

// setWant gives a caller other than the verifier the verified body length.
func (c *httpSession) setWant(n int64) { c.want = n }

func (c *httpSession) do(ctx context.Context) (outcome, []byte, string) {
	// No per-call context: the connection's deadline bounds the call (ownConn,
	// deadlineConn); a context costs a timer, a request copy and a select in the
	// transport on every call.
	resp, err := c.rt.RoundTrip(c.req)
	if err != nil {
		return fail(netKind(err), err), nil, ""
	}
	n, err := c.readBody(resp.Body)
	c.rt.done(resp, err)
	if err != nil {
		return fail(netKind(err), err), nil, ""
	}
	server := resp.Header.Get("Server")
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		err := fmt.Errorf("HTTP %s: %.200s", resp.Status, c.buf[:n])
		if resp.StatusCode == http.StatusUnauthorized {
			c.token[0] = ""
			return fail(kindUnauthenticated, err), nil, server
		}
		if resp.StatusCode == http.StatusBadRequest {
			return fail(kindInvalidArgument, err), nil, server
		}
		return fail(kindExceptions, err), nil, server
	}
	if !c.full && c.want >= 0 && int64(n) != c.want {
		return fail(kindLength, fmt.Errorf("got %d body bytes; want %d", n, c.want)), nil, server
	}
	tok := resp.Header.Get("X-Token")
	if tok == "" {
		return fail(kindLength, errNoToken), nil, server
	}
	c.token[0] = tok
	return ok(int64(n)), c.buf[:n], server
}

// readBody reads the whole body into the caller's buffer, growing it as needed.
func (c *httpSession) readBody(r io.Reader) (int, error) {
	n := 0
	for {
		if n == len(c.buf) {
			c.buf = append(c.buf, make([]byte, len(c.buf))...)
		}
		m, err := r.Read(c.buf[n:])
		n += m
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

func (c *httpSession) close() {}

// ownConn is one caller's connection, used synchronously: write the request,
// read the response, in the caller's goroutine. Every call gets the per-call
// timeout as the connection's deadline.
//
// The bytes Request.Write renders are kept and sent again until the request
// changes. Only its X-Token header ever changes, and only when the server's token
// does (its expiry has one-second resolution), while rendering costs about a third
// of the client's user CPU per call.
type ownConn struct {
	addr      string
	cfg       *Config // its net counters and TLS
	dialer    *net.Dialer
	timeout   time.Duration
	keepAlive bool
	nc        net.Conn
	br        *bufio.Reader

	wire      bytes.Buffer // the request as net/http rendered it
	wireToken string       // its X-Token
	wired     bool
}

func (o *ownConn) render(req *http.Request) ([]byte, error) {
	tok := ""
	if v := req.Header["X-Token"]; len(v) > 0 {
		tok = v[0]
	}
	if !o.wired || tok != o.wireToken {
		o.wire.Reset()
		if err := req.Write(&o.wire); err != nil {
			o.wired = false
			return nil, err
		}
		o.wireToken, o.wired = tok, true
	}
	return o.wire.Bytes(), nil
}

func (o *ownConn) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		fresh := o.nc == nil
		if fresh {
			nc, err := o.cfg.net.dial(context.Background(), o.cfg, o.dialer)
			if err != nil {
				return nil, err
			}
			o.nc = nc
			if o.br == nil {
				o.br = bufio.NewReaderSize(nc, 16<<10)
			} else {
				o.br.Reset(nc)
			}
		}
		wire, err := o.render(req)
		if err != nil {
			return nil, err
		}
		o.nc.SetDeadline(time.Now().Add(o.timeout))
		_, err = o.nc.Write(wire)
		var resp *http.Response
		if err == nil {
			resp, err = http.ReadResponse(o.br, req)
		}
		if err == nil {
			return resp, nil
		}
		o.drop()
		// A kept connection the server has closed meanwhile: retry once on a new
		// one, as http.Transport does for a GET.
		if fresh || attempt > 0 {
			return nil, err
		}
	}
}

func (o *ownConn) done(resp *http.Response, err error) {
	if err != nil || resp.Close || !o.keepAlive {
		o.drop()
	}
}

func (o *ownConn) drop() {
	if o.nc != nil {
		o.nc.Close()
		o.nc = nil
	}
}

// httpCheck decodes a response body into go-server's JSON documents
// (service.DataListBody, whose items are service.Item, and service.DataTypeBody)
// and checks it: exactly items items, or codeId 101, and a token. The decoded
// values are reused from call to call, as the gRPC and Thrift callers reuse
// their response messages.
type httpCheck struct {
	dataList bool
	items    int
	dl       service.DataListBody
	dt       service.DataTypeBody
}

func (h *httpCheck) check(body []byte) error {
	var token string
	if h.dataList {
		h.dl = service.DataListBody{Items: h.dl.Items[:0]}
		if err := json.Unmarshal(body, &h.dl); err != nil {
			return fmt.Errorf("response is not the contract's JSON: %v", err)
		}
		if got := len(h.dl.Items); got != h.items {
			return fmt.Errorf("got %d items; want %d", got, h.items)
		}
		token = h.dl.Auth.Token
	} else {
		h.dt = service.DataTypeBody{}
		if err := json.Unmarshal(body, &h.dt); err != nil {
			return fmt.Errorf("response is not the contract's JSON: %v", err)
		}
		if h.dt.CodeID != WantCode {
			return fmt.Errorf("got codeId %d; want %d", h.dt.CodeID, WantCode)
		}
		token = h.dt.Auth.Token
	}
	if token == "" {
		return errNoToken
	}
	return nil
}

// checkJSON is httpCheck.check of one body.
func checkJSON(body []byte, dataList bool, items int) error {
	h := httpCheck{dataList: dataList, items: items}
	return h.check(body)
}
