package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	as "github.com/aerospike/aerospike-client-go/v8"
	"github.com/aerospike/aerospike-client-go/v8/types"
)

// Aerospike is the published experiment's store: namespace "test", set
// "data_type_def", bins cnname and code_id. The lock is a create-only record in the
// set "data_type_def_lock" with a TTL and an owner bin holding a random token; the
// release deletes it only while the owner bin still holds the caller's token (an
// expression filter), so a holder whose lock expired cannot delete a lock another
// caller took since.
//
// Every call is bounded: AerospikeCallTimeout, or less when the caller's context
// ends sooner (the context's deadline becomes the policy's TotalTimeout, a context
// already done makes no call). A server that is down fails the first calls within
// that bound and the others at once (ErrAerospikeUnavailable, see breaker); the
// client keeps re-seeding from the hosts, so calls succeed again once it is back,
// without reopening the store.
type Aerospike struct {
	c       *as.Client
	ns, set string
	read    as.BasePolicy
	write   as.WritePolicy
	brk     breaker
}

const (
	// AerospikeConnectTimeout bounds OpenAerospike (cluster discovery).
	AerospikeConnectTimeout = 3 * time.Second
	// AerospikeCallTimeout bounds each call when the context allows more.
	AerospikeCallTimeout = time.Second
	// aerospikeConnections is the connection pool per node (ClientPolicy.ConnectionQueueSize).
	aerospikeConnections = 1024
	// aerospikeSocketTimeout bounds one attempt within a call (two retries).
	aerospikeSocketTimeout = 400 * time.Millisecond
)

// OpenAerospike connects to hosts ("host:port[,host:port]") and fails when no node
// answers within AerospikeConnectTimeout.
func OpenAerospike(hosts, namespace, set string) (*Aerospike, error) {
	if strings.TrimSpace(hosts) == "" {
		return nil, errors.New("store: aerospike needs -aerospike-hosts host:port")
	}
	if namespace == "" {
		namespace = "test"
	}
	if set == "" {
		set = "data_type_def"
	}
	var seeds []string
	for _, h := range strings.Split(hosts, ",") {
		seeds = append(seeds, strings.TrimSpace(h))
	}
	hs, err := as.NewHosts(seeds...)
	if err != nil {
		return nil, fmt.Errorf("store: aerospike hosts %q: %w", hosts, err)
	}
	cp := as.NewClientPolicy()
	cp.Timeout = AerospikeConnectTimeout
	cp.FailIfNotConnected = true
	// One connection per in-flight call up to the published run's 800 clients (the
	// client's default, 100, fails calls past it at once with "no available
	// connections": the c=800 cells measured that limit, not the server).
	cp.ConnectionQueueSize = aerospikeConnections
	c, aerr := as.NewClientWithPolicyAndHost(cp, hs...)
	if aerr != nil {
		return nil, fmt.Errorf("store: aerospike at %s: no node answered within %v: %w", hosts, cp.Timeout, brief{aerr})
	}
	a := &Aerospike{c: c, ns: namespace, set: set, read: *as.NewPolicy(), write: *as.NewWritePolicy(0, 0)}
	for _, p := range []*as.BasePolicy{&a.read, &a.write.BasePolicy} {
		p.TotalTimeout = AerospikeCallTimeout
		p.SocketTimeout = aerospikeSocketTimeout
		p.MaxRetries = 2
	}
	return a, nil
}

// bound returns base with its TotalTimeout cut to what ctx leaves, or ctx's error
// when it is already done.
func bound(ctx context.Context, base as.BasePolicy) (as.BasePolicy, error) {
	if err := ctx.Err(); err != nil {
		return base, err
	}
	if d, ok := ctx.Deadline(); ok {
		left := time.Until(d)
		if left <= 0 {
			return base, context.DeadlineExceeded
		}
		if left < base.TotalTimeout {
			base.TotalTimeout = left
		}
		if base.SocketTimeout > base.TotalTimeout {
			base.SocketTimeout = base.TotalTimeout
		}
	}
	return base, nil
}

// ErrAerospikeUnavailable is what calls return, at once, while the store has found
// the server unreachable: after a call fails for want of a node, a connection or a
// reply, the other calls fail fast for aerospikeRetryAfter, then one call at a time
// goes to the client again until one succeeds. (Without this, every call spins in
// the client on an empty connection pool for its whole timeout while the client
// has not yet noticed the node is gone, about 5 s.)
var ErrAerospikeUnavailable = errors.New("server unavailable")

const aerospikeRetryAfter = 250 * time.Millisecond

