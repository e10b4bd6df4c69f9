package predict

import (
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"scaleplan/hw"
	"scaleplan/internal/calib"
	"scaleplan/internal/units"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// TestLawRange checks the closed form of the calibrated law's compute at
// its intervals' ends: t(b) = b·Devices/v0 + t, fastest at (v0 high,
// t low), slowest at (v0 low, t high).
func TestLawRange(t *testing.T) {
	c := &scenarios.Calibration{V0: 800, T: 0.01, Devices: 4,
		V0Interval: [2]float64{640, 1000}, TInterval: [2]units.Seconds{0.005, 0.02}}
	lo, hi, ok := LawRange(c, 32)
	// 32·4/1000 + 0.005 = 0.133; 32·4/640 + 0.02 = 0.22.
	if !ok || math.Abs(float64(lo)-0.133) > 1e-12 || math.Abs(float64(hi)-0.22) > 1e-12 {
		t.Errorf("LawRange = %v, %v, %v; want 0.133 s, 0.22 s", lo, hi, ok)
	}
	if _, _, ok := LawRange(&scenarios.Calibration{V0: 800, T: 0.01}, 32); ok {
		t.Error("a law without intervals has a range")
	}
	if _, _, ok := LawRange(nil, 32); ok {
		t.Error("no calibration has a range")
	}
}

// TestCalibratedRange checks a calibrated prediction's interval against
// the simulator run at the interval's ends: on one device the step is its
// compute, so the closed form and the simulation agree.
func TestCalibratedRange(t *testing.T) {
	e := calib.ThroughputEntry{Model: "resnet50", Device: "p100-sxm2", Devices: 1, V0: 200, T: 0.01, R2: 1, Points: 5,
		V0Interval: []float64{180, 220}, TInterval: []units.Seconds{0.005, 0.015}}
	files := []scenarios.CalibrationFile{{Path: "cal.yaml", Cal: &calib.Calibration{Throughput: []calib.ThroughputEntry{e}}}}
	one := func(s *scenarios.Scenario) { s.Sweep.Devices = []int{1} }
	p := predictOn(t, "tsubame3-resnet50-caffe2-verbs", 1, files)
	if p.Source.String() != "calibrated cal.yaml" || !p.Source.Calibrated() {
		t.Errorf("source %q, calibrated %v", p.Source, p.Source.Calibrated())
	}
	row := p.Rows[0]
	for i, law := range [][2]float64{{220, 0.005}, {180, 0.015}} {
		at, err := scenarios.Load("tsubame3-resnet50-caffe2-verbs", scenarios.Options{Edit: func(s *scenarios.Scenario) {
			one(s)
			s.Calibration = &scenarios.Calibration{V0: law[0], T: units.Seconds(law[1]), Devices: 1}
		}})
		if err != nil {
			t.Fatal(err)
		}
		q, err := Predict(at, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := float64(row.TrainRange[i]), float64(q.Rows[0].Time); math.Abs(got-want) > 1e-6*want {
			t.Errorf("end %d: %v s, simulated at v0 %v, t %v: %v s", i, got, law[0], law[1], want)
		}
	}
}

// TestUncalibratedBand checks the band of an uncalibrated row: Time plus
// the operator model's published band (−11.0 % to +43.5 %: the 10th and
// 90th percentiles of its error over the published files) times the
// steps' time, widened by the exposed communication's band where the
// exchange is NCCL's: ∓ the collective model's published error at a
// 25 MiB bucket on one node (16.7 %, the band from 16 to 256 MiB of
// docs/validation-collectives.md) times the steps' exposed communication.
func TestUncalibratedBand(t *testing.T) {
	p := predictOn(t, "dgx-a100-resnet50-mlperf-v1.1", 8, nil)
	if p.Source.String() != "operators" || p.Source.Calibrated() {
		t.Fatalf("source %q", p.Source)
	}
	row := p.Rows[0]
	comm := float64(row.StepsToTarget) * float64(row.Result.Breakdown.Comm)
	if comm <= 0 || row.CommMessage != 25*units.MiB || row.CommError != 0.167 {
		t.Fatalf("exposed communication %v s, message %v, error %v; want some, 25 MiB, 0.167", comm, row.CommMessage, row.CommError)
	}
	tr := float64(row.Training) // docs/compute.md: every published file, operators
	lo, hi := float64(row.Time)-0.093*tr-0.167*comm, float64(row.Time)+0.291*tr+0.167*comm
	if math.Abs(float64(row.TrainRange[0])-lo) > 1e-9 || math.Abs(float64(row.TrainRange[1])-hi) > 1e-9 {
		t.Errorf("band %v, want [%v %v]", row.TrainRange, lo, hi)
	}
	for _, c := range []struct {
		s    Source
		want float64
		band Band
	}{
		{Source{Kind: "roofline"}, 0.996, Band{Lo: -0.996, Hi: 0.996}},
		{Source{Kind: "operators"}, OperatorsError, OperatorsBand},
		{Source{Kind: "operators", By: "x.yaml"}, CarriedOperatorsError, CarriedOperatorsBand},
		{Source{Kind: "calibrated"}, 0, Band{}},
	} {
		if got := c.s.Error(); got != c.want {
			t.Errorf("%s: error %v, want %v", c.s, got, c.want)
		}
		if got := c.s.Band(); got != c.band {
			t.Errorf("%s: band %v, want %v", c.s, got, c.band)
		}
	}
}

// predictOn predicts the built-in scenario name on devices devices alone,
// with the calibration files cals.
func predictOn(t *testing.T, name string, devices int, cals []scenarios.CalibrationFile) *Prediction {
	t.Helper()
	r, err := scenarios.Load(name, scenarios.Options{Calibrations: cals, Edit: func(s *scenarios.Scenario) { s.Sweep.Devices = []int{devices} }})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Predict(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCarriedOperatorsErrorQuoted checks CarriedOperatorsError and
// CarriedOperatorsBand against the page they quote: the larger of the two
// cross-device errors, and the wider ends of the two intervals, that
// docs/compute-calibration.md generates from `validate --measured` of one
// machine's sweep with the other's operators calibration (kept current by
// internal/cmd's TestValidationDocCurrent).
func TestCarriedOperatorsErrorQuoted(t *testing.T) {
	data, err := os.ReadFile("../docs/compute-calibration.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?m)^<!-- generated by: scaleplan validate --format md --measured testdata/measurements/h[12]00-2026-11-26\*/\*\.jsonl --calibration testdata/calibrations/operators-h[12]00-2026-11-26\.yaml .*-->\n- mean absolute error of samples/s over \d+ measurements: ([0-9.]+)%`)
	ms := block.FindAllStringSubmatch(string(data), -1)
	if len(ms) != 2 {
		t.Fatalf("%d cross-device blocks in docs/compute-calibration.md, want 2", len(ms))
	}
	worst := 0.0
	for _, m := range ms {
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		worst = math.Max(worst, v/100)
	}
	if math.Abs(CarriedOperatorsError-worst) > 5e-4 {
		t.Errorf("CarriedOperatorsError %v, want the page's larger cross-device error %v", CarriedOperatorsError, worst)
	}
	// The band: the wider end of the two blocks' intervals.
	iv := regexp.MustCompile(`(?m)^<!-- generated by: scaleplan validate --format md --measured testdata/measurements/h[12]00-2026-11-26\*/\*\.jsonl --calibration testdata/calibrations/operators-h[12]00-2026-11-26\.yaml .*-->\n- mean absolute error .*\n- error of samples/s in 80% of the \d+ predictions: ([-+0-9.]+)% to ([-+0-9.]+)%`)
	ivs := iv.FindAllStringSubmatch(string(data), -1)
	if len(ivs) != 2 {
		t.Fatalf("%d cross-device intervals in docs/compute-calibration.md, want 2", len(ivs))
	}
	want := Band{Lo: math.Inf(1), Hi: math.Inf(-1)}
	for _, m := range ivs {
		lo, err1 := strconv.ParseFloat(m[1], 64)
		hi, err2 := strconv.ParseFloat(m[2], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%q: %v, %v", m[0], err1, err2)
		}
		want.Lo, want.Hi = math.Min(want.Lo, lo/100), math.Max(want.Hi, hi/100)
	}
	if math.Abs(CarriedOperatorsBand.Lo-want.Lo) > 5e-4 || math.Abs(CarriedOperatorsBand.Hi-want.Hi) > 5e-4 {
		t.Errorf("CarriedOperatorsBand %v, want the wider ends of the page's cross-device intervals %v", CarriedOperatorsBand, want)
	}
}

// TestCommError checks the bands of CommError at their edges (a band holds
// its lower edge) and on one node and several.
func TestCommError(t *testing.T) {
	for _, c := range []struct {
		b     units.Bytes
		nodes int
		want  float64
	}{
		{8, 1, CommErrors[0][0]}, {64*units.KiB - 1, 1, CommErrors[0][0]}, {64 * units.KiB, 1, CommErrors[0][1]},
		{units.MiB, 2, CommErrors[1][2]}, {25 * units.MiB, 2, CommErrors[1][3]}, {256*units.MiB - 1, 4, CommErrors[1][3]},
		{256 * units.MiB, 4, CommErrors[1][4]}, {units.TiB, 0, CommErrors[0][4]},
	} {
		if got := CommError(c.b, c.nodes); got != c.want {
			t.Errorf("CommError(%v, %d) = %v, want %v", c.b, c.nodes, got, c.want)
		}
	}
}

// TestCommRangeOnlyNCCL checks that the exposed communication widens the
// range of an NCCL exchange only: TSUBAME's halving-doubling over several
// nodes (an algorithm no nccl-tests table measures) keeps the compute's
// band; and that over links a fabric calibration set, one DGX A100's, the
// band is that fit's own error (its entry's 3 %), its file named.
func TestCommRangeOnlyNCCL(t *testing.T) {
	p := predictOn(t, "tsubame3-resnet50-caffe2-verbs", 16, nil)
	if row := p.Rows[0]; row.Result == nil || row.Result.Breakdown.Comm <= 0 || row.CommError != 0 || row.CommMessage != 0 {
		t.Errorf("halving-doubling: exposed %v, message %v, error %v; want some exposed, no band", row.Result.Breakdown.Comm, row.CommMessage, row.CommError)
	}
	fabric := []scenarios.CalibrationFile{{Path: "fabric.yaml", Cal: &calib.Calibration{Fabric: []calib.FabricEntry{
		{System: "dgx-a100-540", Level: "intra", Algorithm: "nccl", Bandwidth: 200e9, Latency: 2e-6, Error: 0.03}}}}}
	p = predictOn(t, "dgx-a100-resnet50-mlperf-v1.1", 8, fabric)
	if len(p.Scenario.Fabric) == 0 {
		t.Fatal("the fabric calibration was not taken")
	}
	row := p.Rows[0]
	if row.Result == nil || row.Result.Breakdown.Comm <= 0 || row.CommError != 0.03 || row.CommBy != "fabric.yaml" {
		t.Fatalf("calibrated fabric: exposed %v, error %v by %q; want some exposed, the fit's 0.03 by fabric.yaml", row.Result.Breakdown.Comm, row.CommError, row.CommBy)
	}
	c := 0.03 * float64(row.StepsToTarget) * float64(row.Result.Breakdown.Comm)
	lo, hi := float64(row.Time)+OperatorsBand.Lo*float64(row.Training)-c, float64(row.Time)+OperatorsBand.Hi*float64(row.Training)+c
	if math.Abs(float64(row.TrainRange[0])-lo) > 1e-9 || math.Abs(float64(row.TrainRange[1])-hi) > 1e-9 {
		t.Errorf("calibrated fabric: band %v, want [%v %v]", row.TrainRange, lo, hi)
	}
	// Two nodes: the intra entry does not set the level between nodes, so
	// the band is the published tables' on several nodes.
	if row := predictOn(t, "dgx-a100-resnet50-mlperf-v1.1", 16, fabric).Rows[0]; row.Result.Nodes != 2 || row.CommError != CommError(row.CommMessage, 2) || row.CommBy != "" {
		t.Errorf("two nodes, intra calibrated: %d nodes, error %v by %q; want 2, the published %v", row.Result.Nodes, row.CommError, row.CommBy, CommError(row.CommMessage, 2))
	}
}

// TestBandsQuoted checks the pages' account of the compute's bands
// (docs/predict.md, docs/validation.md, docs/calibrate.md) against OperatorsBand and
// CarriedOperatorsBand.
func TestBandsQuoted(t *testing.T) {
	pct := func(v float64) string { return strconv.FormatFloat(100*math.Abs(v), 'f', 1, 64) + " %" }
	sign := func(v float64) string {
		if v < 0 {
			return "−"
		}
		return "+"
	}
	for _, c := range []struct{ page, want string }{
		{"predict.md", "times 1 " + sign(OperatorsBand.Lo) + " " + pct(OperatorsBand.Lo) + " to 1 " + sign(OperatorsBand.Hi) + " " + pct(OperatorsBand.Hi)},
		{"predict.md", sign(CarriedOperatorsBand.Lo) + pct(CarriedOperatorsBand.Lo) + " to " + sign(CarriedOperatorsBand.Hi) + pct(CarriedOperatorsBand.Hi)},
		{"validation.md", "over the published files, " + sign(OperatorsBand.Lo) + pct(OperatorsBand.Lo) + " to " + sign(OperatorsBand.Hi) + pct(OperatorsBand.Hi)},
		{"calibrate.md", "(" + sign(OperatorsBand.Lo) + pct(OperatorsBand.Lo) + " to " + sign(OperatorsBand.Hi) + pct(OperatorsBand.Hi) + " for the operator model"},
	} {
		data, err := os.ReadFile("../docs/" + c.page)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(strings.Fields(string(data)), " "), c.want) {
			t.Errorf("docs/%s lacks %q", c.page, c.want)
		}
	}
}

// TestCommErrorsQuoted checks the pages that quote CommErrors against
// the constants: docs/predict.md's bands at 16 to 256 MiB and at 1 to
// 16 MiB, and docs/calibrate.md's between nodes.
func TestCommErrorsQuoted(t *testing.T) {
	pct := func(v float64) string { return strconv.FormatFloat(100*v, 'f', 1, 64) + " %" }
	for page, want := range map[string]string{
		"../docs/predict.md": pct(CommErrors[0][3]) + " on one node and " + pct(CommErrors[1][3]) + " on several at 16 to 256 MiB, " +
			strconv.FormatFloat(100*CommErrors[0][2], 'f', 1, 64) + " and " + pct(CommErrors[1][2]) + " at 1 to 16 MiB",
		"../docs/calibrate.md": pct(CommErrors[1][3]) + " between nodes at 16 to 256 MiB",
	} {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(strings.Fields(string(data)), " "), want) {
			t.Errorf("%s lacks %q", page, want)
		}
	}
}

// TestCommRangeFloor checks that the exposed communication's band does
// not take the low end of a range below the one-time costs: a step all
// exchange (1 s of its 1 s exposed) over 10 steps, on a roofline band of
// 99.6 %, would reach 100 − 9.96 − 4.04 s, less than the 90 s of
// overheads; the low end stops at 90 s, the high end moves by the whole
// 4.04 s.
func TestCommRangeFloor(t *testing.T) {
	row := Row{StepsToTarget: 10, Training: 10, Time: 100, TrainRange: [2]units.Seconds{100 - 9.96, 100 + 9.96},
		Result: &sim.Result{Nodes: 2, Breakdown: sim.Breakdown{Comm: 1}}}
	r := &scenarios.Resolved{Sys: &hw.System{Name: "x"}}
	cfg := sim.Config{Comm: sim.Comm{Algorithm: sim.NCCL}, Memory: sim.Memory{Gradients: 100 * units.MiB}}
	row.setCommRange(r, cfg)
	if row.CommError != CommErrors[1][3] || row.CommMessage != sim.DefaultBucket {
		t.Fatalf("error %v at %v; want %v at the default bucket", row.CommError, row.CommMessage, CommErrors[1][3])
	}
	want := [2]units.Seconds{90, units.Seconds(100 + 9.96 + 10*CommErrors[1][3])}
	if math.Abs(float64(row.TrainRange[0]-want[0])) > 1e-9 || math.Abs(float64(row.TrainRange[1]-want[1])) > 1e-9 {
		t.Errorf("range %v, want %v", row.TrainRange, want)
	}
}
