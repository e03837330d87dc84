package service_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/auth"
	"github.com/rpcbed/rpcbed/internal/service"
	"github.com/rpcbed/rpcbed/internal/store"
)

// counting wraps a store and counts writes.
type counting struct {
	store.Store
	puts atomic.Int64
}

func (c *counting) Put(ctx context.Context, key string, r store.Record) error {
	c.puts.Add(1)
	return c.Store.Put(ctx, key, r)
}

// required reports whether CI asked for a dependency to be present rather than
// skipped (RPCBED_REQUIRE=redis,php,...).
func required(dep string) bool {
	return strings.Contains(os.Getenv("RPCBED_REQUIRE"), dep)
}

func stores(t *testing.T) map[string]store.Store {
	t.Helper()
	out := map[string]store.Store{"memory": store.NewMemory()}
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		addr = "127.0.0.1:6379"
	}
	r, err := store.OpenRedis(context.Background(), addr)
	switch {
	case err == nil:
		t.Cleanup(func() { r.Close() })
		out["redis"] = r
	case required("redis"):
		t.Fatalf("RPCBED_REQUIRE names redis but %v", err)
	default:
		t.Logf("redis store not tested: %v (start redis-server or set REDIS_ADDR)", err)
	}
	if hosts := os.Getenv("AEROSPIKE_HOSTS"); hosts != "" {
		a, err := store.OpenAerospike(hosts, "test", "data_type_def")
		if err != nil {
			t.Fatalf("AEROSPIKE_HOSTS=%s: %v", hosts, err)
		}
		t.Cleanup(func() { a.Close() })
		out["aerospike"] = a
	} else if required("aerospike") {
		t.Fatalf("RPCBED_REQUIRE names aerospike but AEROSPIKE_HOSTS is not set")
	} else {
		t.Logf("aerospike store not tested: AEROSPIKE_HOSTS is not set (start ../shared/aerospike/start.sh and export AEROSPIKE_HOSTS=127.0.0.1:3000)")
	}
	return out
}

func uniqueName(t *testing.T) string {
	var b [6]byte
	rand.Read(b[:])
	return "test_" + hex.EncodeToString(b[:])
}

func TestFillOnceUnderConcurrency(t *testing.T) {
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			c := &counting{Store: st}
			a, _ := auth.New(nil, 0)
			svc := service.New(service.Config{Store: c, Auth: a, CheckAuth: true})
			group, en := uniqueName(t), "app_call_connect_success"
			const callers = 100
			var wg sync.WaitGroup
			start := make(chan struct{})
			errs := make(chan error, callers)
			for i := 0; i < callers; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					r, err := svc.DataType(ctx, service.GRPC, service.Auth{ClientID: "c"}, group, en)
					if err == nil && (r.CodeID != service.CodeID || r.CnName != "名称-"+en) {
						err = errors.New("wrong record")
					}
					errs <- err
				}()
			}
			close(start)
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatalf("DataType: %v", err)
				}
			}
			if got := c.puts.Load(); got != 1 {
				t.Errorf("%d concurrent first calls wrote %d times; want exactly 1", callers, got)
			}
		})
	}
}

func TestStoreLock(t *testing.T) {
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			key := uniqueName(t)
			release, err := st.TryLock(ctx, key, time.Second)
			if err != nil || release == nil {
				t.Fatalf("first TryLock = %v, %v; want the lock", release != nil, err)
			}
			if again, err := st.TryLock(ctx, key, time.Second); err != nil || again != nil {
				t.Fatalf("second TryLock while held = %v, %v; want refused", again != nil, err)
			}
			release()
			again, err := st.TryLock(ctx, key, time.Second)
			if err != nil || again == nil {
				t.Fatalf("TryLock after release = %v, %v; want the lock", again != nil, err)
			}
			again()
		})
	}
}

func TestDataListBounds(t *testing.T) {
	a, _ := auth.New(nil, 0)
	svc := service.New(service.Config{Store: store.NewMemory(), Auth: a})
	tests := []struct {
		n    int
		want service.Code
	}{{-1, service.InvalidArgument}, {0, 0}, {service.MaxItems, 0}, {service.MaxItems + 1, service.InvalidArgument}}
	for _, tc := range tests {
		_, items, err := svc.DataList(context.Background(), service.HTTP, service.Auth{}, tc.n)
		var got service.Code
		if err != nil {
			got = service.CodeOf(err)
		}
		if got != tc.want || (err == nil && len(items) != tc.n) {
			t.Errorf("DataList(%d) = %d items, code %d; want code %d", tc.n, len(items), got, tc.want)
		}
	}
}

