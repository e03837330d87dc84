package store

import (
	"context"
	"sync"
	"time"
)

// Memory is the default, embedded store: a read-mostly map and a lock table.
type Memory struct {
	records sync.Map // string -> Record

	mu    sync.Mutex
	locks map[string]time.Time // key -> lock expiry
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory { return &Memory{locks: make(map[string]time.Time)} }

func (m *Memory) Get(_ context.Context, key string) (Record, bool, error) {
	v, ok := m.records.Load(key)
	if !ok {
		return Record{}, false, nil
	}
	return v.(Record), true, nil
}

func (m *Memory) Put(_ context.Context, key string, rec Record) error {
	m.records.Store(key, rec)
	return nil
}

func (m *Memory) TryLock(_ context.Context, key string, ttl time.Duration) (func(), error) {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if exp, held := m.locks[key]; held && now.Before(exp) {
		return nil, nil
	}
	exp := now.Add(ttl)
	m.locks[key] = exp
	return func() {
		m.mu.Lock()
		// Owner check: after expiry another caller may hold the lock now.
		if m.locks[key] == exp {
			delete(m.locks, key)
		}
		m.mu.Unlock()
	}, nil
}

func (m *Memory) Close() error { return nil }
