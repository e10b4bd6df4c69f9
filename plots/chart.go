package plots

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"scaleplan/internal/atomicfile"
)

// DPI is the resolution of PNG output, dots per inch.
const DPI = 96

// Width and Height are the default size of a chart: 800 × 600 pixels at
// DPI.
const (
	Width  = 800 * vg.Inch / DPI
	Height = 600 * vg.Inch / DPI
)

// Font sizes, in points. At the default size a point is 4/3 of a pixel,
// so tick labels are 17 px high.
const (
	TitleSize  = 17 * vg.Length(1)
	LabelSize  = 15 * vg.Length(1)
	TickSize   = 13 * vg.Length(1)
	LegendSize = 13 * vg.Length(1)
	NoteSize   = 12 * vg.Length(1)
)

// ErrNoData is returned, wrapped, for a chart with nothing to draw.
var ErrNoData = errors.New("nothing to plot")

// Programmer errors.
const (
	badLength = "plots: slice lengths do not match"
)

// Chart is a drawn chart and the data series it shows.
type Chart struct {
	// Kind names the chart, e.g. "throughput"; it is the default base
	// name of its files.
	Kind string
	// Plot is the chart, ready to be saved or adjusted. Its legend is
	// drawn by its last plotter, inside the data area; Plot.Legend is
	// left empty.
	Plot *plot.Plot
	// Series are the data drawn, in drawing order, as the plotters
	// received them (after unit scaling).
	Series []Series
}

// Series is one set of data a chart draws.
type Series struct {
	// Name is the legend entry or, for what has none, what it is.
	Name string
	// Style says how it is drawn: "line", "dashed", "steps" (a
	// staircase), "points", "errorbars", "band", "bars", "spans" or
	// "labels".
	Style string
	// Cols names the columns of Rows, with their units.
	Cols []string
	// Rows hold the data, one row per point, bar or span.
	Rows [][]float64
	// Labels, when not nil, hold one text per row.
	Labels []string
}

// Text returns the chart's data as text: the title, the axes with their
// scales and ranges, and every series with its rows. Numbers have six
// significant digits. It is the form golden tests compare.
func (c *Chart) Text() string {
	var b strings.Builder
	c.WriteText(&b)
	return b.String()
}

