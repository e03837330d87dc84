// Package store holds the records DataType looks up. Every store offers the same
// three operations the published service used: read a record, write it, and a
// short-lived lock on a key so that only one caller fills a miss.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Record is what DataType returns for a key.
type Record struct {
	CnName string
	CodeID int64
}

// Store is the small interface the service core uses.
type Store interface {
	// Get returns the record for key; ok is false on a miss.
	Get(ctx context.Context, key string) (rec Record, ok bool, err error)
	// Put writes the record for key.
	Put(ctx context.Context, key string, rec Record) error
	// TryLock takes the lock on key for at most ttl. It returns a release function
	// when the lock was taken and nil when another owner holds it.
	TryLock(ctx context.Context, key string, ttl time.Duration) (release func(), err error)
	// Close releases the store's connections.
	Close() error
}

// ErrUnknownKind is returned by Open for a kind it does not know.
var ErrUnknownKind = errors.New("store: unknown kind")

// Config selects and configures a store.
type Config struct {
	Kind           string // memory|redis|aerospike
	RedisAddr      string // host:port
	AerospikeHosts string // host:port[,host:port...]
	Namespace      string // aerospike namespace (default "test")
	Set            string // aerospike set (default "data_type_def")
}

// Open returns the store Config names, checking that it answers.
func Open(ctx context.Context, c Config) (Store, error) {
	switch c.Kind {
	case "", "memory":
		return NewMemory(), nil
	case "redis":
		return OpenRedis(ctx, c.RedisAddr)
	case "aerospike":
		return OpenAerospike(c.AerospikeHosts, c.Namespace, c.Set)
	default:
		return nil, fmt.Errorf("%w %q (want memory|redis|aerospike)", ErrUnknownKind, c.Kind)
	}
}
