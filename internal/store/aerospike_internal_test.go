package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v8"
)

// The caller's context reaches every call's policy: a deadline shortens
// TotalTimeout (never lengthens it), a context already done makes no call.
func TestAerospikeBound(t *testing.T) {
	base := as.BasePolicy{TotalTimeout: AerospikeCallTimeout, SocketTimeout: aerospikeSocketTimeout}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	short, cancel3 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel3()
	long, cancel4 := context.WithTimeout(context.Background(), time.Hour)
	defer cancel4()
	for _, tc := range []struct {
		name       string
		ctx        context.Context
		maxTotal   time.Duration
		wantErr    error
		wantSocket bool // SocketTimeout <= TotalTimeout
	}{
		{"no deadline", context.Background(), AerospikeCallTimeout, nil, true},
		{"long deadline keeps the store's bound", long, AerospikeCallTimeout, nil, true},
		{"short deadline", short, 100 * time.Millisecond, nil, true},
		{"cancelled", cancelled, 0, context.Canceled, false},
		{"expired", expired, 0, context.DeadlineExceeded, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := bound(tc.ctx, base)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v; want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if p.TotalTimeout <= 0 || p.TotalTimeout > tc.maxTotal {
				t.Errorf("TotalTimeout = %v; want in (0, %v]", p.TotalTimeout, tc.maxTotal)
			}
			if p.SocketTimeout > p.TotalTimeout {
				t.Errorf("SocketTimeout %v > TotalTimeout %v", p.SocketTimeout, p.TotalTimeout)
			}
		})
	}
	if base.TotalTimeout != AerospikeCallTimeout {
		t.Errorf("bound changed the store's policy: TotalTimeout %v", base.TotalTimeout)
	}
}

// The breaker: closed lets every call through; after an unreachable server it
// fails calls until its retry time, then lets one trial through at a time; a
// success closes it.
func TestAerospikeBreaker(t *testing.T) {
	var b breaker
	step := func(name string, wantOK, wantTrial bool) {
		t.Helper()
		ok, trial := b.allow()
		if ok != wantOK || trial != wantTrial {
			t.Errorf("%s: allow() = %v, %v; want %v, %v", name, ok, trial, wantOK, wantTrial)
		}
	}
	step("closed", true, false)
	b.result(answered, nil, false)
	step("closed after a success", true, false)
	b.result(inconclusive, errors.New("bad bin"), false)
	step("closed after another error", true, false)
	b.result(unreached, errors.New("refused"), false)
	step("open", false, false)
	if err := b.why(); !errors.Is(err, ErrAerospikeUnavailable) {
		t.Errorf("why() = %v; want ErrAerospikeUnavailable", err)
	}
	b.openUntil.Store(time.Now().Add(-time.Millisecond).UnixNano()) // retry time reached
	step("first call after the retry time", true, true)
	step("second call while the trial runs", false, false)
	b.result(unreached, errors.New("refused again"), true)
	step("trial failed: open again", false, false)
	b.openUntil.Store(time.Now().Add(-time.Millisecond).UnixNano())
	step("trial after the second failure", true, true)
	b.result(inconclusive, errors.New("bad bin"), true)
	step("an inconclusive trial leaves it open", true, true)
	b.result(unreached, errors.New("refused"), true)
	b.openUntil.Store(time.Now().Add(-time.Millisecond).UnixNano())
	step("next trial", true, true)
	b.result(answered, nil, true)
	step("trial succeeded: closed", true, false)
	step("closed stays closed", true, false)
}

// A slow call (timeout, no free connection) opens the breaker only when no call
// was answered for aerospikeQuiet: a loaded server that answers others stays in use.
func TestAerospikeBreakerSlow(t *testing.T) {
	var b breaker
	b.result(answered, nil, false)
	b.result(slow, errors.New("timeout"), false)
	if ok, _ := b.allow(); !ok {
		t.Error("slow call just after an answered one: breaker opened; want it closed")
	}
	b.answeredAt.Store(time.Now().Add(-aerospikeQuiet - time.Millisecond).UnixNano())
	b.result(slow, errors.New("timeout"), false)
	if ok, _ := b.allow(); ok {
		t.Errorf("slow call with nothing answered for %v: breaker closed; want it open", aerospikeQuiet)
	}
	var fresh breaker // nothing ever answered: a slow call means down
	fresh.result(slow, errors.New("timeout"), false)
	if ok, _ := fresh.allow(); ok {
		t.Error("slow first call: breaker closed; want it open")
	}
}

func TestAerospikeReach(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want reachability
	}{
		{as.ErrNetwork, unreached},
		{as.ErrTimeout, slow},
		{as.ErrConnectionPoolEmpty, slow},
		{errors.New("not a client error"), inconclusive},
		{as.ErrKeyNotFound, inconclusive},
	} {
		if got := reach(tc.err); got != tc.want {
			t.Errorf("reach(%v) = %d; want %d", tc.err, got, tc.want)
		}
	}
}

func TestAerospikeShortError(t *testing.T) {
	chain := strings.Repeat("ResultCode: NO_AVAILABLE_CONNECTIONS_TO_NODE: pool empty\n", 300)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, "none"},
		{"one line", errors.New("refused"), "refused"},
		{"repeated attempts", errors.New("ResultCode: TIMEOUT: timed out\n" + chain), "ResultCode: TIMEOUT: timed out; ResultCode: NO_AVAILABLE_CONNECTIONS_TO_NODE: pool empty"},
		{"more than three", errors.New("a\nb\nc\nd\ne"), "a; b; c; (2 more)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := short(tc.err); got != tc.want {
				t.Errorf("short() = %q; want %q", got, tc.want)
			}
		})
	}
}
