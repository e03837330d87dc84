package load

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestStartAt checks -start-at's one invariant, the one a cluster's common
// window rests on: the measured window never opens before the asked time nor
// before the warm-up ends, and opens at the later of the two (within a loaded
// machine's timer slack); the calls before it are warm-up.
func TestStartAt(t *testing.T) {
	addrs := goServer(t)
	const slack = 250 * time.Millisecond // a timer's wake-up under -race on a loaded machine
	for _, tc := range []struct {
		name   string
		rate   int
		warmup time.Duration
		auto   bool
		ahead  time.Duration // -start-at from now; negative: already past
	}{
		{"closed loop, no warm-up", 0, 0, false, 400 * time.Millisecond},
		{"closed loop, a shorter warm-up", 0, 100 * time.Millisecond, false, 400 * time.Millisecond},
		{"closed loop, a longer warm-up", 0, 700 * time.Millisecond, false, 200 * time.Millisecond},
		{"closed loop, the time already past", 0, 0, false, -time.Second},
		{"open loop, no warm-up", 300, 0, false, 400 * time.Millisecond},
		{"open loop, a shorter warm-up", 300, 100 * time.Millisecond, false, 400 * time.Millisecond},
		{"auto warm-up", 0, 0, true, 400 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sent := time.Now()
			at := sent.Add(tc.ahead).Round(0) // wall clock only, as a parsed flag
			cfg := Config{Proto: ProtoGRPC, Call: CallDataList, Items: 5, Concurrency: 2, Rate: tc.rate,
				Duration: 300 * time.Millisecond, Warmup: tc.warmup, WarmupAuto: tc.auto, WarmupMax: 3 * time.Second,
				StartAt: at, Addr: addrs[ProtoGRPC]}
			res, err := Run(context.Background(), cfg, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			opened := res.WindowStart
			if opened.Before(at) {
				t.Errorf("window opened %v before -start-at", at.Sub(opened))
			}
			warmEnd := opened.Add(-res.WarmupTime).Add(tc.warmup) // the run's base plus its fixed warm-up
			if opened.Before(warmEnd) {
				t.Errorf("window opened %v before the warm-up ended", warmEnd.Sub(opened))
			}
			if !tc.auto {
				want := at
				if warmEnd.After(want) {
					want = warmEnd
				}
				if late := opened.Sub(want); late > slack {
					t.Errorf("window opened %v after the later of -start-at and the warm-up's end; want within %v", late, slack)
				}
			}
			if tc.ahead > 0 && res.WarmupCalls == 0 {
				t.Errorf("no warm-up calls before a start %v ahead; the calls before it are warm-up", tc.ahead)
			}
			if res.Complete == 0 || res.Failed != 0 {
				t.Errorf("complete %d, failed %d; want calls and no failure", res.Complete, res.Failed)
			}
			// An open loop's window ends with its last call due inside it (within one
			// interval, c/rate, of the end), a closed loop's with its last call.
			if d := res.WindowEnd.Sub(opened); d < 300*time.Millisecond-10*time.Millisecond || d > 300*time.Millisecond+slack {
				t.Errorf("window %v; want -t 300ms from its opening", d)
			}
		})
	}
}

// TestStartAtFlag checks -start-at's parsing: Unix seconds with a fraction,
// and a clear error naming the flag for anything else.
func TestStartAtFlag(t *testing.T) {
	base := []string{"-proto", "grpc", "-call", "datatype", "-n", "10", "-addr", "127.0.0.1:1"}
	now := time.Now()
	at := now.Add(2 * time.Second).UnixMicro()
	ok, err := ParseArgs(append(base, "-start-at", startAtArg(time.UnixMicro(at))))
	if err != nil {
		t.Fatalf("-start-at in 2 s: %v", err)
	}
	if ok.StartAt.UnixMicro() != at {
		t.Errorf("StartAt %d µs; want %d", ok.StartAt.UnixMicro(), at)
	}
	for _, tc := range []struct{ v, want string }{
		{"soon", "-start-at"},
		{"-5", "-start-at"},
		{"NaN", "-start-at"},
		{"1e300", "-start-at"},
		{"0", "-start-at"},
		{startAtArg(now.Add(3 * time.Hour)), "ahead of this host's clock"},
	} {
		_, err := ParseArgs(append(base, "-start-at", tc.v))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("-start-at %q: error %v; want one saying %q", tc.v, err, tc.want)
		}
	}
}

// startAtArg is t as -start-at takes it.
func startAtArg(t time.Time) string {
	u := unixTime(t)
	return u.String()
}
