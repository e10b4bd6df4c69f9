package predict

import (
	"slices"

	"scaleplan/internal/calib"
	"scaleplan/internal/units"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// Measured uncalibrated errors of the compute models, as mean absolute
// errors of samples/s. The roofline: over the five published measurement
// files together (99 rows of DeepLearningExamples and MLPerf tables, V100,
// A100, H100), 99.6 %. The operators with every mechanism: over every
// published file of testdata/measurements (published-*.csv, the twelve
// of docs/compute.md's "Validation": 282 rows, the 147 of the Lambda and
// MLPerf H100 files among them added after the mechanisms as checks out
// of sample), 16.5 %, the widest sample: the five files the mechanisms
// were built on give 23.0 %, the 147 rows 14.3 %, DeepLearningExamples'
// GNMT (12 rows, docs/validation-gnmt.md) 10.3 %. Operators calibrated
// on another device and carried to this one:
// the larger of the two cross-device errors of
// docs/compute-calibration.md, "Calibrate on one device, predict the
// other" (`validate --measured` of our H100 sweep with the H200's
// operators 14.7 %, of our H200 sweep with the H100's 16.7 %).
const (
	RooflineError         = 0.996
	OperatorsError        = 0.165
	CarriedOperatorsError = 0.167
)

// Band is a relative interval of a predicted time: the measured time lies
// between 1 + Lo and 1 + Hi times it. Level is the share of its
// validation's measured times the interval held (validate.ErrorInterval's
// 0.8, from the 10th to the 90th percentile); 0 for a band of ∓ a mean
// absolute error, at no level.
type Band struct{ Lo, Hi, Level float64 }

// BandLevel is the Level of an interval drawn as validate.ErrorInterval
// draws it: the share between its 10th and 90th percentiles.
const BandLevel = 0.8

// The bands of an uncalibrated prediction's compute. OperatorsBand and
// CarriedOperatorsBand are intervals at a level: validate.ErrorInterval,
// the 10th and the 90th percentile of the error of samples/s, over the
// same rows as OperatorsError (282) and over each of its two cross-device
// validations (the wider end of either: −27.4 % from the H100 sweep with
// the H200's operators, +40.5 % from the H200 sweep with the H100's), in
// which 80 % of the measured steps lay. The operator model's is not
// centred on the prediction: its measured steps ran up to 9.3 % shorter
// and up to 29.1 % longer. Left out of the twelve files one at a time, the
// others' interval held 79 % of the file's rows, where ∓ the others' mean
// absolute error held 74 % (docs/compute.md, "Validation"). The
// roofline's per-row errors were not kept, so its band is ∓ its mean
// absolute error, not at a level.
var (
	RooflineBand         = Band{Lo: -RooflineError, Hi: RooflineError}
	OperatorsBand        = Band{-0.093, 0.291, BandLevel}
	CarriedOperatorsBand = Band{-0.274, 0.405, BandLevel}
)

// Source says what a scenario's compute time comes from.
type Source struct {
	// Kind is "calibrated", "operators" or "roofline".
	Kind string
	// By is the calibration file that gave the law or the operators'
	// efficiencies; "" when none did (or the law was given inline).
	By string
}

// SourceOf returns what r's compute time comes from, in the order
// scenarios.Resolved.Build uses: the operator model where it applies (its
// efficiencies calibrated by OperatorsBy if set), else the calibration,
// else the device's roofline.
func SourceOf(r *scenarios.Resolved) Source {
	switch {
	case r.OperatorCompute():
		return Source{Kind: "operators", By: r.OperatorsBy}
	case r.Calibration == nil:
		return Source{Kind: "roofline"}
	case r.CalibratedBy != "":
		return Source{Kind: "calibrated", By: r.CalibratedBy}
	}
	return Source{Kind: "calibrated", By: r.Calibration.File}
}

// Calibrated reports whether the compute law was measured on the device:
// a throughput calibration. Operators carried from a calibration of
// another device are not.
func (s Source) Calibrated() bool { return s.Kind == "calibrated" }

// String is the source as a table cell: "calibrated FILE", "operators",
// "operators calibrated by FILE", "roofline".
func (s Source) String() string {
	switch {
	case s.By == "":
		return s.Kind
	case s.Kind == "operators":
		return "operators calibrated by " + s.By
	}
	return s.Kind + " " + s.By
}

// Error returns the mean absolute error of samples/s of the uncalibrated
// compute models (RooflineError, OperatorsError, CarriedOperatorsError)
// that s's compute comes from; 0 for a calibrated source.
func (s Source) Error() float64 {
	e, _ := s.measured()
	return e
}

// Band returns the band of an uncalibrated row's compute (RooflineBand,
// OperatorsBand, CarriedOperatorsBand); the zero Band for a calibrated
// source, whose range its law's intervals give.
func (s Source) Band() Band {
	_, b := s.measured()
	return b
}

// measured returns the mean absolute error and the band of the
// uncalibrated model s's compute comes from; 0 and the zero Band for a
// calibrated source.
func (s Source) measured() (float64, Band) {
	switch {
	case s.Kind == "roofline":
		return RooflineError, RooflineBand
	case s.Kind == "operators" && s.By != "":
		return CarriedOperatorsError, CarriedOperatorsBand
	case s.Kind == "operators":
		return OperatorsError, OperatorsBand
	}
	return 0, Band{}
}

// LawRange returns the compute time of a step of b samples on one device
// by c's law t(b) = b·Devices/V0 + T at the ends of its intervals, in
// closed form: the fastest at the high end of v0 and the low end of t,
// the slowest at the low end of v0 and the high end of t; ok is false when
// c has no intervals.
func LawRange(c *scenarios.Calibration, b int) (lo, hi units.Seconds, ok bool) {
	if c == nil {
		return 0, 0, false
	}
	v, t := c.V0Interval, c.TInterval
	if !(v[0] > 0 && v[1] >= v[0]) || t[1] < t[0] {
		return 0, 0, false
	}
	d := float64(max(c.Devices, 1))
	at := func(v0 float64, t units.Seconds) units.Seconds {
		return units.Seconds(float64(b)*d/v0) + t
	}
	return at(v[1], t[0]), at(v[0], t[1]), true
}

// setComputeRange fills TrainRange from src and the calibration c: where
// the compute is calibrated, Time moved by the steps times the change of
// the law's compute per step at the ends of its intervals (LawRange; the
// compute is taken to be on the step's critical path); where it is not,
// Time + src.Band() · Training, the uncalibrated model's measured band of
// a step's time applied to the steps' time. Zero where a calibration has
// no intervals.
func (row *Row) setComputeRange(src Source, c *scenarios.Calibration) {
	if row.Result == nil {
		return
	}
	if !src.Calibrated() {
		b, tr := src.Band(), float64(row.Training)
		row.TrainRange = [2]units.Seconds{row.Time + units.Seconds(b.Lo*tr), row.Time + units.Seconds(b.Hi*tr)}
		return
	}
	lo, hi, ok := LawRange(c, row.Point.BatchPerDevice)
	if !ok {
		return
	}
	mid := units.Seconds(float64(row.Point.BatchPerDevice)*float64(max(c.Devices, 1))/c.V0) + c.T
	steps := float64(row.StepsToTarget)
	row.TrainRange = [2]units.Seconds{
		row.Time + units.Seconds(steps*float64(lo-mid)),
		row.Time + units.Seconds(steps*float64(hi-mid)),
	}
}

// CommBandEdges bound the bands of message sizes of CommErrors, each 16
// times the one before: below 64 KiB, 64 KiB to 1 MiB, 1 to 16 MiB, 16 to
// 256 MiB, and 256 MiB and above (validate.SizeErrors groups a validation
// by them).
var CommBandEdges = []units.Bytes{64 * units.KiB, units.MiB, 16 * units.MiB, 256 * units.MiB}

// CommErrors are the NCCL collective model's measured mean absolute error
// of the time, uncalibrated, over the rows of the 28 tests of the
// published nccl-tests tables whose message sizes lie in each band of
// CommBandEdges: [0] the 10 tests on one node, [1] the 18 on several
// (docs/validation-collectives.md, "Error by message size, over every
// table"; validate's TestCommErrorsPublished checks them against the
// tables). Every band's mean signed error is negative there: the model is
// too fast.
var CommErrors = [2][5]float64{
	{0.219, 0.216, 0.263, 0.167, 0.073},
	{0.202, 0.418, 0.366, 0.341, 0.158},
}

// CommBand returns the index of the band of CommBandEdges that holds a
// message of b bytes; a band holds its lower edge.
func CommBand(b units.Bytes) int {
	i, found := slices.BinarySearch(CommBandEdges, b)
	if found {
		i++
	}
	return i
}

// CommError returns the measured error of NCCL's collectives, uncalibrated,
// for a message of b bytes over one node (nodes ≤ 1) or several
// (CommErrors).
func CommError(b units.Bytes, nodes int) float64 {
	k := 0
	if nodes > 1 {
		k = 1
	}
	return CommErrors[k][CommBand(b)]
}

// setCommRange widens TrainRange by the exposed communication's band:
// StepsToTarget · Breakdown.Comm ∓ CommError at the size of one of the
// gradient exchange's all-reduces (bucketOf), where cfg exchanges by
// NCCL's model. The level that carries the exchange (between nodes on
// several, inside the node on one) decides the error: where no fabric
// calibration of r set it, the published tables' (CommError); where one
// did, that fit's own mean |time error| over the sizes it was fitted to
// (calib.FabricEntry.Error, in sample, so a lower bound), and CommBy names
// its file. An exchange of another algorithm, whose error no published
// table measures, leaves the range the compute's; so does a row without a
// range (a calibration without intervals). The low end stays at least the
// one-time costs, Time − Training: no band takes the training below none.
func (row *Row) setCommRange(r *scenarios.Resolved, cfg sim.Config) {
	res := row.Result
	if res == nil || row.TrainRange == ([2]units.Seconds{}) || cfg.Comm.Algorithm != sim.NCCL || res.Breakdown.Comm <= 0 {
		return
	}
	b := bucketOf(cfg)
	if b <= 0 {
		return
	}
	e := CommError(b, res.Nodes)
	level, transport := calib.Intra, r.Parallelism.IntraTransport
	if res.Nodes > 1 {
		level, transport = calib.Inter, r.Parallelism.Transport
	}
	if level == calib.Inter || !cfg.Network.NoPeerToPeer {
		if f, path, ok := scenarios.FabricEntry(r.Fabric, r.Sys.Name, level, transport); ok {
			e, row.CommBy = f.Error, path
		}
	}
	row.CommMessage, row.CommError = b, e
	d := units.Seconds(e * float64(row.StepsToTarget) * float64(res.Breakdown.Comm))
	row.TrainRange[0] = max(row.TrainRange[0]-d, row.Time-row.Training)
	row.TrainRange[1] += d
}
