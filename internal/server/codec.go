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
type utf8Codec struct{ encoding.CodecV2 }

func newUTF8Codec() encoding.CodecV2 { return utf8Codec{encoding.GetCodecV2(gproto.Name)} }

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