// WriteText writes c.Text() to w.
func (c *Chart) WriteText(w io.Writer) error {
	var b strings.Builder
	p := c.Plot
	fmt.Fprintf(&b, "chart %s\ntitle %q\n", c.Kind, p.Title.Text)
	fmt.Fprintf(&b, "x %q %s [%s, %s]\n", p.X.Label.Text, scaleName(p.X.Scale), g6(p.X.Min), g6(p.X.Max))
	fmt.Fprintf(&b, "y %q %s [%s, %s]\n", p.Y.Label.Text, scaleName(p.Y.Scale), g6(p.Y.Min), g6(p.Y.Max))
	for _, s := range c.Series {
		fmt.Fprintf(&b, "\nseries %q %s\n", s.Name, s.Style)
		cols := s.Cols
		if s.Labels != nil {
			cols = append([]string{"label"}, cols...)
		}
		fmt.Fprintf(&b, "  %s\n", strings.Join(quoteAll(cols), " "))
		for i, r := range s.Rows {
			cells := make([]string, 0, len(r)+1)
			if s.Labels != nil {
				cells = append(cells, strconv.Quote(s.Labels[i]))
			}
			for _, v := range r {
				cells = append(cells, g6(v))
			}
			fmt.Fprintf(&b, "  %s\n", strings.Join(cells, " "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strconv.Quote(v)
	}
	return out
}

func scaleName(n plot.Normalizer) string {
	switch n.(type) {
	case plot.LogScale:
		return "log"
	case plot.LinearScale:
		return "linear"
	}
	return fmt.Sprintf("%T", n)
}

// g6 prints v with six significant digits.
func g6(v float64) string {
	if v == 0 {
		return "0" // not -0
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// Save writes p to path, w by h, as PNG (at DPI) or SVG, by the path's
// extension (.png or .svg, any case). The file is written atomically: a
// reader sees the old file or the new one, never part of one. Like
// plot.Plot.Draw, Save must not run on one plot from two goroutines at
// once.
func Save(p *plot.Plot, path string, w, h vg.Length) error {
	ext := strings.ToLower(filepath.Ext(path))
	var wt io.WriterTo
	switch ext {
	case ".png":
		c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(DPI), vgimg.UseBackgroundColor(color.White))
		drawPlot(p, draw.New(c))
		wt = vgimg.PngCanvas{Canvas: c}
	case ".svg":
		c := vgsvg.New(w, h)
		drawPlot(p, draw.New(c))
		wt = svgFonts{c}
	default:
		return fmt.Errorf("save %s: unsupported extension %q (want .png or .svg)", path, ext)
	}
	return atomicfile.Write(path, func(f io.Writer) error {
		_, err := wt.WriteTo(f)
		return err
	})
}

// svgFonts writes an SVG canvas naming, after Liberation Sans, the fonts
// with the same metrics (Arial, Helvetica) and the generic sans-serif, so
// that a viewer without Liberation shows sans-serif text of the width the
// layout assumed rather than its default serif.
type svgFonts struct{ c *vgsvg.Canvas }

func (s svgFonts) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	if _, err := s.c.WriteTo(&b); err != nil {
		return 0, err
	}
	out := bytes.ReplaceAll(b.Bytes(), []byte("font-family:Liberation Sans;"), []byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"))
	n, err := w.Write(out)
	return int64(n), err
}

// drawPlot draws p on c. It draws the label of a logarithmic axis itself:
// plot.Plot reserves room at the edges for the label as if it were centred
// on the linear midpoint of the axis range, which on a log axis sits near
// its end, and so shrinks the data area by tens of points. In its place
// the axis gets a blank label of the same height.
func drawPlot(p *plot.Plot, c draw.Canvas) {
	type moved struct {
		a    *plot.Axis
		text string
	}
	var ms []moved
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		if _, ok := a.Scale.(plot.LogScale); ok && a.Label.Text != "" && a.Label.Position == draw.PosCenter {
			ms = append(ms, moved{a, a.Label.Text})
			a.Label.Text = " "
		}
	}
	defer func() {
		for _, m := range ms {
			m.a.Label.Text = m.text
		}
	}()
	p.Draw(c)
	if len(ms) == 0 {
		return
	}
	da := p.DataCanvas(c)
	for _, m := range ms {
		sty := m.a.Label.TextStyle
		descent := sty.FontExtents().Descent
		if m.a == &p.X {
			c.FillText(sty, vg.Point{X: da.Center().X, Y: c.Min.Y + descent}, m.text)
			continue
		}
		h := sty.Height(m.text)
		sty.Rotation += math.Pi / 2
		c.FillText(sty, vg.Point{X: c.Min.X + h - descent, Y: da.Center().Y}, m.text)
	}
}

// WriteAll writes p to dir/base.png and dir/base.svg at Width × Height and
// returns the paths written.
func WriteAll(dir, base string, p *plot.Plot) ([]string, error) {
	var paths []string
	for _, ext := range []string{".png", ".svg"} {
		path := filepath.Join(dir, base+ext)
		if err := Save(p, path, Width, Height); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// Palette holds the colours of series in order (Okabe and Ito's
// colour-blind-safe set).
var Palette = []color.Color{
	rgb(0x00, 0x72, 0xB2), // blue
	rgb(0xD5, 0x5E, 0x00), // vermilion
	rgb(0x00, 0x9E, 0x73), // bluish green
	rgb(0xCC, 0x79, 0xA7), // reddish purple
	rgb(0xE6, 0x9F, 0x00), // orange
	rgb(0x56, 0xB4, 0xE9), // sky blue
	rgb(0x99, 0x88, 0x22), // olive
	rgb(0x00, 0x00, 0x00), // black
}

func rgb(r, g, b uint8) color.Color { return color.NRGBA{R: r, G: g, B: b, A: 0xff} }

// pick returns the ith colour of Palette, cycling.
func pick(i int) color.Color { return Palette[i%len(Palette)] }

// faded returns c with alpha a.
func faded(c color.Color, a uint8) color.Color {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	n.A = a
	return n
}

var (
	gray      = rgb(0x55, 0x55, 0x55)
	lightGray = rgb(0xAA, 0xAA, 0xAA)
	dashes    = []vg.Length{vg.Points(7), vg.Points(4)}
	dots      = []vg.Length{vg.Points(1.5), vg.Points(3)}
	sans      = font.Font{Typeface: "Liberation", Variant: "Sans"}
)

// newPlot returns a plot with the chart fonts, title and axis labels.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, TitleSize)
	p.Title.Padding = vg.Points(8)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, LabelSize)
		a.Tick.Label.Font = font.From(sans, TickSize)
		a.Label.Padding = vg.Points(4)
		a.LineStyle.Width = vg.Points(1)
	}
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	p.Legend.TextStyle.Font = font.From(sans, LegendSize)
	p.Legend.ThumbnailWidth = vg.Points(28)
	p.Legend.Padding = vg.Points(3)
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(6), -vg.Points(6)
	return p
}

// legendAt places the legend: top or bottom, left or right.
func legendAt(p *plot.Plot, top, left bool) {
	p.Legend.Top, p.Legend.Left = top, left
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(6), vg.Points(6)
	if !left {
		p.Legend.XOffs = -vg.Points(6)
	}
	if top {
		p.Legend.YOffs = -vg.Points(6)
	}
}

// headroom raises the top of the y axis so that a legend of n entries at
// the top of the plot sits above the data drawn so far.
func headroom(p *plot.Plot, n int) {
	frac := float64((vg.Length(n)*(LegendSize+p.Legend.Padding) + vg.Points(16)) / (0.78 * Height))
	frac = math.Min(frac, 0.6)
	if _, ok := p.Y.Scale.(plot.LogScale); ok {
		p.Y.Max = p.Y.Min * math.Pow(p.Y.Max/p.Y.Min, 1/(1-frac))
		return
	}
	p.Y.Max = p.Y.Min + (p.Y.Max-p.Y.Min)/(1-frac)
}

// lineStyle is a solid line of width 2 pt in c, dashed if d is not nil.
func lineStyle(c color.Color, d []vg.Length) draw.LineStyle {
	return draw.LineStyle{Color: c, Width: vg.Points(2), Dashes: d}
}

// builder adds plotters to a chart and records their data.
type builder struct {
	c *Chart
}

func newBuilder(kind, title, xLabel, yLabel string) *builder {
	return &builder{c: &Chart{Kind: kind, Plot: newPlot(title, xLabel, yLabel)}}
}

func (b *builder) record(name, style string, cols []string, rows [][]float64, labels []string) {
	b.c.Series = append(b.c.Series, Series{Name: name, Style: style, Cols: cols, Rows: rows, Labels: labels})
}

func xyRows(xy plotter.XYs) [][]float64 {
	rows := make([][]float64, len(xy))
	for i, p := range xy {
		rows[i] = []float64{p.X, p.Y}
	}
	return rows
}

// drawable returns the points of xy an axis can place: finite, and > 0
// on a log axis. Inputs are checked before they get here; what it drops
// are the results of overflow and underflow at the ends of float64.
func (b *builder) drawable(xy plotter.XYs) plotter.XYs {
	p := b.c.Plot
	_, xlog := p.X.Scale.(plot.LogScale)
	_, ylog := p.Y.Scale.(plot.LogScale)
	out := xy[:0:0]
	for _, q := range xy {
		if finite(q.X) && finite(q.Y) && (!xlog || q.X > 0) && (!ylog || q.Y > 0) {
			out = append(out, q)
		}
	}
	return out
}

// line draws xy as a line; legend is the legend entry ("" for none).
func (b *builder) line(name, legend string, cols []string, xy plotter.XYs, sty draw.LineStyle) *plotter.Line {
	xy = b.drawable(xy)
	l := &plotter.Line{XYs: xy, LineStyle: sty}
	b.c.Plot.Add(l)
	style := "line"
	if sty.Dashes != nil {
		style = "dashed"
	}
	b.record(name, style, cols, xyRows(xy), nil)
	if legend != "" {
		b.c.Plot.Legend.Add(legend, l)
	}
	return l
}

// points draws xy as glyphs; legend is the legend entry ("" for none).
func (b *builder) points(name, legend string, cols []string, xy plotter.XYs, gs draw.GlyphStyle) *plotter.Scatter {
	xy = b.drawable(xy)
	s := &plotter.Scatter{XYs: xy, GlyphStyle: gs}
	b.c.Plot.Add(s)
	b.record(name, "points", cols, xyRows(xy), nil)
	if legend != "" {
		b.c.Plot.Legend.Add(legend, s)
	}
	return s
}

// errorBars draws xy ± e vertically.
func (b *builder) errorBars(name string, cols []string, xy plotter.XYs, e []float64, c color.Color) {
	errs := make(plotter.YErrors, len(e))
	rows := make([][]float64, len(e))
	for i := range e {
		errs[i].Low, errs[i].High = e[i], e[i]
		rows[i] = []float64{xy[i].X, xy[i].Y, e[i]}
	}
	eb := &plotter.YErrorBars{
		XYs: xy, YErrors: errs,
		LineStyle: draw.LineStyle{Color: c, Width: vg.Points(1.5)},
		CapWidth:  vg.Points(8),
	}
	b.c.Plot.Add(eb)
	b.record(name, "errorbars", cols, rows, nil)
}

// band shades the x range [x0, x1] over the whole height of the data
// area.
func (b *builder) band(name string, x0, x1 float64, c color.Color) {
	b.c.Plot.Add(xBand{x0: x0, x1: x1, c: c})
	b.record(name, "band", []string{"from", "to"}, [][]float64{{x0, x1}}, nil)
}

// xBand is a plotter that fills an x range from the bottom of the data
// area to its top.
type xBand struct {
	x0, x1 float64
	c      color.Color
}

func (xb xBand) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x0 := max(trX(xb.x0), c.Min.X)
	x1 := min(trX(xb.x1), c.Max.X)
	if !(x1 > x0) {
		return
	}
	c.FillPolygon(xb.c, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x0, Y: c.Max.Y}, {X: x1, Y: c.Max.Y}, {X: x1, Y: c.Min.Y}})
}