// breaker is the store's view of the server: closed (calls go through), open until
// a time, or trying (one call goes through).
type breaker struct {
	openUntil  atomic.Int64 // unix ns; 0 = closed
	answeredAt atomic.Int64 // unix ns of the last call the server answered
	trying     atomic.Bool
	retryAfter time.Duration // 0: aerospikeRetryAfter
	mu         sync.Mutex
	last       error
	lastAt     time.Time
}

// reachability is what a call says about the server.
type reachability int

const (
	answered  reachability = iota // the server answered: close
	unreached                     // no node, no connection: open
	// slow: no reply in time, no free connection, retries used up. Open only when
	// no call was answered for aerospikeQuiet: while others are answered, the
	// server is up and loaded (c=800 on one core), and failing every call for
	// aerospikeRetryAfter would turn a few slow calls into a stream of failures.
	slow
	inconclusive // another error (or the caller's deadline): no change
)

// aerospikeQuiet: how long without an answered call makes slow calls mean down.
const aerospikeQuiet = AerospikeCallTimeout

// allow says whether a call may go to the client; trial is true when it is the one
// call testing a server found unreachable.
func (b *breaker) allow() (ok, trial bool) {
	until := b.openUntil.Load()
	if until == 0 {
		return true, false
	}
	if time.Now().UnixNano() < until || !b.trying.CompareAndSwap(false, true) {
		return false, false
	}
	return true, true
}

func (b *breaker) result(o reachability, err error, trial bool) {
	now := time.Now()
	if o == slow {
		o = inconclusive
		if now.UnixNano()-b.answeredAt.Load() >= int64(aerospikeQuiet) {
			o = unreached
		}
	}
	if o == answered {
		b.answeredAt.Store(now.UnixNano())
	}
	switch {
	case o == unreached:
		b.mu.Lock()
		b.last, b.lastAt = err, time.Now()
		b.mu.Unlock()
		wait := b.retryAfter
		if wait == 0 {
			wait = aerospikeRetryAfter
		}
		b.openUntil.Store(time.Now().Add(wait).UnixNano())
	case o == answered && b.openUntil.Load() != 0:
		b.openUntil.Store(0)
	}
	if trial {
		b.trying.Store(false)
	}
}

func (b *breaker) why() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return fmt.Errorf("%w (last error %v ago: %s)", ErrAerospikeUnavailable, time.Since(b.lastAt).Round(time.Millisecond), short(b.last))
}

// reach says what a client error means for the breaker: unreached (no node, no
// connection), slow (no reply in time, no free connection, retries used up) or
// inconclusive (anything else).
func reach(err error) reachability {
	var aerr as.Error
	if !errors.As(err, &aerr) {
		return inconclusive
	}
	switch {
	case aerr.Matches(types.NETWORK_ERROR, types.INVALID_NODE_ERROR, types.SERVER_NOT_AVAILABLE,
		types.INVALID_CLUSTER_PARTITION_MAP, types.PARTITION_UNAVAILABLE):
		return unreached
	case aerr.Matches(types.TIMEOUT, types.NO_RESPONSE, types.NO_AVAILABLE_CONNECTIONS_TO_NODE,
		types.MAX_RETRIES_EXCEEDED, types.MAX_ERROR_RATE):
		return slow
	}
	return inconclusive
}

// short is the client's error on one line: its distinct messages (the client
// chains one per attempt, hundreds while the pool is empty), at most three.
func short(err error) string {
	if err == nil {
		return "none"
	}
	var out []string
	seen := map[string]bool{}
	more := 0
	for _, l := range strings.Split(err.Error(), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || seen[l] {
			continue
		}
		seen[l] = true
		if len(out) == 3 {
			more++
			continue
		}
		out = append(out, l)
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("(%d more)", more))
	}
	return strings.Join(out, "; ")
}

// brief prints an error as short does and unwraps to it.
type brief struct{ err error }

func (b brief) Error() string { return short(b.err) }
func (b brief) Unwrap() error { return b.err }

// callError is a failed call: which, on what, and why (short), unwrapping to the
// client's error and, when it ended the call, the context's.
type callError struct {
	op, ns, key string
	ctx, err    error
}

func (e *callError) Error() string {
	msg := "store: aerospike " + e.op + " " + e.ns + "/" + e.key + ": "
	if e.ctx != nil && !errors.Is(e.err, e.ctx) {
		return msg + e.ctx.Error() + " (" + short(e.err) + ")"
	}
	return msg + short(e.err)
}

func (e *callError) Unwrap() []error {
	if e.ctx != nil {
		return []error{e.ctx, e.err}
	}
	return []error{e.err}
}

