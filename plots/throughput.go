package plots

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"scaleplan/fit"
	"scaleplan/fit/logs"
)

// ThroughputPoint is one measured throughput of chart 1: the mean of the
// repeats at one batch, and their spread.
type ThroughputPoint struct {
	Batch      float64 // global batch, samples per step
	Throughput float64 // samples per second over the device group; the mean of the repeats
	Std        float64 // standard deviation, samples/s; 0 draws no error bar
	Repeats    int     // measurements averaged; 0 means 1
	Excluded   bool    // left out of the fit: the law does not explain it
}

// ThroughputGroup is one series of chart 1: the measurements of one device
// group (one device count) and the law fitted to them.
type ThroughputGroup struct {
	Name   string             // legend entry, e.g. "2 devices"
	Points []ThroughputPoint  // any order
	OOM    []float64          // global batches that ran out of device memory
	Fit    *fit.ThroughputFit // nil draws the points alone
	// Predicted is a prediction to set beside the points (validate
	// --measured: the simulator's, from the catalogue alone), any order,
	// drawn as a dotted line through its batches; only Batch and
	// Throughput count. Nil draws none.
	Predicted []ThroughputPoint
}

// ThroughputData is the input of chart 1.
type ThroughputData struct {
	// Subject says what was measured, e.g. "resnet50 V100 fp32"; it ends
	// the title.
	Subject string
	Groups  []ThroughputGroup
	// PredictedLabel is the legend of the groups' Predicted lines.
	// Default "predicted".
	PredictedLabel string
}

