package load

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
)

// kind is how one call ended. Everything but kindOK is a failure; the names are the
// report's `Errors:` kinds.
type kind uint8

const (
	kindOK kind = iota
	kindConnect
	kindReceive
	kindTimeout
	kindLength
	kindExceptions
	kindUnauthenticated
	kindInvalidArgument
	numKinds
)

var kindNames = [numKinds]string{"ok", "connect", "receive", "timeout", "length", "exceptions", "unauthenticated", "invalid_argument"}

func (k kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "unknown"
}

// answered tells whether the server answered the call (its latency is measured).
// Connect, receive and timeout failures have no meaningful latency.
func (k kind) answered() bool {
	switch k {
	case kindConnect, kindReceive, kindTimeout:
		return false
	}
	return true
}

// statusError tells whether the server answered with an error status: ab's
// "Non-2xx responses" (HTTP non-2xx, gRPC status != OK, a declared Thrift exception).
func (k kind) statusError() bool {
	switch k {
	case kindExceptions, kindUnauthenticated, kindInvalidArgument:
		return true
	}
	return false
}

// callError is one failed call, sorted into the report's error kinds: its kind and
// its cause (PHP's CallError and Java's CallError). The zero value is no failure.
type callError struct {
	kind kind
	err  error
}

// outcome is one call's result: the response's bytes, and its callError when it
// failed. err is set only on failure, so the success path allocates nothing here.
type outcome struct {
	bytes int64 // response body bytes received
	callError
}

func ok(n int64) outcome { return outcome{bytes: n} }

func fail(k kind, err error) outcome { return outcome{callError: callError{kind: k, err: err}} }

// netKind classifies a transport-level error: refused or unreachable -> connect,
// deadline -> timeout, anything else (reset, EOF, garbage) -> receive.
func netKind(err error) kind {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return kindTimeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return kindTimeout
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.EADDRNOTAVAIL) {
		return kindConnect
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return kindConnect
	}
	return kindReceive
}
