package runner

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// echoWorker is a worker in bash: a greeting, then one answer per stdin line on
// stdout and one log line on stderr; "die" exits 7; EOF ends it with 0.
const echoWorker = `echo "#rpcbed-worker ready sh $$"
while IFS= read -r l; do
  [ "$l" = die ] && { echo dying >&2; exit 7; }
  i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done
  echo "got $l"; echo "err $l" >&2
done
echo bye >&2`

// workerContract runs the same cases against any WorkerStarter.
func workerContract(t *testing.T, r WorkerStarter, image string) {
	ctx := context.Background()
	start := func(t *testing.T) (Worker, *bufio.Reader) {
		t.Helper()
		w, err := r.StartWorker(ctx, Task{Name: "contract-worker", Image: image, Args: []string{"bash", "-c", echoWorker}, CPUs: 1, MemoryMB: 128})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Stop(context.Background()) })
		return w, bufio.NewReader(w.Stdout())
	}
	readLine := func(t *testing.T, br *bufio.Reader) string {
		t.Helper()
		type res struct {
			s   string
			err error
		}
		ch := make(chan res, 1)
		go func() { s, err := br.ReadString('\n'); ch <- res{s, err} }()
		select {
		case r := <-ch:
			if r.err != nil && r.err != io.EOF {
				t.Fatalf("read: %v", r.err)
			}
			return r.s
		case <-time.After(30 * time.Second):
			t.Fatal("no line in 30 s")
		}
		return ""
	}

	t.Run("many commands, then EOF", func(t *testing.T) {
		w, br := start(t)
		if got := readLine(t, br); !strings.HasPrefix(got, "#rpcbed-worker ready sh ") {
			t.Fatalf("got greeting %q; want #rpcbed-worker ready sh PID", got)
		}
		for i := range 3 {
			fmt.Fprintf(w.Stdin(), "run%d\n", i)
			if got, want := readLine(t, br), fmt.Sprintf("got run%d\n", i); got != want {
				t.Errorf("got %q; want %q", got, want)
			}
		}
		if u, s, err := w.Usage(ctx); err != nil || u+s <= 0 {
			t.Errorf("Usage: got %v %v %v; want CPU > 0 and no error", u, s, err)
		}
		res, err := w.Stop(ctx)
		if err != nil {
			t.Fatalf("Stop: %v", err)
		}
		if res.ExitCode != 0 || !strings.Contains(string(res.Stderr), "err run2\nbye\n") {
			t.Errorf("got exit %d stderr %q; want 0 and the log lines", res.ExitCode, res.Stderr)
		}
		if res.CPUUser+res.CPUSystem <= 0 {
			t.Errorf("got lifetime CPU 0; want > 0")
		}
		select {
		case <-w.Done():
		default:
			t.Error("Done not closed after Stop")
		}
		if _, err := w.Stop(ctx); err != nil {
			t.Errorf("second Stop: %v", err)
		}
	})

	t.Run("dies", func(t *testing.T) {
		w, br := start(t)
		readLine(t, br)
		fmt.Fprintln(w.Stdin(), "die")
		if got := readLine(t, br); got != "" {
			t.Errorf("got %q after die; want EOF", got)
		}
		select {
		case <-w.Done():
		case <-time.After(20 * time.Second):
			t.Fatal("Done not closed after the program exited")
		}
		res, _ := w.Stop(ctx)
		if res.ExitCode != 7 || !strings.Contains(string(res.Stderr), "dying") {
			t.Errorf("got exit %d stderr %q; want 7 and its stderr", res.ExitCode, res.Stderr)
		}
	})

	t.Run("hangs", func(t *testing.T) {
		w, err := r.StartWorker(ctx, Task{Name: "contract-worker", Image: image, Args: []string{"bash", "-c", "trap '' TERM; exec sleep 60"}})
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		w.Stop(ctx)
		if d := time.Since(t0); d > 20*time.Second {
			t.Errorf("Stop of a worker ignoring EOF took %v; want about %v", d, workerGrace)
		}
	})
}

func TestLocalWorker(t *testing.T) {
	l := &Local{}
	defer l.Close()
	workerContract(t, l, "")
}

func TestDockerWorker(t *testing.T) {
	d := newDocker(t)
	buildImages(t)
	workerContract(t, d, "rpcbed/base")
}
