package capacity

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// dm1 is a synthetic server behind an open loop, simulated: calls arrive
// evenly spaced at the offered rate (the clients' schedule), one core serves
// them in arrival order, each for an exponential service time of mean service
// (a D/M/1 queue), every figure computed as the clients do: latency from the
// intended start, the achieved rate over the window from the first intended
// start to the last call's end.
type dm1 struct {
	service time.Duration
	period  time.Duration
	rng     *rand.Rand
	// clientMiss, when set, is the share of the offer the client fails to send.
	clientMiss float64
	// cold is how many first runs carry a stall: 2 % of their calls a second
	// late (a client still compiling its code).
	cold int
}

func (m *dm1) Probe(_ context.Context, rate float64) (Obs, error) {
	sent := rate * (1 - m.clientMiss)
	T := 1 / sent
	S := m.service.Seconds()
	warm := int(sent * 0.2)
	n := int(sent * m.period.Seconds())
	lat := make([]float64, 0, n)
	var wait, prevService float64
	var first, end float64
	for i := range warm + n {
		if i > 0 {
			wait = math.Max(0, wait+prevService-T)
		}
		prevService = m.rng.ExpFloat64() * S
		sojourn := wait + prevService
		if i == warm {
			first = float64(i) * T
		}
		if i >= warm {
			lat = append(lat, sojourn)
			end = math.Max(end, float64(i)*T+sojourn)
		}
	}
	if m.cold > 0 {
		m.cold--
		for i := 0; i < len(lat); i += 50 {
			lat[i] = 1
		}
	}
	slices.Sort(lat)
	h := stats.NewLatency()
	for _, l := range lat {
		_ = h.RecordValue(int64(l * 1e6))
	}
	p99 := lat[int(math.Ceil(0.99*float64(len(lat))))-1]
	busy := math.Min(1, sent*S)
	return Obs{Achieved: float64(n) / (end - first), WindowS: end - first, Calls: int64(n), P99Us: p99 * 1e6, P50Us: lat[len(lat)/2] * 1e6,
		ServerBusy: busy, ServerCores: 1, ClientBusy: 0.1, ClientCores: 1, hist: h}, nil
}

// dm1Knee is the queueing model's knee: the rate at which a D/M/1 queue's p99
// sojourn time equals budget. The sojourn time of a GI/M/1 queue is
// exponential with rate mu(1-sigma), sigma the root of sigma = A*(mu(1-sigma));
// for evenly spaced arrivals A*(s) = exp(-s/lambda), so with
// y = 1-sigma = ln(100)/(mu budget): lambda = mu y / -ln(1-y).
func dm1Knee(service, budget time.Duration) float64 {
	mu := 1 / service.Seconds()
	y := math.Log(100) / (mu * budget.Seconds())
	return mu * y / -math.Log(1-y)
}

func testSearch() Search {
	s := defaultSearch
	s.Cooldown = 0
	s.Deadline = plan.Duration(time.Hour)
	return s
}

