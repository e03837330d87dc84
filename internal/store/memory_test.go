package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// Before: the memory store grew without end. It holds at most its maximum,
// and the record just written is always the one kept.
func TestMemoryBounded(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name       string
		max, puts  int
		wantLen    int
		concurrent bool
	}{
		{"under the maximum", 10, 5, 5, false},
		{"at the maximum", 10, 10, 10, false},
		{"past the maximum", 10, 1000, 10, false},
		{"maximum of one", 1, 50, 1, false},
		{"concurrent writers", 100, 20000, 100, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMemoryMax(tc.max)
			put := func(i int) {
				key := fmt.Sprint("k", i)
				if err := m.Put(ctx, key, Record{CodeID: int64(i)}); err != nil {
					t.Error(err)
				}
				if r, ok, _ := m.Get(ctx, key); !tc.concurrent && (!ok || r.CodeID != int64(i)) {
					t.Errorf("Get(%s) right after Put = %v, %v; want the record", key, r, ok)
				}
			}
			if tc.concurrent {
				var wg sync.WaitGroup
				for w := range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := w; i < tc.puts; i += 8 {
							put(i)
						}
					}()
				}
				wg.Wait()
			} else {
				for i := range tc.puts {
					put(i)
				}
			}
			// Rewriting a key never counts twice.
			m.Put(ctx, fmt.Sprint("k", tc.puts-1), Record{})
			n := 0
			m.records.Range(func(any, any) bool { n++; return true })
			if m.Len() != n {
				t.Errorf("Len %d with %d records; want them equal", m.Len(), n)
			}
			// Two writers may both evict for one new key: concurrently, fewer is fine.
			if n > tc.wantLen || (!tc.concurrent && n != tc.wantLen) || n == 0 {
				t.Errorf("got %d records; want %d", n, tc.wantLen)
			}
		})
	}
}
