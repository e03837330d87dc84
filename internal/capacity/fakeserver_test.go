package capacity

import (
	"context"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/fakeserver"
	"github.com/rpcbed/rpcbed/internal/load"
	"github.com/rpcbed/rpcbed/internal/plan"
)

// goClient probes a server with go-client's open loop (internal/load),
// in-process.
type goClient struct {
	addr            string
	measure, warmup time.Duration
}

func (g goClient) Probe(ctx context.Context, rate float64) (Obs, error) {
	res, err := load.Run(ctx, load.Config{Proto: "grpc", Call: "datalist", Items: 2, Concurrency: 50,
		Duration: g.measure, Warmup: g.warmup, Rate: int(rate), Timeout: 5 * time.Second, Addr: g.addr}, io.Discard)
	if ctx.Err() != nil {
		return Obs{}, ctx.Err()
	}
	if err != nil {
		return Obs{Error: err.Error()}, nil
	}
	return Obs{Achieved: float64(res.Complete) / res.TimeTaken.Seconds(), WindowS: res.TimeTaken.Seconds(), Calls: res.Complete, Failed: res.Failed,
		P50Us: float64(res.Hist.ValueAtQuantile(50)), P99Us: float64(res.Hist.ValueAtQuantile(99))}, nil
}

// TestKneeOnFakeServer runs the search end to end: go-client's open loop
// against a fake server whose one core serves each call for an exponential
// time of mean 2 ms (seeded). The D/M/1 model's knee is 440/s at a 40 ms p99.
// This search's 600 ms windows read each p99 from about 260 calls, the third
// largest wait of the window, which moves by tens of percent from window to
// window, so one search lands within about 15 % of the model (a quiet CI
// machine found 480/s, +9 %); the 5 % agreement is TestKneeMatchesQueueingModel's,
// over seeded trials with the default windows. A knee 20 % past the model is
// beyond that sampling: one core serving faster than it can.
func TestKneeOnFakeServer(t *testing.T) {
	const service = 2 * time.Millisecond
	budget := 40 * time.Millisecond
	want := dm1Knee(service, budget)
	rng := rand.New(rand.NewPCG(1, 11))
	addrs := fakeserver.Start(t, fakeserver.OneCore(fakeserver.Right, func() time.Duration {
		return time.Duration(rng.ExpFloat64() * float64(service))
	}))
	s := testSearch()
	s.Measure, s.Warmup, s.Precision, s.Rounds = plan.Duration(600*time.Millisecond), plan.Duration(200*time.Millisecond), 0.05, 2
	x := NewSearcher(goClient{addr: addrs["grpc"], measure: s.Measure.D(), warmup: s.Warmup.D()}, s, nil)
	k, err := x.Find(context.Background(), SLO{P99: plan.Duration(budget), Errors: 0.001}, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range x.Runs {
		t.Logf("run %.0f/s: sustained %.1f p50 %.0f p99 %.0f µs", o.Offered, o.Sustained(), o.P50Us, o.P99Us)
	}
	t.Logf("%s: knee %.0f/s [%.0f, %.0f], bracket %g-%g, model %.0f/s, %d runs: %s", k.Status, k.Rate, k.Low, k.High, k.Lo, k.Hi, want, len(x.Runs), k.Note)
	switch k.Status {
	case StatusFound:
		if k.Rate > 1.2*want {
			t.Errorf("knee %.0f/s; want at most 1.2 x the model's %.0f/s: faster than one core can serve", k.Rate, want)
		}
		if k.Low > k.Rate || k.High < k.Rate || k.Lo >= k.Hi {
			t.Errorf("knee %.0f [%.0f, %.0f], bracket %g-%g: want the knee inside its interval, the bracket ordered", k.Rate, k.Low, k.High, k.Lo, k.Hi)
		}
	case StatusBelow, StatusUnconverged:
		// A machine too busy for a 40 ms budget at 100 calls/s: reported, not a crash.
	default:
		t.Errorf("status %s (%s); want found (or below/unconverged on a busy machine)", k.Status, k.Note)
	}
}
