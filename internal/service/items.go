package service

import (
	"fmt"
	"sync"
)

// Item is one generated DataList item (docs/contract.md).
type Item struct {
	ID        int64    `json:"id"`
	Name      string   `json:"name"`
	CreatedAt int64    `json:"createdAt"`
	Score     float64  `json:"score"`
	Enabled   bool     `json:"enabled"`
	ParentID  int64    `json:"parentId"`
	Note      string   `json:"note"`
	Tags      []string `json:"tags"`
}

// NewItem returns item i (0-based).
func NewItem(i int) Item {
	return Item{
		ID:      int64(i + 1),
		Name:    fmt.Sprintf("item-%06d", i+1),
		Score:   float64((i*37)%10000+1) / 100,
		Enabled: i%2 == 0,
		Tags:    []string{},
	}
}

// Table is a grow-only cache of converted items: each transport keeps one for its
// wire type, so a call costs encoding, not generation. Prefixes of the table are
// returned; callers must not modify them.
type Table[T any] struct {
	mu    sync.RWMutex
	items []T
	conv  func(Item) T
}

// NewTable returns a table converting generated items with conv.
func NewTable[T any](conv func(Item) T) *Table[T] { return &Table[T]{conv: conv} }

// First returns the first n items (n <= MaxItems).
func (t *Table[T]) First(n int) []T {
	t.mu.RLock()
	if n <= len(t.items) {
		s := t.items[:n:n]
		t.mu.RUnlock()
		return s
	}
	t.mu.RUnlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := len(t.items); i < n; i++ {
		t.items = append(t.items, t.conv(NewItem(i)))
	}
	return t.items[:n:n]
}

var items = NewTable(func(it Item) Item { return it })

// Items returns the first n generated items (shared; do not modify).
func Items(n int) []Item { return items.First(n) }
