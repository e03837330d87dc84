package load

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/report"
	"io"
	"os"
	"regexp"
	"strings"
)

// Worker mode (docs/report-format.md, "Worker mode"): one go-client process runs
// many runs handed to it on stdin, as gRPC's benchmark workers do. Each run is
// exactly the one-shot command line (RunMain): it dials, verifies and warms up
// afresh; what carries over is the process.
const (
	workerPrefix = "#rpcbed-worker"
	maxCommand   = 64 << 10 // a longer stdin line is a bad command
)

var workerID = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// WorkerMain serves run and quit commands from stdin until quit, EOF or ctx ends;
// it returns the worker's exit code (0, or 2 for arguments after "worker").
func WorkerMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
			fmt.Fprintln(stdout, "usage: go-client worker   (commands on stdin: run<TAB>ID<TAB>ARG..., quit; docs/report-format.md)")
			return report.ExitOK
		}
		fmt.Fprintf(stderr, "go-client: worker takes no arguments, got %q (runs come on stdin)\n", args[0])
		return report.ExitUsage
	}
	fmt.Fprintf(stdout, "%s ready go %d\n", workerPrefix, os.Getpid())
	// stdin is read on its own goroutine so that a signal (ctx) ends an idle worker
	// too; a run in progress ends early and prints what it measured.
	type command struct {
		line    []byte
		tooLong bool
		err     error
	}
	cmds := make(chan command)
	go func() {
		br := bufio.NewReaderSize(stdin, 4<<10)
		for {
			line, tooLong, err := readCommand(br)
			select {
			case cmds <- command{line, tooLong, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		var c command
		select {
		case <-ctx.Done():
			return report.ExitOK
		case c = <-cmds:
		}
		if c.err != nil && c.line == nil {
			if !errors.Is(c.err, io.EOF) {
				fmt.Fprintf(stderr, "go-client: worker: reading stdin: %v\n", c.err)
			}
			return report.ExitOK // EOF is quit
		}
		if c.tooLong {
			fmt.Fprintf(stderr, "go-client: worker: command longer than %d bytes\n", maxCommand)
			done(stdout, "-", report.ExitUsage)
		} else if quit := serveCommand(ctx, string(c.line), stdout, stderr); quit {
			return report.ExitOK
		}
		if c.err != nil { // the last line had no newline
			return report.ExitOK
		}
	}
}

// serveCommand answers one command line; it returns true for quit.
func serveCommand(ctx context.Context, line string, stdout, stderr io.Writer) bool {
	fields := strings.Split(line, "\t")
	switch {
	case len(fields) == 1 && fields[0] == "quit":
		return true
	case fields[0] == "run" && len(fields) >= 2 && workerID.MatchString(fields[1]):
		id := fields[1]
		fmt.Fprintf(stderr, "%s begin %s\n", workerPrefix, id)
		code := RunMain(ctx, fields[2:], stdout, stderr)
		fmt.Fprintf(stderr, "%s end %s\n", workerPrefix, id)
		done(stdout, id, code)
	default:
		id := "-"
		if len(fields) >= 2 && workerID.MatchString(fields[1]) {
			id = fields[1]
		}
		fmt.Fprintf(stderr, "go-client: worker: bad command %.80q: want run<TAB>ID<TAB>ARG... or quit\n", line)
		done(stdout, id, report.ExitUsage)
	}
	return false
}

func done(w io.Writer, id string, code int) {
	fmt.Fprintf(w, "%s done %s exit=%d\n", workerPrefix, id, code)
}

// readCommand reads one stdin line without its line end. A line longer than
// maxCommand is skipped whole and reported as tooLong. A last line without a
// newline is returned with io.EOF.
func readCommand(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > maxCommand+2 {
			tooLong = true
		} else {
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && len(buf) == 0 && !tooLong {
			return nil, false, err
		}
		if tooLong {
			return []byte{}, true, err
		}
		buf = bytes.TrimSuffix(buf, []byte{'\n'})
		buf = bytes.TrimSuffix(buf, []byte{'\r'})
		return buf, false, err
	}
}
