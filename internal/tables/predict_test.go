package tables

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"scaleplan/hw"
	"scaleplan/internal/units"
	"scaleplan/predict"
	"scaleplan/scenarios"
	"scaleplan/sim"
)

// exchangeNote gives the share of the bucket's all-reduce that is
// latency, 7.154/7.292 = 98.1 %, and names the faster algorithm only when
// there is one.
func TestExchangeNote(t *testing.T) {
	c := &predict.ExchangeCheck{Devices: 512, Algorithm: sim.Ring, Bucket: 25 << 20,
		Time: 7.292e-3, Latency: 7.154e-3, Faster: sim.HalvingDoubling, FasterTime: 329.2e-6}
	want := "exchange: latency-bound at 512 devices: ring all-reduces a 25 MiB bucket in 7.292 ms, 98% of it the latency its steps cost (one byte takes 7.154 ms)" +
		"; of the simulator's all-reduces, halving-doubling takes it in 329.2 us (parallelism.allreduce, inter_node; docs/network.md, \"Rings at scale\")"
	if got := exchangeNote(c); got != want {
		t.Errorf("exchangeNote:\n got %s\nwant %s", got, want)
	}
	c.Faster, c.FasterTime = c.Algorithm, c.Time
	want = "exchange: latency-bound at 512 devices: ring all-reduces a 25 MiB bucket in 7.292 ms, 98% of it the latency its steps cost (one byte takes 7.154 ms)"
	if got := exchangeNote(c); got != want {
		t.Errorf("exchangeNote, none faster:\n got %s\nwant %s", got, want)
	}
	if got := exchangeNote(nil); got != "" {
		t.Errorf("exchangeNote(nil) = %q, want \"\"", got)
	}
}

// ComputeNote and computeSource say whether compute is the roofline's or
// a calibration's, and whose.
func TestComputeNote(t *testing.T) {
	r := &scenarios.Resolved{Device: &hw.Device{Name: "v100-sxm2"}}
	r.Precision = "fp16"
	if got, want := ComputeNote(r), "compute: roofline of v100-sxm2 at fp16"; got != want {
		t.Errorf("roofline: ComputeNote = %q, want %q", got, want)
	}
	if got, want := computeSource(r), "by roofline"; got != want {
		t.Errorf("roofline: computeSource = %q, want %q", got, want)
	}
	r.Calibration = &scenarios.Calibration{V0: 1234.6, T: 0.0125, Devices: 8, Source: "a log"}
	if got, want := ComputeNote(r), "compute: calibrated, v0 = 1235 samples/s on 8 device(s), t = 12.5 ms (a log)"; got != want {
		t.Errorf("calibrated: ComputeNote = %q, want %q", got, want)
	}
	if got, want := computeSource(r), "calibrated"; got != want {
		t.Errorf("calibrated: computeSource = %q, want %q", got, want)
	}
	r.CalibratedBy = "cal.yaml"
	if got, want := computeSource(r), "calibrated by cal.yaml"; got != want {
		t.Errorf("--calibration: computeSource = %q, want %q", got, want)
	}
}

