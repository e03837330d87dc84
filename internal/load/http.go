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
)

// httpTransport: with the default -conns = -c every worker owns its connection
// and speaks HTTP/1.1 through net/http's own codec (Request.Write, ReadResponse)
// in its goroutine; with -conns K < -c the workers share one http.Transport capped
// at K connections. Without -k every call opens a new connection, as ab does.
//
// Why not http.Transport for everyone: its connection pool hands every request
// to a write goroutine and every response back from a read goroutine, about six
// goroutine switches and a dozen allocations per call. On a 2-core machine that
// client CPU is taken from the server being measured.
type httpTransport struct {
	cfg    *Config
	base   string
	shared *http.Transport
	owned  []*ownConn
}

func newHTTPTransport(cfg *Config) *httpTransport {
	t := &httpTransport{cfg: cfg, base: "http://" + cfg.Addr + cfg.httpPath()}
	if cfg.sharedConns() {
		t.shared = t.newRT(cfg.Conns)
	}
	return t
}

func (t *httpTransport) newRT(conns int) *http.Transport {
	d := &net.Dialer{Timeout: t.cfg.Timeout, KeepAlive: -1}
	timeout := t.cfg.Timeout
	return &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &deadlineConn{Conn: c, timeout: timeout}, nil
		},
		DisableKeepAlives:     !t.cfg.KeepAlive,
		DisableCompression:    true,
		MaxIdleConns:          conns,
		MaxIdleConnsPerHost:   conns,
		MaxConnsPerHost:       conns,
		ResponseHeaderTimeout: t.cfg.Timeout,
		ReadBufferSize:        64 << 10,
		WriteBufferSize:       4 << 10,
	}
}

func (t *httpTransport) caller(w int) caller {
	var rt roundTripper
	if t.shared != nil {
		rt = pooled{t.shared}
	} else {
		oc := &ownConn{
			addr:      t.cfg.Addr,
			dialer:    &net.Dialer{Timeout: t.cfg.Timeout, KeepAlive: -1},
			timeout:   t.cfg.Timeout,
			keepAlive: t.cfg.KeepAlive,
		}
		t.owned = append(t.owned, oc)
		rt = oc
	}
	req, err := http.NewRequest(http.MethodGet, t.base, nil)
	if err != nil {
		panic(err) // the URL is built from a validated address
	}
	req.Close = !t.cfg.KeepAlive
	c := &httpCaller{
		rt:       rt,
		req:      req,
		dataList: t.cfg.Call == CallDataList,
		items:    t.cfg.Items,
		token:    []string{""},
		buf:      make([]byte, 4<<10), // grows to the body size once
		want:     -1,
	}
	req.Header["X-Client-Id"] = []string{t.cfg.ClientID}
	req.Header["X-Token"] = c.token
	req.Header["User-Agent"] = []string{"rpcbed-go-client"}
	return c
}

func (t *httpTransport) close() {
	if t.shared != nil {
		t.shared.CloseIdleConnections()
	}
	for _, oc := range t.owned {
		oc.drop()
	}
}

// httpCaller reuses its request, header map and body buffer. The hot path checks
// the status, the token header and the body length (ab's Length check) against the
// verified response; the verify call decodes the body and checks its content.
type httpCaller struct {
	rt       roundTripper
	req      *http.Request
	dataList bool
	items    int
	token    []string // req.Header["X-Token"], updated in place
	buf      []byte
	want     int64 // body length of the verified response; -1 before verify
}

func (c *httpCaller) call(ctx context.Context) outcome {
	o, _, _ := c.do(ctx)
	return o
}

func (c *httpCaller) verify(ctx context.Context) (outcome, string) {
	o, body, server := c.do(ctx)
	if o.kind != kindOK {
		return o, server
	}
	if err := checkJSON(body, c.dataList, c.items); err != nil {
		return fail(kindLength, err), server
	}
	c.want = o.bytes
	return o, server
}

// setWant gives a worker other than the verifier the verified body length.
func (c *httpCaller) setWant(n int64) { c.want = n }

func (c *httpCaller) do(ctx context.Context) (outcome, []byte, string) {
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
	if c.want >= 0 && int64(n) != c.want {
		return fail(kindLength, fmt.Errorf("got %d body bytes; want %d", n, c.want)), nil, server
	}
	tok := resp.Header.Get("X-Token")
	if tok == "" {
		return fail(kindLength, errNoToken), nil, server
	}
	c.token[0] = tok
	return ok(int64(n)), c.buf[:n], server
}

// readBody reads the whole body into the worker's buffer, growing it as needed.
func (c *httpCaller) readBody(r io.Reader) (int, error) {
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

func (c *httpCaller) close() {}

// roundTripper is one worker's way to the server.
type roundTripper interface {
	RoundTrip(*http.Request) (*http.Response, error)
	// done is called once the body has been read (err: how that ended).
	done(resp *http.Response, err error)
}

// pooled is the shared http.Transport.
type pooled struct{ *http.Transport }

func (pooled) done(resp *http.Response, _ error) { resp.Body.Close() }

// ownConn is one worker's connection, used synchronously: write the request,
// read the response, in the caller's goroutine. Every call gets the per-call
// timeout as the connection's deadline.
//
// The bytes Request.Write renders are kept and sent again until the request
// changes. Only its X-Token header ever changes, and only when the server's token
// does (its expiry has one-second resolution), while rendering costs about a third
// of the client's user CPU per call.
type ownConn struct {
	addr      string
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
			nc, err := o.dialer.Dial("tcp", o.addr)
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

// deadlineConn gives each request, from the moment it is written, the per-call
// timeout to be answered: every read of its response is bounded. An idle
// keep-alive connection times out the same way and the transport redials it.
type deadlineConn struct {
	net.Conn
	timeout time.Duration
}

func (c *deadlineConn) Write(p []byte) (int, error) {
	c.Conn.SetDeadline(time.Now().Add(c.timeout))
	return c.Conn.Write(p)
}

// httpBody is the part of go-server's JSON the verify call checks.
type httpBody struct {
	Code   int64 `json:"code"`
	CodeID int64 `json:"codeId"`
	Auth   struct {
		Token string `json:"token"`
	} `json:"auth"`
	Items []json.RawMessage `json:"items"`
}

func checkJSON(body []byte, dataList bool, items int) error {
	var b httpBody
	if err := json.Unmarshal(body, &b); err != nil {
		return fmt.Errorf("response is not the contract's JSON: %v", err)
	}
	if b.Auth.Token == "" {
		return errNoToken
	}
	if dataList {
		if len(b.Items) != items {
			return fmt.Errorf("got %d items; want %d", len(b.Items), items)
		}
		return nil
	}
	if b.CodeID != WantCode {
		return fmt.Errorf("got codeId %d; want %d", b.CodeID, WantCode)
	}
	return nil
}
