//go:build linux

package load

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// A closed loop's thread is SCHED_BATCH while it runs and SCHED_NORMAL again
// after: the policy never leaks to the thread's next goroutine.
func TestYieldToServerRestores(t *testing.T) {
	policy := func() uint32 {
		a, err := unix.SchedGetAttr(0, 0)
		if err != nil {
			t.Skipf("sched_getattr: %v", err)
		}
		return a.Policy
	}
	runtime.LockOSThread() // so that the checks below read the thread yieldToServer set
	defer runtime.UnlockOSThread()
	if p := policy(); p != unix.SCHED_NORMAL {
		t.Skipf("the test's thread runs with policy %d", p)
	}
	restore := yieldToServer()
	if p := policy(); p != unix.SCHED_BATCH {
		t.Errorf("policy %d during the loop; want SCHED_BATCH (%d)", p, unix.SCHED_BATCH)
	}
	restore()
	if p := policy(); p != unix.SCHED_NORMAL {
		t.Errorf("policy %d after the loop; want SCHED_NORMAL (%d)", p, unix.SCHED_NORMAL)
	}
}
