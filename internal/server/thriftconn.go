package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"sync"

	"github.com/apache/thrift/lib/go/thrift"
)

// thriftConn is one accepted Thrift connection: the library's socket over a
// stallConn, and the reservation of the answer being built on it.
type thriftConn struct {
	*thrift.TSocket
	framed bool

	mu      sync.Mutex
	release func()
	est     int64 // the reserved answer's size: its buffer is made that large at once
}

// hold keeps release, the reservation of an answer of est bytes, until the
// connection's next frame is written.
func (c *thriftConn) hold(release func(), est int64) {
	c.mu.Lock()
	old := c.release
	c.release, c.est = release, est
	c.mu.Unlock()
	if old != nil {
		old()
	}
}

func (c *thriftConn) drop() { c.hold(nil, 0) }

func (c *thriftConn) Close() error {
	c.drop()
	return c.TSocket.Close()
}

// thriftTransports is go-server's transport factory: the library's transport,
// and for a framed go-server connection an answer writer of its own (thriftOut).
type thriftTransports struct {
	lib    thrift.TTransportFactory
	framed bool
}

func (f thriftTransports) GetTransport(t thrift.TTransport) (thrift.TTransport, error) {
	lib, err := f.lib.GetTransport(t)
	if err != nil {
		return nil, err
	}
	c, ok := t.(*thriftConn)
	if !ok || !f.framed {
		return lib, nil // buffered: answers stream out through its 64 KiB buffer
	}
	return &thriftOut{TTransport: lib, c: c}, nil
}

// frameBufs are answer buffers, as the library's framed transport pools them.
var frameBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// thriftOut reads with the library's framed transport and writes frames as it
// does, except that a frame goes out in writeChunk pieces (each under the stall
// deadline, so a slow reader that keeps reading is not cut) and that the
// connection's answer reservation is released once the frame is written.
type thriftOut struct {
	thrift.TTransport // the library's framed transport: reads, Close
	c                 *thriftConn
	buf               *bytes.Buffer
}

func (t *thriftOut) out() *bytes.Buffer {
	if t.buf == nil {
		t.buf = frameBufs.Get().(*bytes.Buffer)
		t.buf.Reset()
		t.c.mu.Lock()
		est := t.c.est
		t.c.mu.Unlock()
		t.buf.Grow(int(est)) // no copies as it grows, and never past the reservation
	}
	return t.buf
}

func (t *thriftOut) Write(b []byte) (int, error)       { return t.out().Write(b) }
func (t *thriftOut) WriteByte(c byte) error            { return t.out().WriteByte(c) }
func (t *thriftOut) WriteString(s string) (int, error) { return t.out().WriteString(s) }
func (t *thriftOut) ReadByte() (byte, error)           { return t.TTransport.(io.ByteReader).ReadByte() }

func (t *thriftOut) Flush(ctx context.Context) error {
	defer t.c.drop()
	buf := t.out()
	t.buf = nil
	defer frameBufs.Put(buf)
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(buf.Len()))
	if _, err := t.c.TSocket.Write(hdr[:]); err != nil {
		return thrift.NewTTransportExceptionFromError(err)
	}
	if err := writeChunked(t.c.TSocket, buf.Bytes()); err != nil {
		return thrift.NewTTransportExceptionFromError(err)
	}
	return thrift.NewTTransportExceptionFromError(t.c.TSocket.Flush(ctx))
}

func (t *thriftOut) Close() error {
	if t.buf != nil {
		frameBufs.Put(t.buf)
		t.buf = nil
	}
	t.c.drop()
	return t.TTransport.Close()
}
