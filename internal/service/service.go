// Package service is the transport-free core of go-server: DataType and DataList
// with their auth and store semantics (docs/contract.md). Every transport adapter
// calls the same two methods, so a cell measures the protocol, not different code.
package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rpcbed/rpcbed/internal/auth"
	"github.com/rpcbed/rpcbed/internal/store"
)

// Code classifies errors the way every protocol can say them; values are gRPC's.
type Code int32

const (
	InvalidArgument  Code = 3
	DeadlineExceeded Code = 4
	Internal         Code = 13
	Unavailable      Code = 14
	Unauthenticated  Code = 16
)

// Error is the one error type the core returns.
type Error struct {
	Code Code
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func errorf(c Code, format string, args ...any) error {
	return &Error{Code: c, Msg: fmt.Sprintf(format, args...)}
}

// CodeOf returns the Code of err (Internal for foreign errors).
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return DeadlineExceeded
	}
	return Internal
}

const (
	// MaxItems bounds DataList's n.
	MaxItems = 100000
	// MaxStringBytes bounds every string a caller sends (group and entry names, client
	// id, token): a name is part of a store key, so this bounds a key at
	// 2*MaxStringBytes+1 bytes. The published names are 10-25 bytes.
	MaxStringBytes = 256
	// CodeID is what every DataType record carries, as published.
	CodeID  = 101
	lockTTL = 5 * time.Second
)

// Config configures a Service.
type Config struct {
	Store store.Store
	Auth  *auth.Authority
	// CheckAuth rejects forged or expired tokens; off, any token is accepted (and a
	// fresh one still issued, so responses keep their size).
	CheckAuth bool
}

// Service is safe for concurrent use.
type Service struct {
	store     store.Store
	auth      *auth.Authority
	checkAuth bool
	Stats     *Stats
}

// New returns a Service.
func New(c Config) *Service {
	return &Service{store: c.Store, auth: c.Auth, checkAuth: c.CheckAuth, Stats: NewStats()}
}

// Auth is the caller's part of every request.
type Auth struct {
	ClientID string
	Token    string
}

// DataTypeResult is DataType's answer.
type DataTypeResult struct {
	Token  string
	CodeID int64
	CnName string
}

// checkString refuses what no protocol may carry into the core: strings longer
// than MaxStringBytes and strings that are not UTF-8. gRPC's protobuf runtime
// refuses invalid UTF-8 by itself; HTTP headers and Thrift strings carry any
// bytes, so the core checks, and every protocol answers InvalidArgument.
func checkString(field, v string) error {
	if len(v) > MaxStringBytes {
		return errorf(InvalidArgument, "%s is %d bytes; want at most %d", field, len(v), MaxStringBytes)
	}
	if !utf8.ValidString(v) {
		return errorf(InvalidArgument, "%s is not valid UTF-8", field)
	}
	return nil
}

func (s *Service) authorize(a Auth) (string, error) {
	if err := checkString("clientId", a.ClientID); err != nil {
		return "", err
	}
	if err := checkString("token", a.Token); err != nil {
		return "", err
	}
	if a.Token != "" && s.checkAuth {
		if err := s.auth.Verify(a.ClientID, a.Token); err != nil {
			return "", &Error{Code: Unauthenticated, Msg: err.Error()}
		}
	}
	return s.auth.Issue(a.ClientID), nil
}

// DataType looks up groupName|enName, filling a miss once under a lock.
func (s *Service) DataType(ctx context.Context, p Proto, a Auth, groupName, enName string) (res DataTypeResult, err error) {
	defer func() { s.Stats.Record(p, CallDataType, err) }()
	if groupName == "" || enName == "" {
		return res, errorf(InvalidArgument, "groupName and enName are required")
	}
	if err := checkString("groupName", groupName); err != nil {
		return res, err
	}
	if strings.Contains(groupName, "|") {
		// The store's key is groupName|enName: with a '|' in the group, "a|b"+"c"
		// and "a"+"b|c" would be one record.
		return res, errorf(InvalidArgument, "groupName must not contain '|' (the store key's separator)")
	}
	if err := checkString("enName", enName); err != nil {
		return res, err
	}
	tok, err := s.authorize(a)
	if err != nil {
		return res, err
	}
	rec, err := s.lookup(ctx, groupName+"|"+enName, enName)
	if err != nil {
		return res, err
	}
	return DataTypeResult{Token: tok, CodeID: rec.CodeID, CnName: rec.CnName}, nil
}

func (s *Service) lookup(ctx context.Context, key, enName string) (store.Record, error) {
	wait := time.Millisecond
	for {
		rec, ok, err := s.store.Get(ctx, key)
		if err != nil {
			return rec, storeErr(err)
		}
		if ok {
			return rec, nil
		}
		release, err := s.store.TryLock(ctx, key, lockTTL)
		if err != nil {
			return rec, storeErr(err)
		}
		if release != nil {
			return s.fill(ctx, key, enName, release)
		}
		select {
		case <-ctx.Done():
			return rec, errorf(DeadlineExceeded, "waiting for %q to be filled: %v", key, ctx.Err())
		case <-time.After(wait):
		}
		if wait < 20*time.Millisecond {
			wait *= 2
		}
	}
}

// fill writes the record and reads it back, as the published server did. It
// re-checks first: the previous holder may have filled the key just before
// releasing the lock we now hold.
func (s *Service) fill(ctx context.Context, key, enName string, release func()) (store.Record, error) {
	defer release()
	if rec, ok, err := s.store.Get(ctx, key); err != nil || ok {
		return rec, storeErr(err)
	}
	if err := s.store.Put(ctx, key, store.Record{CnName: "名称-" + enName, CodeID: CodeID}); err != nil {
		return store.Record{}, storeErr(err)
	}
	rec, ok, err := s.store.Get(ctx, key)
	if err != nil {
		return rec, storeErr(err)
	}
	if !ok {
		return rec, errorf(Internal, "record %q missing right after it was written", key)
	}
	return rec, nil
}

func storeErr(err error) error {
	if err == nil {
		return nil
	}
	// The stores' errors already start with "store: " (one prefix, not two).
	msg := err.Error()
	if !strings.HasPrefix(msg, "store: ") {
		msg = "store: " + msg
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return errorf(DeadlineExceeded, "%s", msg)
	}
	return errorf(Unavailable, "%s", msg)
}

// DataList returns the first n generated items. The slice is shared and must not
// be modified.
func (s *Service) DataList(_ context.Context, p Proto, a Auth, n int) (tok string, items []Item, err error) {
	defer func() { s.Stats.Record(p, CallDataList, err) }()
	if n < 0 || n > MaxItems {
		return "", nil, errorf(InvalidArgument, "n = %d; want 0..%d", n, MaxItems)
	}
	if tok, err = s.authorize(a); err != nil {
		return "", nil, err
	}
	return tok, Items(n), nil
}
