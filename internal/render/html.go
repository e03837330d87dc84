package render

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rpcbed/rpcbed/internal/cost"
	"github.com/rpcbed/rpcbed/internal/cost/costrender"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// IndexFile is the run's page, beside matrix.md.
const IndexFile = "index.html"

//go:embed templates
var templateFS embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{"md": inlineMarkdown, "slug": slug, "tally": Tally}).ParseFS(templateFS, "templates/*.tmpl"))

// slug makes a verdict a CSS class name: "not distinguishable here" ->
// "not-distinguishable-here" (a class name holds no spaces).
func slug(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), "-")
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// inlineMarkdown escapes s and turns its `code` spans into <code> (the
// reproduction's texts are written for reproduction.md).
func inlineMarkdown(s string) template.HTML {
	return template.HTML(codeSpan.ReplaceAllString(template.HTMLEscapeString(s), "<code>$1</code>"))
}

func asset(name string) string {
	b, err := templateFS.ReadFile("templates/" + name)
	if err != nil {
		panic(err) // embedded: cannot happen
	}
	return string(b)
}

var (
	pageCSS = template.CSS(asset("page.css"))
	sortJS  = template.JS(asset("sort.js"))
)

// Extras are what a run's page shows beside the run itself.
type Extras struct {
	// Reproduction is the run's reproduction (reproduction.json), if it has one;
	// ReproductionFrom is its page or file, relative to the run directory.
	Reproduction     []results.Section
	ReproductionFrom string
	// Cost is the run's cost section (internal/cost) when the run directory holds
	// a cost run in cost/ (cost/cost.json), CostResult that run.
	Cost       template.HTML
	CostResult *cost.Result
}

// LoadExtras finds what belongs on dir's page: the reproduction in
// dir/reproduction.json or dir/reproduction/reproduction.json, and the cost run in
// dir/cost (set against the run's own matrix.csv).
func LoadExtras(dir string) (Extras, error) {
	x, err := loadReproduction(dir)
	if err != nil {
		return x, err
	}
	costDir := filepath.Join(dir, "cost")
	if _, err := os.Stat(filepath.Join(costDir, cost.JSONFile)); err == nil {
		res, err := cost.LoadResult(costDir)
		if err != nil {
			return x, err
		}
		x.CostResult = res
		timed, _ := cost.LoadTimed(dir) // none: the section leaves the comparison out
		if x.Cost, err = costrender.HTMLSection(res, timed, "cost"); err != nil {
			return x, err
		}
	}
	return x, nil
}

func loadReproduction(dir string) (Extras, error) {
	for _, rel := range []string{"reproduction.json", filepath.Join("reproduction", "reproduction.json")} {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return Extras{}, err
		}
		var secs []results.Section
		if err := json.Unmarshal(b, &secs); err != nil {
			return Extras{}, fmt.Errorf("%s: %w", filepath.Join(dir, rel), err)
		}
		from := strings.TrimSuffix(filepath.ToSlash(rel), ".json") + ".md"
		return Extras{Reproduction: secs, ReproductionFrom: from}, nil
	}
	return Extras{}, nil
}

