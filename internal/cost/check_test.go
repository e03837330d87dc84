package cost

import (
	"math"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
)

// Every share is in [0, 1], whatever the layers' marginals: the split of
// go-grpc-datalist-5000-c1's server side printed codec 119 % when the short run
// carried work the long one did not.
func TestShares(t *testing.T) {
	for _, tc := range []struct {
		name   string
		p      PerCall
		ok     bool
		shares map[string]float64
	}{
		{"split", PerCall{Counts: Counts{Ir: 1000}, Layers: map[string]float64{LayerCodec: 600, LayerRuntime: 400, LayerGC: 5000}},
			true, map[string]float64{LayerCodec: 0.6, LayerRuntime: 0.4}},
		{"noise below zero read as zero", PerCall{Counts: Counts{Ir: 1000}, Layers: map[string]float64{LayerCodec: 1003, LayerOther: -3}},
			true, map[string]float64{LayerCodec: 1, LayerOther: 0}},
		// The committed reference's go-grpc-datalist-5000-c1 server side.
		{"one-time work in the short run", PerCall{Counts: Counts{Ir: 5832688}, Layers: map[string]float64{
			LayerCodec: 6932423, LayerGC: -876580, LayerOther: 3380, LayerRPC: 22865, LayerRpcbed: -149962, LayerRuntime: -981884, LayerTransport: 5866}},
			false, nil},
		{"no instructions", PerCall{Layers: map[string]float64{LayerCodec: 1}}, false, nil},
		{"NaN", PerCall{Counts: Counts{Ir: math.NaN()}}, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.p.Shares()
			if ok != tc.ok {
				t.Fatalf("Shares() ok = %v; want %v", ok, tc.ok)
			}
			for l, want := range tc.shares {
				if math.Abs(got[l]-want) > 1e-9 {
					t.Errorf("share of %s = %v; want %v", l, got[l], want)
				}
			}
		})
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 10000; i++ {
		p := PerCall{Counts: Counts{Ir: rng.NormFloat64() * 1e6}, Layers: map[string]float64{}}
		for _, l := range LayerOrder {
			p.Layers[l] = rng.NormFloat64() * 1e6
		}
		sh, ok := p.Shares()
		if !ok {
			continue
		}
		for l, s := range sh {
			if s < 0 || s > 1 || math.IsNaN(s) {
				t.Fatalf("%+v: share of %s = %v; want it in [0, 1]", p, l, s)
			}
		}
	}
}

func TestOneTimeWork(t *testing.T) {
	ok := CellRun{Status: StatusOK, ShortCalls: 2, LongCalls: 12, Allocs: 60,
		PerCall: PerCall{Counts: Counts{Ir: 1000}, Layers: map[string]float64{LayerCodec: 998, LayerOther: -2, LayerGC: -900}}}
	if got := ok.OneTimeWork(); got != "" {
		t.Errorf("settled cell (the collector's negative marginal is apart): %q; want \"\"", got)
	}
	neg := ok
	neg.PerCall.Layers = map[string]float64{LayerCodec: 1200, LayerRuntime: -200}
	if got := neg.OneTimeWork(); !strings.Contains(got, "runtime −200 instructions") || !strings.Contains(got, "short run (2 calls)") {
		t.Errorf("negative layer: %q; want it named with its figure", got)
	}
	allocs := ok
	allocs.Allocs = -1411.3
	if got := allocs.OneTimeWork(); !strings.Contains(got, "−1,411.3 allocations") {
		t.Errorf("negative allocations: %q; want them named", got)
	}
	failed := neg
	failed.Status = StatusFailed
	if got := failed.OneTimeWork(); got != "" {
		t.Errorf("a failed cell: %q; want \"\" (its error says why)", got)
	}
}

// The committed reference run: every share it prints is in [0, 1], and the two
// server-side cells whose short run grew go-server's item table are flagged.
func TestReferenceShares(t *testing.T) {
	r, err := LoadResult(filepath.Join("..", "..", "results", "reference", "cost"))
	if err != nil {
		t.Fatal(err)
	}
	flagged := map[string]bool{}
	for _, c := range r.Cells {
		if c.Status != StatusOK {
			continue
		}
		if c.OneTimeWork() != "" {
			flagged[c.ID()] = true
			continue
		}
		sh, ok := c.PerCall.Shares()
		if !ok {
			t.Errorf("%s: no split, not flagged", c.ID())
		}
		for l, s := range sh {
			if s < 0 || s > 1 {
				t.Errorf("%s: share of %s %v", c.ID(), l, s)
			}
		}
	}
	for _, id := range []string{"go-grpc-datalist-5000-c1/server", "go-thrift-datalist-5000-c1/server"} {
		if !flagged[id] {
			t.Errorf("%s not flagged", id)
		}
	}
	if len(flagged) != 2 {
		t.Errorf("flagged %v; want the two 5000-item server cells", flagged)
	}
}

// The crypto layer on callgrind files of a Go TLS client's short (2 calls) and
// long (12 calls) run: the records' cost per call, the handshake per run.
func TestCryptoLayerMarginalAndHandshake(t *testing.T) {
	l, err := NewLayers(Rules)
	if err != nil {
		t.Fatal(err)
	}
	seg := func(n int64) Segment {
		p := parseTestFile(t, "tls-go-"+map[int64]string{2: "2", 12: "12"}[n]+".callgrind")
		c, gc, _ := l.Counted([]*Profile{p})
		return Segment{Calls: n, Counts: c, GC: gc, Layers: l.Split([]*Profile{p})}
	}
	short, long := seg(2), seg(12)
	pc, err := Marginal(short, long)
	if err != nil {
		t.Fatal(err)
	}
	if got := pc.Layers[LayerCrypto]; math.Abs(got-4500) > 1e-6 {
		t.Errorf("crypto per call %v; want 4500 (AES-GCM 3000 + the record layer 800 + 700)", got)
	}
	if pc.Ir != 16100 {
		t.Errorf("instructions per call %v; want 16100", pc.Ir)
	}
	run := PerRunLayers(short, long)
	if got := run[LayerCrypto]; math.Abs(got-850000) > 1e-6 {
		t.Errorf("crypto per run %v; want 850000 (the handshake: 50,000 + X.509 100,000 + P-256 300,000 + X25519 400,000)", got)
	}
	if got := run[LayerRuntime]; math.Abs(got-1e6) > 1e-6 {
		t.Errorf("runtime per run %v; want 1e6 (start-up)", got)
	}
	if got := run[LayerCodec]; math.Abs(got) > 1e-6 {
		t.Errorf("codec per run %v; want 0", got)
	}
	if PerRunLayers(long, short) != nil {
		t.Error("PerRunLayers with fewer calls in the long run: want nil")
	}
}

// TLS in C: BoringSSL inside the gRPC extension, OpenSSL, IceSSL, curl's and
// PHP's TLS glue go to crypto; the libraries' other functions stay where they were.
func TestCryptoLayerPHP(t *testing.T) {
	l, err := NewLayers(Rules)
	if err != nil {
		t.Fatal(err)
	}
	got := l.Split([]*Profile{parseTestFile(t, "tls-php.callgrind")})
	want := map[string]float64{LayerCrypto: 15100, LayerRPC: 12300, LayerTransport: 450, LayerCodec: 4000, LayerRuntime: 6000}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v; want %v", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("layers %v; want %v", got, want)
	}
}
