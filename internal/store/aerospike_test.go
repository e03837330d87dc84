package store_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/aerospiketest"
	"github.com/rpcbed/rpcbed/internal/store"
)

func unique(prefix string) string {
	var b [6]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func openAerospike(t *testing.T, hosts string) *store.Aerospike {
	t.Helper()
	a, err := store.OpenAerospike(hosts, "test", "data_type_def")
	if err != nil {
		t.Fatalf("OpenAerospike(%s): %v", hosts, err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// within runs f and fails t when it has not returned after limit: the guard
// against a call that hangs (not a speed check; limits are many times the bound).
func within(t *testing.T, limit time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("%s still running after %v: it hangs", what, limit)
	}
}

// A holder whose lock expired while it was slow must not delete the lock the next
// caller took since: the release is owner-checked.
func TestAerospikeLockReleaseAfterExpiry(t *testing.T) {
	a := openAerospike(t, aerospiketest.Hosts(t))
	ctx := context.Background()
	key := unique("lock_")
	releaseA, err := a.TryLock(ctx, key, time.Second)
	if err != nil || releaseA == nil {
		t.Fatalf("first TryLock = %v, %v; want the lock", releaseA != nil, err)
	}
	// A is slow: its 1 s lock expires (the server's clock; polled, at most 15 s).
	var releaseB func()
	for deadline := time.Now().Add(15 * time.Second); releaseB == nil; {
		if releaseB, err = a.TryLock(ctx, key, 30*time.Second); err != nil {
			t.Fatalf("TryLock while waiting for expiry: %v", err)
		}
		if releaseB == nil && time.Now().After(deadline) {
			t.Fatal("the 1 s lock was still held after 15 s: no expiry")
		}
		if releaseB == nil {
			time.Sleep(100 * time.Millisecond)
		}
	}
	releaseA() // the slow holder finishes and releases what it no longer owns
	if c, err := a.TryLock(ctx, key, time.Second); err != nil || c != nil {
		t.Fatalf("TryLock after the expired holder's release = %v, %v; want refused (B still holds it)", c != nil, err)
	}
	releaseB()
	d, err := a.TryLock(ctx, key, time.Second)
	if err != nil || d == nil {
		t.Fatalf("TryLock after the owner's release = %v, %v; want the lock", d != nil, err)
	}
	d()
}

// A context already done makes no call; its error reaches the caller as such.
func TestAerospikeContextDone(t *testing.T) {
	a := openAerospike(t, aerospiketest.Hosts(t))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Millisecond))
	defer cancel2()
	key := unique("ctx_")
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want error
	}{{"cancelled", cancelled, context.Canceled}, {"expired", expired, context.DeadlineExceeded}} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := a.Get(tc.ctx, key); !errors.Is(err, tc.want) {
				t.Errorf("Get: %v; want %v", err, tc.want)
			}
			if err := a.Put(tc.ctx, key, store.Record{CnName: "x", CodeID: 1}); !errors.Is(err, tc.want) {
				t.Errorf("Put: %v; want %v", err, tc.want)
			}
			if rel, err := a.TryLock(tc.ctx, key, time.Second); !errors.Is(err, tc.want) || rel != nil {
				t.Errorf("TryLock: %v, %v; want %v and no lock", rel != nil, err, tc.want)
			}
		})
	}
	// Nothing was written.
	if _, ok, err := a.Get(context.Background(), key); err != nil || ok {
		t.Errorf("Get after the refused Put = %v, %v; want a miss", ok, err)
	}
}

// A server that stops answering (SIGSTOP: connections open, no replies) bounds each
// call by the caller's deadline, and the error says it was the deadline.
func TestAerospikeDeadlineOnStalledServer(t *testing.T) {
	srv := aerospiketest.Start(t)
	a := openAerospike(t, srv.Hosts)
	key := unique("stall_")
	if err := a.Put(context.Background(), key, store.Record{CnName: "n", CodeID: 7}); err != nil {
		t.Fatal(err)
	}
	srv.Signal(t, syscall.SIGSTOP)
	defer srv.Signal(t, syscall.SIGCONT)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	within(t, 10*time.Second, "Get on a stalled server", func() {
		if _, _, err := a.Get(ctx, key); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Get on a stalled server: %v; want context.DeadlineExceeded", err)
		}
	})
	srv.Signal(t, syscall.SIGCONT)
	if _, ok, err := waitGet(a, key, 30*time.Second); err != nil || !ok {
		t.Errorf("Get after SIGCONT = %v, %v; want the record", ok, err)
	}
}

