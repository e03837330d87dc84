package reproduce

import (
	"bytes"
	"strings"
	"testing"
)

func TestRank(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    map[string]float64
		asc  string
		desc string
	}{
		{"distinct", map[string]float64{"a": 3, "b": 1, "c": 2}, "b < c < a", "a > c > b"},
		{"ties by name", map[string]float64{"y": 1, "x": 1}, "x < y", "x > y"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := rank(tc.v); got != tc.asc {
				t.Errorf("rank: got %q; want %q", got, tc.asc)
			}
			if got := rankDesc(tc.v); got != tc.desc {
				t.Errorf("rankDesc: got %q; want %q", got, tc.desc)
			}
		})
	}
}

func TestHolds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ok, bad []string
		want    string
	}{
		{"all", []string{"1", "5"}, nil, "yes"},
		{"some", []string{"1"}, []string{"5"}, "partly"},
		{"none", nil, []string{"1"}, "no"},
	} {
		if got, _ := holds(tc.ok, tc.bad, ""); got != tc.want {
			t.Errorf("%s: got %q; want %q", tc.name, got, tc.want)
		}
	}
}

// The published files shipped in results/published read as the experiments expect.
func TestPublishedFiles(t *testing.T) {
	for _, tc := range []struct {
		file string
		rows int
		key  string
	}{
		{"go-grpc-thrift-aerospike_claims.csv", 4, "claim"},
		{"php-go-growth_latency.csv", 15, "mean_ms"},
		{"java-rpc-2015_tps.csv", 20, "tps"},
	} {
		rows, err := readCSV("../../results/published/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != tc.rows || rows[0][tc.key] == "" {
			t.Errorf("%s: got %d rows, first %v; want %d rows with %s", tc.file, len(rows), rows[0], tc.rows, tc.key)
		}
	}
}

func TestMarkdown(t *testing.T) {
	var b bytes.Buffer
	Markdown(&b, []Section{
		{Name: "x", Setup: []string{"one"}, Table: [][]string{{"a", "b|c"}, {"1", "2"}},
			Findings: []Finding{{Claim: "it wins", Holds: "no", Detail: "it lost"}}},
		{Name: "y", Err: "server did not start"},
	})
	for _, want := range []string{"| x | it wins | no |", "| y | (not run) | error: server did not start |", "| a | b\\|c |", "|---|---|", "**it wins** — holds here: **no**. it lost"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in:\n%s", want, b.String())
		}
	}
}
