package validate

import (
	"math"
	"strings"
	"testing"

	"scaleplan/fit/logs"
	"scaleplan/internal/units"
)

// TestClassOf sorts placements into the classes.
func TestClassOf(t *testing.T) {
	for _, tc := range []struct {
		pl   []int
		want PlacementClass
	}{
		{[]int{1}, OneDevice}, {[]int{2}, OneNode}, {[]int{4}, OneNode},
		{[]int{1, 1}, EqualNodes}, {[]int{4, 4, 4, 4}, EqualNodes},
		{[]int{1, 2}, UnevenNodes}, {[]int{1, 2, 3, 4}, UnevenNodes}, {[]int{4, 4, 3}, UnevenNodes},
	} {
		if got := ClassOf(tc.pl); got != tc.want {
			t.Errorf("ClassOf(%v) = %q, want %q", tc.pl, got, tc.want)
		}
	}
}

// syntheticTable is a placement table of resnet50 on aws-g4dn whose rows
// of one device follow the law v = b/(b/v0 + t) exactly, v0 = 250
// samples/s and t = 60 ms, and whose other rows hold stepTime.
func syntheticTable(stepTime units.Seconds) *PlacementTable {
	const v0, t0 = 250.0, 0.06
	tab := &PlacementTable{Source: "synthetic.csv", Model: "resnet50", Precision: "amp-fp16", System: "aws-g4dn", SimSteps: 3}
	line := 2
	for _, pl := range [][]int{{1}, {2}, {4}, {1, 1}, {4, 4}, {1, 2, 3, 4}, {4, 3}} {
		for _, b := range []int{16, 64, 200} {
			line++
			st := logs.PlacementStep{Line: line, Placement: pl, Batch: b, StepTime: stepTime}
			if len(pl) == 1 && pl[0] == 1 {
				st.StepTime = units.Seconds(float64(b)/v0 + t0)
			}
			tab.Steps = append(tab.Steps, st)
		}
	}
	return tab
}

// TestComparePlacementsSynthetic: the law fitted to exact one-device rows
// gives back v0 and t, and predicts those rows exactly (the closed form
// b/v0 + t); a table whose other rows are the simulator's own step times
// at that law is predicted with no error in any class.
func TestComparePlacementsSynthetic(t *testing.T) {
	cat, prof := defaults(t)
	rep, err := ComparePlacements(syntheticTable(1), cat, prof)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(rep.Law.V0/250-1) > 1e-9 || math.Abs(float64(rep.Law.T)/0.06-1) > 1e-9 {
		t.Fatalf("law v0 %v, t %v; want 250 and 0.06", rep.Law.V0, rep.Law.T)
	}
	sim := syntheticTable(1)
	for i, r := range rep.Rows {
		if r.Calibrating {
			if want := float64(r.Batch)/250 + 0.06; math.Abs(float64(r.Predicted)/want-1) > 1e-9 || r.Class != OneDevice {
				t.Errorf("one device, batch %d: predicted %v, want b/v0 + t = %v", r.Batch, r.Predicted, want)
			}
			continue
		}
		if compute := float64(r.Batch)/250 + 0.06; !(float64(r.Predicted) > compute) || !(r.PredictedSync > 0) {
			t.Errorf("%v, batch %d: predicted %v (sync %v), want more than the compute %v", r.Placement, r.Batch, r.Predicted, r.PredictedSync, compute)
		}
		sim.Steps[i].StepTime = r.Predicted
	}
	again, err := ComparePlacements(sim, cat, prof)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Classes) != 3 || again.MAE > 1e-12 {
		t.Fatalf("classes %+v, MAE %v", again.Classes, again.MAE)
	}
	for _, c := range again.Classes {
		if c.Rows == 0 || c.MAE > 1e-12 || math.Abs(c.Bias) > 1e-12 {
			t.Errorf("class %+v: want no error", c)
		}
	}
	// Every measured step of 1 s: the error of each row is its predicted
	// step less 1 s, and a class's bias the mean of those.
	for _, c := range rep.Classes {
		var sum float64
		for _, r := range rep.Rows {
			if r.Class == c.Class {
				sum += float64(r.Predicted) - 1
			}
		}
		if want := sum / float64(c.Rows); math.Abs(c.Bias-want) > 1e-12 {
			t.Errorf("class %s: bias %v, want %v", c.Class, c.Bias, want)
		}
	}
}

// TestImpliedBusRate: a ring over n devices sends 2(n−1)/n of the
// gradients; 100 MB over 4 devices in 0.15 s is 1 GB/s.
func TestImpliedBusRate(t *testing.T) {
	r := PlacementRow{PlacementStep: logs.PlacementStep{Placement: []int{2, 2}, SyncTime: 0.15}, GradientBytes: 100e6}
	if got := r.ImpliedBusRate(); math.Abs(got/1e9-1) > 1e-12 {
		t.Errorf("rate %v, want 1e9", got)
	}
	one := PlacementRow{PlacementStep: logs.PlacementStep{Placement: []int{1}, SyncTime: 0.15}, GradientBytes: 100e6}
	if !math.IsNaN(one.ImpliedBusRate()) {
		t.Errorf("one device: rate %v, want NaN", one.ImpliedBusRate())
	}
}

// TestComparePlacementsErrors: a table without a row of one device, and a
// placement the system's nodes cannot hold, are errors naming the file
// and line.
func TestComparePlacementsErrors(t *testing.T) {
	cat, prof := defaults(t)
	tab := syntheticTable(1)
	tab.Steps = tab.Steps[3:]
	if _, err := ComparePlacements(tab, cat, prof); err == nil || err.Error() != "synthetic.csv: no row of placement 1 (one device) to calibrate the compute on" {
		t.Errorf("no one-device row: %v", err)
	}
	tab = syntheticTable(1)
	tab.Steps[4].Placement = []int{5, 1}
	if _, err := ComparePlacements(tab, cat, prof); err == nil || err.Error() != "synthetic.csv:7: placement 51: system aws-g4dn has 16 nodes of 4 devices" {
		t.Errorf("5 devices on a node of 4: %v", err)
	}
	tab = syntheticTable(1)
	tab.Steps[4].Placement = []int{2, 0}
	if _, err := ComparePlacements(tab, cat, prof); err == nil || err.Error() != "synthetic.csv:7: placement 2(0): want one or more nodes of 1 or more devices each" {
		t.Errorf("a node of 0 devices: %v", err)
	}
	if ClassOf(nil) != "" {
		t.Errorf("ClassOf(nil) = %q, want \"\"", ClassOf(nil))
	}
	tab = syntheticTable(1)
	tab.Model = "resnet-50"
	if _, err := ComparePlacements(tab, cat, prof); err == nil || !strings.HasPrefix(err.Error(), `synthetic.csv: unknown model "resnet-50"`) {
		t.Errorf("unknown model: %v", err)
	}
}