// call runs f under the store's bounds: the breaker, then the caller's context cut
// into the policy. When the client's error has the result code answer (a miss, a
// lock held), call returns true and no error.
func (a *Aerospike) call(ctx context.Context, op, key string, base as.BasePolicy, answer types.ResultCode, f func(p *as.BasePolicy) as.Error) (bool, error) {
	p, err := bound(ctx, base)
	if err != nil {
		return false, &callError{op: op, ns: a.ns, key: key, err: err}
	}
	allowed, trial := a.brk.allow()
	if !allowed {
		return false, &callError{op: op, ns: a.ns, key: key, err: a.brk.why()}
	}
	aerr := f(&p)
	if aerr == nil || (answer != types.OK && aerr.Matches(answer)) {
		a.brk.result(answered, nil, trial)
		return aerr != nil, nil
	}
	cerr := ctx.Err()
	if cerr == nil && p.TotalTimeout < base.TotalTimeout && aerr.Matches(types.TIMEOUT) {
		cerr = context.DeadlineExceeded // the timeout was the caller's deadline
	}
	// A call the caller's deadline cut short says nothing about the server.
	o := inconclusive
	if cerr == nil {
		o = reach(aerr)
	}
	a.brk.result(o, aerr, trial)
	return false, &callError{op: op, ns: a.ns, key: key, ctx: cerr, err: aerr}
}

func (a *Aerospike) Get(ctx context.Context, key string) (Record, bool, error) {
	k, kerr := as.NewKey(a.ns, a.set, key)
	if kerr != nil {
		return Record{}, false, kerr
	}
	var rec *as.Record
	miss, err := a.call(ctx, "get", key, a.read, types.KEY_NOT_FOUND_ERROR, func(p *as.BasePolicy) (aerr as.Error) {
		rec, aerr = a.c.Get(p, k, "cnname", "code_id")
		return aerr
	})
	if err != nil || miss {
		return Record{}, false, err
	}
	name, _ := rec.Bins["cnname"].(string)
	var code int64
	switch v := rec.Bins["code_id"].(type) {
	case int:
		code = int64(v)
	case int64:
		code = v
	default:
		return Record{}, false, fmt.Errorf("store: aerospike %s: code_id has type %T", key, v)
	}
	return Record{CnName: name, CodeID: code}, true, nil
}

func (a *Aerospike) Put(ctx context.Context, key string, r Record) error {
	k, kerr := as.NewKey(a.ns, a.set, key)
	if kerr != nil {
		return kerr
	}
	_, err := a.call(ctx, "put", key, a.write.BasePolicy, types.OK, func(p *as.BasePolicy) as.Error {
		wp := a.write
		wp.BasePolicy = *p
		return a.c.Put(&wp, k, as.BinMap{"cnname": r.CnName, "code_id": r.CodeID})
	})
	return err
}

// TryLock creates the lock record (create-only, TTL rounded up to whole seconds,
// Aerospike's unit) holding a random owner token.
func (a *Aerospike) TryLock(ctx context.Context, key string, ttl time.Duration) (func(), error) {
	k, kerr := as.NewKey(a.ns, a.set+"_lock", key)
	if kerr != nil {
		return nil, kerr
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	owner := hex.EncodeToString(b[:])
	secs := uint32((ttl + time.Second - 1) / time.Second)
	if secs == 0 {
		secs = 1
	}
	held, err := a.call(ctx, "lock", key, a.write.BasePolicy, types.KEY_EXISTS_ERROR, func(p *as.BasePolicy) as.Error {
		wp := a.write
		wp.BasePolicy = *p
		wp.Expiration = secs
		wp.RecordExistsAction = as.CREATE_ONLY
		return a.c.Put(&wp, k, as.BinMap{"owner": owner})
	})
	if err != nil || held {
		return nil, err
	}
	return func() {
		// The store's own bound: the caller's context may be done, and the lock must
		// still go. The filter makes the delete a no-op (FILTERED_OUT) when another
		// owner holds the lock now; a failed release leaves the lock to its TTL.
		a.call(context.Background(), "unlock", key, a.write.BasePolicy, types.FILTERED_OUT, func(p *as.BasePolicy) as.Error {
			wp := a.write
			wp.BasePolicy = *p
			wp.FilterExpression = as.ExpEq(as.ExpStringBin("owner"), as.ExpStringVal(owner))
			_, aerr := a.c.Delete(&wp, k)
			return aerr
		})
	}, nil
}

// Delete removes a record; tests use it to start from a miss.
func (a *Aerospike) Delete(ctx context.Context, key string) error {
	k, kerr := as.NewKey(a.ns, a.set, key)
	if kerr != nil {
		return kerr
	}
	_, err := a.call(ctx, "delete", key, a.write.BasePolicy, types.OK, func(p *as.BasePolicy) as.Error {
		wp := a.write
		wp.BasePolicy = *p
		_, aerr := a.c.Delete(&wp, k)
		return aerr
	})
	return err
}

func (a *Aerospike) Close() error { a.c.Close(); return nil }
