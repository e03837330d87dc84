package cost

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// Timed is what the matrix measured for a cell (CPU µs per call on each side),
// keyed by cell name; nil when no matrix run is given.
type Timed map[string]struct{ Client, Server float64 }

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
