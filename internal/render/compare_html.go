package render

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/results"
)

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
	A, B    *results.Run
	CSS     template.CSS
	JS      template.JS
	Summary string
	Facts   []sideFact
	Metrics []string
	Rows    []changeRow
	Missing []string
}

// CompareHTML writes the comparison as a page: the two runs' facts side by side,
// then per cell and metric both medians and the change, coloured improved,
// regressed or no significant change, sortable by any column.
func CompareHTML(w io.Writer, a, b *results.Run, changes []analysis.CellChange) error {
	p := comparePage{A: a, B: b, CSS: pageCSS, JS: sortJS, Facts: sideFacts(a, b)}
	for _, m := range analysis.Compared {
		head := m.Name
		if u, ok := compareHeads[m.Name]; ok {
			head = u.head
		}
		p.Metrics = append(p.Metrics, head)
	}
	for _, cc := range changes {
		byMetric := map[string]analysis.Change{}
		for _, ch := range cc.Changes {
			byMetric[ch.Metric] = ch
		}
		r := changeRow{Cell: cc.Cell}
		for _, m := range analysis.Compared {
			ch, ok := byMetric[m.Name]
			if !ok {
				r.Changes = append(r.Changes, changeView{A: "-", B: "-", Delta: "-", Verdict: analysis.NoChange})
				continue
			}
			scale := 1.0
			if u, ok := compareHeads[m.Name]; ok {
				scale = u.scale
			}
			v := changeView{
				A: sig(ch.A * scale), B: sig(ch.B * scale),
				ASort: fmtSort(ch.A * scale), BSort: fmtSort(ch.B * scale),
				Delta: ch.Delta, Verdict: ch.Verdict(),
				Title: fmt.Sprintf("B/A %s, 95 %% interval %s-%s: %s; rounds %d (A) + %d (B)", sig(ch.Ratio.Center), sig(ch.Ratio.Low), sig(ch.Ratio.High), ch.Faster, ch.NA, ch.NB),
			}
			if ch.A != 0 {
				v.DeltaSort = fmtSort((ch.B - ch.A) / ch.A * 100)
			}
			if v.Verdict == analysis.NoChange && ch.Significant && ch.A == ch.B {
				v.Delta = "0%"
			}
			r.Changes = append(r.Changes, v)
		}
		p.Rows = append(p.Rows, r)
	}
	count := analysis.Tally(changes)
	p.Summary = fmt.Sprintf("%d cells compared: %d figures improved, %d regressed, %d indistinguishable (their 95 %% interval holds no change).",
		len(p.Rows), count[analysis.Improved], count[analysis.Regressed], count[analysis.NoChange])
	for _, u := range analysis.NotCompared(a, b, changes) {
		p.Missing = append(p.Missing, u.Cell+": "+u.Why)
	}
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