// labels writes texts at xy, moved by off. The plot makes room for them
// at its edges.
func (b *builder) labels(name string, cols []string, xy plotter.XYs, texts []string, sty text.Style, off vg.Point) {
	b.c.Plot.Add(&plotter.Labels{XYs: xy, Labels: texts, TextStyle: repeatStyle(sty, len(xy)), Offset: off})
	b.record(name, "labels", cols, xyRows(xy), texts)
}

// inset writes texts at xy, moved by off, inside the data area: the plot
// makes no room for them.
func (b *builder) inset(name string, cols []string, xy plotter.XYs, texts []string, sty text.Style, off vg.Point) {
	b.c.Plot.Add(insetText{xy: xy, texts: texts, sty: sty, off: off})
	b.record(name, "labels", cols, xyRows(xy), texts)
}

// insetText is a plotter of texts without glyph boxes.
type insetText struct {
	xy    plotter.XYs
	texts []string
	sty   text.Style
	off   vg.Point
}

func (t insetText) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, xy := range t.xy {
		c.FillText(t.sty, vg.Point{X: trX(xy.X) + t.off.X, Y: trY(xy.Y) + t.off.Y}, t.texts[i])
	}
}

// finish moves the legend into the data area: plot.Plot draws its legend
// against the edges of the canvas less the axes, so that a legend on the
// right runs past the data where the last tick label needs room. The
// legend is drawn last, over the data.
func (b *builder) finish() *Chart {
	p := b.c.Plot
	clampAxis(&p.X)
	clampAxis(&p.Y)
	p.Add(legendPlotter{p.Legend})
	empty := plot.NewLegend()
	p.Legend = empty
	return b.c
}