// sideBySideTable has a row per device count and batch of any variant,
// in the order first seen, "-" where a variant has no such row and
// "error" where it cannot run; the times are predict.Duration's.
func TestSideBySideTable(t *testing.T) {
	row := func(devices, batch int, time units.Seconds, err error) predict.Row {
		pt := scenarios.Point{Devices: devices, BatchPerDevice: batch, GlobalBatch: devices * batch}
		r := predict.Row{Point: pt, Time: time, Err: err, Risk: predict.Risk{GlobalBatch: pt.GlobalBatch, Limit: 1024}}
		if err == nil {
			r.Result = &sim.Result{}
		}
		return r
	}
	a := &predict.Prediction{Label: "as delivered", Rows: []predict.Row{row(8, 32, 3600, nil), row(16, 32, 0, errors.New("out of memory"))}}
	b := &predict.Prediction{Label: "staged", Rows: []predict.Row{row(8, 32, 5400, nil), row(64, 32, 7200, nil)}}
	got := sideBySideTable(&predict.Study{Description: "staging"}, []*predict.Prediction{a, b})
	want := &Table{
		Title:  "Time to train side by side: staging",
		Header: []string{"devices", "global batch", "as delivered", "staged", "risk"},
		Units:  map[string]string{"as delivered": "seconds", "staged": "seconds"},
		Rows: [][]string{
			{"8", "256", "60.0 min", "90.0 min", "ok"},
			{"16", "512", "error", "-", "ok"},
			{"64", "2048", "-", "2.00 h", "at risk (2.0× 1,024)"},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sideBySideTable:\n got %+v\nwant %+v", got, want)
	}
}

// spreadNote lists the rows whose time has a range, each end in words as
// the table's time-to-train column writes it.
func TestSpreadNote(t *testing.T) {
	p := &predict.Prediction{Rows: []predict.Row{
		{Point: scenarios.Point{Devices: 64}, TimeRange: [2]units.Seconds{240, 300}},
		{Point: scenarios.Point{Devices: 128}},
		{Point: scenarios.Point{Devices: 1024}, TimeRange: [2]units.Seconds{28, 30}},
	}}
	want := "spread of runs, the steps law's intervals: 64 devices 4.0 min to 5.0 min; 1024 devices 28 s to 30 s"
	if got := spreadNote(p); got != want {
		t.Errorf("spreadNote = %q, want %q", got, want)
	}
	if got := spreadNote(&predict.Prediction{Rows: []predict.Row{{}}}); got != "" {
		t.Errorf("without ranges: %q, want none", got)
	}
}

// RangeNote states the band of an uncalibrated source, the operator
// model's interval at its level or the roofline's mean absolute error,
// and a calibration's interval ends; rangeCells prints
// the interval as one text cell or two machine cells.
func TestRangeNote(t *testing.T) {
	r := &scenarios.Resolved{Device: &hw.Device{Name: "v100-sxm2"}}
	p := &predict.Prediction{Scenario: r, Source: predict.Source{Kind: "roofline"}}
	want := "range: time to train with the steps' time ∓ 99.6 %, the roofline model's measured mean absolute error of samples/s (docs/compute.md, Validation); not an interval at a level"
	if got := RangeNote(p); got != want {
		t.Errorf("roofline:\n got %s\nwant %s", got, want)
	}
	p.Source = predict.Source{Kind: "operators"}
	ob := predict.OperatorsBand
	want = fmt.Sprintf("range: time to train with the steps' time from %+.1f %% to %+.1f %%, the operators model's measured band: the measured steps of 80 %% of its validation's rows lay within it, from the 10th to the 90th percentile of its error (docs/compute.md, Validation)", 100*ob.Lo, 100*ob.Hi)
	if got := RangeNote(p); got != want {
		t.Errorf("operators:\n got %s\nwant %s", got, want)
	}
	p.Source = predict.Source{Kind: "operators", By: "ops.yaml"}
	cb := predict.CarriedOperatorsBand
	want = fmt.Sprintf("range: time to train with the steps' time from %+.1f %% to %+.1f %%, the operators model's (calibrated on another device by ops.yaml) measured band: the measured steps of 80 %% of its validation's rows lay within it, from the 10th to the 90th percentile of its error (docs/compute.md, Validation)", 100*cb.Lo, 100*cb.Hi)
	if got := RangeNote(p); got != want {
		t.Errorf("operators carried:\n got %s\nwant %s", got, want)
	}
	r.Calibration = &scenarios.Calibration{V0: 200, T: 0.01, Devices: 1}
	p.Source = predict.Source{Kind: "calibrated", By: "cal.yaml"}
	if got, want := RangeNote(p), "range: none, the calibration gives no intervals of v0 and t"; got != want {
		t.Errorf("no intervals: %q, want %q", got, want)
	}
	r.Calibration.V0Interval, r.Calibration.TInterval = [2]float64{180, 220}, [2]units.Seconds{0.005, 0.015}
	want = "range: time to train with the compute of the law t(b) = b/v0 + t at the ends of its intervals (closed form: v0 180 to 220 samples/s, t 5 ms to 15 ms), the change taken on every step"
	if got := RangeNote(p); got != want {
		t.Errorf("calibrated:\n got %s\nwant %s", got, want)
	}
	// Rows widened by their exposed communication: the published tables'
	// error and a fabric fit's, each size and node class once.
	one, two := &sim.Result{Nodes: 1}, &sim.Result{Nodes: 2}
	p.Rows = []predict.Row{
		{Result: one, CommError: 0.167, CommMessage: 25 * units.MiB},
		{Result: two, CommError: 0.404, CommMessage: 25 * units.MiB},
		{Result: two, CommError: 0.404, CommMessage: 25 * units.MiB},
		{Result: two, CommError: 0.05, CommMessage: 25 * units.MiB, CommBy: "fabric.yaml"},
		{Result: two},
	}
	want += "; and the steps' exposed communication ∓ NCCL's collective model's measured mean absolute error of the time at the size of a gradient bucket's all-reduce, uncalibrated, on published nccl-tests tables (16.7 % at 25 MiB on one node, 40.4 % at 25 MiB on several nodes; docs/validation-collectives.md), the model being too fast there" +
		"; and the steps' exposed communication ∓ the fabric calibration's own mean absolute error of the time over the sizes it was fitted to (5.0 % at 25 MiB on several nodes (fabric.yaml)), a lower bound of its error elsewhere"
	if got := RangeNote(p); got != want {
		t.Errorf("with communication:\n got %s\nwant %s", got, want)
	}
	// An exchange of another algorithm: its exposed time is said to be
	// outside the band.
	h := &scenarios.Resolved{Device: r.Device, Scenario: scenarios.Scenario{Parallelism: scenarios.Parallelism{AllReduce: "hierarchical", InterNode: "double-tree"}}}
	q := &predict.Prediction{Scenario: h, Source: predict.Source{Kind: "operators"}, Rows: []predict.Row{{Result: &sim.Result{Nodes: 2, Breakdown: sim.Breakdown{Comm: 0.01}}}}}
	if got, want := RangeNote(q), "; the exposed communication of its exchange (hierarchical, double-tree between nodes) is not in it: no published table measures that model's error"; !strings.HasSuffix(got, want) {
		t.Errorf("hierarchical:\n got %s\nwant it to end %s", got, want)
	}
	q.Rows[0].Result.Breakdown.Comm = 0
	if got := RangeNote(q); strings.Contains(got, "exposed communication") {
		t.Errorf("hierarchical without exposed communication: %s", got)
	}
	tr := [2]units.Seconds{1800, 5400}
	if got := rangeCells(tr, false); !reflect.DeepEqual(got, []string{"30.0 min – 90.0 min"}) {
		t.Errorf("text range %q", got)
	}
	if got := rangeCells(tr, true); !reflect.DeepEqual(got, []string{"30.0 min", "90.0 min"}) {
		t.Errorf("machine range %q", got)
	}
	if got := rangeCells([2]units.Seconds{}, true); !reflect.DeepEqual(got, []string{"-", "-"}) {
		t.Errorf("no range %q", got)
	}
}
