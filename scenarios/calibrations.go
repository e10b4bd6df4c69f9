package scenarios

import (
	"bytes"
	"cmp"
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"scaleplan/compute"
	"scaleplan/hw"
	"scaleplan/internal/calib"
	"scaleplan/model"
)

// Published is the name that ReadCalibrationFiles reads as the published
// calibrations built into the program (calibrations/published.yaml):
// ResNet-50 on the V100, A100 and H100 at fp16, and SSD-ResNet34, Mask
// R-CNN, Transformer and GNMT on the V100 at fp16, from the figures that
// the built-in validation cases calibrate on. A file of that name is read as
// ./published.
const Published = "published"

//go:embed calibrations/published.yaml
var published []byte

// CalibrationFile is a calibration read from a file written by `scaleplan
// fit --out`, for PickCalibration and Options.Calibrations.
type CalibrationFile struct {
	Path string
	Cal  *calib.Calibration
}

// ReadCalibrationFiles reads the calibration files at paths; the name
// Published stands for the published calibrations built into the program.
func ReadCalibrationFiles(paths []string) ([]CalibrationFile, error) {
	files := make([]CalibrationFile, len(paths))
	for i, p := range paths {
		var c *calib.Calibration
		var err error
		if p == Published {
			c, err = calib.Read(bytes.NewReader(published))
		} else {
			c, err = calib.ReadFile(p)
		}
		if err != nil {
			return nil, err
		}
		files[i] = CalibrationFile{Path: p, Cal: c}
	}
	return files, nil
}

// throughputEntry returns the entry of c that a scenario of model at
// precision computes by among those whose device onDevice accepts: one for
// that model, of that precision or of none (PrecisionApplies), in samples
// of unit (SampleApplies), measured on one or more devices, and of those
// the one on the fewest devices (the first on a tie). It returns nil if
// none applies.
func throughputEntry(c *calib.Calibration, model string, unit model.SampleUnit, onDevice func(string) bool, precision string) *calib.ThroughputEntry {
	var best *calib.ThroughputEntry
	for i := range c.Throughput {
		e := &c.Throughput[i]
		if e.Model != model || !onDevice(e.Device) || !PrecisionApplies(e.Precision, precision) || e.Devices < 1 ||
			!SampleApplies(e.Labels[calib.SampleLabel], unit) {
			continue
		}
		if best == nil || e.Devices < best.Devices {
			best = e
		}
	}
	return best
}

// SampleApplies reports whether the samples of an entry labelled s
// (Labels[calib.SampleLabel]; "" when the log did not say, taken to be
// the profile's own) are the samples of a dataset counted in unit (""
// is model.Image, the default): "sentence-pair" or "sentence" of
// model.Sentence, "token-pair" or "token" of model.Token, "image" of
// model.Image.
func SampleApplies(s string, unit model.SampleUnit) bool {
	if unit == "" {
		unit = model.Image
	}
	switch s {
	case "":
		return true
	case "sentence-pair", "sentence":
		return unit == model.Sentence
	case "token-pair", "token":
		return unit == model.Token
	case "image":
		return unit == model.Image
	}
	return false
}

// MeasuredPrecisionNames lists the precisions a measurement may name: the
// catalogue's (hw.Precisions) and the names PyTorch's logs give automatic
// mixed precision, which PrecisionApplies maps to fp16 and bf16.
func MeasuredPrecisionNames() []string {
	return append(hw.PrecisionNames(), "amp-fp16", "amp", "amp-bf16")
}

// PrecisionApplies reports whether a calibration entry measured at
// precision measured applies to a scenario at precision p: the same
// precision, none ("": any), or automatic mixed precision as PyTorch logs
// name it, which trains on the fp16 or bf16 tensor cores the catalogue's
// fp16 and bf16 mean: "amp-fp16" and "amp" (autocast's default type on
// CUDA, float16) apply to fp16, "amp-bf16" to bf16.
func PrecisionApplies(measured, p string) bool {
	switch measured {
	case "", p:
		return true
	case "amp-fp16", "amp":
		return p == "fp16"
	case "amp-bf16":
		return p == "bf16"
	}
	return false
}

// PickCalibration returns the measured compute law that a scenario of
// model (whose dataset counts samples in unit) on device dev at precision
// takes from files: the entry a scenario's calibration file would give
// (throughputEntry: of the model, the precision (PrecisionApplies) and
// samples of that unit (SampleApplies)) among those measured on dev (its
// key or one of its names, hw.Device.Is), of the file whose entry was
// measured on the fewest devices (the first file on a tie),
// with its Source naming the file and the entry's source. It returns the
// index of that file, or nil and −1 when no file has an entry that applies,
// and an error when the entry did not bound v0
// (calib.ThroughputEntry.V0Unbounded).
func PickCalibration(files []CalibrationFile, model string, unit model.SampleUnit, dev *hw.Device, precision string) (*Calibration, int, error) {
	best, from := PickEntry(files, model, unit, dev, precision)
	if best == nil {
		return nil, -1, nil
	}
	cal, err := EntryCalibration(files[from].Path, best)
	return cal, from, err
}

// EntryCalibration returns the law of entry e of the calibration file at
// path, its Source naming the file and the entry's source, and an error
// when the entry did not bound v0 (calib.ThroughputEntry.V0Unbounded).
func EntryCalibration(path string, e *calib.ThroughputEntry) (*Calibration, error) {
	if e.V0Unbounded {
		return nil, fmt.Errorf("calibration %s: %s", path, unboundedV0(e))
	}
	source := path
	if e.Source != "" {
		source += " (" + e.Source + ")"
	}
	c := &Calibration{V0: e.V0, T: e.T, Device: e.Device, Devices: e.Devices, Source: source}
	c.SetIntervals(e)
	return c, nil
}

