package store

import "time"

// SetAerospikeRetryAfter sets how long a's store fails calls at once after the
// server was found unreachable; an open breaker's retry time moves to now, so the
// next call tries the server. Tests use it to keep the breaker open for as long as
// they look at it, whatever the machine's load.
func SetAerospikeRetryAfter(a *Aerospike, d time.Duration) {
	a.brk.retryAfter = d
	if a.brk.openUntil.Load() != 0 {
		a.brk.openUntil.Store(time.Now().UnixNano())
	}
}
