package validate

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"scaleplan/fit"
)

// ThroughputChart is the data of one throughput chart of a
// MeasuredReport: the groups of one model, device, precision and variant,
// a series for each device count.
type ThroughputChart struct {
	// Subject is "MODEL DEVICE PRECISION VARIANT", without a missing
	// variant.
	Subject string
	// Series holds a series per group of the subject with a batch that
	// ran; none when no batch ran.
	Series []ThroughputSeries
}

// ThroughputSeries is the measured and predicted samples/s of one group
// against its global batch.
type ThroughputSeries struct {
	// Name is "1 device" or "N devices of SYSTEM".
	Name string
	// Batch holds the global batch of each row that ran, samples per step
	// (batch × devices × accumulation, as fit draws it); Measured and
	// Predicted the samples/s there.
	Batch, Measured, Predicted []float64
	// Fit is the law fitted to the measurements (fit.Throughput), nil
	// where it does not fit.
	Fit *fit.ThroughputFit
	// OOM is the first global batch that ran out of memory, 0 for none.
	OOM float64
}

// Calibrated reports whether a calibration computed a row of rep.
func (rep *MeasuredReport) Calibrated() bool {
	return slices.ContainsFunc(rep.Groups, func(g MeasuredGroup) bool {
		return slices.ContainsFunc(g.Rows, func(r MeasuredRow) bool { return r.Calibration != "" })
	})
}

// ThroughputCharts returns the data of one throughput chart per device,
// model, precision and variant of rep, in the order of its groups, with a
// series for each device count that ran a batch.
func (rep *MeasuredReport) ThroughputCharts() []ThroughputChart {
	var out []ThroughputChart
	for _, g := range rep.Groups {
		s := strings.TrimSpace(fmt.Sprintf("%s %s %s %s", g.Model, g.Device, g.Precision, g.Variant))
		if len(out) == 0 || out[len(out)-1].Subject != s {
			out = append(out, ThroughputChart{Subject: s})
		}
		if ts, ok := throughputSeries(&g); ok {
			out[len(out)-1].Series = append(out[len(out)-1].Series, ts)
		}
	}
	return out
}

// throughputSeries returns the series of g; ok is false when no batch of
// g ran.
func throughputSeries(g *MeasuredGroup) (ts ThroughputSeries, ok bool) {
	ts.Name = "1 device"
	if g.Devices > 1 {
		ts.Name = fmt.Sprintf("%d devices of %s", g.Devices, g.System)
	}
	for _, r := range g.Rows {
		if r.OOM {
			continue
		}
		ts.Batch = append(ts.Batch, float64(r.Batch*g.Devices*max(r.Accumulation, 1)))
		ts.Measured = append(ts.Measured, r.SamplesPerSec)
		ts.Predicted = append(ts.Predicted, r.Predicted)
	}
	if g.FirstOOM > 0 {
		ts.OOM = float64(g.FirstOOM * g.Devices)
	}
	if len(ts.Batch) == 0 {
		return ts, false
	}
	if f, err := fit.Throughput(slices.Clone(ts.Batch), slices.Clone(ts.Measured), nil); err == nil {
		ts.Fit = f
	}
	return ts, true
}

// CalibrationSources returns the calibrations' laws that computed rows of
// rep (MeasuredRow.Calibration), in order of first use.
func (rep *MeasuredReport) CalibrationSources() []string {
	var sources []string
	for _, g := range rep.Groups {
		for _, r := range g.Rows {
			if r.Calibration != "" && !slices.Contains(sources, r.Calibration) {
				sources = append(sources, r.Calibration)
			}
		}
	}
	return sources
}

// CalibratedError returns the mean absolute error of samples/s over the n
// rows of rep a calibration computed and was not fitted to (NaN when n is
// 0):
//
//	mae = Σ |predicted − measured| / measured / n
func (rep *MeasuredReport) CalibratedError() (mae float64, n int) {
	var sum float64
	for _, g := range rep.Groups {
		for _, r := range g.Rows {
			if e := r.Error(); r.Calibration != "" && !r.Fitted && !math.IsNaN(e) {
				sum += math.Abs(e)
				n++
			}
		}
	}
	return sum / float64(n), n
}
