package capacity

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// Write writes a capacity run's files: capacity.json, capacity.csv,
// capacity.md and one plot per cell (plots/CELL.png).
func Write(dir string, run *Run) error {
	if err := writeJSON(dir, run); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		r    func(io.Writer, *Run) error
	}{{CSVFile, CSV}, {MDFile, Markdown}} {
		var b bytes.Buffer
		if err := f.r(&b, run); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		if err := results.WriteFileAtomic(filepath.Join(dir, f.name), b.Bytes()); err != nil {
			return err
		}
	}
	return Plots(dir, run)
}

// JSON is capacity.json.
func JSON(w io.Writer, run *Run) error {
	b, err := json.MarshalIndent(run, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// CSV is capacity.csv: one row per cell and SLO.
func CSV(w io.Writer, run *Run) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"cell", "client", "protocol", "call", "items", "concurrency", "slo_p99_ms", "slo_errors",
		"status", "knee_per_s", "low_per_s", "high_per_s", "passed_per_s", "breached_per_s", "limit", "client_bound",
		"client_cpu_us_per_call", "server_cpu_us_per_call", "client_busy", "server_busy", "p99_us_at_knee",
		"closed_loop_per_s", "runs", "seconds", "max_steal_cores", "note"})
	f := func(v float64) string {
		if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	r1 := func(v float64) string {
		if v == 0 || math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
	}
	for _, c := range run.Cells {
		if c.Error != "" {
			cw.Write([]string{c.Name, c.Cell.Client, c.Cell.Protocol, c.Cell.Call, strconv.Itoa(c.Cell.Items), strconv.Itoa(c.Cell.Concurrency),
				"", "", StatusFailed, "", "", "", "", "", "", "", "", "", "", "", "", f(c.Closed), strconv.Itoa(len(c.Runs)), r1(c.Seconds), "", c.Error})
			continue
		}
		for _, k := range c.Knees {
			var at Obs
			if k.At != nil {
				at = *k.At
			}
			cw.Write([]string{c.Name, c.Cell.Client, c.Cell.Protocol, c.Cell.Call, strconv.Itoa(c.Cell.Items), strconv.Itoa(c.Cell.Concurrency),
				strconv.FormatFloat(k.SLO.P99.D().Seconds()*1000, 'f', -1, 64), strconv.FormatFloat(float64(k.SLO.Errors), 'f', -1, 64),
				k.Status, r1(k.Rate), r1(k.Low), r1(k.High), f(k.Lo), f(k.Hi), k.Limit, strconv.FormatBool(k.ClientBound),
				r1(at.ClientCPUUs), r1(at.ServerCPUUs), busyText(at.ClientBusy, at.ClientCores), busyText(at.ServerBusy, at.ServerCores),
				r1(at.P99Us), r1(c.Closed), strconv.Itoa(len(c.Runs)), r1(c.Seconds), strconv.FormatFloat(math.Round(k.StealCores*1000)/1000, 'f', -1, 64), k.Note})
		}
	}
	cw.Flush()
	return cw.Error()
}

func busyText(busy, cores float64) string {
	s := share(busy, cores)
	if math.IsNaN(s) {
		return ""
	}
	return strconv.FormatFloat(math.Round(s*1000)/1000, 'f', -1, 64)
}

