package claims

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rpcbed/rpcbed/internal/results"
)

// GrowthPath is one path ab drives in php-go-growth: a front (go or php) and
// the protocol it uses to reach go-server.
type GrowthPath struct {
	Name, Front, Proto string
	Published          bool // a path of the published write-up
}

// VariantSizes are the sizes a variant runs at: OPcache at the smallest,
// middle and largest published size; the pure-PHP runtime at the smallest and
// middle only (at 2000 items and more it outlasts the front's 10 s deadline under
// -c 200 on one core). Both keep make reproduce within its 10 minutes.
func VariantSizes(p GrowthPath, items []int) []int {
	if p.Published || len(items) <= 3 {
		return items
	}
	if p.Name == "php-pure-grpc" {
		return []int{items[0], items[len(items)/2]}
	}
	return []int{items[0], items[len(items)/2], items[len(items)-1]}
}

// GrowthPaths: the three published paths (php -S, default ini, as published),
// then the variants measured beside them: the pure-PHP protobuf runtime (the
// message-object cost) and OPcache on (production). reproduce gives each
// variant its front's environment.
var GrowthPaths = []GrowthPath{
	{Name: "go-grpc", Front: "go", Proto: "grpc", Published: true},
	{Name: "php-grpc", Front: "php", Proto: "grpc", Published: true},
	{Name: "php-http", Front: "php", Proto: "http", Published: true},
	{Name: "php-pure-grpc", Front: "php", Proto: "grpc"},
	{Name: "php-grpc-opcache", Front: "php", Proto: "grpc"},
}

// GrowthPathNamed is the path of GrowthPaths called name (the zero path when none is).
func GrowthPathNamed(name string) GrowthPath {
	for _, p := range GrowthPaths {
		if p.Name == name {
			return p
		}
	}
	return GrowthPath{}
}

// Growth is php-go-growth: `ab -c 200 -n 200 -k` against the Go and PHP
// fronts, items 2..5000, ab's mean time per request. Read fills the published
// figures and sizes; the run fills the rest.
type Growth struct {
	Pub     map[GKey]float64 // published mean ms
	Bytes   map[GKey]string  // published document bytes
	Items   []int
	AbN     int
	Repeats int
	Ms      map[GKey][]float64 // ab's mean time per request per burst
	// Rounds is each burst's round, in Ms's order (nil: bursts are paired by
	// their index, as before rounds were kept).
	Rounds map[GKey][]int
	Size   map[string]map[int]int64 // per protocol and size: the backend message's bytes
	Front  map[GKey]int64           // the front's JSON bytes (ab's Document Length)
	Conns  map[string]ConnTally     // per PHP path: the front's channel tally
	Failed Failures
}

// GKey is one figure of php-go-growth: a path at a size.
type GKey struct {
	Path  string
	Items int
}

// ConnTally counts what the front's X-Rpcbed-Conn and X-Rpcbed-Pid headers said
// over a probe of requests: channels created (new) and reused, and the workers.
type ConnTally struct {
	Requests, Created, Reused int
	Workers                   int
}

// The rules of php-go-growth.
var (
	// PHP's message-object cost: the share of PHP-over-gRPC's gap to Go (pure-PHP
	// runtime) that the protobuf C extension closes at the largest size. "Most"
	// of the gap is yes (50 % or more), a fifth or more partly.
	ruleMessageObjects = Band{Yes: [2]float64{50, 150}, Partly: [2]float64{20, 150}, Unit: "%", Differs: at(0)}
)

// Read reads the published latencies (php-go-growth_latency.csv).
func (e *Growth) Read(published string) error {
	rows, err := readCSV(filepath.Join(published, "php-go-growth_latency.csv"))
	if err != nil {
		return err
	}
	e.Pub, e.Bytes = map[GKey]float64{}, map[GKey]string{}
	for _, r := range rows {
		n, err1 := strconv.Atoi(r["items"])
		v, err2 := strconv.ParseFloat(r["mean_ms"], 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("php-go-growth_latency.csv: row %v: want integer items and a mean_ms", r)
		}
		e.Pub[GKey{r["path"], n}], e.Bytes[GKey{r["path"], n}] = v, r["document_bytes"]
		if !containsInt(e.Items, n) {
			e.Items = append(e.Items, n)
		}
	}
	for _, n := range e.Items {
		for _, p := range GrowthPaths {
			if _, ok := e.Pub[GKey{p.Name, n}]; p.Published && !ok {
				return fmt.Errorf("php-go-growth_latency.csv: no %s at %d items", p.Name, n)
			}
		}
	}
	return nil
}

func (e *Growth) fig(path string, n int) Figure { return Fig(e.Ms[GKey{path, n}]) }

