// Package auth issues and checks the HMAC-signed tokens that every call carries
// (docs/contract.md): base64url(8-byte big-endian expiry || HMAC-SHA256(secret,
// clientId || expiry)[:12]).
package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash"
	"sync"
	"time"
)

const (
	expiryLen = 8
	macLen    = 12
	rawLen    = expiryLen + macLen
	// TokenLen is the length of an encoded token.
	TokenLen = (rawLen*8 + 5) / 6
	// DefaultTTL is how long an issued token stays valid.
	DefaultTTL = 10 * time.Minute
)

// Errors Verify returns; callers map both to their protocol's "unauthenticated".
var (
	ErrMalformed = errors.New("auth: malformed token")
	ErrForged    = errors.New("auth: token signature does not match")
	ErrExpired   = errors.New("auth: token expired")
)

// Strict: a token has exactly one spelling, so no two strings verify as the same token.
var enc = base64.RawURLEncoding.Strict()

// Authority signs and checks tokens with one secret. It is safe for concurrent use;
// HMAC states are pooled because a token is issued on every call.
type Authority struct {
	secret []byte
	ttl    time.Duration
	now    func() time.Time
	macs   sync.Pool
}

// New returns an Authority with the given secret (a random one when empty) and TTL
// (DefaultTTL when <= 0).
func New(secret []byte, ttl time.Duration) (*Authority, error) {
	if len(secret) == 0 {
		secret = make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return nil, err
		}
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	a := &Authority{secret: append([]byte(nil), secret...), ttl: ttl, now: time.Now}
	a.macs.New = func() any { return hmac.New(sha256.New, a.secret) }
	return a, nil
}

// SetClock replaces the clock; tests use it to expire tokens.
func (a *Authority) SetClock(now func() time.Time) { a.now = now }

func (a *Authority) sign(dst []byte, clientID string, expiry []byte) {
	m := a.macs.Get().(hash.Hash)
	m.Reset()
	m.Write([]byte(clientID))
	m.Write(expiry)
	var sum [sha256.Size]byte
	copy(dst, m.Sum(sum[:0])[:macLen])
	a.macs.Put(m)
}

// Issue returns a fresh token for clientID.
func (a *Authority) Issue(clientID string) string {
	var raw [rawLen]byte
	binary.BigEndian.PutUint64(raw[:expiryLen], uint64(a.now().Add(a.ttl).Unix()))
	a.sign(raw[expiryLen:], clientID, raw[:expiryLen])
	return enc.EncodeToString(raw[:])
}

// Verify checks a token presented by clientID.
func (a *Authority) Verify(clientID, token string) error {
	if len(token) != TokenLen {
		return ErrMalformed
	}
	var raw [rawLen]byte
	n, err := enc.Decode(raw[:], []byte(token))
	if err != nil || n != rawLen {
		return ErrMalformed
	}
	var want [macLen]byte
	a.sign(want[:], clientID, raw[:expiryLen])
	if !hmac.Equal(want[:], raw[expiryLen:]) {
		return ErrForged
	}
	if int64(binary.BigEndian.Uint64(raw[:expiryLen])) < a.now().Unix() {
		return ErrExpired
	}
	return nil
}