// Markdown is capacity.md: the knee per client x protocol x size at each SLO
// with its interval and paired ratios against go and grpc, what gave at the
// knee, the clients' rate holding, and the cells without a knee.
func Markdown(w io.Writer, run *Run) error {
	fmt.Fprintf(w, "# Capacity at a latency budget: %s\n\n", run.ID)
	fmt.Fprint(w, Facts(run))
	for _, slo := range run.Spec.SLOs {
		fmt.Fprintf(w, "\n## Within %s\n\n", slo.Name())
		if err := Table(w, run, slo); err != nil {
			return err
		}
	}
	fmt.Fprint(w, "\n## Rate holding: does each client offer the rate it is asked for?\n\n")
	Holding(w, run)
	var notes []string
	for _, c := range run.Cells {
		if c.Error != "" {
			notes = append(notes, fmt.Sprintf("- %s: %s", c.Name, c.Error))
		}
		for _, k := range c.Knees {
			if k.Note != "" && k.Status != StatusFound {
				notes = append(notes, fmt.Sprintf("- %s at %s: %s", c.Name, k.SLO.Name(), k.Note))
			}
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\n## Cells without a knee\n\n%s\n", strings.Join(notes, "\n"))
	}
	fmt.Fprint(w, "\n## How to read it\n\n"+
		"- **knee**: the highest offered rate (calls/s) at which the achieved rate stays within "+
		run.Spec.Search.Accuracy.String()+" of the offer, the failed share within the SLO's and p99, counted from each "+
		"call's intended start (coordinated omission corrected, as wrk2), within the SLO's p99. Every run's calls count: "+
		"summed by rate, the calls over the budget against 1 % place the knee, and a line through the rates tried within ±20 % of it "+
		"says where it crosses; the 95 % interval is where a rerun's knee lands: with visits, from how far the knees moved between "+
		"two searches of each cell, pooled over the cells; else a bootstrap over those rates, √2 wider than "+
		"the knee's own (docs/method.md, \"Capacity at a latency budget\").\n"+
		"- **limit**: what gave just above the knee: `server` or `client` (that side's core at least "+
		strconv.Itoa(int(Saturated*100))+" % busy), `latency` (p99 reached the budget with neither side saturated), "+
		"`rate` or `errors`. A **client-bound** cell (⚑) measures its client, not the stack.\n"+
		"- **vs go** is the knee over the go client's on the same protocol, **vs grpc** over the same client's "+
		"on grpc, each with its 95 % interval (the two knees' intervals combined); `~` marks an interval that holds 1.\n"+
		"- CPU per call and busy shares are the median of the runs at the highest rate that passed.\n"+
		"- **noisy**: a run that placed the knee (its rounds, the steps at its bracket) had the machine's steal over "+
		strconv.Itoa(int(results.NoisyStealCores*100))+" % of a core: another guest took CPU while it was measured, and "+
		"a 1 s window's p99 moves with such stalls.\n"+
		"- What it leaves out: one server core (the spec's server cpuset), loopback unless a link is set, "+
		"one client core, the spec's concurrency as the open loop's callers.\n")
	return nil
}

// Facts are the run's facts in a few lines.
func Facts(run *Run) string {
	s := run.Spec.Search
	var slos []string
	for _, x := range run.Spec.SLOs {
		slos = append(slos, x.Name())
	}
	runs, found := 0, 0
	for _, c := range run.Cells {
		runs += len(c.Runs)
		for _, k := range c.Knees {
			if k.Status == StatusFound {
				found++
			}
		}
	}
	wall := "unfinished"
	if !run.Finished.IsZero() {
		wall = run.Finished.Sub(run.Started).Round(1e9).String()
	}
	start := "a quarter of the cell's closed-loop throughput"
	if s.Start > 0 {
		start = fmtRate(s.Start)
	}
	return fmt.Sprintf("%d cells x %d SLO (%s): %d knees found, %d runs, %s (runner %s, started %s).\n"+
		"Search: from %s, x%g a step to the first breach, then bisection to %s; each step a run and its repeat (a third when "+
		"their own verdicts disagree), judged on their calls summed, %v measured after %v at the rate, %v cooldown; %d paired rounds "+
		"around the bracket; deadline %v a search.\n"+
		"Server cores %s, client cores %s.\n",
		len(run.Cells), len(run.Spec.SLOs), strings.Join(slos, "; "), found, runs, wall, run.Runner, run.Started.Format("2006-01-02 15:04 UTC"),
		start, s.Factor, s.Precision, s.Measure, s.Warmup, s.Cooldown, s.Rounds, s.Deadline,
		orDash(run.Spec.Matrix.ServerResources.CPUSet), orDash(run.Spec.Matrix.ClientResources.CPUSet)) + visitFacts(run) + provenance(run)
}

// visitFacts says how far the knees moved between a run's visits, per SLO
// (Run.VisitNoise), or nothing with one visit.
func visitFacts(run *Run) string {
	if run.Spec.Search.Visits < 2 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Visits: %d; each cell searched again from its knee once every cell of its server had been (x%g steps, bisected to %s, at most %v).\n",
		run.Spec.Search.Visits, VisitFactor, pct(VisitPrecision), VisitDeadline)
	for _, vn := range run.VisitNoise {
		fmt.Fprintf(&b, "At %s the knees moved by %s (sd of one search's knee, log scale) between the two searches, over %d cells "+
			"(mean %+.1f %%): every knee's 95 %% interval is where a rerun's lands from that spread.\n",
			vn.SLO.Name(), pct(vn.SD), vn.Cells, 100*(math.Exp(vn.Shift)-1))
	}
	if len(run.VisitNoise) == 0 {
		fmt.Fprintf(&b, "Fewer than %d cells had a knee in both searches: each knee's interval is its own runs' (a bootstrap).\n", MinVisitCells)
	}
	return b.String()
}