// waitGet retries Get until it succeeds or limit passes; it returns the last result.
func waitGet(a *store.Aerospike, key string, limit time.Duration) (store.Record, bool, error) {
	for deadline := time.Now().Add(limit); ; {
		r, ok, err := a.Get(context.Background(), key)
		if err == nil || time.Now().After(deadline) {
			return r, ok, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// asd stopped mid-run: calls fail with a clear error within their bound, no call or
// goroutine hangs, and once asd is back the same store (no reopen) serves again.
func TestAerospikeServerRestart(t *testing.T) {
	srv := aerospiketest.Start(t)
	a := openAerospike(t, srv.Hosts)
	ctx := context.Background()
	key := unique("restart_")
	if err := a.Put(ctx, key, store.Record{CnName: "before", CodeID: 1}); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()

	// Once a call has found the server unreachable, the store fails the others at
	// once: for this test, until it says otherwise (the default retries every 250 ms,
	// which a loaded machine can overrun between two calls).
	store.SetAerospikeRetryAfter(a, time.Hour)
	srv.Down(t)
	downAt := time.Now()
	const callers = 20
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		longest time.Duration
	)
	errs := make(chan error, 3*callers)
	within(t, 15*time.Second, "calls while asd is down", func() {
		for i := 0; i < callers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				timed := func(f func() error) {
					s := time.Now()
					errs <- f()
					mu.Lock()
					longest = max(longest, time.Since(s))
					mu.Unlock()
				}
				timed(func() error { _, _, err := a.Get(ctx, key); return err })
				timed(func() error { return a.Put(ctx, key, store.Record{CnName: "down", CodeID: 2}) })
				timed(func() error { _, err := a.TryLock(ctx, key, time.Second); return err })
			}()
		}
		wg.Wait()
	})
	close(errs)
	t.Logf("%d calls while asd was down returned after %v, the longest after %v (store bound %v)",
		3*callers, time.Since(downAt).Round(time.Millisecond), longest.Round(time.Millisecond), store.AerospikeCallTimeout)
	first := true
	for err := range errs {
		if first && err != nil {
			t.Logf("while down: %v", err)
			first = false
		}
		if err == nil {
			t.Fatal("a call succeeded while asd was down")
		}
		if !strings.Contains(err.Error(), "store: aerospike") {
			t.Errorf("error %q does not say it is the Aerospike store", err)
		}
	}

	// The store knows the server is unreachable now: calls fail at once, saying so.
	for i, op := range []func() error{
		func() error { _, _, err := a.Get(ctx, key); return err },
		func() error { return a.Put(ctx, key, store.Record{CnName: "down", CodeID: 2}) },
		func() error { _, err := a.TryLock(ctx, key, time.Second); return err },
	} {
		s := time.Now()
		err := op()
		if !errors.Is(err, store.ErrAerospikeUnavailable) || !strings.Contains(err.Error(), "server unavailable") {
			t.Errorf("call %d after the outage was seen: %v; want ErrAerospikeUnavailable", i+1, err)
		}
		t.Logf("call %d after the outage was seen: %v after %v", i+1, err, time.Since(s).Round(time.Microsecond))
	}
	store.SetAerospikeRetryAfter(a, 0) // the default from here: the next call tries the server

	srv.Up(t) // in-memory namespace: the record is gone, the store is not
	upAt := time.Now()
	if _, _, err := waitGet(a, key, 30*time.Second); err != nil {
		t.Fatalf("Get 30 s after asd came back: %v", err)
	}
	t.Logf("the store served again %v after asd was ready", time.Since(upAt).Round(time.Millisecond))
	if err := a.Put(ctx, key, store.Record{CnName: "after", CodeID: 3}); err != nil {
		t.Fatalf("Put after restart: %v", err)
	}
	if r, ok, err := a.Get(ctx, key); err != nil || !ok || r.CnName != "after" {
		t.Fatalf("Get after restart = %+v, %v, %v; want the record written after", r, ok, err)
	}
	rel, err := a.TryLock(ctx, key, time.Second)
	if err != nil || rel == nil {
		t.Fatalf("TryLock after restart = %v, %v; want the lock", rel != nil, err)
	}
	rel()
	// The calls made while asd was down left no goroutine behind (the client's own
	// tend and connection goroutines may differ by a few).
	var now int
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if now = runtime.NumGoroutine(); now <= before+5 || time.Now().After(deadline) {
			break
		}
	}
	if now > before+5 {
		t.Errorf("%d goroutines after the outage; %d before it", now, before)
	}
}

// An unreachable host at start gives a clear error within the connect timeout: a
// closed port, and a listener that accepts but never answers.
func TestAerospikeUnreachableAtStart(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	}()
	for _, tc := range []struct{ name, hosts string }{
		{"closed port", closedAddr},
		{"silent listener", silent.Addr().String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			within(t, 3*store.AerospikeConnectTimeout, "OpenAerospike", func() {
				a, err := store.OpenAerospike(tc.hosts, "test", "")
				if err == nil {
					a.Close()
					t.Fatalf("OpenAerospike(%s) succeeded; want an error", tc.hosts)
				}
				if !strings.Contains(err.Error(), "store: aerospike") {
					t.Errorf("error %q does not name the store", err)
				}
				t.Logf("%s: %v", tc.name, err)
			})
		})
	}
}
