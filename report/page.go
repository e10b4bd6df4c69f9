package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"scaleplan/plots"
)

// Page is what the report's HTML template fills in: plain data, every
// figure already drawn.
type Page struct {
	// Name, Description and Source are the scenario's.
	Name, Description, Source string
	// Summary is one sentence on the largest configuration.
	Summary string
	// Predictions has one row per configuration.
	Predictions *Table
	// Notes are printed under the prediction table.
	Notes []string
	// Shares is the breakdown of each configuration's step, in percent.
	Shares *Table
	// Breakdown is the breakdown chart, nil if none.
	Breakdown *Figure
	// Charts are time to train, efficiency and timeline, those drawn.
	Charts []*Figure
	// Left are the charts left out, and why.
	Left []string
	// Inputs are the scenario's inputs, resolved, in groups.
	Inputs []InputGroup
}

// Table is a table of the page: a header and rows of cells.
type Table struct {
	Header []string
	Rows   [][]string
}

// Figure is one chart as inline SVG.
type Figure struct {
	// ID is the chart's kind, the figure's id after "chart-".
	ID string
	// Title is the chart's title; Caption is printed under it.
	Title, Caption string
	// SVG is the drawing, an <svg> element.
	SVG template.HTML
}

// InputGroup is one group of the inputs' definition table.
type InputGroup struct {
	Name string
	Rows [][2]string // term, definition
}

// captions are the figures' captions, by chart kind.
var captions = map[string]string{
	Scaling:    "Time to train against device count, log–log; published times as squares where the scenario has them, and ideal linear scaling from the smallest count dashed.",
	Efficiency: "Scaling efficiency against device count: 100 % is ideal linear scaling from the smallest count.",
	Breakdown:  "The steady-state step of each configuration split into its parts, which add up to the step time printed above each bar.",
	Timeline:   "The last simulated step of the last configuration: one row per traced device, the gradient exchange and node 0's input pipeline; gaps are waits.",
}

