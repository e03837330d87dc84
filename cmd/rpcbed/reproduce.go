package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/matrix"
	"github.com/rpcbed/rpcbed/internal/measure"
	"github.com/rpcbed/rpcbed/internal/plan"
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
	specFile := fs.String("spec", "", "a spec whose hosts and links give go-grpc-thrift-aerospike its network back (reproduce-lan.yaml): the server on the go-server's host, the client on go's, across -link")
	link := fs.String("link", "", "with -spec: the label of the spec's link to run across (default its only one)")
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
	o := reproduce.Options{
		Dir: dir, Published: *published, Runner: r, RunnerName: name, Local: local,
		Programs:     measure.Programs{Docker: name == "docker", Root: absRoot},
		ServerCPUSet: *serverCPU, ClientCPUSet: *clientCPU, AerospikeHosts: *aerospike, RedisAddr: *redis, Quick: *quick, Budget: *budget, Log: log,
	}
	if *specFile != "" {
		closeNet, err := openNet(ctx, &o, *specFile, *link)
		if err != nil {
			fmt.Fprintf(s.err, "rpcbed reproduce: %v\n", err)
			return 2
		}
		defer closeNet()
	} else if *link != "" {
		fmt.Fprintf(s.err, "rpcbed reproduce: -link %s: needs -spec, whose hosts and links it names\n", *link)
		return 2
	}
	secs, err := reproduce.Run(ctx, o, fs.Args())
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

// openNet gives o the hosts and the link of spec file (a reproduction with its
// network back): the link labelled label, or the spec's only one.
func openNet(ctx context.Context, o *reproduce.Options, file, label string) (func(), error) {
	spec, err := plan.ReadSpec(file)
	if err != nil {
		return nil, err
	}
	var labels []string
	for _, l := range spec.LinkList() {
		if !l.Loopback {
			labels = append(labels, l.Label())
		}
	}
	switch {
	case len(spec.Hosts) == 0:
		return nil, fmt.Errorf("-spec %s: hosts: none, so there is no network to run across", file)
	case label == "" && len(labels) != 1:
		return nil, fmt.Errorf("-link: %s has %d links between hosts (%s): name one", file, len(labels), strings.Join(labels, ", "))
	case label == "":
		label = labels[0]
	case !slices.Contains(labels, label):
		return nil, fmt.Errorf("-link %s: not a link between hosts in %s (it has %s)", label, file, strings.Join(labels, ", "))
	}
	bed, stop, err := matrix.OpenLinkBed(ctx, &spec, o.Runner, o.Programs, func(s string) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, "  note: %s\n", s)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("-spec %s: %w", file, err)
	}
	o.Net, o.Link = bed, label
	return stop, nil
}
