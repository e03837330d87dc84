package worker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/runner"
)

// fakeWorker speaks the worker protocol in bash: each run prints its arguments
// as the report and exits with the code its first argument names; "die" ends
// the worker mid-run.
const fakeWorker = `echo "#rpcbed-worker ready fake $$"
while IFS=$'\t' read -r cmd id code rest; do
  [ "$code" = die ] && exit 1
  echo "#rpcbed-worker begin $id" >&2
  echo "report of $id: $rest"
  echo "a log line of $id" >&2
  echo "#rpcbed-worker end $id" >&2
  echo "#rpcbed-worker done $id exit=$code"
done`

// A pool keeps one worker per key: runs go through it in turn, each with its
// own report, exit code and stderr; a worker that dies mid-run is marked dead,
// its run's error wraps ErrDied, and the pool starts a fresh one (a new id).
func TestPoolRunsAndRestarts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l := &runner.Local{}
	defer l.Close()
	spec := runner.Task{Name: "fake", Args: []string{"bash", "-c", fakeWorker}}
	wp := NewPool()
	defer wp.Close()
	p, err := wp.Get(ctx, l, "go", "go-grpc", spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id, code string
		exit     int
	}{{"r1", "0", 0}, {"r2", "3", 3}} {
		res, err := p.Run(ctx, tc.id, []string{tc.code, "-c", "1"}, 10*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", tc.id, err)
		}
		if res.ExitCode != tc.exit || string(res.Stdout) != "report of "+tc.id+": -c\t1\n" || string(res.Stderr) != "a log line of "+tc.id+"\n" {
			t.Errorf("%s: got exit %d, stdout %q, stderr %q; want exit %d, its report and its log line", tc.id, res.ExitCode, res.Stdout, res.Stderr, tc.exit)
		}
	}
	if got := wp.Current("go-grpc"); got != p.ID() || !strings.HasPrefix(got, "go-grpc#") {
		t.Errorf("Current: got %q; want %q", got, p.ID())
	}
	if _, err := p.Run(ctx, "r3", []string{"die"}, 10*time.Second); !errors.Is(err, ErrDied) || p.Dead() == nil {
		t.Fatalf("a worker that died mid-run: got %v (dead: %v); want ErrDied", err, p.Dead())
	}
	if got := wp.Current("go-grpc"); got != "" {
		t.Errorf("Current after the death: got %q; want none", got)
	}
	q, err := wp.Get(ctx, l, "go", "go-grpc", spec)
	if err != nil {
		t.Fatal(err)
	}
	if q.ID() == p.ID() || !wp.StartedOnce("go") {
		t.Errorf("after a death: got worker %s (was %s); want a fresh one", q.ID(), p.ID())
	}
}