// clampAxis keeps an axis range drawable when the data reach the ends of
// float64: finite, and > 0 on a log axis.
func clampAxis(a *plot.Axis) {
	const big = math.MaxFloat64 / 4 // so that Max − Min does not overflow
	lo := -big
	if _, ok := a.Scale.(plot.LogScale); ok {
		lo = 0x1p-1022 // the smallest normal float64
	}
	a.Min = math.Min(math.Max(a.Min, lo), big)
	a.Max = math.Min(math.Max(a.Max, lo), big)
	if math.IsNaN(a.Min) || math.IsNaN(a.Max) || !(a.Max > a.Min) {
		a.Min, a.Max = math.Max(lo, 1e-3), 1
		if a.Max <= a.Min {
			a.Max = 2 * a.Min
		}
	}
}

// legendPlotter draws a legend inside the data area.
type legendPlotter struct{ l plot.Legend }

func (lp legendPlotter) Plot(c draw.Canvas, _ *plot.Plot) { lp.l.Draw(c) }

// noteStyle is the text style of labels inside the data area.
func noteStyle(c color.Color, xa draw.XAlignment, ya draw.YAlignment) text.Style {
	return text.Style{
		Color: c, Font: font.From(sans, NoteSize), XAlign: xa, YAlign: ya,
		Handler: plot.DefaultTextHandler,
	}
}

