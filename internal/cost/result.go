package cost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rpcbed/rpcbed/internal/report"
)

// Sides: which process runs under callgrind. The other one runs natively.
const (
	SideClient = "client"
	SideServer = "server"
)

// JSONFile is a cost run's record in its directory: cost.json.
const JSONFile = "cost.json"

// The vocabularies, in the project's order.
var (
	ClientOrder   = []string{"go", "php", "php-pure", "java"}
	ProtocolOrder = []string{"grpc", "thrift", "http", "ice", "dubbo"}
)

// Cell statuses.
const (
	StatusOK          = "ok"
	StatusFailed      = "failed"       // measured, but a run failed: Error says why
	StatusNotMeasured = "not measured" // excluded by the spec or impossible here: Error says why
)

// Result is one cost run: what ran, how, and every cell's cost per call.
type Result struct {
	Version  int       `json:"version"`
	Started  string    `json:"started"`
	Finished string    `json:"finished"`
	Seconds  float64   `json:"seconds"`
	Setup    Setup     `json:"setup"`
	Cells    []CellRun `json:"cells"`
}

// ResultVersion is cost.json's version.
const ResultVersion = 1

// Setup is what a cost figure depends on, recorded with the run.
type Setup struct {
	Valgrind     string   `json:"valgrind"`
	ValgrindArgs []string `json:"valgrind_args"`
	// Env is the environment every measured process ran with (GODEBUG, GOGC,
	// GOMAXPROCS, GLIBC_TUNABLES).
	Env []string `json:"env"`
	// GuestCPU is the CPU as the programs see it under valgrind (valgrind
	// presents its own CPUID): glibc's cpu_features and Go's choices follow it.
	GuestCPU string `json:"guest_cpu"`
	HostCPU  string `json:"host_cpu"`
	Kernel   string `json:"kernel"`
	Go       string `json:"go"`
	PHP      string `json:"php"`
	// Pinning: client and server CPUs, ASLR off (setarch -R).
	Pinning string `json:"pinning"`
	// LoadBefore and LoadAfter are /proc/loadavg around the run: counts do not
	// move with the machine's load, but the record says what else ran.
	LoadBefore string `json:"load_before"`
	LoadAfter  string `json:"load_after"`
	Rules      int    `json:"layer_rules"`
	// Layers are the layers the run split the instructions into (LayerOrder
	// when it ran); nil for runs made before the crypto layer (LayerSet).
	Layers []string `json:"layers,omitempty"`
	// ServerRuns says how the server side's runs start (a full collection,
	// then the counters zeroed).
	ServerRuns string `json:"server_runs,omitempty"`
	// GC says how the garbage collector's work is counted (apart).
	GC string `json:"gc,omitempty"`
	// TLS says how the TLS cells ran ("" = none ran).
	TLS string `json:"tls,omitempty"`
	// ReadDelay is how late the measured side's peer bytes were handed to it
	// (the spec's read_delay), "" = not delayed.
	ReadDelay string `json:"read_delay,omitempty"`
}

// CellRun is one cell on one side.
type CellRun struct {
	Cell     string `json:"cell"` // go-grpc-datalist-200-c1
	Client   string `json:"client"`
	Protocol string `json:"protocol"`
	Items    int    `json:"items"`
	Side     string `json:"side"`   // client|server: the side under callgrind
	Server   string `json:"server"` // go|java
	Status   string `json:"status"`
	Error    string `json:"error,omitempty"`
	// ShortCalls and LongCalls are the two runs' calls; PerCall is their
	// marginal cost (Marginal).
	ShortCalls int64   `json:"short_calls"`
	LongCalls  int64   `json:"long_calls"`
	PerCall    PerCall `json:"per_call"`
	// Allocs is the allocations per call: calls to the runtime's allocator
	// entry points (runtime.mallocgc, the Zend allocator's _emalloc*, malloc).
	Allocs float64 `json:"allocs"`
	// GCCycles are the collection cycles the short and the long run ran (Go's
	// GC, PHP's cycle collector): a cycle's cost lands whole in one run, so
	// two runs of a cell agree best when their windows hold the same number.
	GCCycles [2]float64 `json:"gc_cycles"`
	// WarmupCalls are the calls the client made before its window in the short
	// and the long run with no warm-up asked for (php-client's caller calls until
	// its parent's start command arrives): counted in each run's calls.
	WarmupCalls [2]int64 `json:"warmup_calls,omitempty"`
	// LiveHeap is go-server's heap after the collection its long run started
	// from (server side): what every collection cycle marks.
	LiveHeap float64 `json:"server_live_heap_bytes,omitempty"`
	// PerRun are the instructions per run by layer that do not grow with the
	// calls (PerRunLayers): start-up, connecting and, in the crypto layer,
	// the TLS handshake, apart from the per-call record cost.
	PerRun map[string]float64 `json:"per_run_layers,omitempty"`
	// Security is the cell's security condition (tls, mtls; "" = plaintext).
	Security string  `json:"security,omitempty"`
	Seconds  float64 `json:"seconds"` // wall time of the cell's runs under callgrind
}

