package render

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/results/resultstest"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// matrix.csv's columns load into pandas, R and spreadsheets without a clash:
// unique names, none a DataFrame attribute (df.flags, df.items ...), one
// latency unit (ms) named in every latency column.
func TestCSVColumnNames(t *testing.T) {
	// DataFrame attributes and methods a column would shadow (pandas 2).
	clash := []string{"flags", "items", "index", "columns", "values", "shape", "size", "dtypes", "count", "keys",
		"first", "last", "min", "max", "mean", "median", "std", "sum", "pop", "get", "update", "query", "rank", "round", "abs", "all", "any"}
	seen := map[string]bool{}
	for _, c := range CSVHeader {
		if seen[c] {
			t.Errorf("column %s twice", c)
		}
		seen[c] = true
		if slices.Contains(clash, c) {
			t.Errorf("column %s clashes with a pandas DataFrame attribute", c)
		}
		if (strings.HasPrefix(c, "p50") || strings.HasPrefix(c, "p99")) && !strings.Contains(c, "_ms") {
			t.Errorf("latency column %s does not name ms", c)
		}
		if strings.Contains(c, " ") || strings.ToLower(c) != c {
			t.Errorf("column %q: want lower case, no spaces", c)
		}
	}
	// A missing cell's row has every column, named ones filled.
	run := resultstest.Synthetic("x", 1)
	run.Cells = run.Cells[:4]
	var b bytes.Buffer
	if err := CSV(&b, run); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	last := rows[len(rows)-1]
	col := slices.Index(CSVHeader, "status")
	if last[col] != "missing" || last[slices.Index(CSVHeader, "items_per_response")] == "" || last[slices.Index(CSVHeader, "error")] == "" {
		t.Errorf("missing cell's row: %q", last)
	}
}

// An interval prints as ±% only when symmetric; otherwise [low-high], so no
// ± reaches below zero (a p99 of 0.232 ms with an interval 0.069-0.772 once
// printed as "0.232 ±120 %").
func TestIntervalText(t *testing.T) {
	for _, tc := range []struct {
		iv    stats.Interval
		scale float64
		want  string
	}{
		{stats.Interval{Center: 232, Low: 69, High: 772, N: 3}, 1e-3, " [0.069-0.772]"},
		{stats.Interval{Center: 100, Low: 90, High: 111, N: 3}, 1, " ±11 %"},
		{stats.Interval{Center: 100, Low: 80, High: 125, N: 3}, 1, " [80.0-125]"},
		{stats.Interval{}, 1, ""},
	} {
		got := pm(tc.iv, tc.scale)
		if got != tc.want {
			t.Errorf("pm(%+v): got %q; want %q", tc.iv, got, tc.want)
		}
		if strings.Contains(got, "±") {
			var p float64
			if _, err := fmtSscan(got, &p); err == nil && p >= 100 {
				t.Errorf("pm(%+v) = %q reaches below zero", tc.iv, got)
			}
		}
	}
}

// Every registered answer has a question and an anchor, once.
func TestAnswersRegistered(t *testing.T) {
	ids := map[string]bool{}
	for _, p := range answerProducers {
		if p.ID == "" || p.Question == "" || ids[p.ID] {
			t.Errorf("answer producer %+v: want a unique ID and a question", p)
		}
		ids[p.ID] = true
	}
	for _, want := range []string{"language", "protocol", "claims", "counted"} {
		if !ids[want] {
			t.Errorf("no %s answer", want)
		}
	}
	run := resultstest.Synthetic("x", 1)
	var b bytes.Buffer
	if err := AnswersMarkdown(&b, Answers(AnswerInput{View: analysisView(run)}), "results/x", "language"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**What does a caller's language cost, per protocol and size?**", "| php-grpc |", "make reproduce", "[ratios.csv](results/x/ratios.csv)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("answers block lacks %q:\n%s", want, b.String())
		}
	}
}

func fmtSscan(s string, p *float64) (int, error) {
	return fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "±")), "%g", p)
}

func analysisView(run *results.Run) *analysis.View { return analysis.ViewOf(run) }

