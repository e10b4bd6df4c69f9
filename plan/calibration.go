package plan

import (
	"fmt"
	"scaleplan/compute"
	"slices"
	"strings"

	"scaleplan/hw"
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

// calibrationsFor picks, for each precision of base's system, the measured
// law the calibrations give a scenario of base's model on base's device
// kind at that precision (scenarios.PickCalibration). It marks the files it
// uses in used, and returns the calibration of each precision that has one
// and how every precision computes.
func calibrationsFor(base *scenarios.Resolved, precs []string, cals []scenarios.CalibrationFile, used []bool) (map[string]*scenarios.Calibration, []ComputeSource, error) {
	byPrec := make(map[string]*scenarios.Calibration)
	var srcs []ComputeSource
	for _, p := range precs {
		src := ComputeSource{System: base.Sys.Name, Device: base.Device.Name, Precision: p, Efficiency: base.Mdl.EffectiveEfficiency()}
		cal, from, err := scenarios.PickCalibration(cals, base.Mdl.Name, base.Data.SampleUnit, base.Device, p)
		if err != nil {
			return nil, nil, fmt.Errorf("plan: %w", err)
		}
		if cal != nil {
			used[from] = true
			src.Calibration = cal
			byPrec[p] = cal
		} else {
			src.Operators = compute.Covers(base.Device, base.Mdl.Name)
			src.HostMeasured = src.Operators && base.Host != nil
		}
		srcs = append(srcs, src)
	}
	return byPrec, srcs, nil
}

// mismatch says why a calibration applies to no candidate system: the
// model, devices and precisions the search needed, and the entries the
// file has.
func mismatch(pc scenarios.CalibrationFile, model string, srcs []ComputeSource) string {
	var want []string
	for _, s := range srcs {
		w := s.Device + " " + s.Precision
		if !slices.Contains(want, w) {
			want = append(want, w)
		}
	}
	return fmt.Sprintf("no throughput entry applies to a candidate system (the plan needs model %s on one of: %s; the file has: %s)",
		model, strings.Join(want, ", "), pc.Entries())
}
