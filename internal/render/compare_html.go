package render

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/rpcbed/rpcbed/internal/results"
)

// Verdicts of one compared metric, as the compare page colours them.
const (
	Improved  = "improved"
	Regressed = "regressed"
	NoChange  = "nochange"
)

// Verdict says whether B is better or worse than A on this metric, or neither
// (the change is not significant, or there is none).
func (ch Change) Verdict() string {
	if !ch.Significant || ch.A == ch.B {
		return NoChange
	}
	if (ch.B > ch.A) == ch.betterHigher {
		return Improved
	}
	return Regressed
}

type sideFact struct {
	Key, A, B string
	Differ    bool
}

type changeView struct {
	A, B, ASort, BSort, Delta, DeltaSort, Verdict, Title string
}

type changeRow struct {
	Cell    string
	Changes []changeView
}

type comparePage struct {
	A, B     *results.Run
	CSS      template.CSS
	JS       template.JS
	Summary  string
	Facts    []sideFact
	Metrics  []string
	Rows     []changeRow
	Missing  []string
	Warnings []string
}

// compareUnits are the column heads and the scale from the metric's unit.
var compareUnits = map[string]struct {
	head  string
	scale float64
}{
	"req/s":           {"req/s", 1},
	"p99":             {"p99 ms", 1e-3},
	"client CPU/call": {"client CPU µs/call", 1},
	"server CPU/call": {"server CPU µs/call", 1},
}

// CompareHTML writes the comparison as a page: the two runs' facts side by side,
// then per cell and metric both medians and the change, coloured improved,
// regressed or no significant change, sortable by any column.
func CompareHTML(w io.Writer, a, b *results.Run, changes []CellChange) error {
	p := comparePage{A: a, B: b, CSS: pageCSS, JS: sortJS, Facts: sideFacts(a, b)}
	for _, m := range compared {
		head := m.name
		if u, ok := compareUnits[m.name]; ok {
			head = u.head
		}
		p.Metrics = append(p.Metrics, head)
	}
	count := map[string]int{}
	warn := map[string]bool{}
	comparedCells := map[string]bool{}
	for _, cc := range changes {
		comparedCells[cc.Cell] = true
		byMetric := map[string]Change{}
		for _, ch := range cc.Changes {
			byMetric[ch.Metric] = ch
		}
		r := changeRow{Cell: cc.Cell}
		for _, m := range compared {
			ch, ok := byMetric[m.name]
			if !ok {
				r.Changes = append(r.Changes, changeView{A: "-", B: "-", Delta: "-", Verdict: NoChange})
				continue
			}
			scale := 1.0
			if u, ok := compareUnits[m.name]; ok {
				scale = u.scale
			}
			v := changeView{
				A: sig(ch.A * scale), B: sig(ch.B * scale),
				ASort: fmtSort(ch.A * scale), BSort: fmtSort(ch.B * scale),
				Delta: ch.Delta, Verdict: ch.Verdict(),
				Title: fmt.Sprintf("B/A %s, 95 %% interval %s-%s: %s; p=%.3f, rounds %d (A) + %d (B)", sig(ch.Ratio.Center), sig(ch.Ratio.Low), sig(ch.Ratio.High), ch.Faster, ch.P, ch.NA, ch.NB),
			}
			if ch.A != 0 {
				v.DeltaSort = fmtSort((ch.B - ch.A) / ch.A * 100)
			}
			if v.Verdict == NoChange && ch.Significant && ch.A == ch.B {
				v.Delta = "0%"
			}
			count[v.Verdict]++
			for _, w := range ch.Warnings {
				if !warn[w] {
					warn[w] = true
					p.Warnings = append(p.Warnings, w)
				}
			}
			r.Changes = append(r.Changes, v)
		}
		p.Rows = append(p.Rows, r)
	}
	p.Summary = fmt.Sprintf("%d cells compared: %d figures improved, %d regressed, %d indistinguishable (their 95 %% interval holds no change).",
		len(p.Rows), count[Improved], count[Regressed], count[NoChange])
	p.Missing = notCompared(a, b, comparedCells)
	return execute(w, "compare", p)
}

func fmtSort(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// sideFacts lines up both runs' facts and versions by key.
func sideFacts(a, b *results.Run) []sideFact {
	var out []sideFact
	join := func(fa, fb []fact, prefix string) {
		var keys []string
		va, vb := map[string]string{}, map[string]string{}
		for _, f := range fa {
			va[f.Key] = f.Value
			keys = append(keys, f.Key)
		}
		for _, f := range fb {
			vb[f.Key] = f.Value
			if !slices.Contains(keys, f.Key) {
				keys = append(keys, f.Key)
			}
		}
		for _, k := range keys {
			x, y := orDash(va[k]), orDash(vb[k])
			out = append(out, sideFact{Key: prefix + k, A: x, B: y, Differ: x != y && k != "run"})
		}
	}
	join(runFacts(a), runFacts(b), "")
	join(versionFacts(a), versionFacts(b), "versions: ")
	return out
}

// notCompared names the cells of either run that have no comparison, and why.
func notCompared(a, b *results.Run, done map[string]bool) []string {
	inA, inB := map[string]results.CellResult{}, map[string]results.CellResult{}
	for _, c := range a.Cells {
		inA[c.Name] = c
	}
	for _, c := range b.Cells {
		inB[c.Name] = c
	}
	var out []string
	for _, c := range a.Cells {
		if done[c.Name] {
			continue
		}
		if _, ok := inB[c.Name]; !ok {
			out = append(out, c.Name+": only in A")
		} else {
			out = append(out, c.Name+": no successful repeat in "+failedSides(c, inB[c.Name]))
		}
	}
	for _, c := range b.Cells {
		if _, ok := inA[c.Name]; !ok {
			out = append(out, c.Name+": only in B")
		}
	}
	return out
}

func failedSides(a, b results.CellResult) string {
	na, nb := len(a.Values(results.RPS)), len(b.Values(results.RPS))
	switch {
	case na == 0 && nb == 0:
		return "A nor B"
	case na == 0:
		return "A"
	case nb == 0:
		return "B"
	}
	return "A or B"
}