// The PHP-vs-Go ratio plot is on a log axis with a line at 1x, and a ratio on a
// few-calls cell is drawn apart: it never sets the scale.
func TestRatioPlotOutlierApart(t *testing.T) {
	run := resultstest.Synthetic("x", 1)
	for i := range run.Cells {
		c := &run.Cells[i]
		if c.Name != "php-grpc-datalist-200-c1" {
			continue
		}
		for j := range c.Repeats {
			c.Repeats[j].Flag(results.FlagFewCalls, "3 calls in the window")
			c.Repeats[j].Metrics.ClientCPUUs *= 300
		}
	}
	figs, err := figures(run)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range figs {
		if f.name != "php-go-cpu-ratio-c1" {
			continue
		}
		found = true
		if _, ok := f.fig.p.Y.Scale.(plot.LogScale); !ok {
			t.Error("ratio plot: want a log y axis")
		}
		if f.fig.p.Y.Max > 50 || f.fig.p.Y.Min > 1 || f.fig.p.Y.Max < 1 {
			t.Errorf("ratio plot: y from %g to %g; want 1x inside and the 300x few-calls ratio not setting it", f.fig.p.Y.Min, f.fig.p.Y.Max)
		}
		var b bytes.Buffer
		svg, err := f.fig.encode("svg")
		if err != nil {
			t.Fatal(err)
		}
		b.Write(svg)
		for _, want := range []string{"1x: equal cost", "few-calls (1), at the edge"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("ratio plot lacks %q", want)
			}
		}
	}
	if !found {
		t.Fatal("no php-go-cpu-ratio-c1 plot")
	}
}

// A run noisy in more than half its cells says so once, at the top of the page
// and of matrix.md, with the worst steal; a run with a few noisy cells does not
// (their flags say it).
func TestSharedMachine(t *testing.T) {
	run := resultstest.Synthetic("shared", 1)
	if s := SharedMachine(analysis.ViewOf(run)); s != "" {
		t.Errorf("a run with one noisy cell: %q; want nothing", s)
	}
	for i := range run.Cells {
		for j := range run.Cells[i].Repeats {
			if w := run.Cells[i].Repeats[j].Window; w != nil {
				w.StealCores = 0.12
			}
		}
	}
	s := SharedMachine(analysis.ViewOf(run))
	if !strings.Contains(s, "The machine was shared:") || !strings.Contains(s, "up to 12 %") {
		t.Errorf("every cell noisy: %q; want the shared-machine sentence with the worst steal, 12 %%", s)
	}
	var md, page bytes.Buffer
	if err := Markdown(&md, run); err != nil {
		t.Fatal(err)
	}
	if err := Index(&page, run, Extras{}); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]string{"matrix.md": md.String(), "index.html": page.String()} {
		if !strings.Contains(b, "The machine was shared:") {
			t.Errorf("%s does not say the machine was shared", name)
		}
	}
}

// A run whose figures are all 0 renders without a panic: its intervals are
// missing, not a crash (a NaN variance reached the t quantile's inversion).
func TestZeroFiguresRender(t *testing.T) {
	run := resultstest.Synthetic("zero", 0)
	var md, page bytes.Buffer
	if err := Markdown(&md, run); err != nil {
		t.Fatal(err)
	}
	if err := Index(&page, run, Extras{}); err != nil {
		t.Fatal(err)
	}
}

// A run that took longer than its spec's budget says so in matrix.md's facts;
// one within it says nothing.
func TestOverBudget(t *testing.T) {
	run := resultstest.Synthetic("budget", 1) // took 5 minutes
	for _, tc := range []struct {
		budget time.Duration
		want   bool
	}{{time.Minute, true}, {10 * time.Minute, false}, {0, false}} {
		run.Spec.Budget = plan.Duration(tc.budget)
		var md bytes.Buffer
		if err := Markdown(&md, run); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(md.String(), "over the spec's budget of 1m0s by 4m0s"); got != tc.want && tc.budget == time.Minute {
			t.Errorf("budget %v: %v; want the overrun named", tc.budget, got)
		}
		if got := strings.Contains(md.String(), "over the spec's budget"); got != tc.want {
			t.Errorf("budget %v: says over budget %v; want %v", tc.budget, got, tc.want)
		}
	}
}