// TestKneeMatchesQueueingModel: over seeded trials, the knee found on the
// simulated one-core server lies within 5 % of the model's for the p99 budget
// (the median of the trials; each within 8 %), and the trials' knees lie inside
// each other's intervals (at least 60 % of the pairs). A window's p99 misses
// the rare long busy periods a steady state has, so it reads low and the knee
// a little high (+0 to +3.5 % here); the interval is the runs' noise, not that
// bias, and is not held to the model.
func TestKneeMatchesQueueingModel(t *testing.T) {
	for _, tc := range []struct {
		name            string
		service, budget time.Duration
	}{
		{"1ms-p99-20ms", time.Millisecond, 20 * time.Millisecond},
		{"200us-p99-10ms", 200 * time.Microsecond, 10 * time.Millisecond},
		{"100us-p99-1ms", 100 * time.Microsecond, time.Millisecond},
		{"100us-p99-10ms", 100 * time.Microsecond, 10 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := dm1Knee(tc.service, tc.budget)
			slo := SLO{P99: plan.Duration(tc.budget), Errors: 0.001}
			var devs []float64
			var knees []Knee
			for seed := range 12 {
				m := &dm1{service: tc.service, period: 3 * time.Second, rng: rand.New(rand.NewPCG(uint64(seed), 7))}
				x := NewSearcher(m, testSearch(), nil)
				k, err := x.Find(context.Background(), slo, StartFrom(1/tc.service.Seconds()))
				if err != nil {
					t.Fatal(err)
				}
				if k.Status != StatusFound {
					t.Fatalf("seed %d: status %s (%s); want found", seed, k.Status, k.Note)
				}
				d := k.Rate/want - 1
				if math.Abs(d) > 0.08 {
					t.Errorf("seed %d: knee %.0f/s; want within 8 %% of the model's %.0f/s (%+.1f %%)", seed, k.Rate, want, d*100)
				}
				devs = append(devs, d)
				knees = append(knees, k)
				t.Logf("seed %d: knee %.0f [%.0f, %.0f] model %.0f, %d runs", seed, k.Rate, k.Low, k.High, want, len(x.Runs))
				if k.Limit != LimitLatency && k.Limit != LimitServer {
					t.Errorf("seed %d: limit %q; want latency or server", seed, k.Limit)
				}
			}
			if m := stats.Median(devs); math.Abs(m) > 0.05 {
				t.Errorf("median knee %+.1f %% off the model's %.0f/s; want within 5 %%", m*100, want)
			}
			// Each trial is a rerun of the others: their knees lie inside each
			// other's intervals as `rpcbed capacity agree` asks (90 % of cells);
			// at least 60 % of the pairs here (65-100 %), where a knee's own 95 % interval (not widened
			// for a rerun) would hold about 83 %.
			pairs, inside := 0, 0
			for i := range knees {
				for j := i + 1; j < len(knees); j++ {
					a, b := knees[i], knees[j]
					pairs++
					if a.Rate >= b.Low && a.Rate <= b.High && b.Rate >= a.Low && b.Rate <= a.High {
						inside++
					}
				}
			}
			t.Logf("%d of %d pairs of trials inside each other's interval", inside, pairs)
			if float64(inside) < 0.6*float64(pairs) {
				t.Errorf("%d of %d pairs of trials inside each other's interval; want at least 60 %%", inside, pairs)
			}
		})
	}
}

