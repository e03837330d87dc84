package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/rpcbed/rpcbed/internal/delayer"
)

// runDelayer is `rpcbed delayer`: the link delayer on its own, for a bed made
// by hand (the matrix starts it itself for a link with delay on a kernel
// without netem). It binds an NFQUEUE queue, holds each packet for the delay,
// and on SIGINT/SIGTERM accepts what it holds and prints what it did as JSON.
func runDelayer(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("delayer", flag.ContinueOnError)
	fs.SetOutput(s.err)
	netns := fs.String("netns", "", "network namespace to bind the queue in (a path such as /var/run/netns/NAME; empty: this process's)")
	queue := fs.Uint("queue", 0, "NFQUEUE queue number (0..65535), as in the rule's --queue-num")
	delay := fs.Duration("delay", 0, "delay added to every packet (0..10s)")
	jitter := fs.Duration("jitter", 0, "each packet's delay drawn uniformly within ± this (0..delay), kept in order per flow")
	seed := fs.Uint64("seed", 0, "the jitter's draws (0: from the clock)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: rpcbed delayer [-netns PATH] [-queue 0] -delay 1ms [-jitter 100us] [-seed N]\n\n"+
			"Holds every packet of an NFQUEUE queue for -delay before accepting it: a link's\n"+
			"delay where the kernel has no netem. Send a device's ingress to it in the\n"+
			"receiving namespace, e.g.\n"+
			"  iptables -t raw -A PREROUTING -i DEV -j NFQUEUE --queue-num 0 --queue-bypass\n"+
			"It prints \"ready\" on stderr once the queue is bound, and on SIGINT or SIGTERM\n"+
			"accepts what it holds and prints its figures (packets, lateness, CPU) as JSON.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 0 || *queue > 65535 {
		fs.Usage()
		return 2
	}
	c := delayer.Config{Queue: uint16(*queue), Delay: *delay, Jitter: *jitter, Seed: *seed}
	if err := c.Validate(); err != nil {
		fmt.Fprintf(s.err, "rpcbed delayer: %v\n", err)
		return 2
	}
	c.Ready = func(int) { fmt.Fprintln(s.err, "ready") }
	t0 := time.Now()
	var st delayer.Stats
	var err error
	if *netns != "" {
		st, err = delayer.RunIn(ctx, *netns, c)
	} else {
		st, err = delayer.Run(ctx, c)
	}
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed delayer: %v\n", err)
		return 1
	}
	out := struct {
		delayer.Stats
		Seconds float64 `json:"seconds"`
	}{st, time.Since(t0).Seconds()}
	b, _ := json.MarshalIndent(out, "", "  ")
	fmt.Fprintln(s.out, string(b))
	return 0
}
