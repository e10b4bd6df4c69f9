package predict

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/model"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// EfficiencyThreshold is the scaling efficiency a configuration must reach
// to count as efficient in a Summary: 80 % of the smallest size's
// device-hours per run.
const EfficiencyThreshold = 0.8

// Options controls a prediction.
type Options struct {
	// Steps is the number of optimizer steps simulated per configuration;
	// the first fills the prefetch queue and the rest give the steady
	// state. Default sim.DefaultSteps.
	Steps int
}

// SimSteps returns the number of steps to simulate: Steps, or
// sim.DefaultSteps when Steps is not positive.
func (o Options) SimSteps() int {
	if o.Steps > 0 {
		return o.Steps
	}
	return sim.DefaultSteps
}

// Row is the prediction for one configuration of a sweep.
type Row struct {
	// Point is the configuration: devices, nodes, batches.
	Point scenarios.Point

	// Result is the simulated step; nil when Err is set.
	Result *sim.Result
	// Err says why the configuration cannot run (out of device memory, a
	// transport that cannot carry the traffic); nil otherwise.
	Err error

	// StepsToTarget is the number of optimizer steps to the recipe's
	// target at the point's global batch.
	StepsToTarget int
	// Training is StepsToTarget · Result.StepTime, seconds.
	Training units.Seconds
	// Staging, CacheWarmup, Evaluation and Startup are the one-time
	// costs, seconds: copying the data set onto the nodes and the first
	// epoch's extra drive reads before the page cache holds the data set
	// (both simulated, sim.Result), and the scenario's overheads.
	Staging, CacheWarmup, Evaluation, Startup units.Seconds
	// Time is the time to target, seconds:
	//
	//	Training + Staging + CacheWarmup + Evaluation + Startup
	Time units.Seconds
	// TimeRange is Time with the steps at the low and the high ends of the
	// steps curve's intervals (scenarios.StepsToTarget.StepsRange): the
	// spread of runs. Zero without a curve with intervals.
	TimeRange [2]units.Seconds
	// TrainRange is Time at the ends of the compute's interval: the
	// calibration's v0 and t intervals, or the uncalibrated model's
	// measured band (Source.Band); zero for a calibration without
	// intervals. See Prediction.Source. Where the exchange is NCCL's, each
	// end also moves by the exposed communication's band,
	// StepsToTarget · Breakdown.Comm · CommError, the low end no lower
	// than the one-time costs.
	TrainRange [2]units.Seconds
	// CommMessage is the size of one all-reduce of the gradient exchange
	// and CommError the collective model's measured error there by which
	// TrainRange was widened: the published tables' (predict.CommError),
	// or, where a fabric calibration set the level, that fit's own error
	// and CommBy its file. Zero and "" where the range was not widened.
	CommMessage units.Bytes
	CommError   float64
	CommBy      string

	// Efficiency is the scaling efficiency against the first row of the
	// same per-device batch on the fewest devices (see Predict); 0 before
	// Predict sets it.
	Efficiency float64
	// DeviceHours is Devices · Time / 3600.
	DeviceHours float64
	// Cost is DeviceHours times the system's price per device-hour, US
	// dollars; 0 when the catalogue has no price.
	Cost float64
	// Energy is the energy of the run, kWh, by the prediction's
	// EnergyModel; 0 when the catalogue gives no power.
	Energy float64

	// LearningRate is the peak learning rate the scaling rule gives at
	// the point's global batch; 0 when the recipe does not give one.
	LearningRate float64
	// Risk says whether the global batch is past the largest one the
	// recipe is known to reach its target with.
	Risk Risk
}

// Prediction is the time to target of every configuration of a scenario's
// sweep.
type Prediction struct {
	// Label names the prediction in tables: a study variant's label, or
	// the scenario's name.
	Label string
	// Scenario is the resolved scenario predicted.
	Scenario *scenarios.Resolved

	Rule   Rule        // how the learning rate scales with the global batch
	Steps  StepsModel  // how the steps to target are counted
	Energy EnergyModel // how energy is counted
	// Price is the system's price per device-hour, US dollars; 0 unknown.
	Price float64
	// Source is what the compute time comes from (SourceOf).
	Source Source

	Rows []Row
}

// Predict simulates every point of r's sweep and returns its time to
// target:
//
//	time = steps(B) · step time + staging + cache warm-up + evaluation + start-up
//
// with B the point's global batch and steps(B) from Prediction.Steps. A
// point that cannot run (out of memory, say) is a row with Err set. The
// scaling efficiency of a row is the ratio of device-hours per run,
//
//	efficiency(N) = N0 · time(N0) / (N · time(N))
//
// against the row with the fewest devices N0 and the same per-device
// batch, so it counts everything that grows with the cluster: exposed
// communication, input stalls, staging. Predict returns an error only for
// a scenario that is not resolved.
func Predict(r *scenarios.Resolved, opt Options) (*Prediction, error) {
	p, err := newPrediction(r)
	if err != nil {
		return nil, err
	}
	for _, pt := range r.Points() {
		p.Rows = append(p.Rows, p.evaluate(pt, opt))
	}
	p.setEfficiency()
	return p, nil
}