// TestSLONoRateMeets: a budget below the service time itself is "below the
// lowest rate tried", not a crash and not a knee.
func TestSLONoRateMeets(t *testing.T) {
	m := &dm1{service: time.Millisecond, period: time.Second, rng: rand.New(rand.NewPCG(1, 2))}
	x := NewSearcher(m, testSearch(), nil)
	k, err := x.Find(context.Background(), SLO{P99: plan.Duration(100 * time.Microsecond)}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if k.Status != StatusBelow || k.Rate != 0 {
		t.Fatalf("status %s rate %g; want %s and 0", k.Status, k.Rate, StatusBelow)
	}
	// The downward phase halved 100/s to 50/s, the lowest whose 1 s window holds
	// DownCalls calls, each step breaching.
	if want := "below the lowest rate tried (50/s breached p99)"; k.Note != want {
		t.Errorf("note %q; want %q", k.Note, want)
	}
	if got := len(k.Steps); got != 2 {
		t.Errorf("%d steps; want 2 (100, 50/s)", got)
	}
}

// TestStartAboveTheKnee: a start that already breaches (a loaded machine's
// closed loop, a tight budget) is searched downward: the rate divided by the
// factor until a step passes, then bisected as usual, and the knee matches the
// queueing model's as from below.
func TestStartAboveTheKnee(t *testing.T) {
	service, budget := 200*time.Microsecond, 10*time.Millisecond
	want := dm1Knee(service, budget)
	slo := SLO{P99: plan.Duration(budget), Errors: 0.001}
	for seed := range 4 {
		m := &dm1{service: service, period: 3 * time.Second, rng: rand.New(rand.NewPCG(uint64(seed), 11))}
		x := NewSearcher(m, testSearch(), nil)
		k, err := x.Find(context.Background(), slo, 6*want)
		if err != nil {
			t.Fatal(err)
		}
		if k.Status != StatusFound {
			t.Fatalf("seed %d: status %s (%s); want found", seed, k.Status, k.Note)
		}
		if k.Steps[1].Phase != "downward" {
			t.Errorf("seed %d: second step %q; want downward", seed, k.Steps[1].Phase)
		}
		if d := k.Rate/want - 1; math.Abs(d) > 0.08 {
			t.Errorf("seed %d: knee %.0f/s; want within 8 %% of the model's %.0f/s", seed, k.Rate, want)
		}
	}
}

// TestFirstBreachOutweighed: a start whose two runs breach only because the
// client was still warming up (a stall in each) is searched downward and
// bisected below the start; the rounds' runs at the start then outweigh the
// two, the fit holds the SLO at every rate tried, and the search goes on once
// from there to the model's knee.
func TestFirstBreachOutweighed(t *testing.T) {
	service, budget := 200*time.Microsecond, 10*time.Millisecond
	want := dm1Knee(service, budget)
	slo := SLO{P99: plan.Duration(budget), Errors: 0.001}
	m := &dm1{service: service, period: 3 * time.Second, rng: rand.New(rand.NewPCG(8, 9)), cold: 2}
	x := NewSearcher(m, testSearch(), nil)
	k, err := x.Find(context.Background(), slo, want/3)
	if err != nil {
		t.Fatal(err)
	}
	if k.Status != StatusFound || k.Steps[0].Pass || k.Steps[1].Phase != "downward" {
		t.Fatalf("status %s (%s), steps %+v; want found after a first step that breached and a downward one", k.Status, k.Note, k.Steps[:2])
	}
	if !strings.Contains(k.Note, "searched on from there") {
		t.Errorf("note %q; want the search's going on said", k.Note)
	}
	if d := k.Rate/want - 1; math.Abs(d) > 0.08 {
		t.Errorf("knee %.0f/s; want within 8 %% of the model's %.0f/s", k.Rate, want)
	}
}

// TestClientMissingItsRate: a client that sends 3 % under the offer while the
// server has room is reported (inaccurate), never searched further.
func TestClientMissingItsRate(t *testing.T) {
	m := &dm1{service: 100 * time.Microsecond, period: time.Second, rng: rand.New(rand.NewPCG(1, 2)), clientMiss: 0.03}
	slo := SLO{P99: plan.Duration(20 * time.Millisecond)}
	x := NewSearcher(m, testSearch(), nil)
	k, err := x.Find(context.Background(), slo, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if k.Status != StatusInaccurate {
		t.Fatalf("status %s (%s); want %s", k.Status, k.Note, StatusInaccurate)
	}
	if len(k.Steps) != 1 || len(x.Runs) != 2 {
		t.Errorf("%d steps, %d runs; want 1 step of 2 runs (the check, then nothing)", len(k.Steps), len(x.Runs))
	}
	// Within 1 %: used.
	m.clientMiss = 0.005
	x = NewSearcher(m, testSearch(), nil)
	if k, _ = x.Find(context.Background(), slo, 1000); k.Status != StatusFound {
		t.Errorf("a client 0.5 %% under the offer: status %s (%s); want found", k.Status, k.Note)
	}
}

// TestHeld: the accuracy check allows one call for the clients' window
// conventions and no more than the accuracy beyond it.
func TestHeld(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Obs
		want bool
	}{
		{"exact", Obs{Offered: 1000, Calls: 1000, WindowS: 1.002, P50Us: 2000}, true},
		{"one call over at 35/s", Obs{Offered: 35, Calls: 71, WindowS: 2, P50Us: 3600}, true},
		{"1 % under", Obs{Offered: 1000, Calls: 990, WindowS: 1.002, P50Us: 2000}, true},
		{"1.5 % under", Obs{Offered: 1000, Calls: 985, WindowS: 1.002, P50Us: 2000}, false},
		{"backlog: the window ends 30 ms late", Obs{Offered: 1000, Calls: 1000, WindowS: 1.032, P50Us: 2000}, false},
		{"1.5 % over", Obs{Offered: 1000, Calls: 1015, WindowS: 1.002, P50Us: 2000}, false},
		{"failed run", Obs{Offered: 1000, Calls: 1000, WindowS: 1, Error: "exit 4"}, false},
	} {
		if got := tc.o.Held(0.01); got != tc.want {
			t.Errorf("%s: held %v; want %v (sustained %.1f/s)", tc.name, got, tc.want, tc.o.Sustained())
		}
	}
}

// TestDeadline: a search whose deadline passes in the bisection still runs
// its rounds at the bracket it has: a knee with an interval, marked not
// converged.
func TestDeadline(t *testing.T) {
	m := &dm1{service: time.Millisecond, period: time.Second, rng: rand.New(rand.NewPCG(3, 4))}
	s := testSearch()
	s.Deadline = plan.Duration(12 * time.Second)
	clock := time.Unix(0, 0)
	x := NewSearcher(m, s, func() time.Time { clock = clock.Add(time.Second); return clock })
	k, err := x.Find(context.Background(), SLO{P99: plan.Duration(20 * time.Millisecond)}, 250)
	if err != nil {
		t.Fatal(err)
	}
	if k.Status != StatusUnconverged || !k.Measured() || k.Hi/k.Lo-1 <= 0.02 {
		t.Fatalf("status %s, measured %v, bracket %g-%g; want unconverged with an interval, the bracket wider than 2 %%", k.Status, k.Measured(), k.Lo, k.Hi)
	}
	if !strings.Contains(k.Note, "the rounds ran there") {
		t.Errorf("note %q", k.Note)
	}
}
