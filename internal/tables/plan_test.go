package tables_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"scaleplan/internal/tables"
	"scaleplan/internal/units"
	"scaleplan/plan"
	"scaleplan/predict"
)

// planResult is a search that found one candidate, which misses the
// deadline, and four infeasible families: three out of memory on two
// systems, one with too many nodes.
func planResult() *plan.Result {
	cand := plan.Candidate{
		Config: plan.Config{System: "dgx-a100", Devices: 8, Nodes: 1, BatchPerDevice: 256, Accumulation: 1, Stages: 1, GlobalBatch: 2048,
			Precision: "fp16", AllReduce: "ring", Storage: "local"},
		Row:        predict.Row{Time: 7200, DeviceHours: 16, Energy: 12.5, Risk: predict.Risk{GlobalBatch: 2048}},
		Cost:       16,
		Misses:     []string{"deadline 60.0 min: takes 2.00 h"},
		Bottleneck: "compute",
	}
	mem := func(system string, devices int) plan.Infeasible {
		return plan.Infeasible{Config: plan.Config{System: system, Devices: devices}, Reason: plan.ReasonMemory, Detail: fmt.Sprintf("%d devices", devices)}
	}
	return &plan.Result{
		Request: plan.Request{Systems: []string{"dgx-a100", "tsubame3"}, MaxDevices: 64, Deadline: 3600, Decode: "host"},
		Target:  "ResNet-50 to top-1 0.759 (90 epochs)", CostBasis: "device-hours", CostNote: "cost: device-hours (tsubame3 has no price)",
		Candidates: []plan.Candidate{cand}, Pareto: []plan.Candidate{cand},
		Infeasible: []plan.Infeasible{
			{Config: plan.Config{System: "tsubame3", Devices: 1024}, Reason: plan.ReasonNodes, Detail: "256 nodes, the system has 540"},
			mem("dgx-a100", 64), mem("dgx-a100", 32), mem("tsubame3", 16),
		},
		Enumerated: 12345, Simulated: 40,
		Compute: []plan.ComputeSource{
			{System: "dgx-a100", Device: "a100", Precision: "fp16", Efficiency: 0.35},
			{System: "dgx-a100", Device: "a100", Precision: "tf32", Efficiency: 0.35},
			{System: "tsubame3", Device: "p100", Precision: "fp32", Skipped: true},
		},
	}
}

// The text report: the summary with the compute of each system, the
// recommendation when none meets the target, and the infeasible families
// counted per reason, most first, with examples from every system first.
func TestPlanText(t *testing.T) {
	res := planResult()
	var b strings.Builder
	if err := tables.Plan(res, 2).Write(&b, "text"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	cfg := res.Candidates[0].Config.String()
	head := strings.Join([]string{
		"plan: ResNet-50 to top-1 0.759 (90 epochs) on dgx-a100, tsubame3, at most 64 devices; deadline 60.0 min; budget none; samples decoded on the host",
		fmt.Sprintf("searched 12,345 feasible configurations: simulated 40 (%d steps each), kept the fastest of each system and device count (1), predicted with 2 steps", plan.ScreenSteps),
		"cost: device-hours (tsubame3 has no price)",
		"compute on dgx-a100 (a100): fp16, tf32: roofline, 0.35 of the peak",
		"compute on tsubame3 (p100): fp32: not searched, as measured and assumed speeds do not compare (--precisions searches them uncalibrated)",
		"roofline: the model's assumed",
	}, "\n")
	if !strings.HasPrefix(out, head) {
		t.Errorf("the summary: want it to start with\n%s\ngot\n%s", head, out)
	}
	reco := "\nrecommendation: none meets the target (deadline 60.0 min: takes 2.00 h); the fastest is " + cfg + " (2.00 h, 16.0 device-hours, 12.5 kWh), the cheapest " + cfg + " (2.00 h, 16.0 device-hours, 12.5 kWh)\n"
	if !strings.Contains(out, reco) {
		t.Errorf("no line %q in\n%s", reco, out)
	}
	inf := res.Infeasible
	tail := strings.Join([]string{
		"infeasible: 4 configuration families (an unset field, *, stands for every value; --format json lists all)",
		"out of memory: 3",
		"    " + inf[1].Config.String() + " — 64 devices",
		"    " + inf[3].Config.String() + " — 16 devices",
		"more nodes than the system has: 1",
		"    " + inf[0].Config.String() + " — 256 nodes, the system has 540",
	}, "\n") + "\n"
	if !strings.HasSuffix(out, tail) {
		t.Errorf("the infeasible: want it to end with\n%s\ngot\n%s", tail, out)
	}
}

// In json the candidate's figures are numbers in SI units, an unknown
// batch limit is said beside the target, and the summary ends with the
// recommendation.
func TestPlanJSON(t *testing.T) {
	var b strings.Builder
	if err := tables.Plan(planResult(), 2).Write(&b, "json"); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Candidates []map[string]any
		Infeasible []map[string]any
		Summary    []map[string]any
	}
	if err := json.Unmarshal([]byte(b.String()), &got); err != nil {
		t.Fatalf("%v:\n%s", err, b.String())
	}
	if len(got.Candidates) != 1 || len(got.Infeasible) != 4 || len(got.Summary) != 7 {
		t.Fatalf("%d candidates, %d infeasible, %d summary lines; want 1, 4, 7:\n%s", len(got.Candidates), len(got.Infeasible), len(got.Summary), b.String())
	}
	c := got.Candidates[0]
	for k, want := range map[string]any{
		"devices": 8.0, "global_batch": 2048.0, "allreduce": "ring", "transport": nil, "time_s": 7200.0, "time_to_train_s": 7200.0,
		"device_hours": 16.0, "cost_usd": nil, "energy_j": 12.5 * 3.6e6, "target": "deadline 60.0 min: takes 2.00 h (batch limit unknown)",
	} {
		if c[k] != want {
			t.Errorf("candidate %s = %v, want %v", k, c[k], want)
		}
	}
	if got, want := got.Infeasible[1]["nodes"], "*"; got != want {
		t.Errorf("infeasible nodes = %v, want %v (unset)", got, want)
	}
	if s, _ := got.Summary[6]["summary"].(string); !strings.HasPrefix(s, "recommendation: none meets the target") {
		t.Errorf("last summary line %q, want the recommendation", s)
	}
}

