package load

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/fakeserver"
	"github.com/rpcbed/rpcbed/internal/report"

	"github.com/rpcbed/rpcbed/internal/testbed"
)

// workerRun feeds stdin to a worker and returns its exit code, stdout, stderr.
func workerRun(t *testing.T, stdin string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := testbed.Within(t, 60*time.Second, func() int {
		return WorkerMain(context.Background(), nil, strings.NewReader(stdin), &stdout, &stderr)
	})
	return code, stdout.String(), stderr.String()
}

// splitRuns cuts a worker's stdout after its ready line into one chunk per done
// line: the output before it, its ID and its exit code.
type workerAnswer struct {
	out, id string
	code    int
}

var doneLine = regexp.MustCompile(`(?m)^#rpcbed-worker done (\S+) exit=(\d+)\n`)

func splitRuns(t *testing.T, stdout string) []workerAnswer {
	t.Helper()
	ready := fmt.Sprintf("#rpcbed-worker ready go %d\n", os.Getpid())
	rest, ok := strings.CutPrefix(stdout, ready)
	if !ok {
		t.Fatalf("stdout does not start with %q:\n%s", ready, stdout)
	}
	var answers []workerAnswer
	for {
		m := doneLine.FindStringSubmatchIndex(rest)
		if m == nil {
			if rest != "" {
				t.Errorf("stdout after the last done line: %q", rest)
			}
			return answers
		}
		var code int
		fmt.Sscan(rest[m[4]:m[5]], &code)
		answers = append(answers, workerAnswer{out: rest[:m[0]], id: rest[m[2]:m[3]], code: code})
		rest = rest[m[1]:]
	}
}

// TestWorker: three runs in one worker against a real go-server, each answered by
// its whole report and a done line, with begin/end markers around its log on
// stderr; then quit.
func TestWorker(t *testing.T) {
	addrs := goServer(t)
	var in strings.Builder
	for i, p := range protos {
		fmt.Fprintf(&in, "run\tr%d.%s\t-proto\t%s\t-call\tdatalist\t-items\t5\t-c\t2\t-n\t50\t-k\t-addr\t%s\n", i, p, p, addrs[p])
	}
	in.WriteString("quit\nrun\tnever\t-h\n") // nothing after quit runs
	code, stdout, stderr := workerRun(t, in.String())
	if code != 0 {
		t.Errorf("worker exit = %d; want 0", code)
	}
	answers := splitRuns(t, stdout)
	if len(answers) != len(protos) {
		t.Fatalf("%d done lines; want %d:\n%s", len(answers), len(protos), stdout)
	}
	for i, p := range protos {
		a := answers[i]
		id := fmt.Sprintf("r%d.%s", i, p)
		if a.id != id || a.code != 0 {
			t.Errorf("answer %d: done %s exit=%d; want done %s exit=0", i, a.id, a.code, id)
		}
		rep, err := report.ParseClient(strings.NewReader(a.out))
		if err != nil {
			t.Errorf("run %s: report: %v\n%s", id, err, a.out)
			continue
		}
		if rep.Complete != 50 || rep.Failed != 0 || rep.Rpcbed.Protocol != p {
			t.Errorf("run %s: %d complete, %d failed, protocol %s; want 50, 0, %s", id, rep.Complete, rep.Failed, rep.Rpcbed.Protocol, p)
		}
		begin, end := "#rpcbed-worker begin "+id+"\n", "#rpcbed-worker end "+id+"\n"
		b, e := strings.Index(stderr, begin), strings.Index(stderr, end)
		if b < 0 || e < b || !strings.Contains(stderr[b:e], "go-client: verified") {
			t.Errorf("stderr lacks %q, the run's log, %q in that order:\n%s", begin, end, stderr)
		}
	}
}

// TestWorkerBadCommands: a bad command is answered exit=2 (ID "-" when none can be
// read) and the worker goes on; a run that fails to verify is exit=3 with no
// report; EOF without quit ends the worker with 0.
func TestWorkerBadCommands(t *testing.T) {
	wrong := fakeserver.Start(t, fakeserver.WrongCount)
	dead := testbed.FreeAddr(t)
	stdin := strings.Join([]string{
		"bogus\tb1",
		"run\tbad id!\t-h",
		"",
		"run",
		"run\tu1\t-proto\tgrpc\t-bogus",
		"run\tv1\t-proto\tgrpc\t-call\tdatalist\t-items\t3\t-n\t5\t-addr\t" + wrong["grpc"],
		"run\tc1\t-proto\tthrift\t-call\tdatatype\t-n\t5\t-timeout\t2s\t-addr\t" + dead,
		"run\th1\t-h",
		"run\tlong\t" + strings.Repeat("x", maxCommand+10),                         // hostile: skipped whole, answered exit=2
		"run\tlast\t-proto\thttp\t-call\tdatatype\t-n\t5\t-addr\t" + wrong["http"], // no newline: EOF
	}, "\n")
	code, stdout, stderr := workerRun(t, stdin)
	if code != 0 {
		t.Errorf("worker exit = %d; want 0 (EOF is quit)", code)
	}
	want := []struct {
		id   string
		code int
	}{{"b1", 2}, {"-", 2}, {"-", 2}, {"-", 2}, {"u1", 2}, {"v1", 3}, {"c1", 4}, {"h1", 0}, {"-", 2}, {"last", 3}}
	answers := splitRuns(t, stdout)
	if len(answers) != len(want) {
		t.Fatalf("%d done lines; want %d:\n%s", len(answers), len(want), stdout)
	}
	for i, w := range want {
		a := answers[i]
		if a.id != w.id || a.code != w.code {
			t.Errorf("answer %d: done %s exit=%d; want done %s exit=%d", i, a.id, a.code, w.id, w.code)
		}
		switch {
		case w.id == "h1":
			if !strings.Contains(a.out, "exit codes:") {
				t.Errorf("run h1 (-h): stdout %q; want the usage", a.out)
			}
		case a.out != "":
			t.Errorf("answer %d (%s): stdout %q before its done line; want none", i, w.id, a.out)
		}
	}
	for _, s := range []string{"#rpcbed-worker begin v1\n", "verify: length: grpc", "#rpcbed-worker end v1\n", "verify: connect: ", "bad command"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, stderr)
		}
	}
}

func TestWorkerArgs(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := WorkerMain(context.Background(), []string{"-bogus"}, strings.NewReader(""), &stdout, &stderr); code != report.ExitUsage {
		t.Errorf("worker -bogus: exit %d; want 2", code)
	}
	stdout.Reset()
	if code := WorkerMain(context.Background(), []string{"-h"}, strings.NewReader(""), &stdout, &stderr); code != report.ExitOK || !strings.Contains(stdout.String(), "usage") {
		t.Errorf("worker -h: exit %d, stdout %q; want 0 and the usage", code, stdout.String())
	}
}

// TestWorkerSignal: a signal (ctx) ends an idle worker waiting on stdin.
func TestWorkerSignal(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr bytes.Buffer
	codes := make(chan int, 1)
	go func() { codes <- WorkerMain(ctx, nil, pr, &stdout, &stderr) }()
	cancel()
	select {
	case code := <-codes:
		if code != 0 {
			t.Errorf("exit %d; want 0", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an idle worker did not end on its signal")
	}
}
