package load

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// httpTransport: with the default -conns = -c every worker owns a Transport holding
// one connection (no shared pool lock on the hot path); with -conns K < -c the
// workers share one Transport capped at K connections. Without -k every call opens
// a new connection, as ab does.
type httpTransport struct {
	cfg    *Config
	base   string
	shared *http.Transport
	owned  []*http.Transport
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
	return &http.Transport{
		DialContext:           d.DialContext,
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
	rt := t.shared
	if rt == nil {
		rt = t.newRT(1)
		t.owned = append(t.owned, rt)
	}
	req, err := http.NewRequest(http.MethodGet, t.base, nil)
	if err != nil {
		panic(err) // the URL is built from a validated address
	}
	c := &httpCaller{
		rt:       rt,
		req:      req,
		timeout:  t.cfg.Timeout,
		dataList: t.cfg.Call == CallDataList,
		items:    t.cfg.Items,
		token:    []string{""},
		buf:      make([]byte, 32<<10),
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
	for _, rt := range t.owned {
		rt.CloseIdleConnections()
	}
}

// httpCaller reuses its request, header map and body buffer. The hot path checks
// the status, the token header and the body length (ab's Length check) against the
// verified response; the verify call decodes the body and checks its content.
type httpCaller struct {
	rt       *http.Transport
	req      *http.Request
	timeout  time.Duration
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

// prime is a verified-shape call for a worker other than the verifier: it adopts
// the verified length.
func (c *httpCaller) setWant(n int64) { c.want = n }

func (c *httpCaller) do(ctx context.Context) (outcome, []byte, string) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := c.rt.RoundTrip(c.req.WithContext(ctx))
	if err != nil {
		return fail(netKind(err), err), nil, ""
	}
	n, err := c.readBody(resp.Body)
	resp.Body.Close()
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