// Throughput draws chart 1, throughput against global batch: for each
// group its measured points with error bars (± one standard deviation),
// a prediction to compare them with as a dotted line, the fitted law
//
//	v = b / (b/v0 + t)
//
// as a line and its asymptote v0 dashed, points the fit excluded as
// crosses and batches that ran out of memory as triangles on the batch
// axis. The batch axis is logarithmic.
//
// Throughput returns an error wrapping ErrNoData when no group has a
// point, and an error naming the group and point for a batch or
// throughput that is not a finite number > 0 or a negative spread.
func Throughput(d ThroughputData) (*Chart, error) {
	var bs, top []float64
	for _, g := range d.Groups {
		for i, p := range g.Points {
			if !(p.Batch > 0) || !finite(p.Batch) || !(p.Throughput > 0) || !finite(p.Throughput) || !(p.Std >= 0) || !finite(p.Std) {
				return nil, fmt.Errorf("throughput chart: group %q point %d: batch %v, throughput %v, std %v: want finite numbers, batch and throughput > 0, std >= 0",
					g.Name, i+1, p.Batch, p.Throughput, p.Std)
			}
			bs = append(bs, p.Batch)
			top = append(top, p.Throughput+p.Std)
		}
		for _, b := range g.OOM {
			if !(b > 0) || !finite(b) {
				return nil, fmt.Errorf("throughput chart: group %q: out-of-memory batch %v: want a finite number > 0", g.Name, b)
			}
			bs = append(bs, b)
		}
		for i, p := range g.Predicted {
			if !(p.Batch > 0) || !finite(p.Batch) || !(p.Throughput > 0) || !finite(p.Throughput) {
				return nil, fmt.Errorf("throughput chart: group %q predicted point %d: batch %v, throughput %v: want finite numbers > 0",
					g.Name, i+1, p.Batch, p.Throughput)
			}
			bs = append(bs, p.Batch)
			top = append(top, p.Throughput)
		}
	}
	if len(top) == 0 {
		return nil, fmt.Errorf("throughput chart: %w: no measured point", ErrNoData)
	}
	bd := newBuilder("throughput", withSubject("Throughput vs batch size", d.Subject),
		"global batch (samples per step)", "throughput (samples/s)")
	p := bd.c.Plot
	logAxis(&p.X, pow2Ticks{})
	p.Y.Tick.Marker = linTicks{}
	xlo, xhi := minMax(bs...)
	setRange(&p.X, xlo, xhi, 0.06)
	xlo, xhi = p.X.Min, p.X.Max
	_, vmax := minMax(top...)
	ymax := vmax
	for _, g := range d.Groups {
		if g.Fit != nil && finite(g.Fit.V0) && g.Fit.V0 > 0 && !g.Fit.V0Unbounded {
			ymax = math.Max(ymax, math.Min(g.Fit.V0, 1.5*vmax))
		}
	}
	p.Y.Min, p.Y.Max = 0, 1.05*ymax
	legendAt(p, true, true)

	cols := []string{"batch", "samples/s"}
	anyFit, anyExcluded, anyOOM, anyPredicted := false, false, false, false
	n := 0 // legend entries
	for i, g := range d.Groups {
		c := pick(i)
		var thumbs []plot.Thumbnailer
		if f := g.Fit; f != nil && f.V0 > 0 && finite(f.V0) && float64(f.T) >= 0 && finite(float64(f.T)) {
			anyFit = true
			xs := geomSpace(xlo, xhi, 60)
			xy := make(plotter.XYs, len(xs))
			for j, b := range xs {
				xy[j] = plotter.XY{X: b, Y: f.Predict(b)}
			}
			l := bd.line(g.Name+" fit", "", cols, xy, lineStyle(c, nil))
			thumbs = append(thumbs, l)
			if !f.V0Unbounded {
				bd.line(g.Name+" v0", "", cols, plotter.XYs{{X: xlo, Y: f.V0}, {X: xhi, Y: f.V0}}, lineStyle(c, dashes))
			}
		}
		if len(g.Predicted) > 0 {
			anyPredicted = true
			pred := slices.Clone(g.Predicted)
			slices.SortStableFunc(pred, func(a, b ThroughputPoint) int { return cmp.Compare(a.Batch, b.Batch) })
			xy := make(plotter.XYs, len(pred))
			for j, pt := range pred {
				xy[j] = plotter.XY{X: pt.Batch, Y: pt.Throughput}
			}
			thumbs = append(thumbs, bd.line(g.Name+" predicted", "", cols, xy, lineStyle(c, dots)))
		}
		pts := slices.Clone(g.Points)
		slices.SortStableFunc(pts, func(a, b ThroughputPoint) int { return cmp.Compare(a.Batch, b.Batch) })
		var kept, excl plotter.XYs
		var ekept []float64
		for _, pt := range pts {
			xy := plotter.XY{X: pt.Batch, Y: pt.Throughput}
			if pt.Excluded {
				excl = append(excl, xy)
				continue
			}
			kept = append(kept, xy)
			ekept = append(ekept, pt.Std)
		}
		if len(kept) > 0 {
			s := bd.points(g.Name+" measured", "", cols, kept, glyph(draw.CircleGlyph{}, c, vg.Points(4)))
			thumbs = append(thumbs, s)
			var exy plotter.XYs
			var e []float64
			for j, v := range ekept {
				if v > 0 {
					exy, e = append(exy, kept[j]), append(e, v)
				}
			}
			if len(e) > 0 {
				bd.errorBars(g.Name+" spread", []string{"batch", "samples/s", "± samples/s"}, exy, e, c)
			}
		}
		if len(excl) > 0 {
			anyExcluded = true
			bd.points(g.Name+" excluded", "", cols, excl, glyph(draw.CrossGlyph{}, c, vg.Points(6)))
		}
		if len(g.OOM) > 0 {
			anyOOM = true
			oom := slices.Sorted(slices.Values(g.OOM))
			xy := make(plotter.XYs, len(oom))
			for j, b := range oom {
				xy[j] = plotter.XY{X: b, Y: 0.025 * p.Y.Max}
			}
			bd.points(g.Name+" out of memory", "", cols, xy, glyph(draw.PyramidGlyph{}, c, vg.Points(5)))
		}
		if len(thumbs) > 0 {
			p.Legend.Add(groupLegend(g), thumbs...)
			n++
		}
	}
	if anyFit {
		p.Legend.Add("v0, the asymptote", &plotter.Line{LineStyle: lineStyle(gray, dashes)})
	}
	if anyExcluded {
		p.Legend.Add("excluded from the fit", &plotter.Scatter{GlyphStyle: glyph(draw.CrossGlyph{}, gray, vg.Points(6))})
	}
	if anyOOM {
		p.Legend.Add("out of memory", &plotter.Scatter{GlyphStyle: glyph(draw.PyramidGlyph{}, gray, vg.Points(5))})
	}
	if anyPredicted {
		p.Legend.Add(cmp.Or(d.PredictedLabel, "predicted"), &plotter.Line{LineStyle: lineStyle(gray, dots)})
	}
	for _, b := range []bool{anyFit, anyExcluded, anyOOM, anyPredicted} {
		if b {
			n++
		}
	}
	headroom(p, n)
	return bd.finish(), nil
}