// Evaluate predicts one configuration of r, as Predict does for each
// point of the sweep, but leaves Row.Efficiency 0.
func Evaluate(r *scenarios.Resolved, pt scenarios.Point, opt Options) (Row, error) {
	p, err := newPrediction(r)
	if err != nil {
		return Row{}, err
	}
	if pt.GlobalBatch < 1 || pt.Devices < 1 || pt.BatchPerDevice < 1 {
		return Row{}, fmt.Errorf("predict: %s: a point of %d devices, batch %d per device, global batch %d; want each at least 1",
			r.Name, pt.Devices, pt.BatchPerDevice, pt.GlobalBatch)
	}
	return p.evaluate(pt, opt), nil
}

func newPrediction(r *scenarios.Resolved) (*Prediction, error) {
	if r == nil || r.Sys == nil || r.Node == nil || r.Device == nil || r.Mdl == nil || r.Rcp == nil || r.Data == nil {
		name := ""
		if r != nil {
			name = r.Name
		}
		return nil, fmt.Errorf("predict: scenario %q is not resolved", name)
	}
	return &Prediction{
		Label:    r.Name,
		Scenario: r,
		Rule:     RuleOf(r.Rcp),
		Steps:    stepsModel(r),
		Energy:   EnergyOf(r.Node, r.Device),
		Price:    r.Sys.PricePerDeviceHour,
		Source:   SourceOf(r),
	}, nil
}

// evaluate simulates point pt.
func (p *Prediction) evaluate(pt scenarios.Point, opt Options) Row {
	r := p.Scenario
	row := Row{Point: pt, Evaluation: r.Overheads.Evaluation, Startup: r.Overheads.Startup}
	row.StepsToTarget = p.Steps.Steps(pt.GlobalBatch)
	row.LearningRate = p.Rule.LearningRate(r.Rcp, pt.GlobalBatch)
	row.Risk = RiskOf(r.Rcp, p.Steps.Limit(), pt.GlobalBatch)
	cfg, err := r.Build(pt)
	if err != nil {
		row.Err = err
		return row
	}
	if row.Evaluation, row.Startup, err = timedCosts(r, cfg, row.StepsToTarget, pt.GlobalBatch); err != nil {
		row.Err = err
		return row
	}
	cfg.Steps = opt.SimSteps()
	res, err := sim.Run(cfg)
	if err != nil {
		row.Err = err
		return row
	}
	row.Result = res
	row.setTime(res)
	row.setRange(p.Steps)
	row.setComputeRange(p.Source, r.Calibration)
	row.setCommRange(r, cfg)
	row.DeviceHours = float64(pt.Devices) * float64(row.Time) / float64(units.Hour)
	row.Cost = row.DeviceHours * p.Price
	row.Energy = p.Energy.KWh(pt, row.Time)
	return row
}

// stepsModel returns how r's steps to its target are counted: its fitted
// curve if it has one, else its recipe's epochs or iterations.
func stepsModel(r *scenarios.Resolved) StepsModel {
	return StepsModel{Recipe: r.Rcp, Curve: r.StepsToTarget, TrainSamples: int(r.Data.TrainSamples)}
}

// setTime fills Training, the simulated one-time costs and Time from res,
// given StepsToTarget and the scenario's overheads.
func (row *Row) setTime(res *sim.Result) {
	row.Training = units.Seconds(float64(row.StepsToTarget) * float64(res.StepTime))
	row.Staging, row.CacheWarmup = res.Staging, res.CacheWarmup
	row.Time = row.Training + row.Overheads()
}

// setRange fills TimeRange from the steps at the ends of s's curve's
// intervals, each at the row's step time.
func (row *Row) setRange(s StepsModel) {
	lo, hi, ok := s.Range(row.Point.GlobalBatch)
	if !ok || row.Result == nil {
		return
	}
	at := func(steps int) units.Seconds {
		return row.Time + units.Seconds(float64(steps-row.StepsToTarget)*float64(row.Result.StepTime))
	}
	row.TimeRange = [2]units.Seconds{at(lo), at(hi)}
}

