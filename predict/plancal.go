package predict

import (
	"fmt"
	"slices"
	"strings"

	"scaleplan/hw"
	"scaleplan/internal/calib"
	"scaleplan/scenarios"
)

// precisions returns the compute precisions searched on base's device: the
// space's that the device has a peak for, or, by default, every one it has,
// the recipe's first.
func precisions(base *scenarios.Resolved, sp Space) []string {
	dev := base.Device
	has := func(p string) bool {
		hp, err := hw.ParsePrecision(p)
		return err == nil && dev.PeakFLOPs(hp) > 0
	}
	if sp.Precisions != nil {
		var ok []string
		for _, p := range sp.Precisions {
			if has(p) {
				ok = append(ok, p)
			}
		}
		return ok
	}
	var precs []string
	for _, p := range []string{"fp16", "bf16", "tf32", "fp32"} {
		if has(p) {
			precs = append(precs, p)
		}
	}
	// Keep the recipe's precision first among equals.
	if i := slices.Index(precs, base.Precision); i > 0 {
		precs = append([]string{base.Precision}, slices.Delete(precs, i, i+1)...)
	}
	return precs
}

// planCalibration is one calibration file of a plan request.
type planCalibration struct {
	file string
	cal  *calib.Calibration
}

// readCalibrations reads the calibration files of a plan request.
func readCalibrations(files []string) ([]planCalibration, error) {
	cals := make([]planCalibration, len(files))
	for i, f := range files {
		c, err := calib.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("plan: calibration: %w", err)
		}
		cals[i] = planCalibration{file: f, cal: c}
	}
	return cals, nil
}

// calibrationsFor picks, for each precision of base's system, the
// throughput entry of the calibrations that scenarios.Calibration would:
// one for base's model on base's device kind, of that precision or of
// none, measured on the fewest devices (the first file's on a tie). It
// marks the calibrations it uses in used, and returns the calibration of
// each precision that has one and how every precision computes. An entry
// that would apply but did not bound v0 is an error.
func calibrationsFor(base *scenarios.Resolved, precs []string, cals []planCalibration, used []bool) (map[string]*scenarios.Calibration, []ComputeSource, error) {
	byPrec := make(map[string]*scenarios.Calibration)
	var srcs []ComputeSource
	for _, p := range precs {
		src := ComputeSource{System: base.Sys.Name, Device: base.Device.Name, Precision: p, Efficiency: base.Mdl.EffectiveEfficiency()}
		var best *calib.ThroughputEntry
		var from int
		for i, pc := range cals {
			for j := range pc.cal.Throughput {
				e := &pc.cal.Throughput[j]
				if e.Model != base.Mdl.Name || e.Device != base.Device.Name || (e.Precision != "" && e.Precision != p) || e.Devices < 1 {
					continue
				}
				if best == nil || e.Devices < best.Devices {
					best, from = e, i
				}
			}
		}
		if best != nil {
			if best.V0Unbounded {
				return nil, nil, fmt.Errorf("plan: calibration %s: the entry for model %q on %d %s did not bound v0 (v0_unbounded: its step time did not grow with the batch); fit it again with larger batches",
					cals[from].file, best.Model, best.Devices, best.Device)
			}
			used[from] = true
			source := cals[from].file
			if best.Source != "" {
				source += " (" + best.Source + ")"
			}
			src.Calibration = &scenarios.Calibration{V0: best.V0, T: best.T, Device: best.Device, Devices: best.Devices, Source: source}
			byPrec[p] = src.Calibration
		}
		srcs = append(srcs, src)
	}
	return byPrec, srcs, nil
}

// mismatch says why a calibration applies to no candidate system: the
// model, devices and precisions the search needed, and the entries the
// file has.
func (pc planCalibration) mismatch(model string, srcs []ComputeSource) string {
	var want []string
	for _, s := range srcs {
		w := s.Device + " " + s.Precision
		if !slices.Contains(want, w) {
			want = append(want, w)
		}
	}
	var have []string
	for _, e := range pc.cal.Throughput {
		prec := e.Precision
		if prec == "" {
			prec = "any precision"
		}
		dev := e.Device
		if dev == "" {
			dev = "an unnamed device (fit --device names it)"
		}
		have = append(have, fmt.Sprintf("%s on %d %s, %s", e.Model, e.Devices, dev, prec))
	}
	if len(have) == 0 {
		have = []string{"none"}
	}
	return fmt.Sprintf("no throughput entry applies to a candidate system (the plan needs model %s on one of: %s; the file has: %s)",
		model, strings.Join(want, ", "), strings.Join(have, "; "))
}
