package server

import (
	"errors"

	"google.golang.org/grpc/encoding"
	gproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// utf8Codec is gRPC's protobuf codec, except for a request whose string fields are
// not UTF-8: protobuf refuses those while decoding, which grpc-go reports as
// INTERNAL. Decoded leniently instead, the request reaches the service core, which
// refuses it as INVALID_ARGUMENT exactly as it does over Thrift and HTTP.
//
// It also ties a DataList answer's reservation (pendingAnswers) to its encoded
// bytes.
type utf8Codec struct {
	encoding.CodecV2
	pending *pendingAnswers
}

func newUTF8Codec(p *pendingAnswers) encoding.CodecV2 {
	return utf8Codec{CodecV2: encoding.GetCodecV2(gproto.Name), pending: p}
}

// Marshal encodes as grpc-go's codec does (the size first, then into a pooled
// buffer of that size); a reserved answer's buffer releases its reservation when
// grpc-go frees it.
func (c utf8Codec) Marshal(v any) (mem.BufferSlice, error) {
	release := c.pending.take(v)
	if release == nil {
		return c.CodecV2.Marshal(v)
	}
	m := v.(proto.Message)
	pool := mem.DefaultBufferPool()
	buf := pool.Get(proto.Size(m))
	if _, err := (proto.MarshalOptions{UseCachedSize: true}).MarshalAppend((*buf)[:0], m); err != nil {
		pool.Put(buf)
		release()
		return nil, err
	}
	return mem.BufferSlice{mem.NewBuffer(buf, releasingPool{pool, release})}, nil
}

// releasingPool puts a buffer back into pool and runs release.
type releasingPool struct {
	mem.BufferPool
	release func()
}

func (p releasingPool) Put(b *[]byte) {
	p.BufferPool.Put(b)
	p.release()
}

func (c utf8Codec) Unmarshal(data mem.BufferSlice, v any) error {
	err := c.CodecV2.Unmarshal(data, v)
	var u interface{ InvalidUTF8() bool }
	m, ok := v.(proto.Message)
	if err == nil || !ok || !errors.As(err, &u) || !u.InvalidUTF8() {
		return err
	}
	proto.Reset(m)
	return decodeLenient(data.Materialize(), m.ProtoReflect(), 0)
}

// decodeLenient decodes b into m as proto.Unmarshal does, except that singular
// string fields keep their bytes whether or not they are UTF-8.
func decodeLenient(b []byte, m protoreflect.Message, depth int) error {
	if depth > 16 { // the contract nests two deep
		return errors.New("message nested too deep")
	}
	fields := m.Descriptor().Fields()
	var rest []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		vn := protowire.ConsumeFieldValue(num, typ, b[n:])
		if vn < 0 {
			return protowire.ParseError(vn)
		}
		field := b[:n+vn]
		b = b[n+vn:]
		fd := fields.ByNumber(num)
		if fd != nil && typ == protowire.BytesType && fd.Cardinality() != protoreflect.Repeated {
			v, _ := protowire.ConsumeBytes(field[n:])
			switch fd.Kind() {
			case protoreflect.StringKind:
				m.Set(fd, protoreflect.ValueOfString(string(v)))
				continue
			case protoreflect.MessageKind:
				if err := decodeLenient(v, m.Mutable(fd).Message(), depth+1); err != nil {
					return err
				}
				continue
			}
		}
		rest = append(rest, field...)
	}
	return proto.UnmarshalOptions{Merge: true}.Unmarshal(rest, m.Interface())
}