// TimeToTarget returns the time to target of the configuration of r that
// res simulated, as Predict computes a row's Time:
//
//	steps(B) · step time + staging + cache warm-up + evaluation + start-up
//
// with steps(B) at res's global batch from r's steps-to-target curve if it
// has one, else its recipe, and the evaluations and start-up of r's
// recipe's timed region at res's configuration (the scenario's overheads
// alone if that configuration no longer builds).
func TimeToTarget(r *scenarios.Resolved, res *sim.Result) units.Seconds {
	row := Row{StepsToTarget: stepsModel(r).Steps(res.GlobalBatch), Evaluation: r.Overheads.Evaluation, Startup: r.Overheads.Startup}
	if cfg, err := r.Build(pointOf(res)); err == nil {
		if e, s, err := timedCosts(r, cfg, row.StepsToTarget, res.GlobalBatch); err == nil {
			row.Evaluation, row.Startup = e, s
		}
	}
	row.setTime(res)
	return row.Time
}

// pointOf returns the sweep point res simulated.
func pointOf(res *sim.Result) scenarios.Point {
	per := res.Devices / max(res.Nodes, 1)
	if len(res.Placement) > 0 {
		per = slices.Max(res.Placement)
	}
	return scenarios.Point{Devices: res.Devices, Nodes: res.Nodes, DevicesPerNode: per, Replicas: res.Replicas,
		BatchPerDevice: res.MicroBatch, GlobalBatch: res.GlobalBatch}
}

// setEfficiency fills Row.Efficiency.
func (p *Prediction) setEfficiency() {
	for i := range p.Rows {
		row := &p.Rows[i]
		if row.Err != nil {
			continue
		}
		var ref *Row
		for j := range p.Rows {
			o := &p.Rows[j]
			if o.Err == nil && o.Point.BatchPerDevice == row.Point.BatchPerDevice && (ref == nil || o.Point.Devices < ref.Point.Devices) {
				ref = o
			}
		}
		row.Efficiency = float64(ref.Point.Devices) * float64(ref.Time) / (float64(row.Point.Devices) * float64(row.Time))
	}
}

// OK reports whether the row was simulated.
func (row *Row) OK() bool { return row.Err == nil && row.Result != nil }

// Overheads returns Staging + CacheWarmup + Evaluation + Startup.
func (row *Row) Overheads() units.Seconds {
	return row.Staging + row.CacheWarmup + row.Evaluation + row.Startup
}

// ErrText returns a short reason for Err: "out of memory (largest batch
// that fits: 362)" for sim.ErrMemory, the error's text otherwise.
func (row *Row) ErrText() string {
	if row.Err == nil {
		return ""
	}
	msg := row.Err.Error()
	if errors.Is(row.Err, sim.ErrMemory) {
		if i := strings.LastIndex(msg, "the largest batch that fits is "); i >= 0 {
			return "out of memory (largest batch that fits: " + strings.TrimPrefix(msg[i:], "the largest batch that fits is ") + ")"
		}
		return "out of memory (even batch 1)"
	}
	return msg
}

// StepsModel counts the optimizer steps to the recipe's target.
type StepsModel struct {
	// Recipe is the recipe trained; its epochs or iterations count the
	// steps when there is no Curve.
	Recipe *model.Recipe
	// Curve is the scenario's fitted steps-to-target curve; nil means the
	// recipe's epochs or iterations.
	Curve *scenarios.StepsToTarget
	// TrainSamples is the data set's training samples per epoch.
	TrainSamples int
}

// Steps returns the steps to target at global batch b > 0: the curve's
// ⌈S(b)⌉, or the recipe's model.Recipe.Steps.
func (s StepsModel) Steps(b int) int {
	if s.Curve != nil {
		return s.Curve.Steps(b)
	}
	return s.Recipe.Steps(b)
}

// Range returns the steps at global batch b > 0 at the ends of the
// curve's intervals (scenarios.StepsToTarget.StepsRange); ok is false
// without a curve or its intervals.
func (s StepsModel) Range(b int) (lo, hi int, ok bool) {
	if s.Curve == nil {
		return 0, 0, false
	}
	return s.Curve.StepsRange(b)
}

// Limit returns the largest global batch known to reach the target: the
// curve's MaxBatch if it has one, else the recipe's MaxGlobalBatch; 0 if
// unknown.
func (s StepsModel) Limit() int {
	if s.Curve != nil && s.Curve.MaxBatch > 0 {
		return s.Curve.MaxBatch
	}
	return int(s.Recipe.MaxGlobalBatch)
}

// String says how steps are counted, such as
// "90 epochs × ⌈1,281,167 / B⌉ steps (recipe tsubame3-resnet50)".
func (s StepsModel) String() string {
	if s.Curve != nil {
		src := ""
		if s.Curve.Source != "" {
			src = " (" + s.Curve.Source + ")"
		}
		return "fitted steps-to-target curve " + s.Curve.String() + src
	}
	rc := s.Recipe
	why := "recipe " + rc.Name
	if x := rc.Reached; x != nil {
		why += fmt.Sprintf(", where published runs reached the target (%s); it allows %s", x.Source, recipeLength(rc.Epochs, rc.Iterations))
	}
	epochs, iterations := rc.Length()
	if epochs > 0 {
		return fmt.Sprintf("%s epochs × ⌈%s / B⌉ steps (%s)", strconv.FormatFloat(epochs, 'g', -1, 64), Group(int64(s.TrainSamples)), why)
	}
	return fmt.Sprintf("⌈%s × %s / B⌉ steps (%s: %s iterations at global batch %s)",
		Group(iterations), Group(rc.GlobalBatch), why, Group(iterations), Group(rc.GlobalBatch))
}

