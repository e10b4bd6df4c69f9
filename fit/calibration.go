package fit

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"scaleplan/internal/calib"
	"scaleplan/internal/units"
)

// Calibration returns the calibration of the report's successful fits of
// groups that name their model (a simulator looks entries up by model).
// Figures are rounded to four significant digits, as units print them, so
// that what is written reads back the same.
func (r *Report) Calibration() *calib.Calibration {
	c := &calib.Calibration{Level: DefaultSettings.Level}
	for _, g := range r.Groups {
		f := g.Fit
		if f == nil || g.Key.Model == "" {
			continue
		}
		c.Level = f.Level
		e := calib.ThroughputEntry{
			Model: g.Key.Model, Device: g.Key.Device, Devices: g.Key.Devices, Precision: g.Key.Precision,
			Labels: g.Key.Labels, V0: sig4(f.V0), T: units.Seconds(sig4(float64(f.T))),
			V0Interval: interval(f.V0Interval[0], f.V0Interval[1]),
			R2:         round4(f.R2), Points: f.Used,
		}
		e.V0Unbounded = f.V0Unbounded
		if lo := f.V0Interval[0]; math.IsInf(f.V0Interval[1], 1) && lo > 0 && !math.IsInf(lo, 0) {
			e.V0Lower = sig4(lo) // no upper limit: the lower one alone
		}
		if ti := interval(float64(f.TInterval[0]), float64(f.TInterval[1])); ti != nil {
			e.TInterval = []units.Seconds{units.Seconds(ti[0]), units.Seconds(ti[1])}
		}
		lo, hi := math.MaxInt, 0
		var srcs []string
		for _, p := range g.Points {
			if p.Excluded {
				e.Excluded++
				continue
			}
			lo, hi = min(lo, p.Batch), max(hi, p.Batch)
			if !slices.Contains(srcs, p.Source) {
				srcs = append(srcs, p.Source)
			}
		}
		if hi > 0 {
			e.Batches = []int{lo, hi}
		}
		if len(g.OOM) > 0 {
			e.OOM = g.OOM[0]
		}
		e.Source = strings.Join(srcs, ", ")
		c.Throughput = append(c.Throughput, e)
	}
	for _, cg := range r.Comm {
		f := cg.Fit
		if f == nil || cg.Model == "" {
			continue
		}
		e := calib.CommEntry{
			Model: cg.Model, Device: cg.Device, Precision: cg.Precision, Labels: cg.Labels,
			Counts: f.Counts, TFixed: units.Seconds(sig4(float64(f.TFixed))), TComm: units.Seconds(sig4(float64(f.TComm))),
			GradientSize: f.GradientSize, Bandwidth: units.BytesPerSec(sig4(float64(f.Bandwidth))),
		}
		if ti := interval(float64(f.TCommInterval[0]), float64(f.TCommInterval[1])); ti != nil {
			e.TCommInterval = []units.Seconds{units.Seconds(ti[0]), units.Seconds(ti[1])}
		}
		if lo, hi := float64(f.BandwidthInterval[0]), float64(f.BandwidthInterval[1]); f.Bandwidth > 0 && !math.IsInf(hi, 0) {
			if bi := interval(lo, hi); bi != nil {
				e.BandwidthInterval = []units.BytesPerSec{units.BytesPerSec(bi[0]), units.BytesPerSec(bi[1])}
			}
		}
		c.Comm = append(c.Comm, e)
	}
	for _, sg := range r.Steps {
		f := sg.Fit
		if f == nil || sg.Model == "" {
			continue
		}
		var srcs []string
		for _, p := range sg.Points {
			if !slices.Contains(srcs, p.Source) {
				srcs = append(srcs, p.Source)
			}
		}
		c.Steps = append(c.Steps, calib.StepsEntry{
			Model: sg.Model, Target: sg.Target, Labels: sg.Labels,
			SMin: sig4(f.SMin), BNoise: sig4(f.BNoise),
			SMinInterval:   interval(f.SMinInterval[0], f.SMinInterval[1]),
			BNoiseInterval: interval(f.BNoiseInterval[0], f.BNoiseInterval[1]),
			R2:             round4(f.R2), Points: f.Used, MaxBatch: sg.MaxReached,
			Source: strings.Join(srcs, ", "),
		})
	}
	return c
}

// interval returns [lo, hi] rounded, or nil if either is NaN.
func interval(lo, hi float64) []float64 {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil
	}
	return []float64{sig4(lo), sig4(hi)}
}

// sig4 rounds x to four significant digits (whole numbers from 10⁴ up).
func sig4(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	if math.Abs(x) >= 1e4 {
		return math.Round(x)
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 4, 64), 64)
	return v
}

func round4(x float64) float64 {
	if math.IsNaN(x) {
		return x
	}
	return math.Round(x*1e4) / 1e4
}
