package costrender

import (
	"bytes"
	"fmt"
	"html/template"
	"regexp"
	"strings"

	"github.com/rpcbed/rpcbed/internal/cost"
	"github.com/rpcbed/rpcbed/internal/cost/coststats"
)

// HTMLSection is the cost section of a run's index.html: the run's setup, the
// per-call tables of both sides, PHP over Go, the counts against the matrix's
// CPU per call (when t is given) and every plot inline. from is the cost run's
// directory relative to the page.
func HTMLSection(r *cost.Result, t cost.Timed, from string) (template.HTML, error) {
	plots, err := Plots(r, t)
	if err != nil {
		return "", err
	}
	type plotView struct {
		Name, Caption string
		SVG           template.HTML
	}
	type row struct {
		cost.CellRun
		Layers []string
	}
	data := struct {
		R         *cost.Result
		From      string
		LeavesOut string
		Sides     []struct {
			Title string
			Rows  []row
		}
		Ratios  []coststats.Ratio
		Cmp     *coststats.Comparison
		Out     []coststats.TimedPoint
		Plots   []plotView
		Skipped []cost.CellRun
		Layers  []string
	}{R: r, From: from, LeavesOut: LeavesOut, Ratios: coststats.PHPOverGo(r)}
	for _, l := range cost.LayerOrder {
		data.Layers = append(data.Layers, cost.LayerNames[l])
	}
	for _, side := range []string{cost.SideClient, cost.SideServer} {
		s := struct {
			Title string
			Rows  []row
		}{Title: "Client side: the client under callgrind, the server native"}
		if side == cost.SideServer {
			s.Title = "Server side: go-server under callgrind, the client native"
		}
		for _, c := range r.Cells {
			if c.Side != side || c.Status != cost.StatusOK {
				continue
			}
			rw := row{CellRun: c}
			for _, l := range cost.LayerOrder {
				rw.Layers = append(rw.Layers, pct(c.PerCall.Layers[l], c.PerCall.Ir))
			}
			s.Rows = append(s.Rows, rw)
		}
		data.Sides = append(data.Sides, s)
	}
	for _, c := range r.Cells {
		if c.Status != cost.StatusOK {
			data.Skipped = append(data.Skipped, c)
		}
	}
	if t != nil {
		cmp := coststats.CompareTimed(r, t)
		data.Cmp = &cmp
		data.Out = cmp.Outliers(8)
	}
	for _, p := range plots {
		data.Plots = append(data.Plots, plotView{p.Name, p.Caption, template.HTML(svgProlog.ReplaceAll(p.SVG, nil))})
	}
	var b bytes.Buffer
	if err := sectionTmpl.Execute(&b, data); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil
}

var svgProlog = regexp.MustCompile(`(?s)^\s*(<\?xml[^>]*\?>\s*)?(<!--.*?-->\s*)?`)

var sectionTmpl = template.Must(template.New("cost").Funcs(template.FuncMap{
	"n":    fig,
	"f1":   fig1,
	"f2":   func(v float64) string { return fmt.Sprintf("%.2f", v) },
	"join": strings.Join,
}).Parse(`<h2>Cost per call: instructions, estimated cycles, system calls, bytes</h2>
<p class="note">From <a href="{{.From}}/cost.md">{{.From}}/cost.md</a> (<a href="{{.From}}/cost.csv">csv</a>, <a href="{{.From}}/cost.json">json</a>): each cell at c=1 run twice under valgrind's callgrind, a short and a long run; per call = their difference over the difference in calls (docs/cost.md). {{.LeavesOut}}</p>
<table class="facts"><tbody>
<tr><th>valgrind</th><td>{{.R.Setup.Valgrind}} {{join .R.Setup.ValgrindArgs " "}}</td></tr>
<tr><th>guest CPU</th><td>{{.R.Setup.GuestCPU}} (valgrind's CPUID; host: {{.R.Setup.HostCPU}})</td></tr>
<tr><th>environment</th><td>{{join .R.Setup.Env " "}}; {{.R.Setup.Pinning}}</td></tr>
<tr><th>load average</th><td>{{.R.Setup.LoadBefore}} before, {{.R.Setup.LoadAfter}} after: counts do not move with the machine's load, the run may have shared the machine</td></tr>
<tr><th>run</th><td>{{.R.Started}}, {{printf "%.0f" .R.Seconds}} s</td></tr>
</tbody></table>
{{range .Sides}}{{if .Rows}}<h3>{{.Title}}</h3>
<table class="cells"><thead><tr><th>cell</th><th>instructions</th><th>est. cycles</th><th>L1 misses</th><th>LL misses</th><th>syscalls</th><th>bytes in</th><th>bytes out</th><th>allocs</th>{{range $.Layers}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr><td>{{.Cell}}</td><td>{{n .PerCall.Ir}}</td><td>{{n .PerCall.Cycles}}</td><td>{{n .PerCall.L1Misses}}</td><td>{{n .PerCall.LLMisses}}</td><td>{{f1 .PerCall.Syscalls}}</td><td>{{n .PerCall.BytesIn}}</td><td>{{n .PerCall.BytesOut}}</td><td>{{f1 .Allocs}}</td>{{range .Layers}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table>{{end}}{{end}}
{{if .Ratios}}<h3>PHP's client cost as a multiple of Go's</h3>
<table class="cells"><thead><tr><th>client</th><th>protocol</th><th>items</th><th>instructions</th><th>est. cycles</th></tr></thead><tbody>
{{range .Ratios}}<tr><td>{{.Client}}</td><td>{{.Protocol}}</td><td>{{.Items}}</td><td>{{f2 .Instructions}}x</td><td>{{f2 .Cycles}}x</td></tr>
{{end}}</tbody></table>{{end}}
{{if .Cmp}}<h3>Estimated cycles against the matrix's CPU per call</h3>
<p>Spearman's rank correlation over {{len .Cmp.Points}} cells and sides: <b>{{f2 .Cmp.Spearman}}</b>. Where they disagree most (estimated cycles per ns of measured CPU, furthest from the median):</p>
<table class="cells"><thead><tr><th>cell</th><th>side</th><th>est. cycles</th><th>CPU µs/call</th><th>cycles per CPU ns</th><th>syscalls</th></tr></thead><tbody>
{{range .Out}}<tr><td>{{.Cell}}</td><td>{{.Side}}</td><td>{{n .Cycles}}</td><td>{{f1 .CPUus}}</td><td>{{f2 .PerNs}}</td><td>{{f1 .Syscalls}}</td></tr>
{{end}}</tbody></table>{{end}}
<div class="plots">{{range .Plots}}<figure id="plot-cost-{{.Name}}" data-cost-plot="{{.Name}}">
{{.SVG}}
<figcaption><b>{{.Name}}</b>: {{.Caption}}</figcaption>
</figure>
{{end}}</div>
{{if .Skipped}}<h3>Not measured or failed</h3>
<table class="cells"><thead><tr><th>cell</th><th>side</th><th>status</th><th>why</th></tr></thead><tbody>
{{range .Skipped}}<tr><td>{{.Cell}}</td><td>{{.Side}}</td><td>{{.Status}}</td><td>{{.Error}}</td></tr>
{{end}}</tbody></table>{{end}}`))
