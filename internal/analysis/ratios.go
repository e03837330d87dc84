package analysis

// RatioTable is one kind of comparison (VsGo, VsGRPC) laid out by pair of
// cells, in the run's order: the figures it compares, in the order they first
// come, and each pair's ratio per figure.
type RatioTable struct {
	Kind    string
	Figures []Figure
	Rows    []RatioRow
}

// RatioRow is one pair of cells with its comparisons, by figure key.
type RatioRow struct {
	A, B string
	By   map[string]Comparison
}

// Ratios is the table of kind's comparisons among cs (no rows when it has none).
func Ratios(cs []Comparison, kind string) RatioTable {
	t := RatioTable{Kind: kind}
	idx := map[string]int{}
	seen := map[string]bool{}
	for _, c := range cs {
		if c.Kind != kind {
			continue
		}
		k := c.A + " " + c.B
		i, ok := idx[k]
		if !ok {
			i = len(t.Rows)
			idx[k] = i
			t.Rows = append(t.Rows, RatioRow{A: c.A, B: c.B, By: map[string]Comparison{}})
		}
		t.Rows[i].By[c.Figure.Key] = c
		if !seen[c.Figure.Key] {
			seen[c.Figure.Key] = true
			t.Figures = append(t.Figures, c.Figure)
		}
	}
	return t
}

// Tally counts figure f's verdicts over the table's rows (stats.Faster, Slower,
// Indistinguishable).
func (t RatioTable) Tally(f Figure) map[string]int {
	n := map[string]int{}
	for _, r := range t.Rows {
		if c, ok := r.By[f.Key]; ok {
			n[c.Verdict]++
		}
	}
	return n
}