// PickEntry is the entry of files that PickCalibration takes its law from,
// itself (a pointer into its file's Throughput), and the index of its
// file; nil and −1 when none applies.
func PickEntry(files []CalibrationFile, model string, unit model.SampleUnit, dev *hw.Device, precision string) (*calib.ThroughputEntry, int) {
	var best *calib.ThroughputEntry
	from := -1
	for i, f := range files {
		if e := throughputEntry(f.Cal, model, unit, dev.Is, precision); e != nil && (best == nil || e.Devices < best.Devices) {
			best, from = e, i
		}
	}
	return best, from
}

// Entries lists the file's entries for a message that says why none
// applies: "resnet50 on 1 a100-sxm4-80gb, fp16; comm of resnet50 on
// v100; fabric of system dgx-h100 (inter)", or "none".
func (f CalibrationFile) Entries() string {
	var have []string
	for _, e := range f.Cal.Throughput {
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
	for _, e := range f.Cal.Comm {
		have = append(have, fmt.Sprintf("comm of %s on %s", e.Model, cmp.Or(e.Device, "any device")))
	}
	for _, e := range f.Cal.Fabric {
		have = append(have, fmt.Sprintf("fabric of system %s (%s)", e.System, e.Level))
	}
	for _, e := range f.Cal.Operators {
		have = append(have, fmt.Sprintf("operators of %s (%s)", e.Device, calib.OperatorMode(e.Mode)))
	}
	if len(have) == 0 {
		return "none"
	}
	return strings.Join(have, "; ")
}

// unboundedV0 says that entry e did not bound v0 and what to do, for the
// errors of a calibration file and of --calibration.
func unboundedV0(e *calib.ThroughputEntry) string {
	return fmt.Sprintf("the entry for model %q on %d %s did not bound v0 (v0_unbounded: its step time did not grow with the batch over %s); fit it again with larger batches",
		e.Model, e.Devices, e.Device, batchesText(e.Batches))
}

// batchesText is "16–128" for a calibration entry's [smallest, largest]
// batch, or "the batches measured" when it records none.
func batchesText(b []int) string {
	if len(b) != 2 {
		return "the batches measured"
	}
	return fmt.Sprintf("%d–%d", b[0], b[1])
}

// CalibrationsUsed returns an error naming the first calibration file
// that none of the scenarios rs computes by, with what they needed and
// what the file has: a file that applies to nothing is a mistake. The
// published figures built in (Published) are no file the user wrote: a
// scenario none of them applies to computes by its roofline, and they are
// never refused.
func CalibrationsUsed(files []CalibrationFile, rs []*Resolved) error {
	var want []string
	for _, r := range rs {
		if w := fmt.Sprintf("%s on %s at %s on system %s", r.Mdl.Name, r.Device.Name, r.Precision, r.Sys.Name); !slices.Contains(want, w) {
			want = append(want, w)
		}
	}
	for _, f := range files {
		if f.Path == Published {
			continue
		}
		used := slices.ContainsFunc(rs, func(r *Resolved) bool {
			return r.CalibratedBy == f.Path || r.CommBy == f.Path || r.OperatorCompute() && r.OperatorsBy == f.Path ||
				slices.ContainsFunc(r.Fabric, func(g CalibrationFile) bool { return g.Path == f.Path })
		})
		if !used {
			what := "the scenario (it needs"
			if len(rs) > 1 {
				what = fmt.Sprintf("any of the %d scenarios (they need", len(rs))
			}
			return fmt.Errorf("calibration %s: no throughput, comm, fabric or operators entry applies to %s %s; the file has: %s)",
				f.Path, what, strings.Join(want, ", "), f.Entries())
		}
	}
	return nil
}

// PickOperators returns the efficiencies of the first operators entry of
// files fitted on a device of dev's kind (dev.Is) in mode, and its file;
// nil and "" if none. A scenario computes by it wherever the operator
// model covers it (Resolved.OperatorCompute); a throughput entry of the
// scenario's model takes precedence, as it replaces the operator model.
func PickOperators(files []CalibrationFile, dev *hw.Device, mode compute.Mode) (*compute.Efficiencies, string, error) {
	for _, f := range files {
		if e, ok := f.Cal.OperatorsFor(dev.Is, string(mode)); ok {
			eff, err := OperatorEfficiencies(&e)
			if err != nil {
				return nil, "", fmt.Errorf("calibration %s: %w", f.Path, err)
			}
			return eff, f.Path, nil
		}
	}
	return nil, "", nil
}

// OperatorEfficiencies returns the efficiencies of an operators entry; a
// class it does not name, or marks undetermined, keeps the device's
// published one (compute.DeviceEfficiency).
func OperatorEfficiencies(e *calib.OperatorsEntry) (*compute.Efficiencies, error) {
	var eff compute.Efficiencies
	for _, k := range e.Classes {
		c, err := compute.ParseClass(k.Class)
		if err != nil {
			return nil, fmt.Errorf("operators entry of %s: %w", e.Device, err)
		}
		if !k.Undetermined {
			eff.Set(c, k.Efficiency)
		}
	}
	eff.Launch, eff.StepHost, eff.KernelTime = e.Launch, e.StepHost, e.KernelTime
	eff.EventsInStepHost = e.EventsInStepHost
	return &eff, nil
}
