package load

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/rpcbed/rpcbed/internal/gen/thriftgen"
)

// thriftTransport hands each caller its own connection: Thrift carries one call at
// a time per connection, so -conns = -c.
type thriftTransport struct {
	cfg   *Config
	conns []*thriftConn
}

func dialThrift(ctx context.Context, cfg *Config) (*thriftTransport, error) {
	t := &thriftTransport{cfg: cfg}
	if cfg.perCall() {
		// Every call opens its own (thriftSession.do); the verify call is the
		// first to reach the server.
		for i := 0; i < cfg.Conns; i++ {
			t.conns = append(t.conns, &thriftConn{cfg: cfg})
		}
		return t, nil
	}
	for i := 0; i < cfg.Conns; i++ {
		c := &thriftConn{cfg: cfg}
		if err := c.open(); err != nil {
			t.close()
			return nil, err
		}
		t.conns = append(t.conns, c)
	}
	return t, nil
}

func (t *thriftTransport) session(w int) session {
	c := &thriftSession{
		conn:     t.conns[w%len(t.conns)],
		perCall:  t.cfg.perCall(),
		full:     t.cfg.Check == CheckFull,
		want:     -1,
		dataList: t.cfg.Call == CallDataList,
		items:    t.cfg.Items,
		auth:     &thriftgen.Auth{ClientId: t.cfg.ClientID},
	}
	c.dtReq = &thriftgen.DataTypeRequest{Auth: c.auth, GroupName: GroupName, EnName: EnName}
	c.dlReq = &thriftgen.DataListRequest{Auth: c.auth, N: int32(t.cfg.Items)}
	return c
}

func (t *thriftTransport) close() {
	for _, c := range t.conns {
		c.close()
	}
}

// thriftConn is one connection; after a transport error it is closed and reopened
// on the next call (the sequence of a broken connection cannot be trusted).
type thriftConn struct {
	cfg    *Config
	nc     *countConn
	trans  thrift.TTransport
	client *thriftgen.DataClient
	frame  int64 // framing bytes per response, not counted as body
}

func (c *thriftConn) open() error {
	// With TLS the handshake completes here, and the bytes counted below are
	// the plaintext above it.
	nc, err := c.cfg.net.dial(context.Background(), c.cfg, &net.Dialer{Timeout: c.cfg.Timeout})
	if err != nil {
		return err
	}
	conf := &thrift.TConfiguration{
		ConnectTimeout: c.cfg.Timeout,
		SocketTimeout:  c.cfg.Timeout, // bounds every read and write: nothing hangs
		MaxFrameSize:   maxMsgSize,
		MaxMessageSize: maxMsgSize,
	}
	c.nc = &countConn{Conn: nc}
	var trans thrift.TTransport = thrift.NewTSocketFromConnConf(c.nc, conf)
	c.frame = 0
	if c.cfg.ThriftTransport == "framed" {
		trans = thrift.NewTFramedTransportConf(trans, conf)
		c.frame = 4
	} else {
		trans = thrift.NewTBufferedTransport(trans, 64<<10)
	}
	var proto thrift.TProtocol
	if c.cfg.ThriftProtocol == "compact" {
		proto = thrift.NewTCompactProtocolConf(trans, conf)
	} else {
		proto = thrift.NewTBinaryProtocolConf(trans, conf)
	}
	c.trans = trans
	c.client = thriftgen.NewDataClient(thrift.NewTStandardClient(proto, proto))
	return nil
}

func (c *thriftConn) close() {
	if c.trans != nil {
		c.trans.Close()
		c.trans, c.client = nil, nil
	}
}

// countConn counts the bytes read off the wire.
type countConn struct {
	net.Conn
	read int64
}

func (c *countConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read += int64(n)
	return n, err
}

// thriftSession decodes every response whole (the generated client does); -check
// full checks its item count or codeId, -check length its size against the
// verified one.
type thriftSession struct {
	conn     *thriftConn
	perCall  bool // a connection of its own for every call, closed after it
	full     bool
	want     int64 // -check length: the verified response's size; -1 before
	dataList bool
	items    int
	auth     *thriftgen.Auth
	dtReq    *thriftgen.DataTypeRequest
	dlReq    *thriftgen.DataListRequest
}

func (c *thriftSession) verify(ctx context.Context) (outcome, string) {
	o := c.do(true)
	if o.kind == kindOK {
		c.want = o.bytes
	}
	return o, ""
}

// setWant gives a caller other than the verifier the verified response size.
func (c *thriftSession) setWant(n int64) { c.want = n }

func (c *thriftSession) call(context.Context) outcome { return c.do(c.full) }

func (c *thriftSession) do(full bool) outcome {
	tc := c.conn
	if tc.client == nil {
		if err := tc.open(); err != nil {
			return fail(netKind(err), err)
		}
	}
	if c.perCall {
		defer tc.close()
	}
	before := tc.nc.read
	var token string
	// Deadlines come from the socket timeout: no per-call context to allocate.
	if c.dataList {
		r, err := tc.client.DataList(context.Background(), c.dlReq)
		if err != nil {
			return c.failed(err)
		}
		if got := len(r.Items); full && got != c.items {
			return fail(kindLength, fmt.Errorf("got %d items; want %d", got, c.items))
		}
		token = r.GetAuth().GetToken()
	} else {
		r, err := tc.client.DataType(context.Background(), c.dtReq)
		if err != nil {
			return c.failed(err)
		}
		if got := r.CodeId; full && got != WantCode {
			return fail(kindLength, fmt.Errorf("got codeId %d; want %d", got, WantCode))
		}
		token = r.GetAuth().GetToken()
	}
	if token == "" {
		return fail(kindLength, errNoToken)
	}
	n := tc.nc.read - before - tc.frame
	if !full && c.want >= 0 && n != c.want {
		return fail(kindLength, fmt.Errorf("got a %d-byte response; want %d", n, c.want))
	}
	c.auth.Token = token
	return ok(n)
}

func (c *thriftSession) failed(err error) outcome {
	var de *thriftgen.DataError
	if errors.As(err, &de) {
		switch de.Code {
		case 16:
			c.auth.Token = ""
			return fail(kindUnauthenticated, err)
		case 3:
			return fail(kindInvalidArgument, err)
		}
		return fail(kindExceptions, err)
	}
	var ae thrift.TApplicationException
	if errors.As(err, &ae) {
		return fail(kindExceptions, err)
	}
	c.conn.close()
	var te thrift.TTransportException
	if errors.As(err, &te) {
		switch te.TypeId() {
		case thrift.TIMED_OUT:
			return fail(kindTimeout, err)
		case thrift.NOT_OPEN:
			return fail(kindConnect, err)
		}
	}
	if k := netKind(err); k != kindConnect {
		return fail(k, err)
	}
	// A refused or reset connection mid-call is a broken receive, as in ab.
	return fail(kindReceive, err)
}

func (c *thriftSession) close() {}

var errNoToken = errors.New("response carries no token")