// groupLegend is "name: v0 = X samples/s, t = Y" or the name alone.
func groupLegend(g ThroughputGroup) string {
	if f := g.Fit; f != nil {
		if f.V0Unbounded {
			return fmt.Sprintf("%s: v0 unbounded, t = %v", g.Name, f.T)
		}
		return fmt.Sprintf("%s: v0 = %s samples/s, t = %v", g.Name, sig4(f.V0), f.T)
	}
	return g.Name + " (no fit)"
}

// withSubject is "title: subject", or the title alone.
func withSubject(title, subject string) string {
	if subject == "" {
		return title
	}
	return title + ": " + subject
}

// sig4 prints x to four significant digits, without exponent below 10⁷.
func sig4(x float64) string {
	return tickLabel(roundTo(x, 4))
}

// ThroughputFromReport turns the throughput groups of a fit report into
// chart 1 inputs: one ThroughputData per model, device kind, precision and
// labels, with one group per device count. Repeated measurements at one
// batch become one point, their mean, with their standard deviation as its
// spread; a point measured once gets the spread of its record's step
// time, σ_v = v·σ_τ/τ, found in logs (by source file and line) when logs
// are given. Groups without points are left out.
func ThroughputFromReport(rep *fit.Report, lgs []*logs.Log) []ThroughputData {
	rel := stepSpreads(lgs)
	var out []ThroughputData
	index := map[string]int{}
	for _, g := range rep.Groups {
		if len(g.Points) == 0 {
			continue
		}
		k := g.Key
		k.Devices = 0
		subject := k.String()
		if k.Model == "" {
			subject = ""
			if s := k.String(); s != "?" {
				subject = s[2:] // drop the "? " of a missing model
			}
		}
		i, ok := index[k.String()]
		if !ok {
			i = len(out)
			index[k.String()] = i
			out = append(out, ThroughputData{Subject: subject})
		}
		tg := ThroughputGroup{Name: devicesName(g.Key.Devices), Fit: g.Fit}
		for _, b := range g.OOM {
			tg.OOM = append(tg.OOM, float64(b))
		}
		type key struct {
			batch    int
			excluded bool
		}
		var order []key
		vals := map[key][]float64{}
		first := map[key]fit.Point{}
		for _, pt := range g.Points {
			kk := key{pt.Batch, pt.Excluded}
			if _, ok := vals[kk]; !ok {
				order = append(order, kk)
				first[kk] = pt
			}
			vals[kk] = append(vals[kk], pt.Throughput)
		}
		for _, kk := range order {
			v := vals[kk]
			mean, std := meanStd(v)
			if len(v) == 1 {
				pt := first[kk]
				std = v[0] * rel[srcLine{pt.Source, pt.Line, pt.Batch}]
			}
			tg.Points = append(tg.Points, ThroughputPoint{
				Batch: float64(kk.batch), Throughput: mean, Std: std, Repeats: len(v), Excluded: kk.excluded,
			})
		}
		out[i].Groups = append(out[i].Groups, tg)
	}
	return out
}

// devicesName is "1 device", "N devices", or "all devices" when the count
// is unknown.
func devicesName(n int) string {
	switch {
	case n == 1:
		return "1 device"
	case n > 1:
		return fmt.Sprintf("%d devices", n)
	}
	return "all devices"
}

type srcLine struct {
	source string
	line   int
	batch  int
}

// stepSpreads returns σ_τ/τ of every record with a step-time spread, by
// source, line and global batch.
func stepSpreads(lgs []*logs.Log) map[srcLine]float64 {
	m := map[srcLine]float64{}
	for _, lg := range lgs {
		for i, r := range lg.Records {
			if i >= len(lg.Lines) || !(r.StepTime > 0) || !(r.StepTimeStd > 0) {
				continue
			}
			m[srcLine{lg.Name, lg.Lines[i], r.EffectiveGlobalBatch()}] = r.StepTimeStd / r.StepTime
		}
	}
	return m
}

// meanStd returns the mean and the sample standard deviation (n − 1) of
// v; the deviation is 0 for one value.
func meanStd(v []float64) (mean, std float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(v)-1))
}
