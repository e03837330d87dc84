package render

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/rpcbed/rpcbed/internal/results"
)

// ReproductionRun is one reproduction's sections and the directory they came
// from, for ReproductionAcross.
type ReproductionRun struct {
	Dir      string
	Sections []results.Section
}

// ReproductionAcross is README's "reproduction-across" block: the experiments
// every run has, each claim's measured figure and verdict under each run's
// condition side by side (one host over 127.0.0.1, or the link it crossed with
// what its check achieved), under a line per run saying which it was.
func ReproductionAcross(w io.Writer, runs []ReproductionRun) error {
	if len(runs) < 2 {
		return fmt.Errorf("want two reproductions or more; got %d", len(runs))
	}
	var names []string
	for _, s := range runs[0].Sections {
		if !slices.ContainsFunc(runs[1:], func(r ReproductionRun) bool { return sectionOf(r, s.Name) == nil }) {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		return fmt.Errorf("the reproductions share no experiment")
	}
	var conds []string
	for _, r := range runs {
		conds = append(conds, reproductionCondition(r, names[0]))
	}
	for i, r := range runs {
		fmt.Fprintf(w, "- `%s`: %s\n", r.Dir, conds[i])
	}
	head := []string{"experiment", "claim"}
	for _, r := range runs {
		c := "loopback"
		if s := sectionOf(r, names[0]); s != nil && len(s.Links) > 0 {
			c = s.Links[0].Link
		}
		head = append(head, c+": measured", c+": verdict")
	}
	fmt.Fprintf(w, "\n| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for _, n := range names {
		for _, f := range sectionOf(runs[0], n).Findings {
			row := []string{n, mdEscape(f.Claim)}
			for _, r := range runs {
				m, v := "-", results.NotMeasured
				for _, g := range sectionOf(r, n).Findings {
					if g.Rule == f.Rule {
						m, v = mdEscape(g.Measured), "**"+g.Holds+"**"
					}
				}
				if e := sectionOf(r, n).Err; e != "" && m == "-" {
					m = "not run: " + mdEscape(short(e, 120))
				}
				row = append(row, m, v)
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
		}
	}
	return nil
}

// sectionOf is r's section of experiment name, nil when r has none.
func sectionOf(r ReproductionRun, name string) *results.Section {
	for i := range r.Sections {
		if r.Sections[i].Name == name {
			return &r.Sections[i]
		}
	}
	return nil
}

// reproductionCondition says where experiment name of r ran: on one host, or
// across its link with what the link's checks achieved.
func reproductionCondition(r ReproductionRun, name string) string {
	s := sectionOf(r, name)
	if s == nil || len(s.Links) == 0 {
		return "client and server on one host, over 127.0.0.1"
	}
	var parts []string
	for _, p := range s.Links {
		t := fmt.Sprintf("across the %s link, %.0f µs asked added to the round trip: %s before the runs", p.Link, p.AskedRTTUs, fmtUs(p.AddedRTTUs))
		if p.AfterRTTUs > 0 {
			t += ", " + fmtUs(p.AfterAddedRTTUs) + " after"
		}
		if d := p.Delayer; d != nil && d.Packets > 0 {
			t += fmt.Sprintf("; its delayers released packets a median %.0f µs and a p99 %.0f µs late under the runs' load, on %.0f s of CPU", d.LateP50Us, d.LateP99Us, d.CPUSeconds)
		}
		if p.Refused != "" {
			t += "; refused: " + p.Refused
		} else if p.Drift != "" {
			t += "; drifted: " + p.Drift
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, "; ")
}

// fmtUs is a round trip in µs, or "not measured".
func fmtUs(v float64) string {
	if v <= 0 {
		return "not measured"
	}
	return fmt.Sprintf("%.0f µs", v)
}
