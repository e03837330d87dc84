package load

import (
	"bytes"
	"context"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/fakeserver"
	"github.com/rpcbed/rpcbed/internal/report"

	"github.com/rpcbed/rpcbed/internal/testbed"
)

// TestSettled is the -warmup auto detector on synthetic series (calls/s per
// 250 ms window): 3 consecutive windows within ±5 % of their mean.
func TestSettled(t *testing.T) {
	tests := []struct {
		name  string
		rates []float64
		want  bool
	}{
		{"empty", nil, false},
		{"two windows", []float64{1000, 1000}, false},
		{"three equal", []float64{1000, 1000, 1000}, true},
		{"within 5 %", []float64{960, 1000, 1040}, true},
		{"one 6 % off", []float64{1000, 1000, 1130}, false},
		{"rising", []float64{200, 400, 800, 1600}, false},
		{"settles after a climb", []float64{100, 500, 900, 1000, 990, 1010}, true},
		{"only the last three count", []float64{10, 1000, 1000, 1000}, true},
		{"last three unsettled", []float64{1000, 1000, 1000, 500}, false},
		{"all zero (nothing answered)", []float64{0, 0, 0}, false},
		{"edge: exactly 5 %", []float64{950, 1000, 1050}, true},
		{"NaN", []float64{math.NaN(), 1000, 1000}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := settled(tc.rates); got != tc.want {
				t.Errorf("settled(%v) = %v; want %v", tc.rates, got, tc.want)
			}
		})
	}
}

func TestWarmupFlag(t *testing.T) {
	tests := []struct {
		in       string
		auto     bool
		duration time.Duration
		bad      bool
	}{
		{"auto", true, 0, false},
		{"2s", false, 2 * time.Second, false},
		{"3", false, 3 * time.Second, false},
		{"0", false, 0, false},
		{"automatic", false, 0, true},
		{"-1s", false, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			var c Config
			err := warmupFlag{&c}.Set(tc.in)
			if (err != nil) != tc.bad {
				t.Fatalf("Set(%q): error %v; want error %v", tc.in, err, tc.bad)
			}
			if !tc.bad && (c.WarmupAuto != tc.auto || c.Warmup != tc.duration) {
				t.Errorf("Set(%q): auto %v, warm-up %v; want %v, %v", tc.in, c.WarmupAuto, c.Warmup, tc.auto, tc.duration)
			}
		})
	}
}

// TestCheckEveryCall: with -check full every timed call's content is checked, so a
// server that turns wrong after the verify call (codeId 101 -> 102: same size
// on every protocol) fails every later call as "length"; -check length, which
// looks at status, token and size only, does not see it.
func TestCheckEveryCall(t *testing.T) {
	const c, n, right = 2, 40, 3 // verify + one priming call + 1
	for _, p := range protos {
		for _, check := range []string{CheckFull, CheckLength} {
			t.Run(p+"-"+check, func(t *testing.T) {
				addrs := fakeserver.Start(t, fakeserver.After(right, fakeserver.Right, func(int64, int) fakeserver.Reply {
					return fakeserver.Reply{CodeID: 102}
				}))
				cfg := Config{Proto: p, Call: CallDataType, Concurrency: c, Requests: n, KeepAlive: true, Check: check, Addr: addrs[p]}
				res, err := Run(context.Background(), cfg, io.Discard)
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				got := res.ByKind[kindLength]
				if check == CheckFull && got < n-1 {
					t.Errorf("length failures = %d; want >= %d: every call after the %d right ones is wrong", got, n-1, right)
				}
				if check == CheckLength && res.Failed != 0 {
					t.Errorf("failures = %v; want none: -check length does not look at codeId", res.Errors())
				}
				if x := res.Report().Rpcbed; x.Check != check {
					t.Errorf("report Check = %q; want %q", x.Check, check)
				}
			})
		}
	}
}

