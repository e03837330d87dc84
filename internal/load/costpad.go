package load

import "strconv"

// costPad, set at link time only, adds a fixed amount of work to every call:
//
//	go build -ldflags "-X github.com/rpcbed/rpcbed/internal/load.costPad=2000" ./go-client
//
// rpcbed gate's test (cmd/rpcbed) builds go-client so to make a known per-call
// regression and checks that the gate catches it. Every normal build leaves it
// empty: the check below is one comparison per call.
var costPad string

var padRounds = func() int {
	n, _ := strconv.Atoi(costPad)
	return n
}()

// padSink keeps the busy loop from being optimised away.
var padSink uint64

// pad is the busy loop: rounds of a multiply-add the compiler cannot fold.
func pad(rounds int) {
	x := padSink | 1
	for i := 0; i < rounds; i++ {
		x = x*6364136223846793005 + uint64(i)
	}
	padSink = x
}
