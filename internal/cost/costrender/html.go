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
	data := struct {
		R         *cost.Result
		From      string
		Guide     string
		Summary   []string
		Columns   []string
		Sides     []SideView
		Mark      string
		Ratios    []coststats.Ratio
		Cmp       *coststats.Comparison
		Intro     string
		Low, High []coststats.TimedPoint
		Beyond    string
		Plots     []plotView
		Skipped   []cost.CellRun
		TLSIntro  string
		TLS       []TLSRow
	}{TLSIntro: TLSIntro, TLS: TLSRows(r), R: r, From: from, Guide: ReadingGuide, Summary: Summary(r, t), Columns: Columns(r), Sides: Sides(r),
		Mark: FlaggedMark, Ratios: coststats.PHPOverGo(r)}
	for _, c := range r.Cells {
		if c.Status != cost.StatusOK {
			data.Skipped = append(data.Skipped, c)
		}
	}
	if t != nil {
		cmp := coststats.CompareTimed(r, t)
		data.Cmp = &cmp
		data.Intro = TimedIntro(cmp)
		data.Low, data.High = cmp.Ends(4)
		if b := Beyond(cmp); len(b) > 0 {
			data.Beyond = BeyondNote(b)
		}
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
	"n":     fig,
	"f1":    fig1,
	"f2":    func(v float64) string { return fmt.Sprintf("%.2f", v) },
	"join":  strings.Join,
	"perNs": perNs,
	"share": share,
}).Parse(`<h2>Cost per call: instructions, estimated cycles, system calls, bytes</h2>
<ul class="summary">{{range .Summary}}<li>{{.}}</li>{{end}}</ul>
<p class="note"><b>How to read it.</b> {{.Guide}}</p>
<p class="note">From <a href="{{.From}}/cost.md">{{.From}}/cost.md</a> (<a href="{{.From}}/cost.csv">csv</a>, <a href="{{.From}}/cost.json">json</a>): each cell at c=1 run twice under valgrind's callgrind, a short and a long run; per call = their difference over the difference in calls (docs/cost.md).</p>
<table class="facts"><tbody>
<tr><th>valgrind</th><td>{{.R.Setup.Valgrind}} {{join .R.Setup.ValgrindArgs " "}}</td></tr>
<tr><th>guest CPU</th><td>{{.R.Setup.GuestCPU}} (valgrind's CPUID; host: {{.R.Setup.HostCPU}})</td></tr>
<tr><th>environment</th><td>{{join .R.Setup.Env " "}}; {{.R.Setup.Pinning}}</td></tr>
<tr><th>load average</th><td>{{.R.Setup.LoadBefore}} before, {{.R.Setup.LoadAfter}} after: counts do not move with the machine's load, the run may have shared the machine</td></tr>
<tr><th>run</th><td>{{.R.Started}}, {{printf "%.0f" .R.Seconds}} s</td></tr>
</tbody></table>
{{range .Sides}}{{if .Rows}}<h3>{{.Title}}</h3>
<table class="cells"><thead><tr><th>cell</th>{{range $.Columns}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr{{if .Flag}} class="flagged" title="{{.Flag}}"{{end}}><td>{{.Name}}</td>{{range .Figures}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table>{{if .Flagged}}
<p class="note">Flagged ({{$.Mark}}): {{range $i, $f := .Flagged}}{{if $i}}; {{end}}{{$f.Cell}}: {{$f.Flag}}{{end}}.</p>{{end}}{{end}}{{end}}
{{if .TLS}}<h3>What TLS costs in instructions</h3>
<p>{{.TLSIntro}}</p>
<table class="cells"><thead><tr><th>cell</th><th>side</th><th>instructions, TLS</th><th>plaintext</th><th>TLS / plaintext</th><th>crypto per call</th><th>crypto share</th><th>handshake per run</th></tr></thead><tbody>
{{range .TLS}}<tr><td>{{.Cell}}</td><td>{{.Side}}</td><td>{{n .TLS}}</td><td>{{n .Plain}}</td><td>{{f2 .Ratio}}x</td><td>{{n .Crypto}}</td><td>{{share .CryptoShare}}</td><td>{{n .Handshake}}</td></tr>
{{end}}</tbody></table>
{{end}}{{if .Ratios}}<h3>PHP's client cost as a multiple of Go's</h3>
<table class="cells"><thead><tr><th>client</th><th>protocol</th><th>items</th><th>instructions</th><th>est. cycles</th></tr></thead><tbody>
{{range .Ratios}}<tr><td>{{.Client}}</td><td>{{.Protocol}}</td><td>{{.Items}}</td><td>{{f2 .Instructions}}x</td><td>{{f2 .Cycles}}x</td></tr>
{{end}}</tbody></table>{{end}}
{{if .Cmp}}<h3>Counts against the matrix's CPU per call</h3>
<p>{{.Intro}}</p>
<table class="cells"><thead><tr><th>cell</th><th>side</th><th>instructions</th><th>est. cycles</th><th>CPU µs/call</th><th>instructions per CPU ns</th><th>syscalls</th></tr></thead><tbody>
{{range .Low}}<tr><td>{{.Cell}}</td><td>{{.Side}}</td><td>{{n .Instructions}}</td><td>{{n .Cycles}}</td><td>{{f1 .CPUus}}</td><td>{{perNs .}}</td><td>{{f1 .Syscalls}}</td></tr>
{{end}}{{if .Low}}<tr><td>…</td><td></td><td></td><td></td><td></td><td></td><td></td></tr>
{{end}}{{range .High}}<tr><td>{{.Cell}}</td><td>{{.Side}}</td><td>{{n .Instructions}}</td><td>{{n .Cycles}}</td><td>{{f1 .CPUus}}</td><td>{{perNs .}}</td><td>{{f1 .Syscalls}}</td></tr>
{{end}}</tbody></table>{{if .Beyond}}
<p class="note">{{.Beyond}}</p>{{end}}{{end}}
<div class="plots">{{range .Plots}}<figure id="plot-cost-{{.Name}}" data-cost-plot="{{.Name}}">
{{.SVG}}
<figcaption><b>{{.Name}}</b>: {{.Caption}}</figcaption>
</figure>
{{end}}</div>
{{if .Skipped}}<h3>Not measured or failed</h3>
<table class="cells"><thead><tr><th>cell</th><th>side</th><th>status</th><th>why</th></tr></thead><tbody>
{{range .Skipped}}<tr><td>{{.Cell}}</td><td>{{.Side}}</td><td>{{.Status}}</td><td>{{.Error}}</td></tr>
{{end}}</tbody></table>{{end}}`))