func glyph(shape draw.GlyphDrawer, c color.Color, r vg.Length) draw.GlyphStyle {
	return draw.GlyphStyle{Shape: shape, Color: c, Radius: r}
}

// swatch is a legend thumbnail: a filled rectangle.
type swatch struct{ c color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	h := c.Max.Y - c.Min.Y
	r := vg.Rectangle{Min: vg.Point{X: c.Min.X, Y: c.Min.Y + h/6}, Max: vg.Point{X: c.Max.X, Y: c.Max.Y - h/6}}
	c.FillPolygon(s.c, []vg.Point{r.Min, {X: r.Min.X, Y: r.Max.Y}, r.Max, {X: r.Max.X, Y: r.Min.Y}})
}

// setRange sets an axis range, with a multiplicative margin on a log
// axis and an additive one (a fraction of the span) on a linear axis.
func setRange(a *plot.Axis, lo, hi, margin float64) {
	if _, ok := a.Scale.(plot.LogScale); ok {
		f := math.Exp(margin * (math.Log(hi) - math.Log(lo))) // hi/lo may overflow
		if hi == lo {
			f = 1.5
		}
		a.Min, a.Max = lo/f, hi*f
		if !(a.Min > 0) { // underflow at the ends of float64
			a.Min = lo
		}
		if math.IsInf(a.Max, 0) {
			a.Max = hi
		}
		return
	}
	d := (hi - lo) * margin
	if d == 0 || unresolved(lo, hi) {
		d = math.Max(math.Abs(hi)*0.1, 1)
	}
	a.Min, a.Max = lo-d, hi+d
}

// unresolved reports whether lo and hi differ by less than float64 can
// cut into ticks at their magnitude (a relative 1e-12): their values are
// one on a chart, and a step between them would not advance a tick's
// index.
func unresolved(lo, hi float64) bool {
	return hi-lo <= 1e-12*math.Max(math.Abs(lo), math.Abs(hi))
}

// logAxis makes a a log axis with ticks from t.
func logAxis(a *plot.Axis, t plot.Ticker) {
	a.Scale = plot.LogScale{}
	a.Tick.Marker = t
}

// pow2Ticks labels the powers of two in range (every other one, or fewer,
// when there would be more than twelve), the right ticks for batch sizes and
// device counts. A range without two powers of two gets logTicks.
type pow2Ticks struct{}

func (pow2Ticks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return nil
	}
	k0, k1 := int(math.Ceil(math.Log2(lo)-1e-9)), int(math.Floor(math.Log2(hi)+1e-9))
	if k1-k0 < 1 {
		return logTicks{}.Ticks(lo, hi)
	}
	step := (k1-k0)/11 + 1
	var ts []plot.Tick
	for k := k0; k <= k1; k++ {
		v := math.Ldexp(1, k)
		if k%step == 0 {
			ts = append(ts, plot.Tick{Value: v, Label: tickLabel(v)})
		} else {
			ts = append(ts, plot.Tick{Value: v})
		}
	}
	return ts
}