// Judge grades every published claim from the runs.
func (e *Growth) Judge(o Setup) results.Section {
	sec := results.Section{
		Setup: []string{
			"Published: one 6-core laptop, macOS; ab, the fronts and the Go server on it.",
			fmt.Sprintf("Here: go-server pinned to CPU %s; the fronts and ab share CPU %s. Real Apache Bench: `ab -c %d -n %d -k` against `go-client front` (Go front, gRPC to go-server) and php-client/bin/php-front (`php -S`, default ini, as published; PHP_CLI_SERVER_WORKERS=8; gRPC with the official extension and the protobuf C extension, or HTTP/JSON to go-server's net/http endpoint).",
				orAny(o.ServerCPUSet), orAny(o.ClientCPUSet), e.AbN, e.AbN),
			"Beside the published paths, two variants: php-pure-grpc (the pure-PHP protobuf runtime, RPCBED_FRONT_RUNTIME=pure: what building message objects costs in PHP) and php-grpc-opcache (OPcache on, as PHP runs in production). The verdicts use the published paths; the variants only measure the reasons (php-pure-grpc at " + strings.Trim(fmt.Sprint(VariantSizes(GrowthPaths[3], e.Items)), "[]") + " items, php-grpc-opcache at " + strings.Trim(fmt.Sprint(VariantSizes(GrowthPaths[4], e.Items)), "[]") + ").",
			fmt.Sprintf("Each figure: ab's mean Time per request (ms), median of %d bursts [their range] after one untimed burst of 20 requests; every front is up together and the bursts run in rounds, each of every size with the paths one after the other in a fresh random order (the message-object share is read round by round). Sizes: the backend message (gRPC protobuf or HTTP JSON, from one go-client call) and the front's JSON (ab's Document Length). Channel creations: %d requests after the bursts, tallied from the PHP front's X-Rpcbed-Conn and X-Rpcbed-Pid headers.", e.Repeats, 40),
		},
		Scaled: fmt.Sprintf("The published laptop had 6 cores for ab, the fronts and the server; here the server has one core and ab with the front the other, so every time per request is longer and the fronts compete with ab. Sizes, the %d-request bursts at -c %d and the three paths are as published.", e.AbN, e.AbN),
	}
	sec.Setup = append(sec.Setup, e.Failed.Setup()...)
	sec.Table = [][]string{{"items", "path", "published ms", "measured ms", "published / go-grpc", "measured / go-grpc", "published bytes", "measured backend bytes", "front JSON bytes"}}
	for _, n := range e.Items {
		for _, p := range GrowthPaths {
			k := GKey{p.Name, n}
			if !containsInt(VariantSizes(p, e.Items), n) {
				continue
			}
			pubMs, pubRatio, pubBytes := "-", "-", "-"
			if p.Published {
				pubMs, pubRatio, pubBytes = strconv.FormatFloat(e.Pub[k], 'f', -1, 64), ratio(e.Pub[k], e.Pub[GKey{"go-grpc", n}]), e.Bytes[k]
			}
			proto := p.Proto
			sec.Table = append(sec.Table, []string{strconv.Itoa(n), p.Name, pubMs, e.fig(p.Name, n).Show("", 1),
				pubRatio, Ratio(e.fig(p.Name, n), e.fig("go-grpc", n)).Show("x", 2),
				pubBytes, strconv.FormatInt(e.Size[proto][n], 10), strconv.FormatInt(e.Front[k], 10)})
		}
	}
	sec.Findings = append(sec.Findings, e.judgeOrder(), e.judgeMessageObjects())
	return sec
}

// judgeOrder: php-grpc slowest at every size, php-http second, go-grpc fastest,
// each step beyond the noise of the two paths' ratio over the rounds (orderAt).
func (e *Growth) judgeOrder() results.Finding {
	f := results.Finding{Rule: "php-go-order", Claim: "PHP over gRPC is the slowest path at every size, PHP over HTTP second, Go over gRPC fastest",
		Published: "go-grpc < php-http < php-grpc at all 5 sizes", Tolerance: LevelsBand}
	var held, failed, unclear, missing int
	var per []string
	for _, n := range e.Items {
		g, h, p := e.fig("go-grpc", n), e.fig("php-http", n), e.fig("php-grpc", n)
		a, b := e.orderAt("go-grpc", "php-http", n, Order(g, h)), e.orderAt("php-http", "php-grpc", n, Order(h, p))
		state := "inside the spread"
		switch {
		case !g.Known || !h.Known || !p.Known:
			state = "not measured"
			missing++
		case a == 1 && b == 1:
			state = "held"
			held++
		case a == -1 || b == -1:
			state = "reversed"
			failed++
		default:
			unclear++
		}
		per = append(per, fmt.Sprintf("%d items %s (go-grpc %s, php-http %s, php-grpc %s ms)", n, state, g.Show("", 1), h.Show("", 1), p.Show("", 1)))
	}
	f.Holds = Levels(held, failed, unclear, missing)
	f.Measured = fmt.Sprintf("held at %d of %d sizes", held, len(e.Items))
	f.Detail = strings.Join(per, "; ") + "."
	f.Reason = e.phpCosts(VariantSizes(GrowthPaths[4], e.Items)...)
	return f
}