// provenance is the line naming the checkout and the machine a run was made
// on ("" for a run that recorded neither).
func provenance(run *Run) string {
	var parts []string
	if run.Commit != "" {
		parts = append(parts, "commit "+run.Commit)
	}
	if m := run.Machine; m != nil && m.CPU != "" {
		parts = append(parts, fmt.Sprintf("%s (%d cores, %d MB, %s, kernel %s)", m.CPU, m.Cores, m.MemMB, m.OS, m.Kernel))
	}
	if len(parts) == 0 {
		return ""
	}
	return "Made from " + strings.Join(parts, " on ") + ".\n"
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// kneeOf is c's knee at slo (nil: none).
func kneeOf(c *CellResult, slo SLO) *Knee {
	for i := range c.Knees {
		if c.Knees[i].SLO == slo {
			return &c.Knees[i]
		}
	}
	return nil
}

// Ratio is a's knee over b's with its 95 % interval: the cells ran apart, so
// nothing pairs them, and each knee's interval (a bootstrap's percentiles) is
// read as a log-normal one, the ratio's log width the root of the sum of
// their squares.
func Ratio(a, b *Knee) stats.Ratio {
	if a == nil || b == nil || !a.Measured() || !b.Measured() || b.Rate <= 0 {
		return stats.Ratio{}
	}
	se := func(k *Knee) float64 { return math.Log(k.High/k.Low) / (2 * z95) }
	r := a.Rate / b.Rate
	h := z95 * math.Hypot(se(a), se(b))
	return stats.Ratio{Interval: stats.Interval{Center: r, Low: r * math.Exp(-h), High: r * math.Exp(h), N: min(len(a.Rounds), len(b.Rounds))},
		Rounds: min(len(a.Rounds), len(b.Rounds))}
}

// z95 is the standard normal's 97.5th percentile.
const z95 = 1.959964

func ratioText(r stats.Ratio) string {
	if !r.Valid() {
		return "—"
	}
	s := fmt.Sprintf("x%.2f [%.2f, %.2f]", r.Center, r.Low, r.High)
	if r.Contains(1) {
		s += " ~"
	}
	return s
}

// index finds a run's cells by client, protocol, call, items, concurrency and
// conditions (every part of the name but client and protocol).
type index map[string]*CellResult

func rest(c plan.Cell) string {
	n := c.Name()
	return strings.TrimPrefix(n, c.Client+"-"+c.Protocol)
}

func newIndex(run *Run) index {
	x := index{}
	for i := range run.Cells {
		c := &run.Cells[i]
		x[c.Name] = c
	}
	return x
}

func (x index) peer(c plan.Cell, client, proto string) *CellResult {
	return x[client+"-"+proto+rest(c)]
}

// Table is one SLO's table: a row per cell in plan order.
func Table(w io.Writer, run *Run, slo SLO) error {
	x := newIndex(run)
	// A run with TLS cells adds "vs plaintext": the knee over its plaintext
	// twin's, paired by round as the others.
	tls := slices.ContainsFunc(run.Cells, func(c CellResult) bool { return c.Cell.Sec().IsTLS() })
	head, rule := "", ""
	if tls {
		head, rule = " vs plaintext |", "---|"
	}
	fmt.Fprintln(w, "| cell | knee (calls/s) [95 %] | limit | vs go | vs grpc |"+head+" client CPU/call | server CPU/call | client busy | server busy | p99 at knee |")
	fmt.Fprintln(w, "|---|---|---|---|---|"+rule+"---|---|---|---|---|")
	for i := range run.Cells {
		c := &run.Cells[i]
		if c.Error != "" {
			fmt.Fprintf(w, "| %s | failed |%s\n", c.Name, strings.Repeat(" |", 8+len(rule)/4))
			continue
		}
		k := kneeOf(c, slo)
		if k == nil {
			continue
		}
		vsGo, vsGRPC := "—", "—"
		if c.Cell.Client != "go" {
			if p := x.peer(c.Cell, "go", c.Cell.Protocol); p != nil {
				vsGo = ratioText(Ratio(k, kneeOf(p, slo)))
			}
		}
		if c.Cell.Protocol != "grpc" {
			if p := x.peer(c.Cell, c.Cell.Client, "grpc"); p != nil {
				vsGRPC = ratioText(Ratio(k, kneeOf(p, slo)))
			}
		}
		vsPlain := ""
		if tls {
			vsPlain = " — |"
			if c.Cell.Sec().IsTLS() {
				if p, ok := x[c.Cell.Plaintext().Name()]; ok {
					vsPlain = " " + ratioText(Ratio(k, kneeOf(p, slo))) + " |"
				}
			}
		}
		limit := k.Limit
		if k.ClientBound {
			limit = "⚑ client"
		}
		var at Obs
		if k.At != nil {
			at = *k.At
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |%s %s | %s | %s | %s | %s |\n", c.Name, kneeCell(*k), orDash(limit), vsGo, vsGRPC, vsPlain,
			us(at.ClientCPUUs), us(at.ServerCPUUs), pct(share(at.ClientBusy, at.ClientCores)), pct(share(at.ServerBusy, at.ServerCores)),
			ms(at.P99Us))
	}
	return nil
}

// kneeCell is a knee as a table cell.
func kneeCell(k Knee) string {
	s := KneeText(k)
	if k.Status == StatusFound {
		s = fmt.Sprintf("%s [%s, %s]", thousands(k.Rate), thousands(k.Low), thousands(k.High))
	}
	if k.Noisy() {
		s += fmt.Sprintf(", noisy (steal %.0f %% of a core)", k.StealCores*100)
	}
	return s
}

func us(v float64) string {
	if v <= 0 || math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.1f µs", v)
}

func ms(v float64) string {
	if v <= 0 || math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.2f ms", v/1000)
}

// Holding prints, per client, how its open loop held the offered rate in the
// runs where the server had room (below Saturated busy): how many held
// within the accuracy, and the largest miss.
func Holding(w io.Writer, run *Run) {
	acc := float64(run.Spec.Search.Accuracy)
	type tally struct {
		runs, held int
		worst      float64
		worstAt    float64
		maxHeld    float64
		inaccurate []string
	}
	by := map[string]*tally{}
	var order []string
	for _, c := range run.Cells {
		t := by[c.Cell.Client]
		if t == nil {
			t = &tally{}
			by[c.Cell.Client] = t
			order = append(order, c.Cell.Client)
		}
		for _, o := range c.Runs {
			if o.Error != "" || share(o.ServerBusy, o.ServerCores) >= Saturated || o.Offered <= 0 {
				continue
			}
			t.runs++
			miss := o.Sustained()/o.Offered - 1
			if o.Held(acc) {
				t.held++
				t.maxHeld = math.Max(t.maxHeld, o.Offered)
			}
			if math.Abs(miss) > math.Abs(t.worst) {
				t.worst, t.worstAt = miss, o.Offered
			}
		}
		for _, k := range c.Knees {
			if k.Status == StatusInaccurate && !slices.Contains(t.inaccurate, c.Name) {
				t.inaccurate = append(t.inaccurate, c.Name)
			}
		}
	}
	slices.SortStableFunc(order, func(a, b string) int { return slices.Index(plan.Clients, a) - slices.Index(plan.Clients, b) })
	fmt.Fprintf(w, "Runs where the server was under %d %% busy (so a missed rate is the client's): achieved within %s of the offer.\n\n",
		int(Saturated*100), run.Spec.Search.Accuracy)
	fmt.Fprintln(w, "| client | runs | held | highest rate held | largest miss | not used (rate not held) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, c := range order {
		t := by[c]
		worst := "—"
		if t.worstAt > 0 {
			worst = fmt.Sprintf("%+.2f %% at %s", t.worst*100, fmtRate(t.worstAt))
		}
		fmt.Fprintf(w, "| %s | %d | %d | %s | %s | %s |\n", c, t.runs, t.held, thousandsRate(t.maxHeld), worst, orDash(strings.Join(t.inaccurate, ", ")))
	}
}

func thousandsRate(r float64) string {
	if r <= 0 {
		return "—"
	}
	return thousands(r) + "/s"
}