// LayerSet are the layers r's instructions were split into, in LayerOrder's
// order: Setup.Layers, or for a run made before the crypto layer existed every
// layer but it (such a run filed TLS libraries under the RPC runtime and Go's
// crypto packages under the language runtime).
func (r *Result) LayerSet() []string {
	if r.Setup.Layers != nil {
		return r.Setup.Layers
	}
	var out []string
	for _, l := range LayerOrder {
		if l != LayerCrypto {
			out = append(out, l)
		}
	}
	return out
}

// ID is the cell's name with its side.
func (c CellRun) ID() string { return c.Cell + "/" + c.Side }

// WriteJSON writes the result as cost.json.
func (r *Result) WriteJSON(file string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(b, '\n'), 0o644)
}

// LoadResult reads cost.json (a file or a run directory holding one).
func LoadResult(file string) (*Result, error) {
	if st, err := os.Stat(file); err == nil && st.IsDir() {
		file = file + "/cost.json"
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if r.Version != ResultVersion {
		return nil, fmt.Errorf("%s: cost.json version %d, want %d", file, r.Version, ResultVersion)
	}
	return &r, nil
}

// Lookup indexes the run's cells by ID.
func (r *Result) Lookup() map[string]CellRun {
	m := make(map[string]CellRun, len(r.Cells))
	for _, c := range r.Cells {
		m[c.ID()] = c
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

// Merge adds o's cells that r does not have, has only as not measured or as
// failed where o measured them (a run
// split over processes, e.g. -only /client and -only /server), and widens r's
// time span and load record to cover both.
func (r *Result) Merge(o *Result) {
	have := r.Lookup()
	for _, c := range o.Cells {
		if h, ok := have[c.ID()]; ok && (h.Status == StatusOK || c.Status != StatusOK && h.Status != StatusNotMeasured) {
			continue // keep a measured cell; a failed one gives way to a measured one
		}
		if _, ok := have[c.ID()]; ok {
			for i := range r.Cells {
				if r.Cells[i].ID() == c.ID() {
					r.Cells[i] = c
				}
			}
			continue
		}
		r.Cells = append(r.Cells, c)
	}
	if o.Started < r.Started {
		r.Started = o.Started
	}
	if o.Finished > r.Finished {
		r.Finished = o.Finished
	}
	r.Seconds += o.Seconds
	r.Setup.LoadBefore += "; " + o.Setup.LoadBefore
	r.Setup.LoadAfter += "; " + o.Setup.LoadAfter
	SortCells(r.Cells)
}

// FillSpeed sets MsPerCall from the kept client reports (raw/CELL_SIDE/N/report.txt)
// where a run recorded none.
func FillSpeed(dir string, r *Result) {
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Status != StatusOK || c.PerCall.MsPerCall != 0 || c.LongCalls <= c.ShortCalls {
			continue
		}
		var t [2]float64
		ok := true
		for j, n := range []int64{c.ShortCalls, c.LongCalls} {
			b, err := os.ReadFile(filepath.Join(dir, "raw", RawName(c.ID()), strconv.FormatInt(n, 10), "report.txt"))
			if err != nil {
				ok = false
				break
			}
			rep, err := report.Parse(bytes.NewReader(b))
			if err != nil {
				ok = false
				break
			}
			t[j] = rep.TimeTakenSeconds
		}
		if ok {
			c.PerCall.MsPerCall = 1000 * (t[1] - t[0]) / float64(c.LongCalls-c.ShortCalls)
		}
	}
}

// SortCells orders cells by side, client, protocol and items, the project's order.
func SortCells(cells []CellRun) {
	rank := func(v []string, s string) int {
		if i := slices.Index(v, s); i >= 0 {
			return i
		}
		return len(v)
	}
	slices.SortStableFunc(cells, func(a, b CellRun) int {
		if a.Side != b.Side {
			return rank([]string{SideClient, SideServer}, a.Side) - rank([]string{SideClient, SideServer}, b.Side)
		}
		if a.Client != b.Client {
			return rank(ClientOrder, a.Client) - rank(ClientOrder, b.Client)
		}
		if a.Protocol != b.Protocol {
			return rank(ProtocolOrder, a.Protocol) - rank(ProtocolOrder, b.Protocol)
		}
		if a.Items != b.Items {
			return a.Items - b.Items
		}
		return strings.Compare(a.Security, b.Security)
	})
}

// RawName is a cell ID's directory name under a run's raw/: go-grpc-datalist-2-c1_client.
func RawName(id string) string { return strings.ReplaceAll(id, "/", "_") }