func TestItemsDeterministic(t *testing.T) {
	it := service.Items(3)
	want := []service.Item{
		{ID: 1, Name: "item-000001", Score: 0.01, Enabled: true, Tags: []string{}},
		{ID: 2, Name: "item-000002", Score: 0.38, Enabled: false, Tags: []string{}},
		{ID: 3, Name: "item-000003", Score: 0.75, Enabled: true, Tags: []string{}},
	}
	for i := range want {
		if it[i].ID != want[i].ID || it[i].Name != want[i].Name || it[i].Score != want[i].Score || it[i].Enabled != want[i].Enabled {
			t.Errorf("item %d = %+v; want %+v", i, it[i], want[i])
		}
	}
}

func TestStoreUnavailable(t *testing.T) {
	_, err := store.Open(context.Background(), store.Config{Kind: "redis", RedisAddr: "127.0.0.1:1"})
	if err == nil {
		t.Fatal("Open(redis at a closed port) succeeded; want an error")
	}
	if _, err := store.Open(context.Background(), store.Config{Kind: "mongo"}); !errors.Is(err, store.ErrUnknownKind) {
		t.Errorf("Open(mongo) = %v; want ErrUnknownKind", err)
	}
}

func TestAerospikeStore(t *testing.T) {
	hosts := os.Getenv("AEROSPIKE_HOSTS")
	if hosts == "" {
		t.Skip("AEROSPIKE_HOSTS is not set: no Aerospike server can be had on this platform; set it to host:port of a server with namespace test to run")
	}
	a, err := store.OpenAerospike(hosts, "test", "data_type_def")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx := context.Background()
	key := uniqueName(t)
	if _, ok, err := a.Get(ctx, key); ok || err != nil {
		t.Fatalf("Get of a new key = %v, %v; want a miss", ok, err)
	}
	want := store.Record{CnName: "名称", CodeID: 101}
	if err := a.Put(ctx, key, want); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := a.Get(ctx, key); !ok || err != nil || got != want {
		t.Fatalf("Get = %+v, %v, %v; want %+v", got, ok, err, want)
	}
}

// Every string a caller sends is bounded and UTF-8, checked here once for every
// protocol: a refusal is InvalidArgument, and nothing is stored.
func TestStringLimits(t *testing.T) {
	a, _ := auth.New([]byte("s"), time.Minute)
	st := &counting{Store: store.NewMemory()}
	svc := service.New(service.Config{Store: st, Auth: a, CheckAuth: false})
	ctx := context.Background()
	max := strings.Repeat("x", service.MaxStringBytes)
	tests := []struct {
		name    string
		a       service.Auth
		grp, en string
		want    service.Code
	}{
		{"at the limit", service.Auth{ClientID: max}, max, max, 0},
		{"multi-byte UTF-8", service.Auth{ClientID: "客户"}, "组", "名称", 0},
		{"group too long", service.Auth{}, max + "x", "e", service.InvalidArgument},
		{"entry too long", service.Auth{}, "g", max + "x", service.InvalidArgument},
		{"client id too long", service.Auth{ClientID: max + "x"}, "g", "e", service.InvalidArgument},
		{"token too long", service.Auth{Token: max + "x"}, "g", "e", service.InvalidArgument},
		{"group not UTF-8", service.Auth{}, "g\xff", "e", service.InvalidArgument},
		{"entry cut inside a rune", service.Auth{}, "g", "名"[:2], service.InvalidArgument},
		{"client id not UTF-8", service.Auth{ClientID: "\xc0\x80"}, "g", "e", service.InvalidArgument},
		{"token not UTF-8", service.Auth{Token: "\xff"}, "g", "e", service.InvalidArgument},
		{"group with the key separator", service.Auth{}, "a|b", "c", service.InvalidArgument},
		{"entry with the key separator", service.Auth{}, "a", "b|c", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := st.puts.Load()
			_, err := svc.DataType(ctx, service.HTTP, tc.a, tc.grp, tc.en)
			if got := codeOrZero(err); got != tc.want {
				t.Fatalf("DataType: code %d (%v); want %d", got, err, tc.want)
			}
			if tc.want != 0 && st.puts.Load() != before {
				t.Errorf("a refused call wrote to the store")
			}
			if tc.grp == "g" { // DataList checks the same auth strings
				_, _, err := svc.DataList(ctx, service.HTTP, tc.a, 2)
				if got := codeOrZero(err); tc.a != (service.Auth{}) && got != tc.want {
					t.Errorf("DataList: code %d (%v); want %d", got, err, tc.want)
				}
			}
		})
	}
}

func codeOrZero(err error) service.Code {
	if err == nil {
		return 0
	}
	return service.CodeOf(err)
}
