package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/measure"
	"github.com/rpcbed/rpcbed/internal/reproduce"
	"github.com/rpcbed/rpcbed/internal/runner"
)

// runReproduce is `rpcbed reproduce [which...]`.
func runReproduce(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("reproduce", flag.ContinueOnError)
	fs.SetOutput(s.err)
	out := fs.String("out", "", "run directory (default results/<UTC time>-reproduce)")
	runnerName := fs.String("runner", "auto", "docker, local, or auto (docker when an engine answers, else local); ab always runs locally")
	published := fs.String("published", "results/published", "directory of the published CSV files")
	root := fs.String("root", ".", "repository root (local programs: bin/, php-client/, java-client/)")
	serverCPU := fs.String("server-cpuset", "0", "CPUs for the servers")
	clientCPU := fs.String("client-cpuset", "1", "CPUs for the clients, fronts and ab")
	aerospike := fs.String("aerospike-hosts", os.Getenv("AEROSPIKE_HOSTS"), "Aerospike seeds host:port[,host:port] for go-grpc-thrift-aerospike's store, as published (default $AEROSPIKE_HOSTS; empty: Redis)")
	redis := fs.String("redis", "127.0.0.1:6379", "Redis for go-grpc-thrift-aerospike's store when no Aerospike is given and it answers (empty: memory store)")
	quick := fs.Bool("quick", false, "tiny runs (tests): same shape, meaningless numbers")
	budget := fs.Duration("budget", reproduce.DefaultBudget, "the whole reproduction's time: base runs, then paired rounds added where a claim is still inconclusive until decided or this is spent (0: none added)")
	quiet := fs.Bool("q", false, "no progress lines")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: rpcbed reproduce [flags] [%s|all]...\n\n"+
			"Re-runs the shape of each published experiment (results/published/) and writes\n"+
			"DIR/reproduction.md (and reproduction.html): a summary of every published claim as a rule\n"+
			"(published, measured median [spread], tolerance, verdict, measured reason), then each experiment.\n", strings.Join(reproduce.Experiments, "|"))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	absRoot, err := filepath.Abs(*root)
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed reproduce: %v\n", err)
		return 2
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("results", time.Now().UTC().Format("20060102T150405Z")+"-reproduce")
	}
	r, name, err := chooseRunner(*runnerName, absRoot)
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed reproduce: %v\n", err)
		return 2
	}
	defer r.Close()
	local := &runner.Local{Dir: absRoot}
	defer local.Close()
	var log io.Writer = s.err
	if *quiet {
		log = nil
	}
	secs, err := reproduce.Run(ctx, reproduce.Options{
		Dir: dir, Published: *published, Runner: r, RunnerName: name, Local: local,
		Programs:     measure.Programs{Docker: name == "docker", Root: absRoot},
		ServerCPUSet: *serverCPU, ClientCPUSet: *clientCPU, AerospikeHosts: *aerospike, RedisAddr: *redis, Quick: *quick, Budget: *budget, Log: log,
	}, fs.Args())
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed reproduce: %v\n", err)
		return 1
	}
	failed := 0
	for _, sec := range secs {
		if sec.Err != "" {
			failed++
		}
	}
	fmt.Fprintf(s.out, "%s/reproduction.md: %d experiments, %d failed\n", dir, len(secs), failed)
	if failed > 0 {
		return 1
	}
	return 0
}
