package cost

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/rpcbed/rpcbed/internal/stats"
)

// LoadTimed reads a matrix run's matrix.csv (a file or its run directory): the
// client's and the server's CPU µs per call of every cell.
func LoadTimed(file string) (Timed, error) {
	if st, err := os.Stat(file); err == nil && st.IsDir() {
		file = filepath.Join(file, "matrix.csv")
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadTimed(f)
}

// ReadTimed reads matrix.csv's cell, client_cpu_us_per_call and
// server_cpu_us_per_call columns.
func ReadTimed(r io.Reader) (Timed, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("matrix.csv: empty")
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, k := range []string{"cell", "client_cpu_us_per_call", "server_cpu_us_per_call"} {
		if _, ok := col[k]; !ok {
			return nil, fmt.Errorf("matrix.csv: no %s column", k)
		}
	}
	t := Timed{}
	for _, row := range rows[1:] {
		if len(row) != len(rows[0]) {
			continue
		}
		cl, err1 := strconv.ParseFloat(row[col["client_cpu_us_per_call"]], 64)
		sv, err2 := strconv.ParseFloat(row[col["server_cpu_us_per_call"]], 64)
		if err1 != nil && err2 != nil {
			continue
		}
		if err1 != nil {
			cl = math.NaN()
		}
		if err2 != nil {
			sv = math.NaN()
		}
		t[row[col["cell"]]] = struct{ Client, Server float64 }{cl, sv}
	}
	return t, nil
}

// TimedPoint is one cell and side: its estimated cycles and the matrix's CPU µs
// per call on that side.
type TimedPoint struct {
	Cell, Side string
	Client     string
	Cycles     float64
	CPUus      float64
	PerNs      float64 // est. cycles per ns of CPU
	Syscalls   float64
}

// Comparison is the counts against the timed figures.
type Comparison struct {
	Points   []TimedPoint
	Spearman float64
}

// CompareTimed pairs every measured cell with the matrix's CPU per call.
func CompareTimed(r *Result, t Timed) Comparison {
	var cmp Comparison
	var x, y []float64
	for _, c := range r.Cells {
		if c.Status != StatusOK {
			continue
		}
		tm, ok := t[c.Cell]
		if !ok {
			continue
		}
		cpu := tm.Client
		if c.Side == SideServer {
			cpu = tm.Server
		}
		if math.IsNaN(cpu) || cpu <= 0 {
			continue
		}
		cmp.Points = append(cmp.Points, TimedPoint{Cell: c.Cell, Side: c.Side, Client: c.Client, Cycles: c.PerCall.Cycles,
			CPUus: cpu, PerNs: c.PerCall.Cycles / (cpu * 1000), Syscalls: c.PerCall.Syscalls})
		x = append(x, c.PerCall.Cycles)
		y = append(y, cpu)
	}
	cmp.Spearman = stats.Spearman(x, y)
	return cmp
}

// Outliers are the n points whose cycles per CPU ns lie furthest (on a log
// scale) from the median: where the count and the time disagree most.
func (c Comparison) Outliers(n int) []TimedPoint {
	if len(c.Points) == 0 {
		return nil
	}
	var v []float64
	for _, p := range c.Points {
		v = append(v, math.Log(p.PerNs))
	}
	med := stats.Median(v)
	pts := slices.Clone(c.Points)
	slices.SortStableFunc(pts, func(a, b TimedPoint) int {
		da, db := math.Abs(math.Log(a.PerNs)-med), math.Abs(math.Log(b.PerNs)-med)
		switch {
		case da > db:
			return -1
		case da < db:
			return 1
		}
		return 0
	})
	if len(pts) > n {
		pts = pts[:n]
	}
	return pts
}