// recipeLength says a recipe's length: "30 epochs" or "80,000 iterations".
func recipeLength(epochs float64, iterations int64) string {
	if epochs > 0 {
		return strconv.FormatFloat(epochs, 'g', -1, 64) + " epochs"
	}
	return Group(iterations) + " iterations"
}

// EnergyModel counts the energy of a run from the catalogue's power
// figures: each device's share of its node's maximum power when the node
// has one,
//
//	energy = devices · (node power / devices per node) · time
//
// which for whole nodes is nodes · node power · time, else the devices'
// thermal design power,
//
//	energy = devices · TDP · time
//
// which leaves out hosts, network and cooling. Both are upper bounds of
// what the parts draw (maximum and design power). A run on part of a node
// is counted its devices' share, as its cost is counted by device-hours:
// a run on one of a node's eight devices is not charged the other seven.
type EnergyModel struct {
	// Basis is "node" (node maximum power), "device" (device TDP) or ""
	// (no figure in the catalogue).
	Basis string
	Watts units.Watts // per node or per device
	What  string      // the node's or device's name
	// PerNode is the node's devices, which share its power (Basis
	// "node"); below 1 counts as 1.
	PerNode int
}

// EnergyOf returns the energy model of a system's node and device.
func EnergyOf(n *hw.Node, d *hw.Device) EnergyModel {
	switch {
	case n.Power > 0 && n.Devices > 0:
		return EnergyModel{Basis: "node", Watts: n.Power, What: n.Name, PerNode: n.Devices}
	case d.TDP > 0:
		return EnergyModel{Basis: "device", Watts: d.TDP, What: d.Name}
	}
	return EnergyModel{}
}

// KWh returns the energy of running point p for t, kWh; 0 without a basis.
func (e EnergyModel) KWh(p scenarios.Point, t units.Seconds) float64 {
	var w float64 // per device
	switch e.Basis {
	case "node":
		w = float64(e.Watts) / float64(max(1, e.PerNode))
	case "device":
		w = float64(e.Watts)
	default:
		return 0
	}
	return float64(p.Devices) * w * float64(t) / 3.6e6
}

// String says how energy is counted, such as "energy = devices × 300 W
// (p100-sxm2 TDP) × time; hosts, network and cooling not included".
func (e EnergyModel) String() string {
	switch e.Basis {
	case "node":
		n := max(1, e.PerNode)
		return fmt.Sprintf("energy = devices × %v (%s maximum power / %d devices) × time", e.Watts/units.Watts(n), e.What, n)
	case "device":
		return fmt.Sprintf("energy = devices × %v (%s TDP) × time; hosts, network and cooling not included", e.Watts, e.What)
	}
	return "energy: the catalogue gives no node power or device TDP"
}

// Group formats n with thousands separators: 1281167 → "1,281,167".
func Group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Rate formats a throughput to four significant digits without an
// exponent: 190.6, 2180, 56,380 (grouped from 10,000 up).
func Rate(v float64) string {
	if math.Abs(v) < 9999.5 || math.IsInf(v, 0) || math.IsNaN(v) { // 9999.5 and up round to 10,000
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	unit := math.Pow(10, math.Floor(math.Log10(math.Abs(v)))-3)
	return Group(int64(math.Round(v/unit) * unit))
}

// Duration formats a time to train for people: seconds below 2 minutes
// (two significant digits below 10), minutes below 2 hours, hours below 2
// days, days above: "0.43 s", "45 s", "27.3 min", "5.86 h", "7.0 d".
func Duration(t units.Seconds) string {
	s := float64(t)
	switch {
	case math.IsNaN(s) || math.IsInf(s, 0):
		return "-"
	case s != 0 && math.Abs(s) < 9.5:
		// Two significant digits, so that a run of a few seconds or less
		// does not read as "0 s" (a small network on a fast cluster).
		return strconv.FormatFloat(s, 'g', 2, 64) + " s"
	case s < 120:
		return strconv.FormatFloat(s, 'f', 0, 64) + " s"
	case s < 2*3600:
		return strconv.FormatFloat(s/60, 'f', 1, 64) + " min"
	case s < 2*86400:
		return strconv.FormatFloat(s/3600, 'f', 2, 64) + " h"
	}
	return strconv.FormatFloat(s/86400, 'f', 1, 64) + " d"
}
