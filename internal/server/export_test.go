package server

import "google.golang.org/protobuf/reflect/protoreflect"

// DecodeLenient exposes decodeLenient to the fuzz target.
func DecodeLenient(b []byte, m protoreflect.Message) error { return decodeLenient(b, m, 0) }
