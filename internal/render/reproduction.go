package render

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rpcbed/rpcbed/internal/results"
)

// The reproduction's files: reproduction.md and reproduction.html, printed from
// the sections reproduce.Run saves in reproduction.json.

// ReproductionMarkdown writes reproduction.md: the summary table of every rule, then each
// experiment's set-up, scaling, table and findings.
func ReproductionMarkdown(w io.Writer, secs []results.Section) {
	fmt.Fprintf(w, "# Reproduction of the published experiments\n\n")
	fmt.Fprintf(w, "Published figures are in results/published/. Absolute numbers differ (other hardware, "+
		"newer libraries); each published claim is one rule (internal/analysis/claims) with a stated tolerance. "+
		"Measured figures are the median over the repeats with its 95 %% interval in brackets (from the repeats' own "+
		"spread, Student's t); a claim whose interval straddles its tolerance, or holds no difference, is \"%s\", "+
		"never \"yes\". A reason is given only where a figure of this run measured it.\n", results.NotDistinguished)
	fmt.Fprintf(w, "\n**Tally:** %s.\n", Tally(secs))
	for _, s := range secs {
		if s.Cause != "" {
			fmt.Fprintf(w, "\n**%s, measured cause:** %s\n", s.Name, mdEscape(s.Cause))
		}
	}
	fmt.Fprintf(w, "\n## Summary\n\n| experiment | claim | published | measured (median [spread]) | tolerance | verdict | measured reason |\n|---|---|---|---|---|---|---|\n")
	for _, s := range secs {
		if s.Err != "" && len(s.Findings) == 0 {
			fmt.Fprintf(w, "| %s | (not run) | - | - | - | %s | error: %s |\n", s.Name, results.NotMeasured, mdEscape(s.Err))
		}
		for _, f := range s.Findings {
			reason := f.Reason
			switch {
			case reason == "" && s.Cause != "":
				reason = "the experiment's measured cause, above"
			case reason == "":
				reason = "(none measured)"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | **%s** | %s |\n", s.Name, mdEscape(f.Claim), mdEscape(f.Published), mdEscape(f.Measured), mdEscape(f.Tolerance), f.Holds, mdEscape(reason))
		}
	}
	for _, s := range secs {
		fmt.Fprintf(w, "\n## %s\n\n", s.Name)
		for _, l := range s.Setup {
			fmt.Fprintf(w, "- %s\n", l)
		}
		if len(s.Links) > 0 {
			reproductionLinks(w, s.Links)
		}
		if s.Scaled != "" {
			fmt.Fprintf(w, "\n**How this was scaled to this machine.** %s\n", s.Scaled)
		}
		if s.Cause != "" {
			fmt.Fprintf(w, "\n**Measured cause.** %s\n", mdEscape(s.Cause))
		}
		if s.Err != "" {
			fmt.Fprintf(w, "\n**Not completed:** %s\n", mdEscape(s.Err))
		}
		if len(s.Table) > 0 {
			fmt.Fprintln(w)
			for i, row := range s.Table {
				fmt.Fprintf(w, "| %s |\n", strings.Join(escAll(row), " | "))
				if i == 0 {
					fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(row)))
				}
			}
		}
		if len(s.Findings) > 0 {
			fmt.Fprintf(w, "\nFindings:\n\n")
			for _, f := range s.Findings {
				fmt.Fprintf(w, "- **%s** (rule `%s`) — holds here: **%s**. Published: %s; measured: %s; tolerance: %s. %s", f.Claim, f.Rule, f.Holds, f.Published, f.Measured, f.Tolerance, f.Detail)
				if f.Reason != "" {
					fmt.Fprintf(w, " Reason (measured): %s", f.Reason)
				}
				fmt.Fprintln(w)
			}
		}
	}
}

// Tally counts the claims by verdict over every experiment, in the order yes,
// partly, no, inconclusive, not measured ("14 claims: 6 yes, ...").
func Tally(secs []results.Section) string {
	n := map[string]int{}
	all := 0
	for _, s := range secs {
		for _, f := range s.Findings {
			n[f.Holds]++
			all++
		}
	}
	order := []string{results.Yes, results.Partly, results.No, results.NotDistinguished, results.NotMeasured}
	// A saved run may carry an older verdict's words: counted too, after.
	for _, v := range slices.Sorted(maps.Keys(n)) {
		if !slices.Contains(order, v) {
			order = append(order, v)
		}
	}
	var parts []string
	for _, v := range order {
		if n[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[v], v))
		}
	}
	return fmt.Sprintf("%d claims: %s", all, strings.Join(parts, ", "))
}

func escAll(v []string) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = mdEscape(s)
	}
	return out
}

// ReproductionHTML writes reproduction.html: the summary and every experiment of
// reproduction.md, as a page.
func ReproductionHTML(w io.Writer, secs []results.Section) error {
	return execute(w, "reproduction", struct {
		CSS   template.CSS
		Repro []results.Section
	}{pageCSS, secs})
}

// WriteReproduction writes dir/reproduction.md and dir/reproduction.html, each
// atomically.
func WriteReproduction(dir string, secs []results.Section) error {
	var md, page bytes.Buffer
	ReproductionMarkdown(&md, secs)
	if err := results.WriteFileAtomic(filepath.Join(dir, "reproduction.md"), md.Bytes()); err != nil {
		return err
	}
	if err := ReproductionHTML(&page, secs); err != nil {
		return err
	}
	return results.WriteFileAtomic(filepath.Join(dir, "reproduction.html"), page.Bytes())
}

// reproductionLinks is a reproduction's link, as matrix.md's hosts and links
// print it: where each side ran, the probed round trip, and asked against
// achieved before and after the runs.
func reproductionLinks(w io.Writer, links []results.LinkCheck) {
	fmt.Fprintf(w, "\n**The link.** The server ran on one host and the client on another, across the link below; it was checked before the runs and again after them.\n\n")
	fmt.Fprintf(w, "| link | shaping | from -> to | RTT µs | p99 µs |\n|---|---|---|---:|---:|\n")
	for _, p := range links {
		fmt.Fprintf(w, "| %s | %s | %s -> %s | %s | %s |\n", p.Link, mdEscape(strings.Join(p.Mechanism, ", ")), p.From, p.To, fmtOr(p.RTTUs, 0), fmtOr(p.RTTP99Us, 0))
	}
	fmt.Fprint(w, linkAccuracyMarkdown(links))
}