// orderAt is Order for paths a and b at n items, judged on a's time over b's
// from the rounds' bursts (pairedRounds, the rounds' noise shared over the
// sizes): +1 when a is faster beyond the ratio's interval, -1 when slower, 0
// inside it; unpaired (the figures' own intervals) where the two paths shared
// fewer than two rounds at n.
func (e *Growth) orderAt(a, b string, n int, unpaired int) int {
	var levels [][2]map[int]float64
	at := -1
	for i, m := range e.Items {
		levels = append(levels, [2]map[int]float64{e.byRound(GKey{a, m}), e.byRound(GKey{b, m})})
		if m == n {
			at = i
		}
	}
	ls, ok := pairedRounds(levels, 0)
	if at < 0 || !ok[at] {
		return unpaired
	}
	return orderOf(ls[at])
}

// byRound is the bursts of cell k keyed by their round (Rounds), or by their
// index from 1 where no rounds were kept.
func (e *Growth) byRound(k GKey) map[int]float64 {
	out := map[int]float64{}
	rs := e.Rounds[k]
	for i, v := range e.Ms[k] {
		r := i + 1
		if len(rs) == len(e.Ms[k]) {
			r = rs[i]
		}
		out[r] = v
	}
	return out
}

// judgeMessageObjects: the write-up's own explanation, measured. Message
// objects cost per item, so the rule looks at how each path's time grows from
// the smallest size to the largest the pure-PHP runtime ran at (a fixed
// per-request cost cancels out): the share of php-pure-grpc's growth beyond
// go-grpc's that the protobuf C extension removes, bursts paired by round (the
// paths at a size run one after the other within a round).
func (e *Growth) judgeMessageObjects() results.Finding {
	sz := VariantSizes(GrowthPaths[3], e.Items)
	lo, hi := sz[0], sz[len(sz)-1]
	r := Rule{Name: "php-message-objects", Prec: 0, Band: ruleMessageObjects,
		Claim:     fmt.Sprintf("the PHP-over-gRPC gap is the cost of building PHP message objects (share of the pure-PHP runtime's extra time growth from %d to %d items that the protobuf C extension removes)", lo, hi),
		Published: "the write-up's explanation (no figure)"}
	grow := func(path string) map[int]float64 {
		a, b := e.byRound(GKey{path, lo}), e.byRound(GKey{path, hi})
		v := map[int]float64{}
		for r, x := range a {
			if y, ok := b[r]; ok {
				v[r] = y - x
			}
		}
		return v
	}
	pm, cm, gm := grow("php-pure-grpc"), grow("php-grpc"), grow("go-grpc")
	var pure, c, g, share []float64
	for _, r := range slices.Sorted(maps.Keys(pm)) {
		cv, okC := cm[r]
		gv, okG := gm[r]
		if !okC || !okG {
			continue
		}
		pv := pm[r]
		pure, c, g = append(pure, pv), append(c, cv), append(g, gv)
		if gap := pv - gv; gap > 0 {
			share = append(share, (pv-cv)/gap*100)
		} else {
			share = append(share, 0)
		}
	}
	gr := func(v []float64) string { return Fig(v).Show("", 1) }
	return r.Verdict(Fig(share), fmt.Sprintf("Time growth from %d to %d items: php-pure-grpc %s ms, php-grpc (C extension) %s ms, go-grpc %s ms.", lo, hi,
		gr(pure), gr(c), gr(g)), e.phpCosts(lo, hi))
}

// phpCosts is the measured reason for PHP's times at the given sizes: the
// message-object cost (pure-PHP against C runtime, side by side), the
// production variant (OPcache), and channel creations (the front's headers).
func (e *Growth) phpCosts(sizes ...int) string {
	var s []string
	for _, n := range sizes {
		p, c := e.fig("php-pure-grpc", n), e.fig("php-grpc", n)
		if p.Known && c.Known {
			s = append(s, fmt.Sprintf("%d items: pure-PHP protobuf %s ms, C extension %s ms (runtimes side by side: the message-object cost)", n, p.Show("", 1), c.Show("", 1)))
		}
		if oc, c := e.fig("php-grpc-opcache", n), e.fig("php-grpc", n); oc.Known && c.Known {
			s = append(s, fmt.Sprintf("OPcache on %s ms against php -S default ini %s ms", oc.Show("", 1), c.Show("", 1)))
		}
	}
	names := make([]string, 0, len(e.Conns))
	for k := range e.Conns {
		names = append(names, k)
	}
	sort.Strings(names)
	var ch []string
	for _, k := range names {
		t := e.Conns[k]
		ch = append(ch, fmt.Sprintf("%s %d of %d", k, t.Created, t.Requests))
	}
	if len(ch) > 0 {
		s = append(s, "channels created per request (X-Rpcbed-Conn headers over "+strconv.Itoa(e.Conns[names[0]].Workers)+" php -S workers): "+strings.Join(ch, ", "))
	}
	if len(s) == 0 {
		return ""
	}
	return strings.Join(s, "; ") + "."
}