// New returns the page of run, simulated with steps optimizer steps per
// configuration: its tables, notes and inputs, and every chart the run
// supports (AllCharts) drawn as SVG. p, which may be nil, counts one per
// chart.
func New(run *Run, steps int, p Progress) (*Page, error) {
	r := run.R
	pg := &Page{Name: r.Name, Description: r.Description, Source: r.Source}
	pg.Predictions, pg.Notes = predictions(run)
	pg.Shares = shares(run)
	pg.Summary = summary(run)
	pg.Notes = append(pg.Notes, fmt.Sprintf("Each configuration is %d simulated optimizer steps; the step time is the mean of the steps after the first, "+
		"which fills the prefetch queue. Time to train = steps × step time + staging + start-up + evaluation, with steps = %s at the global batch. "+
		"Efficiency = T(n0)·n0 / (T(n)·n) against the smallest device count n0 at the same batch per device.", steps, recipeStepsRule(r)))

	dir, err := os.MkdirTemp("", "scaleplan-report-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	charts, notes, err := AllCharts([]*Run{run})
	if err != nil {
		return nil, err
	}
	pg.Left = notes
	for _, ch := range charts {
		svg, err := inlineSVG(ch, filepath.Join(dir, ch.Kind+".svg"))
		if err != nil {
			return nil, err
		}
		f := &Figure{ID: ch.Kind, Title: ch.Plot.Title.Text, Caption: captions[ch.Kind], SVG: svg}
		if ch.Kind == Breakdown {
			pg.Breakdown = f
		} else {
			pg.Charts = append(pg.Charts, f)
		}
		add(p, 1)
	}
	pg.Inputs = inputs(run)
	return pg, nil
}

// Write writes the page as one self-contained HTML file to w.
func (pg *Page) Write(w io.Writer) error {
	return pageTemplate.Execute(w, pg)
}

// Render returns the page of run as HTML: New, then Write. p, which may
// be nil, counts one per chart.
func Render(run *Run, steps int, p Progress) ([]byte, error) {
	pg, err := New(run, steps, p)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := pg.Write(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// svgOpen matches the size attributes of the opening tag vgsvg writes.
var svgOpen = regexp.MustCompile(`^<svg width="([0-9.]+)pt" height="([0-9.]+)pt"`)

// inlineSVG returns ch drawn as SVG to put inside HTML: without the XML
// prologue, sized in pixels (a point is 4/3 of a pixel), labelled by its
// title. path is a scratch file: plots.Save draws only to files.
func inlineSVG(ch *plots.Chart, path string) (template.HTML, error) {
	if err := plots.Save(ch.Plot, path, plots.Width, plots.Height); err != nil {
		return "", err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	i := bytes.Index(data, []byte("<svg"))
	if i < 0 {
		return "", fmt.Errorf("%s chart: no <svg> element in the drawing", ch.Kind)
	}
	data = data[i:]
	m := svgOpen.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("%s chart: unexpected <svg> tag %.60q", ch.Kind, data)
	}
	w, _ := strconv.ParseFloat(string(m[1]), 64)
	h, _ := strconv.ParseFloat(string(m[2]), 64)
	tag := fmt.Sprintf(`<svg width="%d" height="%d" role="img" aria-label="%s" class="chart"`,
		int(math.Round(w*4/3)), int(math.Round(h*4/3)), template.HTMLEscapeString(ch.Plot.Title.Text))
	return template.HTML(tag + string(data[len(m[0]):])), nil
}

// numericCell reports whether a table cell holds a number (right-aligned).
func numericCell(s string) bool {
	s = strings.TrimLeft(s, "+-")
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != ',' }) < 0
}

// pageTemplate is the page: no script, no external file, no web font;
// the charts are inline SVG.
var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{"numericCell": numericCell}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="scaleplan report">
<title>scaleplan report: {{.Name}}</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; color: #222; max-width: 1150px; margin: 0 auto; padding: 1em 1.5em 3em; line-height: 1.45; }
h1 { font-size: 1.7em; margin-bottom: 0.2em; }
h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; }
h3 { font-size: 1.05em; margin: 1.2em 0 0.3em; }
nav a { margin-right: 1em; }
.lead { font-size: 1.1em; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { padding: 0.25em 0.45em; border-bottom: 1px solid #ddd; vertical-align: top; }
thead th { border-bottom: 2px solid #999; text-align: right; }
thead th:first-child { text-align: left; }
td.n, td.t { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.defs th { text-align: left; font-weight: normal; color: #555; white-space: nowrap; }
table.defs th[colspan] { color: #222; font-weight: bold; padding-top: 0.9em; border-bottom: 2px solid #999; }
figure { margin: 1.5em 0; }
figure svg { display: block; max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; max-width: 800px; }
.notes { color: #444; font-size: 0.9em; }
footer { margin-top: 3em; color: #777; font-size: 0.85em; }
</style>
</head>
<body>
<header>
<h1>{{.Name}}</h1>
{{if .Description}}<p>{{.Description}}</p>{{end}}
{{if .Source}}<p class="notes">Source: {{.Source}}</p>{{end}}
<p class="lead">{{.Summary}}</p>
<nav><a href="#predictions">Predictions</a><a href="#breakdown">Breakdown</a><a href="#charts">Charts</a><a href="#inputs">Inputs</a></nav>
</header>

<section id="predictions">
<h2>Predictions</h2>
<div class="scroll"><table>
<thead><tr>{{range .Predictions.Header}}<th scope="col">{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Predictions.Rows}}<tr>{{range .}}<td class="{{if numericCell .}}n{{else}}t{{end}}">{{.}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
<ul class="notes">
{{range .Notes}}<li>{{.}}</li>
{{end}}</ul>
</section>

<section id="breakdown">
<h2>Where the step time goes</h2>
<div class="scroll"><table>
<thead><tr>{{range .Shares.Header}}<th scope="col">{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Shares.Rows}}<tr>{{range .}}<td class="n">{{.}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
{{with .Breakdown}}<figure id="chart-{{.ID}}">
{{.SVG}}
<figcaption>{{.Caption}}</figcaption>
</figure>{{end}}
</section>

<section id="charts">
<h2>Charts</h2>
{{range .Charts}}<figure id="chart-{{.ID}}">
{{.SVG}}
<figcaption>{{.Caption}}</figcaption>
</figure>
{{end}}{{range .Left}}<p class="notes">Not drawn: {{.}}</p>
{{end}}</section>

<section id="inputs">
<h2>Inputs</h2>
<table class="defs">
{{range .Inputs}}<tr><th colspan="2" scope="rowgroup">{{.Name}}</th></tr>
{{range .Rows}}<tr><th scope="row">{{index . 0}}</th><td>{{index . 1}}</td></tr>
{{end}}{{end}}</table>
</section>

<footer>Written by <code>scaleplan report</code>. The file is self-contained: the charts are inline SVG, and it loads nothing else.</footer>
</body>
</html>
`))
