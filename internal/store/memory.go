package store

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// MaxMemoryKeys bounds the memory store's records. A benchmark uses one key; a
// caller inventing a new name per call would otherwise grow the map without end.
// With names of at most service.MaxStringBytes a full store holds about 100 MB.
const MaxMemoryKeys = 100000

// Memory is the default, embedded store: a read-mostly map and a lock table. It
// holds at most max records: a write of a new key into a full store first drops
// another record (the next read of that key is a miss, filled again as any miss).
type Memory struct {
	records sync.Map // string -> Record
	n       atomic.Int64
	max     int64

	mu    sync.Mutex
	locks map[string]time.Time // key -> lock expiry
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory { return NewMemoryMax(MaxMemoryKeys) }

// NewMemoryMax returns an empty in-memory store holding at most max records.
func NewMemoryMax(max int) *Memory {
	return &Memory{locks: make(map[string]time.Time), max: int64(max)}
}

// Len is how many records the store holds.
func (m *Memory) Len() int { return int(m.n.Load()) }

func (m *Memory) Get(_ context.Context, key string) (Record, bool, error) {
	v, ok := m.records.Load(key)
	if !ok {
		return Record{}, false, nil
	}
	return v.(Record), true, nil
}

func (m *Memory) Put(_ context.Context, key string, rec Record) error {
	if _, loaded := m.records.Swap(key, rec); loaded {
		return nil
	}
	for n := m.n.Add(1); n > m.max && m.evictOther(key); n = m.n.Load() {
	}
	return nil
}

// evictOther drops one record other than key; false when there is none.
func (m *Memory) evictOther(key string) (evicted bool) {
	m.records.Range(func(k, _ any) bool {
		if k.(string) == key {
			return true
		}
		if _, ok := m.records.LoadAndDelete(k); ok {
			m.n.Add(-1)
			evicted = true
		}
		return !evicted
	})
	return evicted
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
