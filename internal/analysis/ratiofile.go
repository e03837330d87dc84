package analysis

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// RatioRecord is one comparison as ratios.csv and matrix.json's "ratios" hold
// it: cell A's figure over cell B's, paired by round or not, with its 95 %
// interval, its verdict and the rounds behind it; each side's flags, so a
// reader can leave out a ratio built on a flagged cell.
type RatioRecord struct {
	Kind    string  `json:"kind"` // client-vs-go, protocol-vs-grpc
	A       string  `json:"a"`
	B       string  `json:"b"`
	Figure  string  `json:"figure"` // the figure's column: rps, client_cpu_us_per_call ...
	Paired  bool    `json:"paired"`
	Ratio   float64 `json:"ratio"`
	Low     float64 `json:"ratio_low"`
	High    float64 `json:"ratio_high"`
	Verdict string  `json:"verdict"`
	Rounds  int     `json:"rounds"`
	AFlags  string  `json:"a_flags"` // space-separated, "" for none
	BFlags  string  `json:"b_flags"`
}

// RatioColumns are ratios.csv's columns, in order (docs/reports.md).
var RatioColumns = []string{"kind", "a", "b", "figure", "paired", "ratio", "ratio_low", "ratio_high", "verdict", "rounds", "a_flags", "b_flags"}

// Records are the view's comparisons as ratios.csv's rows, in the run's order.
func (v *View) Records() []RatioRecord {
	var out []RatioRecord
	for _, c := range v.Comparisons {
		r := RatioRecord{Kind: c.Kind, A: c.A, B: c.B, Figure: c.Figure.Column, Paired: c.Ratio.Paired,
			Ratio: round6(c.Ratio.Center), Low: round6(c.Ratio.Low), High: round6(c.Ratio.High), Verdict: c.Verdict, Rounds: c.Ratio.Rounds}
		if a, ok := v.Cell(c.A); ok {
			r.AFlags = strings.Join(a.Sum.Flags, " ")
		}
		if b, ok := v.Cell(c.B); ok {
			r.BFlags = strings.Join(b.Sum.Flags, " ")
		}
		out = append(out, r)
	}
	return out
}

// round6 keeps six significant digits, what ratios.csv holds: the page prints
// three of them.
func round6(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	f, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	return f
}

// Row is r as ratios.csv's fields.
func (r RatioRecord) Row() []string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
	return []string{r.Kind, r.A, r.B, r.Figure, strconv.FormatBool(r.Paired), f(r.Ratio), f(r.Low), f(r.High), r.Verdict, strconv.Itoa(r.Rounds), r.AFlags, r.BFlags}
}

// WriteRatiosCSV writes rs as ratios.csv.
func WriteRatiosCSV(w io.Writer, rs []RatioRecord) error {
	cw := csv.NewWriter(w)
	cw.Write(RatioColumns)
	for _, r := range rs {
		cw.Write(r.Row())
	}
	cw.Flush()
	return cw.Error()
}

// ReadRatiosCSV reads ratios.csv (columns by name, in any order; extra columns
// ignored); a bad field is named with its line and column.
func ReadRatiosCSV(r io.Reader) ([]RatioRecord, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("ratios.csv: empty")
	}
	if err != nil {
		return nil, fmt.Errorf("ratios.csv: %w", err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(h)] = i
	}
	for _, k := range RatioColumns[:10] {
		if _, ok := col[k]; !ok {
			return nil, fmt.Errorf("ratios.csv: no %s column", k)
		}
	}
	var out []RatioRecord
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("ratios.csv: %w", err)
		}
		get := func(k string) string {
			if i, ok := col[k]; ok && i < len(rec) {
				return rec[i]
			}
			return ""
		}
		bad := func(k string) error {
			return fmt.Errorf("ratios.csv line %d: %s %q: want a number", line, k, get(k))
		}
		rr := RatioRecord{Kind: get("kind"), A: get("a"), B: get("b"), Figure: get("figure"), Verdict: get("verdict"),
			AFlags: get("a_flags"), BFlags: get("b_flags")}
		if rr.Paired, err = strconv.ParseBool(get("paired")); err != nil {
			return nil, fmt.Errorf("ratios.csv line %d: paired %q: want true or false", line, get("paired"))
		}
		for _, p := range []struct {
			k   string
			dst *float64
		}{{"ratio", &rr.Ratio}, {"ratio_low", &rr.Low}, {"ratio_high", &rr.High}} {
			x, err := strconv.ParseFloat(get(p.k), 64)
			if err != nil || math.IsNaN(x) || x < 0 {
				return nil, bad(p.k)
			}
			*p.dst = x
		}
		if rr.Rounds, err = strconv.Atoi(get("rounds")); err != nil || rr.Rounds < 0 {
			return nil, bad("rounds")
		}
		if rr.A == "" || rr.B == "" || rr.Figure == "" {
			return nil, fmt.Errorf("ratios.csv line %d: a, b and figure must not be empty", line)
		}
		out = append(out, rr)
	}
}

// FlipsOf counts the verdicts of run B's ratios (ratios.csv) that moved
// against run A's, as Calibrate does from the runs themselves.
func FlipsOf(a, b []RatioRecord) []Flips {
	conv := func(rs []RatioRecord) []Comparison {
		out := make([]Comparison, len(rs))
		for i, r := range rs {
			f := Figure{Name: r.Figure, Key: r.Figure, Column: r.Figure}
			if j := slices.IndexFunc(Figures, func(f Figure) bool { return f.Column == r.Figure }); j >= 0 {
				f = Figures[j]
			}
			out[i] = Comparison{Kind: r.Kind, A: r.A, B: r.B, Figure: f, Verdict: r.Verdict}
		}
		return out
	}
	return flips(conv(a), conv(b))
}

// ChangeRecords are `rpcbed compare`'s changes as ratios.csv's rows: kind
// b-vs-a, a and b the cell (run B's over run A's), unpaired (two runs).
func ChangeRecords(changes []CellChange) []RatioRecord {
	var out []RatioRecord
	for _, cc := range changes {
		for _, ch := range cc.Changes {
			if ch.Ratio.N == 0 {
				continue
			}
			col := ch.Metric
			if f, ok := FigureByKey(compareKey(ch.Metric)); ok {
				col = f.Column
			}
			out = append(out, RatioRecord{Kind: "b-vs-a", A: cc.Cell, B: cc.Cell, Figure: col, Paired: ch.Ratio.Paired,
				Ratio: round6(ch.Ratio.Center), Low: round6(ch.Ratio.Low), High: round6(ch.Ratio.High), Verdict: ch.Faster, Rounds: ch.Ratio.Rounds})
		}
	}
	return out
}

// compareKey is the figure key of a compared metric's name.
func compareKey(metric string) string {
	for _, m := range Compared {
		if m.Name == metric {
			return m.Key
		}
	}
	return metric
}