// logTicks labels 1, 2 and 5 times the powers of ten in range, or only
// the powers of ten (every few) when that would be more than nine labels,
// or every integer multiple of the power of ten when the range holds
// fewer than two of 1-2-5.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return nil
	}
	e0, e1 := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	in := func(v float64) bool { return v >= lo*(1-1e-9) && v <= hi*(1+1e-9) }
	var all, major []float64
	for e := e0; e <= e1; e++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow(10, float64(e))
			if in(v) {
				all = append(all, v)
			}
		}
	}
	label := func(v float64) bool {
		for _, m := range major {
			if m == v {
				return true
			}
		}
		return false
	}
	mant := func(v float64) int { return int(math.Round(v / math.Pow(10, math.Floor(math.Log10(v)+1e-9)))) }
	for _, v := range all {
		if m := mant(v); m == 1 || m == 2 || m == 5 {
			major = append(major, v)
		}
	}
	switch {
	case len(major) < 2:
		major = all
	case len(major) > 9:
		major = major[:0]
		decades := 0
		for _, v := range all {
			if mant(v) == 1 {
				decades++
			}
		}
		step := (decades-1)/9 + 1
		for _, v := range all {
			if mant(v) == 1 && int(math.Round(math.Log10(v)))%step == 0 {
				major = append(major, v)
			}
		}
	}
	ts := make([]plot.Tick, len(all))
	for i, v := range all {
		ts[i].Value = v
		if label(v) {
			ts[i].Label = tickLabel(v)
		}
	}
	return ts
}

// tickLabel prints a tick value without exponent between 10⁻⁴ and 10⁷.
func tickLabel(v float64) string {
	if a := math.Abs(v); a != 0 && (a < 1e-4 || a >= 1e7) {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// linTicks labels multiples of a step of 1, 2, 2.5 or 5 times a power of
// ten, chosen to give closest to six labels (four to nine; the smaller step on a tie), with four or
// five unlabelled ticks between.
type linTicks struct{}

func (linTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || !finite(lo) || !finite(hi) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	if unresolved(lo, hi) {
		m := lo + (hi-lo)/2
		return []plot.Tick{{Value: m, Label: tickLabel(m)}}
	}
	count := func(step float64) int { return int(math.Floor(hi/step+1e-9) - math.Ceil(lo/step-1e-9) + 1) }
	e := math.Floor(math.Log10((hi - lo) / 6))
	var step, sub float64
	best := math.Inf(1)
	for _, ee := range []float64{e - 1, e, e + 1} {
		for _, m := range []float64{1, 2, 2.5, 5} {
			st := m * math.Pow(10, ee)
			n := count(st)
			if d := math.Abs(float64(n) - 6); n >= 4 && n <= 9 && d < best {
				best, step, sub = d, st, st/5
				if m == 2 {
					sub = st / 4
				}
			}
		}
	}
	if step == 0 {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	var ts []plot.Tick
	for i := math.Ceil(lo/sub - 1e-9); i*sub <= hi*(1+1e-12)+1e-12*math.Abs(sub); i++ {
		v := roundTo(i*sub, 12)
		t := plot.Tick{Value: v}
		if r := v / step; math.Abs(r-math.Round(r)) < 1e-6 {
			if math.Abs(v) < 1e-9*step {
				v = 0
			}
			t.Label = tickLabel(v)
		}
		ts = append(ts, t)
	}
	return ts
}

// roundTo rounds v to n significant digits, clearing floating-point dust
// from tick values such as 0.30000000000000004.
func roundTo(v float64, n int) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', n, 64), 64)
	return r
}

// timeUnit returns the unit seconds up to max are best shown in and its
// size in seconds: us below 1 ms, ms below 1 s, s below 2 min, min below
// 2 h, else h.
func timeUnit(max float64) (name string, size float64) {
	switch {
	case max < 1e-3:
		return "µs", 1e-6
	case max < 1:
		return "ms", 1e-3
	case max < 120:
		return "s", 1
	case max < 7200:
		return "min", 60
	}
	return "h", 3600
}

// finite reports whether v is a finite number.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// minMax returns the least and greatest of v; +Inf, -Inf when empty.
func minMax(v ...float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range v {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

// geomSpace returns n points from lo to hi evenly spaced on a log scale.
func geomSpace(lo, hi float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = lo * math.Pow(hi/lo, float64(i)/float64(n-1))
	}
	out[n-1] = hi
	return out
}
