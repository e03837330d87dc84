// Command rpcbed drives the test bed: `rpcbed <command> [flags] [args]`.
// Each command lives in its own file; adding one is one line in commands.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// stdio is what a command reads and writes instead of the process's files, so
// tests run commands in-process.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// A command runs with the arguments after its name and returns the exit code:
// 0 done, 1 failed, 2 bad usage.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, s stdio) int
}

var commands = []command{
	{"parse", "print ab or rpcbed client reports (FILE... or - for stdin) as JSON", runParse},
	{"matrix", "run the matrix (matrix.yaml) and render tables and plots into results/<run>/", runMatrix},
	{"reproduce", "re-run the published experiments; write results/<run>/reproduction.md", runReproduce},
	{"capacity", "the highest offered rate each cell carries within an SLO (p99, errors): capacity.yaml into results/<run>-capacity/; agree A B checks two runs", runCapacity},
	{"compare", "compare two matrix runs cell by cell: each figure's change with its 95 % interval and verdict", runCompare},
	{"agree", "how well two runs of one spec reproduce: calibration of the intervals, flipped verdicts, share within ±10 % (make bench-reproducibility)", runAgree},
	{"cost", "count instructions, estimated cycles, syscalls and bytes per call under callgrind (cost.yaml; docs/cost.md)", runCost},
	{"gate", "compare two cost runs: exit 1 when a cell's instructions or estimated cycles per call grew beyond -max %", runGate},
	{"slices", "the slice-length trade-off: round noise, switching cost and half-width per slice length (make bench-slices)", runSlices},
	{"readme", "print the generated blocks of README.md and docs/*.md again from the committed runs they name (-check: only say which differ)", runReadme},
	{"ratio", "A/B from paired rounds (\"A B\" lines) with its 95 % interval and a verdict, against a goal or 1 (make bench-loadgen)", runRatio},
	{"certs", "a throwaway CA and server and client certificates in DIR, the matrix's own (make bench-loadgen's TLS block)", runCerts},
	{"vegeta", "vegeta's results (vegeta encode -to csv) in go-client's open-loop figures (make bench-loadgen)", runVegeta},
	{"delayer", "hold a link's packets for a delay where the kernel has no netem (an NFQUEUE queue; the matrix starts it itself)", runDelayer},
	{"probe", "how steady this machine is: a compute and a memory probe timed on each CPU, with their spread", runProbe},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], stdio{os.Stdin, os.Stdout, os.Stderr})
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, s stdio) int {
	if len(args) == 0 {
		usage(s.err)
		return 2
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		usage(s.out)
		return 0
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(ctx, args[1:], s)
		}
	}
	fmt.Fprintf(s.err, "rpcbed: unknown command %q\n", args[0])
	usage(s.err)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: rpcbed <command> [flags] [args]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\n`rpcbed <command> -h` describes a command's flags.")
}
