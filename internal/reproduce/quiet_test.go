package reproduce

import (
	"context"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/measure"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// waitQuiet ends once the server's /stats CPU grows by under 10 % of a core over
// a step with no calls, and says after how long and how busy the server was
// first; a server that stays busy is reported, not waited on forever.
func TestWaitQuiet(t *testing.T) {
	for _, tc := range []struct {
		name      string
		busySteps int64 // steps at a full core before the server rests
		wantQuiet bool
	}{
		{"rests at once", 0, true},
		{"busy two steps", 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var reads atomic.Int64
			start := time.Now()
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := reads.Add(1)
				// A full core until busySteps steps have passed, then flat.
				cpu := min(time.Since(start), time.Duration(tc.busySteps)*javaQuietStep).Seconds()
				fmt.Fprintf(w, `{"time_unix_s": %d, "cpu_user_s": %f, "cpu_system_s": 0, "calls": {}}`, n, cpu)
			}))
			defer ts.Close()
			q, err := waitQuiet(context.Background(), &measure.ServerProc{StatsURL: ts.URL + "/stats"})
			if err != nil {
				t.Fatal(err)
			}
			if q.Quiet != tc.wantQuiet {
				t.Errorf("quiet = %v; want %v (%+v)", q.Quiet, tc.wantQuiet, q)
			}
			if tc.busySteps > 0 && (q.FirstBusy < 0.5 || q.After < time.Duration(tc.busySteps)*javaQuietStep) {
				t.Errorf("got %+v; want a first step near a full core and at least %v", q, time.Duration(tc.busySteps)*javaQuietStep)
			}
			if tc.busySteps == 0 && q.After > 2*javaQuietStep {
				t.Errorf("a resting server took %v", q.After)
			}
		})
	}
	// No /stats: nothing to wait for.
	if q, err := waitQuiet(context.Background(), &measure.ServerProc{}); err != nil || q.Quiet {
		t.Errorf("no /stats: got %+v, %v; want not quiet, no error", q, err)
	}
}
