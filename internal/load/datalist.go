package load

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"

	"google.golang.org/grpc"

	"github.com/rpcbed/rpcbed/internal/gen/pb"
	"github.com/rpcbed/rpcbed/internal/gen/thriftgen"
	"github.com/rpcbed/rpcbed/internal/service"
)

// DataListClient makes DataList calls to a server over one protocol, with the
// load generator's connections (the same dial options, Thrift transports, timeouts), for
// programs that are not a timed run: the Go HTTP front (internal/front). It is
// safe for concurrent use.
type DataListClient interface {
	// DataList asks for n items, sending the Config's client id and token, and
	// returns the server's token and its items (Tags never nil).
	DataList(ctx context.Context, token string, n int) (string, []service.Item, error)
	Close()
}

// NewDataListClient connects to cfg.Addr over cfg.Proto now, so an unreachable
// server fails here. It uses cfg's Proto, Addr, Timeout, Conns (gRPC connections
// shared round-robin; default 1), ClientID and Thrift settings; zero fields take
// go-client's defaults (Config.Defaults). Thrift keeps one connection per call in
// flight, opened as needed.
func NewDataListClient(ctx context.Context, cfg Config) (DataListClient, error) {
	cfg.Call, cfg.Concurrency = CallDataList, 1
	cfg.Defaults()
	switch cfg.Proto {
	case ProtoGRPC:
		c := &grpcDataList{cfg: cfg}
		for i := 0; i < cfg.Conns; i++ {
			cc, err := newGRPCConn(cfg.Addr)
			if err != nil {
				c.Close()
				return nil, err
			}
			c.conns = append(c.conns, cc)
			if err := waitReady(ctx, cc, cfg.Timeout); err != nil {
				c.Close()
				return nil, err
			}
		}
		return c, nil
	case ProtoThrift:
		c := &thriftDataList{cfg: cfg, idle: make(chan *thriftConn, 1024)}
		tc := &thriftConn{cfg: &c.cfg}
		if err := tc.open(); err != nil {
			return nil, err
		}
		c.idle <- tc
		return c, nil
	case ProtoHTTP:
		d := &net.Dialer{Timeout: cfg.Timeout}
		nc, err := d.DialContext(ctx, "tcp", cfg.Addr) // reachable now, as the RPC clients check
		if err != nil {
			return nil, err
		}
		nc.Close()
		return &httpDataList{cfg: cfg, client: &http.Client{
			Timeout: cfg.Timeout,
			Transport: &http.Transport{
				DialContext:         d.DialContext,
				DisableCompression:  true,
				MaxIdleConns:        1024,
				MaxIdleConnsPerHost: 1024,
			},
		}}, nil
	default:
		return nil, fmt.Errorf("-proto %q: want grpc, thrift or http", cfg.Proto)
	}
}

type grpcDataList struct {
	cfg   Config
	conns []*grpc.ClientConn
	next  atomic.Uint32
}

func (c *grpcDataList) DataList(ctx context.Context, token string, n int) (string, []service.Item, error) {
	cc := c.conns[int(c.next.Add(1))%len(c.conns)]
	resp, err := pb.NewDataClient(cc).DataList(ctx, &pb.DataListRequest{
		Auth: &pb.Auth{ClientId: c.cfg.ClientID, Token: token}, N: int32(n)})
	if err != nil {
		return "", nil, err
	}
	items := make([]service.Item, len(resp.Items))
	for i, it := range resp.Items {
		items[i] = service.Item{ID: it.Id, Name: it.Name, CreatedAt: it.CreatedAt, Score: it.Score,
			Enabled: it.Enabled, ParentID: it.ParentId, Note: it.Note, Tags: nonNil(it.Tags)}
	}
	return resp.GetAuth().GetToken(), items, nil
}

func (c *grpcDataList) Close() {
	for _, cc := range c.conns {
		cc.Close()
	}
}

// thriftDataList borrows an idle connection (or opens one) per call: a Thrift
// client serves one call at a time.
type thriftDataList struct {
	cfg  Config
	idle chan *thriftConn
}

func (c *thriftDataList) DataList(_ context.Context, token string, n int) (string, []service.Item, error) {
	var tc *thriftConn
	select {
	case tc = <-c.idle:
	default:
		tc = &thriftConn{cfg: &c.cfg}
		if err := tc.open(); err != nil {
			return "", nil, err
		}
	}
	resp, err := tc.client.DataList(context.Background(), &thriftgen.DataListRequest{
		Auth: &thriftgen.Auth{ClientId: c.cfg.ClientID, Token: token}, N: int32(n)})
	var de *thriftgen.DataError
	var ae interface{ TypeId() int32 }
	if err != nil && !errors.As(err, &de) && !errors.As(err, &ae) {
		tc.close() // transport error: the connection cannot be trusted
	} else {
		select {
		case c.idle <- tc:
		default:
			tc.close()
		}
	}
	if err != nil {
		return "", nil, err
	}
	items := make([]service.Item, len(resp.Items))
	for i, it := range resp.Items {
		items[i] = service.Item{ID: it.ID, Name: it.Name, CreatedAt: it.CreatedAt, Score: it.Score,
			Enabled: it.Enabled, ParentID: it.ParentId, Note: it.Note, Tags: nonNil(it.Tags)}
	}
	return resp.GetAuth().GetToken(), items, nil
}

func (c *thriftDataList) Close() {
	for {
		select {
		case tc := <-c.idle:
			tc.close()
		default:
			return
		}
	}
}

type httpDataList struct {
	cfg    Config
	client *http.Client
}

func (c *httpDataList) DataList(ctx context.Context, token string, n int) (string, []service.Item, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.cfg.Addr+"/v1/datalist?n="+strconv.Itoa(n), nil)
	if err != nil {
		return "", nil, err
	}
	req.Header.Set("X-Client-Id", c.cfg.ClientID)
	req.Header.Set("X-Token", token)
	resp, err := c.client.Do(req)
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return "", nil, fmt.Errorf("HTTP %s: %s", resp.Status, b)
	}
	var body service.DataListBody
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return "", nil, err
	}
	for i := range body.Items {
		body.Items[i].Tags = nonNil(body.Items[i].Tags)
	}
	return body.Auth.Token, body.Items, nil
}

func (c *httpDataList) Close() { c.client.CloseIdleConnections() }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