// TestReportWindow: the report carries report v1.1's keys, its window is the
// measured part (Window end - Window start = Time taken), inside the run's wall
// time, and the client's CPU over it is within what the machine's cores allow
// (docs/method.md's invariant, 5 % allowance plus getrusage's tick).
func TestReportWindow(t *testing.T) {
	addrs := goServer(t)
	for _, p := range protos {
		t.Run(p, func(t *testing.T) {
			before := time.Now()
			cfg := Config{Proto: p, Call: CallDataList, Items: 20, Concurrency: 3, Requests: 300, Warmup: 100 * time.Millisecond, KeepAlive: true, Addr: addrs[p]}
			res, err := Run(context.Background(), cfg, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			after := time.Now()
			var b bytes.Buffer
			if err := report.Write(&b, res.Report()); err != nil {
				t.Fatal(err)
			}
			rep, err := report.ParseClient(&b)
			if err != nil {
				t.Fatal(err)
			}
			x := rep.Rpcbed
			if x.Check != report.CheckFull || x.Runtime != "go" || x.CPUScope != report.ScopeWindow || x.WarmupSettled != report.SettledFixed {
				t.Errorf("check %q runtime %q scope %q settled %q; want full go window fixed", x.Check, x.Runtime, x.CPUScope, x.WarmupSettled)
			}
			lo, hi := float64(before.UnixMicro())/1e6, float64(after.UnixMicro())/1e6
			if !(lo <= x.WindowStart && x.WindowStart <= x.WindowEnd && x.WindowEnd <= hi) {
				t.Errorf("window %.6f..%.6f; want inside the run %.6f..%.6f", x.WindowStart, x.WindowEnd, lo, hi)
			}
			if d := x.WindowEnd - x.WindowStart - rep.TimeTakenSeconds; math.Abs(d) > 0.002 {
				t.Errorf("window %.6f s; want Time taken %.3f s", x.WindowEnd-x.WindowStart, rep.TimeTakenSeconds)
			}
			if x.WarmupSeconds < 0.1 {
				t.Errorf("warm-up %.3f s; want at least -warmup 0.1", x.WarmupSeconds)
			}
			window := res.WindowEnd.Sub(res.WindowStart).Seconds()
			cpu := (res.CPUUser + res.CPUSystem).Seconds()
			if limit := window*float64(runtime.NumCPU())*1.05 + 0.02; cpu > limit {
				t.Errorf("client CPU %.3f s over a %.3f s window on %d cores; want at most %.3f", cpu, window, runtime.NumCPU(), limit)
			}
		})
	}
}

// TestWarmupAuto: the warm-up lasts at least the 3 windows the detector needs
// and, unsettled, stops at -warmup-max; the report says which.
func TestWarmupAuto(t *testing.T) {
	addrs := goServer(t)
	cfg := Config{Proto: ProtoGRPC, Call: CallDataType, Concurrency: 2, Duration: 200 * time.Millisecond,
		WarmupAuto: true, WarmupMax: time.Second, Addr: addrs[ProtoGRPC]}
	res, err := Run(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	x := res.Report().Rpcbed
	switch x.WarmupSettled {
	case report.SettledYes:
		if res.WarmupTime < settleWindows*settleWindow {
			t.Errorf("settled after %v; want at least %d windows of %v", res.WarmupTime, settleWindows, settleWindow)
		}
	case report.SettledNo:
		if res.WarmupTime < cfg.WarmupMax {
			t.Errorf("not settled after %v; want -warmup-max %v", res.WarmupTime, cfg.WarmupMax)
		}
	default:
		t.Errorf("Warm-up settled %q; want yes or no", x.WarmupSettled)
	}
	if res.WarmupCalls == 0 || res.Complete == 0 || res.Failed != 0 {
		t.Errorf("warm-up calls %d, complete %d, failed %d; want > 0, > 0, 0", res.WarmupCalls, res.Complete, res.Failed)
	}
}

// TestConns counts the TCP connections each run opens (-conns, docs/method.md):
// one per caller by default on every protocol, K shared ones for gRPC.
func TestConns(t *testing.T) {
	addrs := goServer(t)
	tests := []struct {
		name  string
		proto string
		c     int
		conns int
		want  int
		line  string
	}{
		{"grpc-default", ProtoGRPC, 4, 0, 4, "4 (per worker)"},
		{"grpc-2-shared", ProtoGRPC, 4, 2, 2, "2 (shared)"},
		{"grpc-1-shared", ProtoGRPC, 3, 1, 1, "1 (shared)"},
		{"thrift-default", ProtoThrift, 3, 0, 3, "3 (per worker)"},
		{"http-default", ProtoHTTP, 3, 0, 3, "3 (per worker)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			px := testbed.StartProxy(t, addrs[tc.proto])
			cfg := Config{Proto: tc.proto, Call: CallDataType, Concurrency: tc.c, Conns: tc.conns, Requests: 60, KeepAlive: true, Addr: px.Addr()}
			res, err := Run(context.Background(), cfg, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			got := px.Conns()
			if got != tc.want {
				t.Errorf("connections opened = %d; want %d", got, tc.want)
			}
			var b bytes.Buffer
			report.Write(&b, res.Report())
			if want := "Connections:            " + tc.line + "\n"; !strings.Contains(b.String(), want) {
				t.Errorf("report lacks %q:\n%s", want, b.String())
			}
		})
	}
}

// TestDeclaredErrors: an error the server declared is never connect or timeout
// (docs/report-format.md), also gRPC's UNAVAILABLE and DEADLINE_EXCEEDED, which
// grpc-go also makes up itself when the transport fails.
func TestDeclaredErrors(t *testing.T) {
	tests := []struct {
		name string
		code int32
		want kind
	}{
		{"unavailable", 14, kindExceptions},
		{"deadline", 4, kindExceptions},
		{"internal", 13, kindExceptions},
		{"unauthenticated", 16, kindUnauthenticated},
		{"invalid-argument", 3, kindInvalidArgument},
	}
	for _, p := range protos {
		for _, tc := range tests {
			t.Run(p+"-"+tc.name, func(t *testing.T) {
				// The verify call is right; every timed call fails.
				addrs := fakeserver.Start(t, fakeserver.After(1, fakeserver.Right, fakeserver.Declare(tc.code)))
				cfg := Config{Proto: p, Call: CallDataType, Concurrency: 1, Requests: 20, KeepAlive: true, Addr: addrs[p]}
				res, err := Run(context.Background(), cfg, io.Discard)
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				if got := res.ByKind[tc.want]; got != cfg.Requests || res.Failed != cfg.Requests {
					t.Errorf("errors %v; want %s=%d only", res.Errors(), tc.want, cfg.Requests)
				}
			})
		}
	}
}