// execute renders a template through a buffer: a failing template writes nothing.
func execute(w io.Writer, name string, data any) error {
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// writeIndex writes dir/index.html with what LoadExtras finds in dir.
func writeIndex(dir string, run *results.Run) error {
	x, err := LoadExtras(dir)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := Index(&b, run, x); err != nil {
		return fmt.Errorf("%s: %w", IndexFile, err)
	}
	return results.WriteFileAtomic(filepath.Join(dir, IndexFile), b.Bytes())
}

var svgProlog = regexp.MustCompile(`(?s)^\s*(<\?xml[^>]*\?>\s*)?(<!--.*?-->\s*)?`)

// inlineSVG turns an SVG document into an element to put in a page: no XML
// prolog, and a viewBox so that CSS may scale it.
func inlineSVG(b []byte) template.HTML {
	b = svgProlog.ReplaceAll(b, nil)
	return template.HTML(b)
}

// caption says how to read a plot, by its kind.
func caption(name string) string {
	switch {
	case strings.HasPrefix(name, "rps-vs-concurrency-"):
		return "requests/s (higher is better) against concurrency, one line per client-protocol (colour = client, marker and dash = protocol), with 95 % intervals; a line that stops rising has hit a limit. Both axes are log scales."
	case strings.HasPrefix(name, "latency-vs-items-"):
		return "p50 (solid) and p99 (dashed) latency (lower is better) with their 95 % intervals against the items per response, one colour and marker per protocol; the slope is how latency grows with the payload. Both axes are log scales."
	case strings.HasPrefix(name, "client-cpu-vs-items-"):
		return "client CPU per call (whole client process; lower is better) against the items per response, one line per client-protocol; the vertical gap between two lines is their cost ratio (log scale)."
	case name == tlsPlotName:
		return "each TLS cell's figure over its plaintext cell's (same rounds), a row per TLS cell, a dot per figure with its 95 % interval as a bar, log scale: the dotted line at 1x is no cost; right of it TLS costs more CPU per call or latency, and for req/s left of it is fewer calls a second. A cell that did not negotiate what it asked is left out."
	case strings.HasPrefix(name, "php-go-cpu-ratio-"):
		return "PHP's client CPU per call divided by Go's, one line per PHP variant and protocol (php in the protocol's colour, php-pure in its own), log scale: the dotted line at 1x is equal cost, 4 means PHP spends four times Go's CPU per call. A ratio on a few-calls cell (too few calls in a window to compare) is a red triangle at the edge and does not set the scale."
	}
	return "one figure of this run; see its title and axes."
}

// runClients are the clients with a cell in the run, in the vocabulary's order
// (clients the vocabulary does not list, such as a new variant, come last).
func runClients(run *results.Run) []string {
	var out []string
	for _, c := range run.Cells {
		if !slices.Contains(out, c.Client) {
			out = append(out, c.Client)
		}
	}
	rank := func(c string) int {
		if i := slices.Index(plan.Clients, c); i >= 0 {
			return i
		}
		return len(plan.Clients)
	}
	slices.SortStableFunc(out, func(a, b string) int { return rank(a) - rank(b) })
	return out
}

func runFacts(run *results.Run) []fact {
	s, m := run.Spec, run.Machine
	f := []fact{
		{"run", run.ID},
		{"machine", fmt.Sprintf("%s, %d cores, %d MB, %s, kernel %s", orDash(m.CPU), m.Cores, m.MemMB, orDash(m.OS), orDash(m.Kernel))},
		{"commit", orDash(run.Commit)},
		{"runner", orDash(run.Runner)},
	}
	if !run.Started.IsZero() {
		took := "not finished"
		if !run.Finished.IsZero() {
			took = run.Finished.Sub(run.Started).Round(1e9).String()
		}
		f = append(f, fact{"started", run.Started.UTC().Format("2006-01-02 15:04:05 UTC")}, fact{"time taken", took})
	}
	var clients []string
	for _, c := range runClients(run) {
		clients = append(clients, c+": "+strings.Join(s.Clients[c], ", "))
	}
	items := make([]string, len(s.Items))
	for i, n := range s.Items {
		items[i] = strconv.Itoa(n)
	}
	conc := make([]string, len(s.Concurrency))
	for i, n := range s.Concurrency {
		conc[i] = strconv.Itoa(n)
	}
	f = append(f,
		fact{"spec: clients", strings.Join(clients, "; ")},
		fact{"spec: cells", fmt.Sprintf("%s; items %s; c %s", strings.Join(s.Calls, ", "), strings.Join(items, ", "), strings.Join(conc, ", "))},
		fact{"spec: load", fmt.Sprintf("%s; %d repeats, interleaved%s; clients as %s", loadString(s.Load), s.Rounds, primeString(s.Prime, s.PrimeMax), ranAs(run))},
		fact{"spec: resources", fmt.Sprintf("client cpuset %s, server cpuset %s; store %s; auth %s", orDash(s.ClientResources.CPUSet), orDash(s.ServerResources.CPUSet), orDash(s.Store), onOff(s.Auth != nil && *s.Auth))},
	)
	var ov []string
	for _, o := range s.Overrides {
		ov = append(ov, o.Match+": "+overrideString(o))
	}
	if len(ov) > 0 {
		f = append(f, fact{"spec: overrides", strings.Join(ov, "; ")})
	}
	return append(f, driftFacts(run)...)
}

// driftFacts is the run's figures along the run (analysis.RunDrifts), as
// matrix.md gives them; none for a run without two rounds a cell.
func driftFacts(run *results.Run) []fact {
	parts := runDriftStrings(run)
	if len(parts) == 0 {
		return nil
	}
	return []fact{{"figures along the run", strings.Join(parts, "; ") + " (each cell's last round on its first, ± 2 standard errors; docs/method.md, section 11)"}}
}

// versionFacts groups the versions by component: "go-client grpc" and
// "go-client thrift" make one line "go-client: grpc 1.85.0, thrift 0.22.0".
// ranAs says how the clients ran, from the repeats (a run made before workers
// has none marked), else from the spec.
func ranAs(run *results.Run) string {
	seen := false
	for _, c := range run.Cells {
		for _, r := range c.Repeats {
			if r.Worker {
				return "long-lived workers"
			}
			seen = true
		}
	}
	if seen {
		return "one process per run"
	}
	return workerWords(run.Spec.Worker)
}

func versionFacts(run *results.Run) []fact {
	keys := make([]string, 0, len(run.Versions))
	for k := range run.Versions {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var f []fact
	for _, k := range keys {
		comp, lib, ok := strings.Cut(k, " ")
		if !ok {
			comp, lib = k, ""
		}
		v := strings.TrimSpace(lib + " " + run.Versions[k])
		if n := len(f); n > 0 && f[n-1].Key == comp {
			f[n-1].Value += ", " + v
			continue
		}
		f = append(f, fact{comp, v})
	}
	return f
}
