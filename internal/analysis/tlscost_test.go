package analysis

import (
	"math"
	"testing"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/results/resultstest"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// Every tls/plaintext ratio's interval holds its ratio, and the ratios are
// the costs the synthetic run was built with: TLS costs the client 1.3x and
// the server 1.2x CPU per call over persistent connections, both beyond 1.
func TestTLSCostRatios(t *testing.T) {
	v := ViewOf(resultstest.SyntheticTLS("tls", false))
	rows := v.TLSCosts()
	if len(rows) != 8 {
		t.Fatalf("%d TLS cost rows; want 8 (2 protocols x 2 concurrencies x 2 connection modes)", len(rows))
	}
	k := resultstest.TLSCosts
	for _, r := range rows {
		if r.Dropped != "" {
			t.Errorf("%s: dropped (%s); want compared", r.A, r.Dropped)
		}
		if r.B != r.Cell.Plaintext().Name() {
			t.Errorf("%s: against %s; want its plaintext cell %s", r.A, r.B, r.Cell.Plaintext().Name())
		}
		for _, i := range TLSCostFigures {
			c, ok := r.By[i]
			if !ok {
				t.Errorf("%s %s: no ratio", r.A, i.Figure().Name)
				continue
			}
			if iv := c.Ratio.Interval; !(iv.Low <= iv.Center && iv.Center <= iv.High) || !iv.Valid() {
				t.Errorf("%s %s: ratio %v outside its interval [%v, %v]", r.A, i.Figure().Name, iv.Center, iv.Low, iv.High)
			}
		}
		if r.ConnectMode() != plan.Persistent {
			continue
		}
		for _, w := range []struct {
			i    FigureIndex
			want float64
		}{{FigClientCPU, k.ClientCPU}, {FigServerCPU, k.ServerCPU}} {
			c := r.By[w.i]
			if math.Abs(c.Ratio.Center/w.want-1) > 0.02 || c.Verdict != stats.Slower {
				t.Errorf("%s %s: %.3fx %s; want %.2fx slower", r.A, w.i.Figure().Name, c.Ratio.Center, c.Verdict, w.want)
			}
		}
	}
}

// A persistent cell handshakes about never in its window, a per-call one once
// a call; the extra CPU a connection per call costs, per handshake, is what
// the synthetic run put in (plaintext connection and handshake, TLS on the
// connection's share too), its interval holding it.
func TestHandshakes(t *testing.T) {
	run := resultstest.SyntheticTLS("tls", false)
	for _, c := range run.Cells {
		hpc := HandshakesPerCall(c)
		switch {
		case !c.Sec().IsTLS():
			if !math.IsNaN(hpc) {
				t.Errorf("%s: %v handshakes per call; want none (NaN) for plaintext", c.Name, hpc)
			}
		case c.ConnectMode() == plan.Persistent:
			if hpc > 0.001 {
				t.Errorf("%s: %v handshakes per call over the window; want ~0 for a persistent cell", c.Name, hpc)
			}
		default:
			if math.Abs(hpc-1) > 0.001 {
				t.Errorf("%s: %v handshakes per call; want 1 for a per-call cell", c.Name, hpc)
			}
		}
	}
	hs := ViewOf(run).Handshakes()
	if len(hs) != 8 {
		t.Fatalf("%d handshake rows; want 8", len(hs))
	}
	k := resultstest.TLSCosts
	for _, h := range hs {
		wantC, wantS := k.ConnClient, k.ConnServer
		if h.Sec().IsTLS() {
			wantC, wantS = k.ConnClient*k.ClientCPU+k.HandshakeClient, k.ConnServer*k.ServerCPU+k.HandshakeServer
		}
		for _, s := range []struct {
			side string
			got  HandshakeCPU
			want float64
		}{{"client", h.Client, wantC}, {"server", h.Server, wantS}} {
			if !s.got.OK {
				t.Errorf("%s %s: no extra CPU", h.A, s.side)
				continue
			}
			e := s.got.Each
			// The cells' own noise (1 % a round) is 7 % of a plaintext
			// connection's 20 µs on 135: the interval holds it.
			if math.Abs(e.Center/s.want-1) > 0.1 || !(e.Low <= e.Center && e.Center <= e.High) || !(e.Low <= s.want && s.want <= e.High) {
				t.Errorf("%s %s: %.1f µs [%.1f-%.1f] per handshake; want %.1f within 10 %%, inside its interval", h.A, s.side, e.Center, e.Low, e.High, s.want)
			}
		}
	}
}

// A cell that negotiated another TLS version than it asked carries
// tls-mismatch and is left out of every comparison; the others stand.
func TestTLSMismatchDropsComparisons(t *testing.T) {
	v := ViewOf(resultstest.SyntheticTLS("tls", true))
	const bad = "go-http-datalist-200-c50@tls"
	c, _ := v.Cell(bad)
	if !c.Flagged() || c.Sum.Flags[0] != results.FlagTLSMismatch {
		t.Fatalf("%s: flags %v; want %s", bad, c.Sum.Flags, results.FlagTLSMismatch)
	}
	for _, cmp := range v.Comparisons {
		if cmp.A == bad || cmp.B == bad {
			t.Errorf("%s against %s (%s): compared; want left out", cmp.A, cmp.B, cmp.Kind)
		}
	}
	n := 0
	for _, r := range v.TLSCosts() {
		switch {
		case r.A == bad && r.Dropped != results.FlagTLSMismatch:
			t.Errorf("%s: dropped %q; want %q", r.A, r.Dropped, results.FlagTLSMismatch)
		case r.A != bad && (r.Dropped != "" || len(r.By) != len(TLSCostFigures)):
			t.Errorf("%s: dropped %q with %d ratios; want compared", r.A, r.Dropped, len(r.By))
		default:
			n++
		}
	}
	if n != 8 {
		t.Errorf("%d rows as wanted; want 8", n)
	}
}

// ExtraOf: A - B from B with its interval and the ratio A/B with its interval.
func TestExtraOf(t *testing.T) {
	iv := func(c, lo, hi float64) stats.Interval { return stats.Interval{Center: c, Low: lo, High: hi, N: 3} }
	for _, tc := range []struct {
		name         string
		b, r         stats.Interval
		center       float64
		lowLE, hiGE  float64 // the interval reaches at least these
		lowGE, highL float64 // and stays inside these
	}{
		// 100 x 0.5: the ratio's 1.4-1.6 alone gives 40-60; B's ±10 % widens it.
		{"above 1", iv(100, 90, 110), iv(1.5, 1.4, 1.6), 50, 40, 60, 30, 75},
		{"below 1", iv(100, 90, 110), iv(0.5, 0.4, 0.6), -50, -60, -40, -75, -30},
		{"holds 1", iv(100, 90, 110), iv(1.05, 0.95, 1.15), 5, -5.5, 16.5, -5.5, 16.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := ExtraOf(tc.b, tc.r)
			const eps = 1e-9
			if math.Abs(e.Center-tc.center) > eps || e.Low > tc.lowLE+eps || e.High < tc.hiGE-eps || e.Low < tc.lowGE-eps || e.High > tc.highL+eps {
				t.Errorf("got %.3f [%.3f, %.3f]; want %.3f, low in [%.1f, %.1f], high in [%.1f, %.1f]", e.Center, e.Low, e.High, tc.center, tc.lowGE, tc.lowLE, tc.hiGE, tc.highL)
			}
		})
	}
	if e := ExtraOf(stats.Interval{}, iv(1.5, 1.4, 1.6)); e.N != 0 {
		t.Errorf("no interval for B: got %+v; want none", e)
	}
}

// A connection per call never saves CPU: its extra's interval is cut at 0, and
// one wholly below 0 is impossible (left out and said, never printed).
func TestHandshakeExtraNonNegative(t *testing.T) {
	iv := func(c, lo, hi float64) stats.Interval { return stats.Interval{Center: c, Low: lo, High: hi, N: 3} }
	for _, tc := range []struct {
		name       string
		in, want   stats.Interval
		impossible bool
	}{
		{"above 0", iv(50, 40, 60), iv(50, 40, 60), false},
		{"reaching below 0", iv(2190, -2549, 15662), iv(2190, 0, 15662), false},
		{"centre below 0", iv(-5, -20, 10), iv(0, 0, 10), false},
		{"wholly below 0", iv(-50, -60, -40), iv(-50, -60, -40), true},
		{"no interval", stats.Interval{}, stats.Interval{}, false},
	} {
		got, impossible := nonNegative(tc.in)
		if got != tc.want || impossible != tc.impossible {
			t.Errorf("%s: got %+v, impossible %v; want %+v, %v", tc.name, got, impossible, tc.want, tc.impossible)
		}
	}
}