// TestPlanCalibratedMarks checks that each candidate row says whether its
// compute rests on a calibration of its device, and that the
// recommendation says so when it does not, with the model's published
// error.
func TestPlanCalibratedMarks(t *testing.T) {
	res := planResult()
	c := &res.Candidates[0]
	c.Misses = nil
	res.Recommended = c
	for _, tc := range []struct {
		src       predict.Source
		cell, rec string
	}{
		{predict.Source{Kind: "calibrated", By: "cal.yaml"}, "calibrated", ""},
		{predict.Source{Kind: "roofline"}, "uncalibrated", "; uncalibrated: its compute is the roofline of the device's datasheet, 99.6 % mean absolute error of samples/s"},
		{predict.Source{Kind: "operators"}, "uncalibrated", fmt.Sprintf("; uncalibrated: its compute is the operator model of the device's datasheet, %.1f %% mean absolute error of samples/s on published measurements, 80 %% of their measured steps from %+.1f %% to %+.1f %% of the predicted", 100*predict.OperatorsError, 100*predict.OperatorsBand.Lo, 100*predict.OperatorsBand.Hi)},
		{predict.Source{Kind: "operators", By: "ops.yaml"}, "uncalibrated", fmt.Sprintf("; uncalibrated: its compute is the operator model calibrated on another device (ops.yaml), %.1f %% mean absolute error", 100*predict.CarriedOperatorsError)},
	} {
		c.Compute = tc.src
		res.Pareto = []plan.Candidate{*c}
		var b strings.Builder
		if err := tables.Plan(res, 1).Write(&b, "json"); err != nil {
			t.Fatal(err)
		}
		var got struct {
			Pareto  []map[string]any
			Summary []map[string]any
		}
		if err := json.Unmarshal([]byte(b.String()), &got); err != nil {
			t.Fatal(err)
		}
		if cell := got.Pareto[0]["compute"]; cell != tc.cell {
			t.Errorf("%s: compute %v, want %s", tc.src, cell, tc.cell)
		}
		reco, _ := got.Summary[len(got.Summary)-1]["summary"].(string)
		if has := strings.Contains(reco, "uncalibrated"); has != (tc.rec != "") || !strings.Contains(reco, tc.rec) {
			t.Errorf("%s: recommendation %q, want it to contain %q", tc.src, reco, tc.rec)
		}
	}
}

// TestPlanCommBand checks that the recommendation says when its exchange
// is NCCL's over uncalibrated links (predict's Row.CommError), with the
// collective model's measured error at the exchange's message size, and
// says nothing of it otherwise.
func TestPlanCommBand(t *testing.T) {
	res := planResult()
	c := &res.Candidates[0]
	c.Misses = nil
	c.Compute = predict.Source{Kind: "calibrated", By: "cal.yaml"}
	res.Recommended = c
	for _, tc := range []struct {
		err  float64
		want string
	}{
		{0, ""},
		{predict.CommError(25*units.MiB, 4), fmt.Sprintf("; its exchange is NCCL's over uncalibrated links, %.1f %% mean absolute error of the time at its 25 MiB all-reduces on published nccl-tests tables, predicted too fast", 100*predict.CommError(25*units.MiB, 4))},
	} {
		c.Row.CommError, c.Row.CommMessage = tc.err, 25*units.MiB
		res.Pareto = []plan.Candidate{*c}
		var b strings.Builder
		if err := tables.Plan(res, 1).Write(&b, "json"); err != nil {
			t.Fatal(err)
		}
		var got struct{ Summary []map[string]any }
		if err := json.Unmarshal([]byte(b.String()), &got); err != nil {
			t.Fatal(err)
		}
		reco, _ := got.Summary[len(got.Summary)-1]["summary"].(string)
		if has := strings.Contains(reco, "uncalibrated links"); has != (tc.want != "") || !strings.Contains(reco, tc.want) {
			t.Errorf("error %v: recommendation %q, want it to contain %q", tc.err, reco, tc.want)
		}
	}
}
